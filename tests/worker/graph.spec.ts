// GET /{ds}/reach, /{ds}/path, /{ds}/check (issue 13): the CLI's JSON contracts served by the
// Worker. Answers are checked against a plain BFS over the generated edges (written here, not
// the engine's), and against `rete reach|path|check --json` on the same file; budgets answer a
// 422 naming the limit; browsers get pages, the resource page a "path to…" form and the dataset
// page the tier-0 check.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { counters, RETE, ROOT, startWorker, type Worker } from "./mf.ts";

const EX = "http://ex.org/";
const RDFS = "http://www.w3.org/2000/01/rdf-schema#";
const OWL = "http://www.w3.org/2002/07/owl#";
const TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";
const NEXT = `${EX}next`;
const LINK = `${EX}link`;
const CHAIN = 1500;

const dir = mkdtempSync(resolve(tmpdir(), "rete-graph-"));
let w: Worker;
let file: string;
/** Every edge as stored: [s, p, o] (blank nodes as _:label). */
const edges: [string, string, string][] = [];

const node = (i: number) => (i % 13 === 5 ? `_:b${i}` : `${EX}n${i}`);
const nt = (t: string) => (t.startsWith("_:") ? t : `<${t}>`);

/** A chain n0 → n1 → … (next; one node in 13 a blank node), shortcuts every 50 nodes (link), a
 * cycle back to n0, a self-loop, an island pair, some edges in a named graph; and an ontology with
 * planted faults. */
function data(): string {
  for (let i = 0; i + 1 < CHAIN; i++) edges.push([node(i), NEXT, node(i + 1)]);
  for (let i = 0; i + 50 < CHAIN; i += 50) edges.push([node(i), LINK, node(i + 50)]);
  edges.push([node(CHAIN - 1), NEXT, node(0)]);
  edges.push([node(7), NEXT, node(7)]);
  edges.push([`${EX}island/a`, NEXT, `${EX}island/b`]);
  const lines = edges.map(([s, p, o], k) => `${nt(s)} ${nt(p)} ${nt(o)}${k % 9 === 4 ? ` <${EX}g1>` : ""} .`);
  const schema = [
    [`${EX}A`, `${RDFS}subClassOf`, `${EX}B`],
    [`${EX}A`, `${RDFS}subClassOf`, `${EX}C`],
    [`${EX}B`, `${OWL}disjointWith`, `${EX}C`],
    [`${EX}ssn`, TYPE, `${OWL}FunctionalProperty`],
    [`${EX}x`, TYPE, `${EX}B`],
    [`${EX}x`, TYPE, `${EX}C`],
  ];
  lines.push(...schema.map(([s, p, o]) => `<${s}> <${p}> <${o}> .`));
  lines.push(`<${EX}x> <${EX}ssn> "1" .`, `<${EX}x> <${EX}ssn> "2" .`);
  for (let i = 0; i < CHAIN; i += 3) lines.push(`${nt(node(i))} <${RDFS}label> "node ${i} ${"of a longer label ".repeat(3)}" .`);
  return `${lines.join("\n")}\n`;
}

/** Distances from `from` over `preds` (a plain BFS over `edges`). */
function bfs(from: string, preds: string[], direction: "forward" | "inverse" | "both" = "forward"): Map<string, number> {
  const next = new Map<string, string[]>();
  const add = (a: string, b: string) => next.set(a, [...(next.get(a) ?? []), b]);
  for (const [s, p, o] of edges) {
    if (preds.length && !preds.includes(p)) continue;
    if (direction !== "inverse") add(s, o);
    if (direction !== "forward") add(o, s);
  }
  const distance = new Map([[from, 0]]);
  const queue = [from];
  while (queue.length) {
    const at = queue.shift() as string;
    for (const to of next.get(at) ?? []) {
      if (!distance.has(to)) {
        distance.set(to, (distance.get(at) as number) + 1);
        queue.push(to);
      }
    }
  }
  return distance;
}

function cli(args: string[]) {
  return JSON.parse(execFileSync(RETE, [...args, "--json"], { encoding: "utf8" }));
}

/** The answer without what the reads cost (the Worker's include the pointer and differ). */
function answer(json: Record<string, unknown>) {
  const { rounds, requests, bytes, ...rest } = json;
  return rest;
}

/** A triple with blank node labels dropped (`rete build` relabels them). */
const unlabelled = (t: string[]) => t.map((term) => (term.startsWith("_:") ? "_:" : term));
const stored = (t: string[]) => edges.some((e) => unlabelled(e).join(" ") === unlabelled(t).join(" "));

const q = (params: [string, string][]) => new URLSearchParams(params).toString();

beforeAll(async () => {
  writeFileSync(resolve(dir, "graph.nq"), data());
  file = resolve(dir, "graph.rete");
  execFileSync(RETE, ["build", "-q", resolve(dir, "graph.nq"), "-o", file], { cwd: ROOT });
  w = await startWorker();
  await w.publish("graph", file);
});
afterAll(async () => {
  await w?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

describe("GET /{ds}/reach", () => {
  test("counts per seed equal a plain BFS and the CLI's; rounds and bytes are the x-rete counters", async () => {
    const seeds = [node(0), node(700), node(6), `${EX}island/a`, `${EX}absent`];
    const r = await w.fetch(`/graph/reach?${q([...seeds.map((s): [string, string] => ["from", s]), ["via", NEXT], ["via", LINK]])}`);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/json");
    const json = await r.json();
    expect(json.seeds).toEqual(seeds.map((s) => ({ from: s, reached: s.endsWith("absent") ? 0 : [...bfs(s, [NEXT, LINK]).keys()].filter((n) => n !== s).length })));
    expect(json.seeds[0].reached).toBe(CHAIN - 1);
    expect(json.seeds[3].reached).toBe(1);
    expect(answer(json)).toEqual(answer(cli(["reach", file, ...seeds.flatMap((s) => ["--from", s]), "--via", NEXT, "--via", LINK])));
    const c = counters(r);
    expect([json.rounds, json.requests, json.bytes]).toEqual([c.rounds, c.reads, c.bytes]);
    expect(json.rounds).toBeGreaterThan(1);
  });

  test("inverse, undirected and max-depth follow the CLI's flags", async () => {
    const from = node(40);
    for (const [flag, direction] of [["inverse", "inverse"], ["undirected", "both"]] as const) {
      const json = await (await w.fetch(`/graph/reach?${q([["from", from], ["via", NEXT], [flag, ""], ["max-depth", "4"]])}`)).json();
      const within = [...bfs(from, [NEXT], direction).entries()].filter(([n, d]) => n !== from && d <= 4).length;
      expect(json.seeds).toEqual([{ from, reached: within }]);
      expect(answer(json)).toEqual(answer(cli(["reach", file, "--from", from, "--via", NEXT, `--${flag}`, "--max-depth", "4"])));
    }
  });

  test("bad requests are 400 JSON naming the parameter", async () => {
    for (const [path, words] of [
      ["/graph/reach?via=http://ex.org/next", "from="],
      [`/graph/reach?from=${encodeURIComponent(node(0))}`, "via="],
      ["/graph/reach?from=not%20an%20iri&via=http://ex.org/next", "from="],
      ["/graph/reach?from=http://ex.org/n0&via=_:b", "via="],
      ["/graph/reach?from=http://ex.org/n0&via=http://ex.org/next&max-depth=two", "max-depth"],
      ["/graph/reach?from=http://ex.org/n0&via=http://ex.org/next&inverse&undirected", "inverse"],
    ]) {
      const r = await w.fetch(path);
      expect(r.status, path).toBe(400);
      const body = await r.json();
      expect(body.error).toBe("bad-request");
      expect(body.message).toContain(words);
    }
  });
});

describe("GET /{ds}/path", () => {
  test("a shortest path of stored triples, as the CLI finds it; undirected steps run as stored", async () => {
    const [from, to] = [node(3), node(160)];
    const json = await (await w.fetch(`/graph/path?${q([["from", from], ["to", to]])}`)).json();
    const length = bfs(from, []).get(to);
    expect(json.length).toBe(length);
    expect(json.path).toHaveLength(length as number);
    expect(json.path[0][0]).toBe(from);
    expect(json.path.at(-1)[2]).toBe(to);
    for (let k = 0; k < json.path.length; k++) {
      expect(stored(json.path[k]), json.path[k].join(" ")).toBe(true);
      if (k > 0) expect(json.path[k][0]).toBe(json.path[k - 1][2]);
    }
    expect(json.visited).toBeGreaterThan(0);
    expect(answer(json)).toEqual(answer(cli(["path", file, from, to])));

    const back = await (await w.fetch(`/graph/path?${q([["from", to], ["to", from], ["via", NEXT], ["undirected", "true"]])}`)).json();
    expect(back.length).toBe(bfs(to, [NEXT], "both").get(from));
    expect(stored(back.path[0])).toBe(true);
    expect(answer(back)).toEqual(answer(cli(["path", file, to, from, "--via", NEXT, "--undirected"])));
  });

  test("no path is length null (200); a bad IRI is 400", async () => {
    const none = await w.fetch(`/graph/path?${q([["from", node(0)], ["to", `${EX}island/a`]])}`);
    expect(none.status).toBe(200);
    const json = await none.json();
    expect(json.length).toBeNull();
    expect(json).not.toHaveProperty("path");
    const short = await (await w.fetch(`/graph/path?${q([["from", node(0)], ["to", node(60)], ["via", NEXT], ["max-depth", "5"]])}`)).json();
    expect(short.length).toBeNull();
    const bad = await w.fetch("/graph/path?from=http://ex.org/n0&to=%3Cnot%20valid%3E");
    expect(bad.status).toBe(400);
    expect((await bad.json()).message).toContain("to=");
  });

  test("a round limit is a 422 naming it, as for queries", async () => {
    const tight = await startWorker({ MAX_ROUNDS: "1" });
    try {
      await tight.publish("graph", file);
      const r = await tight.fetch(`/graph/reach?${q([["from", node(0)], ["via", NEXT]])}`);
      expect(r.status).toBe(422);
      expect(r.headers.get("x-rete-limit")).toBe("rounds");
      expect(await r.json()).toMatchObject({ error: "budget", limit: "rounds", max: 1 });
    } finally {
      await tight.dispose();
    }
  });
});

describe("GET /{ds}/check", () => {
  test("each tier finds what the CLI finds; tier 0 is the default and reads a few KB", async () => {
    for (const tier of [0, 1, 2]) {
      const json = await (await w.fetch(`/graph/check?tier=${tier}`)).json();
      expect(json.tier).toBe(tier);
      expect(answer(json)).toEqual(answer(cli(["check", file, "--tier", String(tier)])));
    }
    const r = await w.fetch("/graph/check");
    const tier0 = await r.json();
    expect(tier0.findings).toEqual([
      {
        kind: "unsatisfiable-class",
        subject: `${EX}A`,
        evidence: expect.arrayContaining([[`${EX}A`, `${RDFS}subClassOf`, `${EX}B`], [`${EX}A`, `${RDFS}subClassOf`, `${EX}C`], [`${EX}B`, `${OWL}disjointWith`, `${EX}C`]]),
      },
    ]);
    expect(counters(r).bytes).toBeLessThan(20_000);
    const tier1 = await (await w.fetch("/graph/check?tier=1")).json();
    const kinds = tier1.findings.map((f: { kind: string; subject: string }) => `${f.kind} ${f.subject}`).sort();
    expect(kinds).toEqual([`disjoint-instance ${EX}x`, `functional-property ${EX}x`, `unsatisfiable-class ${EX}A`]);
    const bad = await w.fetch("/graph/check?tier=3");
    expect(bad.status).toBe(400);
    expect((await bad.json()).message).toContain("tier");
  });
});

describe("pages", () => {
  const html = { headers: { accept: "text/html" } };

  test("each answer is a page for browsers, cacheable under an ETag", async () => {
    const path = await w.fetch(`/graph/path?${q([["from", node(0)], ["to", node(2)]])}`, html);
    expect(path.headers.get("content-type")).toContain("text/html");
    const page = await path.text();
    expect(page).toContain("Shortest path");
    expect(page).toContain("A path of length 2");
    expect(page).toContain(`/graph/resource?iri=${encodeURIComponent(node(1))}`);
    const etag = path.headers.get("etag") as string;
    const again = await w.fetch(`/graph/path?${q([["from", node(0)], ["to", node(2)]])}`, { headers: { accept: "text/html", "if-none-match": etag } });
    expect(again.status).toBe(304);
    expect(await (await w.fetch(`/graph/reach?${q([["from", node(0)], ["via", NEXT]])}`, html)).text()).toMatch(/nodes reached[\s\S]*1\u202f499/);
    expect(await (await w.fetch("/graph/check?tier=1", html)).text()).toContain("disjoint-instance");
  });

  test("the resource page offers a path to a second IRI; the dataset page shows the tier-0 check", async () => {
    const resource = await (await w.fetch(`/graph/resource?iri=${encodeURIComponent(node(0))}`, html)).text();
    expect(resource).toContain('action="/graph/path"');
    expect(resource).toContain(`name="from" value="${node(0)}"`);
    const dataset = await (await w.fetch("/graph", html)).text();
    expect(dataset).toContain("Coherence");
    expect(dataset).toContain("unsatisfiable-class");
    expect(dataset).toContain('href="/graph/check?tier=1"');
  });
});
