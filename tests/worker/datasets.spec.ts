// GET /, /{ds}/card and /{ds}/summary: JSON and HTML, 304s, 404s; and how the Worker follows the
// R2 layout as datasets are published, replaced and removed.
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { counters, FILES, RETE, startWithExamples, startWorker, type Worker } from "./mf.ts";

let w: Worker;
beforeAll(async () => {
  w = await startWithExamples();
});
afterAll(() => w?.dispose());

const BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

describe("GET /", () => {
  test("JSON lists every dataset with its links", async () => {
    const r = await w.fetch("/", { headers: { accept: "application/json" } });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/json");
    const { datasets, truncated } = await r.json();
    expect(truncated).toBe(false);
    expect(datasets.map((d: { name: string }) => d.name)).toEqual(["dbpedia-ontology", "hash-doc", "qudt", "schema-org"]);
    expect(datasets.find((d: { name: string }) => d.name === "qudt")).toMatchObject({
      name: "qudt",
      triples: 55541,
      card: "http://rete.test/qudt/card",
      sparql: "http://rete.test/qudt/sparql",
    });
  });

  test("title and licence from each pointer when it records them (examples/*/card.toml), else left out", async () => {
    const { datasets } = await (await w.fetch("/", { headers: { accept: "application/json" } })).json();
    const qudt = datasets.find((d: { name: string }) => d.name === "qudt");
    expect(qudt.title).toBe("QUDT: units of measure, quantity kinds and physical constants");
    expect(qudt.license).toBe("https://creativecommons.org/licenses/by/4.0/");
    // The hash-doc fixture's card has neither.
    const fixture = datasets.find((d: { name: string }) => d.name === "hash-doc");
    expect("title" in fixture || "license" in fixture).toBe(false);
    const page = await (await w.fetch("/", { headers: { accept: "text/html" } })).text();
    expect(page).toContain("<td>QUDT: units of measure, quantity kinds and physical constants</td>");
    expect(page).toContain('<a href="https://creativecommons.org/licenses/by/4.0/">creativecommons.org/licenses/by/4.0/</a>');
    expect(page).toContain('<a href="/hash-doc">hash-doc</a></th><td>hash-doc</td>');
  });

  test("a pointer written before entries recorded a title lists the name", async () => {
    const old = await startWorker();
    try {
      const version = await old.publish("units", resolve(FILES, "qudt.rete"));
      const bucket = await old.mf.getR2Bucket("BUCKET");
      const entry = JSON.parse(await (await bucket.get("datasets/units/current.json"))!.text());
      delete entry.title;
      delete entry.license;
      await bucket.put("datasets/units/current.json", JSON.stringify(entry));
      const { datasets } = await (await old.fetch("/", { headers: { accept: "application/json" } })).json();
      expect(datasets).toEqual([expect.not.objectContaining({ title: expect.anything() })]);
      expect(datasets[0].version).toBe(version);
      const page = await (await old.fetch("/")).text();
      expect(page).toContain('<a href="/units">units</a></th><td>units</td>');
    } finally {
      await old.dispose();
    }
  });

  test("HTML for browsers (and by default)", async () => {
    for (const accept of [BROWSER, "*/*"]) {
      const r = await w.fetch("/", { headers: { accept } });
      expect(r.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(await r.text()).toContain('<a href="/qudt">qudt</a>');
    }
  });

  test("304 for its ETag", async () => {
    const first = await w.fetch("/", { headers: { accept: "application/json" } });
    const etag = first.headers.get("etag") ?? "";
    const again = await w.fetch("/", { headers: { accept: "application/json", "if-none-match": etag } });
    expect(again.status).toBe(304);
  });

  test("405 for POST", async () => {
    const r = await w.fetch("/", { method: "POST", body: "x" });
    expect(r.status).toBe(405);
    expect((await r.json()).error).toBe("method-not-allowed");
  });
});

describe("GET /{ds}/card", () => {
  test("the CARD section as JSON, kept in the isolate once read", async () => {
    const r = await w.fetch("/qudt/card");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/json");
    const card = await r.json();
    expect(card).toMatchObject({ quads: 55541, terms: 21965, graphs: 7 });
    expect(card.predicates[0]).toMatchObject({ iri: "http://qudt.org/schema/qudt/applicableUnit", quads: 8711 });
    // Header, INDEX and CARD stay in the isolate once read: a warm card reads only the
    // dataset's pointer (which tests re-read on every request: POINTER_TTL_S = 0).
    const again = await w.fetch("/qudt/card?format=json&x=1");
    expect(counters(again)).toMatchObject({ reads: 1, rounds: 1 });
    // The pointer alone, unchanged since the last read: a conditional get, no body.
    expect(counters(again).bytes).toBeLessThan(512);
  });

  test("/{ds} is the dataset page: the card as HTML, with bars, a query box and the summary's place", async () => {
    const r = await w.fetch("/qudt", { headers: { accept: BROWSER } });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const page = await r.text();
    expect(page).toContain('<script type="module" src="/_site/site.js"></script>');
    expect(page).toMatch(/<th scope="row">triples<\/th><td>55\u202f541<\/td>/);
    expect(page).toContain('<span class="bar" style="width:100.0%">');
    expect(page).toContain('<form class="query" method="get" action="/qudt/sparql">');
    expect(page).toContain('data-summary="/qudt/summary"');
    // HTML only: a program asking for JSON is told what there is.
    const json = await w.fetch("/qudt", { headers: { accept: "application/json" } });
    expect(json.status).toBe(406);
    expect((await w.fetch("/no-such-dataset", { headers: { accept: BROWSER } })).status).toBe(404);
  });

  test("HTML for browsers, format=html for links", async () => {
    const r = await w.fetch("/qudt/card", { headers: { accept: BROWSER } });
    expect(r.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const page = await r.text();
    expect(page).toContain('<body data-page="dataset" data-dataset="qudt">');
    expect(page).toContain('href="/qudt/resource?iri=http%3A%2F%2Fqudt.org%2Fschema%2Fqudt%2FapplicableUnit"');
    expect((await w.fetch("/qudt/card?format=html")).headers.get("content-type")).toBe("text/html; charset=utf-8");
  });

  test.each(["/qudt/summary", "/qudt/resource?iri=http%3A%2F%2Fqudt.org%2Fvocab%2Funit%2FM", "/qudt/sparql"])("304 for %s", async (path) => {
    const first = await w.fetch(path);
    expect(first.status).toBe(200);
    const again = await w.fetch(path, { headers: { "if-none-match": first.headers.get("etag") ?? "" } });
    expect(again.status).toBe(304);
    expect(again.headers.get("etag")).toBe(first.headers.get("etag"));
  });

  test("304, 404, 406", async () => {
    const etag = (await w.fetch("/qudt/card")).headers.get("etag") ?? "";
    expect((await w.fetch("/qudt/card", { headers: { "if-none-match": `W/${etag}, "other"` } })).status).toBe(304);
    const missing = await w.fetch("/nope/card");
    expect(missing.status).toBe(404);
    expect((await missing.json()).message).toBe('no dataset named "nope"');
    expect((await w.fetch("/qudt/card", { headers: { accept: "application/n-triples" } })).status).toBe(406);
    expect((await w.fetch("/not..valid!/card")).status).toBe(404);
  });
});

describe("GET /{ds}/summary", () => {
  test("the SUMMARY section: schema level and community levels (card-summary.spec.ts has the rest)", async () => {
    const r = await w.fetch("/dbpedia-ontology/summary");
    expect(r.status).toBe(200);
    const summary = await r.json();
    expect(summary).toMatchObject({ dataset: "dbpedia-ontology" });
    expect(summary.schema.classes.length).toBeGreaterThan(0);
    expect(summary.schema.subclass_of.length).toBeGreaterThan(0);
    const html = await w.fetch("/dbpedia-ontology/summary", { headers: { accept: BROWSER } });
    // The dataset page holds the summary picture.
    expect(await html.text()).toContain('<h2 id="classes-h">Classes</h2>');
    const level = await w.fetch(`/dbpedia-ontology/summary?level=${summary.levels.length}`);
    expect(level.status).toBe(404);
  });
});

describe("malformed requests", () => {
  test.each([
    ["/%2e%2e/card", 404],
    ["/qudt/resource?iri=%ZZ", 400],
    ["/qudt/resource?iri=http%3A%2F%2Fx%2F%20y", 400],
    ["/qudt/resource?iri=http%3A%2F%2Fx%2Fy&page=-1", 400],
    ["/qudt/resource?iri=http%3A%2F%2Fx%2Fy&page=99999999999999999999", 400],
    ["/qudt/sparql?query=ASK%7B%7D&query=ASK%7B%7D&format=%00", 400],
    ["/qudt/summary?level=x", 400],
    ["/qudt/id/", 404],
    ["/qudt/card/extra", 404],
    ["/" + "a".repeat(70) + "/card", 404],
  ])("%s → %i with a JSON body", async (path, status) => {
    const r = await w.fetch(path, { headers: { accept: "*/*;q=abc, text/html;level=1;q=2, ,;," } });
    expect(r.status).toBe(status);
    expect(r.headers.get("content-type")).toBe("application/json");
    expect((await r.json()).status).toBe(status);
  });

  // A query that does not parse, asked for as HTML (as this Accept prefers), is the query page
  // holding it with the error; a program gets the JSON error.
  test.each(["/qudt/sparql?query=%FF%FE", "/qudt/sparql?query="])("%s → 400, the query page with the error, or JSON", async (path) => {
    const page = await w.fetch(path, { headers: { accept: "*/*;q=abc, text/html;level=1;q=2, ,;," } });
    expect(page.status).toBe(400);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("cache-control")).toBe("no-store");
    expect(await page.text()).toMatch(/<div class="error" role="alert">(<p class="where">At line 1, column \d+:<\/p>)?<pre>invalid query/);
    const json = await w.fetch(path, { headers: { accept: "application/sparql-results+json" } });
    expect(json.status).toBe(400);
    expect((await json.json()).error).toBe("syntax");
  });
});

describe("versions", () => {
  let v: Worker;
  beforeAll(async () => {
    v = await startWorker();
  });
  afterAll(() => v?.dispose());

  test("a new version switches atomically; ETags follow the content hash", async () => {
    const first = await v.publish("data", resolve(FILES, "schema-org.rete"));
    const a = await v.fetch("/data/card");
    expect((await a.json()).quads).toBe(16204);
    const etagA = a.headers.get("etag") ?? "";
    expect(etagA.startsWith(`"${first}-`)).toBe(true);

    const second = await v.publish("data", resolve(FILES, "dbpedia-ontology.rete"));
    expect(second).not.toBe(first);
    const b = await v.fetch("/data/card", { headers: { "if-none-match": etagA } });
    expect(b.status).toBe(200);
    expect((await b.json()).quads).toBe(40763);
    expect(b.headers.get("etag")?.startsWith(`"${second}-`)).toBe(true);
  });

  test("a file removed under a cached pointer is a 503 to retry, never mixed data", async () => {
    const version = await v.publish("gone", resolve(FILES, "qudt.rete"));
    expect((await v.fetch("/gone/card")).status).toBe(200);
    const bucket = await v.mf.getR2Bucket("BUCKET");
    await bucket.delete(`datasets/gone/${version}.rete`);
    const query = encodeURIComponent("SELECT * WHERE { GRAPH ?g { ?s ?p ?o } } LIMIT 1");
    const r = await v.fetch(`/gone/sparql?query=${query}`);
    expect(r.status).toBe(503);
    expect(r.headers.get("retry-after")).toBe("1");
    expect((await r.json()).error).toBe("dataset-changed");
    const after = await v.fetch(`/gone/sparql?query=${query}`);
    expect(after.status).toBe(503);
  });

  test("a damaged block is a 500 naming it, not a wrong answer", async () => {
    const file = resolve(FILES, "schema-org.rete");
    const sections = JSON.parse(execFileSync(RETE, ["inspect", file, "--json"], { encoding: "utf8" })).sections;
    const osp = sections.find((s: { kind: string }) => s.kind === "PERMUTATION OSP");
    const bytes = new Uint8Array(readFileSync(file));
    bytes[osp.offset + (osp.length >> 1)] ^= 0xff;
    const damaged = resolve(FILES, "schema-org-damaged.rete");
    writeFileSync(damaged, bytes);
    await v.publish("damaged", damaged);
    // A scan of every triple reads every OSP block (the order a pattern with nothing bound is read in).
    const r = await v.fetch(`/damaged/sparql?query=${encodeURIComponent("SELECT * WHERE { ?s ?p ?o }")}`);
    const body = await r.json();
    expect(r.status, JSON.stringify(body)).toBe(500);
    expect(body.error).toBe("corrupt-file");
    expect(body.message).toMatch(/corrupt OSP block \d+ at byte \d+/);
  });

  test("a pointer naming a key outside its dataset is refused", async () => {
    const bucket = await v.mf.getR2Bucket("BUCKET");
    const version = "0".repeat(32);
    const entry = { name: "evil", version, key: "secrets/x.rete", bytes: 1, quads: 1 };
    await bucket.put("datasets/evil/current.json", new TextEncoder().encode(JSON.stringify(entry)));
    const r = await v.fetch("/evil/card");
    expect(r.status).toBe(502);
    expect((await r.json()).message).toContain("is not a .rete file of this dataset");
  });
});
