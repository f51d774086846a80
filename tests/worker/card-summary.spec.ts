// GET /{ds}/card (JSON, VoID + DCAT Turtle, /.well-known/void), /{ds}/summary, ?level=N and
// /{ds}/summary/members: the issue 7 contract, and what each costs in R2 reads. Besides the
// example files, the spec builds its own: a described dataset (flags, card.toml and VoID in
// the data), a LUBM university (a summary past the first 16 KiB) and the same with --no-pyramid.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { counters, FILES, RETE, ROOT, startWorker, type Worker } from "./mf.ts";

let w: Worker;
const dir = mkdtempSync(resolve(tmpdir(), "rete-card-"));

function build(name: string, inputs: string[], flags: string[] = []) {
  const output = resolve(dir, `${name}.rete`);
  execFileSync(RETE, ["build", "-q", ...inputs, "-o", output, ...flags], { cwd: ROOT, env: { ...process.env, SOURCE_DATE_EPOCH: "1700000000" } });
  return output;
}

beforeAll(async () => {
  const described = resolve(dir, "described");
  execFileSync("mkdir", ["-p", described]);
  writeFileSync(
    resolve(described, "data.ttl"),
    `@prefix ex: <http://example.org/> .
@prefix void: <http://rdfs.org/ns/void#> .
@prefix dcterms: <http://purl.org/dc/terms/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:ds a void:Dataset ; dcterms:title "From the data" ; dcterms:description "Described in VoID" ; dcterms:publisher ex:someone .
ex:a a ex:Person ; rdfs:label "Alice"@en, "Alicia"@es ; ex:knows ex:b ; ex:age 42 .
ex:b a ex:Person ; rdfs:label "Bob" ; ex:knows ex:a .
ex:Person rdfs:label "Person"@en ; rdfs:subClassOf ex:Agent .
`,
  );
  writeFileSync(resolve(described, "card.toml"), `title = "From card.toml"\nlicense = "https://creativecommons.org/publicdomain/zero/1.0/"\n`);
  const lubm = resolve(dir, "u1.nt");
  execFileSync("python3", [resolve(ROOT, "bench/lubm.py"), "--universities", "1", "--seed", "0", "-o", lubm], { stdio: "ignore" });
  w = await startWorker();
  await w.publish("described", build("described", [resolve(described, "data.ttl")], ["--title", "From the flag", "--base-iri", "http://example.org/"]));
  await w.publish("lubm", build("lubm", [lubm], ["--threads", "2"]));
  await w.publish("flat", build("flat", [lubm], ["--no-pyramid"]));
  await w.publish("hash-doc", resolve(FILES, "hash-doc.rete"));
});
afterAll(async () => {
  await w?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

describe("GET /{ds}/card", () => {
  test("JSON: the card's members plus dataset, version, content hash and file size", async () => {
    const r = await w.fetch("/described/card");
    expect(r.status).toBe(200);
    const card = await r.json();
    // Flags win over card.toml, which wins over the data's VoID description.
    expect(card).toMatchObject({
      dataset: "described",
      title: "From the flag",
      license: "https://creativecommons.org/publicdomain/zero/1.0/",
      description: "Described in VoID",
      publisher: "http://example.org/someone",
      base_iri: "http://example.org/",
      built_at: "2023-11-14T22:13:20Z",
      quads: 14,
      subjects: 4,
      graphs: 0,
    });
    expect(card.version).toMatch(/^[0-9a-f]{32}$/);
    expect(card.content_hash).toBe(card.version);
    expect(card.file_bytes).toBeGreaterThan(0);
    expect(card.classes).toContainEqual({ iri: "http://example.org/Person", label: "Person", instances: 2, examples: ["http://example.org/a", "http://example.org/b"] });
    expect(card.predicates).toContainEqual({ iri: "http://example.org/knows", quads: 2 });
    expect(card.languages).toEqual([
      { tag: "en", literals: 2 },
      { tag: "es", literals: 1 },
    ]);
    expect(card.datatypes).toContainEqual({ iri: "http://www.w3.org/2001/XMLSchema#integer", literals: 1 });
    // Prefixes come from the input's @prefix lines.
    expect(card.namespaces).toContainEqual({ prefix: "ex", iri: "http://example.org/", terms: 8 });
    expect(card.predicates.length + card.predicates_more).toBe(8);
  });

  test("VoID + DCAT Turtle by format=ttl, by Accept, and at /.well-known/void", async () => {
    const bodies = [];
    for (const [path, accept] of [
      ["/described/card?format=ttl", "*/*"],
      ["/described/card", "text/turtle"],
      ["/described/.well-known/void", "*/*"],
    ]) {
      const r = await w.fetch(path, { headers: { accept } });
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toBe("text/turtle; charset=utf-8");
      bodies.push(await r.text());
    }
    expect(bodies[1]).toBe(bodies[0]);
    expect(bodies[2]).toBe(bodies[0]);
    const ttl = bodies[0];
    expect(ttl).toContain("<http://rete.test/described/card#dataset> a void:Dataset , dcat:Dataset");
    expect(ttl).toContain('dcterms:title "From the flag"');
    expect(ttl).toContain("dcterms:license <https://creativecommons.org/publicdomain/zero/1.0/>");
    expect(ttl).toContain("void:triples 14");
    expect(ttl).toContain("void:distinctSubjects 4");
    expect(ttl).toContain("void:sparqlEndpoint <http://rete.test/described/sparql>");
    expect(ttl).toContain("void:class <http://example.org/Person>");
    expect(ttl).toContain("dcat:accessURL <http://rete.test/described/sparql>");
  });

  test("the Service Description links to the VoID description", async () => {
    const r = await w.fetch("/described/sparql", { headers: { accept: "text/turtle" } });
    expect(await r.text()).toContain("<http://rete.test/described/.well-known/void>");
  });

  test("a cold card takes the pointer and at most 2 range reads of the file (header + section)", async () => {
    const cold = await startWorker();
    try {
      await cold.publish("lubm", resolve(dir, "lubm.rete"));
      const r = await cold.fetch("/lubm/card");
      expect(r.status).toBe(200);
      // x-rete-reads counts the current.json pointer too.
      expect(counters(r).reads).toBeLessThanOrEqual(3);
      expect(counters(r).bytes).toBeLessThan(16384 + 32768 + 1024);
    } finally {
      await cold.dispose();
    }
  });
});

describe("GET /{ds}/summary", () => {
  test("schema level and the list of community levels", async () => {
    const r = await w.fetch("/lubm/summary");
    expect(r.status).toBe(200);
    const summary = await r.json();
    expect(summary.dataset).toBe("lubm");
    expect(summary.schema.classes[0]).toEqual({ iri: "http://swat.cse.lehigh.edu/onto/univ-bench.owl#Person", instances: 9682 });
    expect(summary.schema.links).toContainEqual({
      from: "http://swat.cse.lehigh.edu/onto/univ-bench.owl#Publication",
      predicate: "http://swat.cse.lehigh.edu/onto/univ-bench.owl#publicationAuthor",
      to: "http://swat.cse.lehigh.edu/onto/univ-bench.owl#Person",
      count: 12862,
    });
    expect(summary.levels.length).toBeGreaterThan(1);
    expect(summary.levels[0]).toEqual({ level: 0, nodes: 18, edges: 153, communities: 18 });
  });

  test("?level=N: nodes with parents in level N-1, edges, member links", async () => {
    const coarse = await (await w.fetch("/lubm/summary?level=0")).json();
    expect(coarse).toMatchObject({ dataset: "lubm", level: 0, levels: expect.any(Number) });
    expect(coarse.nodes).toHaveLength(18);
    const node = coarse.nodes[0];
    expect(node).toMatchObject({ id: 0, parent: null, members: "/lubm/summary/members?level=0&node=0" });
    expect(node.iri).toMatch(/^http:\/\/www\.Department\d+\.University0\.edu$/);
    expect(coarse.edges[0].weight).toBeGreaterThan(0);
    expect(coarse.edges[0].source).toBeLessThan(coarse.edges[0].target);
    const sizes = coarse.nodes.map((n: { size: number }) => n.size);
    expect(sizes).toEqual([...sizes].sort((a, b) => b - a));

    const fine = await (await w.fetch("/lubm/summary?level=1")).json();
    expect(fine.nodes.length).toBeLessThanOrEqual(256);
    expect(fine.edges.length).toBeLessThanOrEqual(1024);
    for (const n of fine.nodes) expect(n.parent === null || n.parent < 18).toBe(true);
    expect(fine.nodes.some((n: { parent: number | null }) => n.parent !== null)).toBe(true);
  });

  test("members: pages of IRIs, the central member among them", async () => {
    const coarse = await (await w.fetch("/lubm/summary?level=0")).json();
    const node = coarse.nodes[0];
    const first = await w.fetch(node.members);
    expect(first.status).toBe(200);
    const page = await first.json();
    expect(page).toMatchObject({ dataset: "lubm", level: 0, node: 0, page: 0, size: node.size });
    expect(page.members).toHaveLength(100);
    expect(page.pages).toBe(Math.ceil(node.size / 100));
    expect(page.next).toBe("/lubm/summary/members?level=0&node=0&page=1");
    const all: string[] = [...page.members];
    for (let next = page.next; next; ) {
      const more = await (await w.fetch(next)).json();
      all.push(...more.members);
      next = more.next;
    }
    expect(all).toHaveLength(node.size);
    expect(all).toContain(node.iri);
    expect((await w.fetch(`${node.members}&page=${page.pages}`)).status).toBe(404);
  });

  test("a cold summary or level takes the pointer and at most 2 range reads", async () => {
    for (const path of ["/lubm/summary", "/lubm/summary?level=1"]) {
      const cold = await startWorker();
      try {
        await cold.publish("lubm", resolve(dir, "lubm.rete"));
        const r = await cold.fetch(path);
        expect(r.status).toBe(200);
        expect(counters(r).reads).toBeLessThanOrEqual(3);
      } finally {
        await cold.dispose();
      }
    }
  });

  test("unknown level: 404 naming the levels; --no-pyramid: no levels, a note", async () => {
    const { levels } = await (await w.fetch("/lubm/summary")).json();
    const r = await w.fetch(`/lubm/summary?level=${levels.length}`);
    expect(r.status).toBe(404);
    expect((await r.json()).message).toBe(`lubm has summary levels 0 to ${levels.length - 1}; there is no level ${levels.length}`);
    const flat = await (await w.fetch("/flat/summary")).json();
    expect(flat.levels).toEqual([]);
    expect(flat.note).toBe("community levels not computed (rete build --no-pyramid)");
    expect(flat.schema.classes.length).toBeGreaterThan(0);
    expect((await w.fetch("/flat/summary?level=0")).status).toBe(404);
    expect((await w.fetch("/lubm/summary/members?level=0")).status).toBe(400);
    expect((await w.fetch("/lubm/summary/members?level=0&node=999")).status).toBe(404);
  });

  test("labels of super-nodes come from the data", async () => {
    const level = await (await w.fetch("/hash-doc/summary?level=0")).json();
    const labels = level.nodes.map((n: { label: string }) => n.label);
    expect(labels.some((l: string) => l === "Alice" || l === "Bob")).toBe(true);
  });
});
