// /{ds}/resource?iri=: outgoing and incoming links in Turtle, N-Triples, JSON-LD, RDF/XML and HTML,
// paged with Link rel=next; and base-IRI mode (Cool URIs: 303 See Other, hash-IRI documents).
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { counters, startWithExamples, type Worker } from "./mf.ts";

let w: Worker;
beforeAll(async () => {
  const bases = { qudt: "http://qudt.org/", "hash-doc": "http://example.org/" };
  w = await startWithExamples({ BASE_IRIS: JSON.stringify(bases) });
});
afterAll(() => w?.dispose());

const KMH = "http://qudt.org/vocab/unit/KiloM-PER-HR";
const view = (iri: string, extra = "") => `/qudt/resource?iri=${encodeURIComponent(iri)}${extra}`;

describe("formats", () => {
  test("Turtle by default: outgoing and incoming triples", async () => {
    const r = await w.fetch(view(KMH));
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("text/turtle; charset=utf-8");
    expect(r.headers.get("etag")).toMatch(/^"[0-9a-f]{32}-/);
    const text = await r.text();
    expect(text).toMatch(/^# \d+ triples with <http:\/\/qudt\.org\/vocab\/unit\/KiloM-PER-HR> as subject or object, page 1\n/);
    expect(text).toContain(`<${KMH}> <http://purl.org/dc/terms/description>`);
    // Incoming: the quantity kind Velocity lists it as an applicable unit.
    expect(text).toContain("<http://qudt.org/vocab/quantitykind/Velocity> <http://qudt.org/schema/qudt/applicableUnit>");
    expect(r.headers.get("link")).toBeNull();
  });

  test.each([
    ["application/n-triples", "application/n-triples; charset=utf-8", `<${KMH}> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://qudt.org/schema/qudt/Unit> .`],
    ["application/ld+json", "application/ld+json", `"@id":"${KMH}"`],
    ["application/rdf+xml", "application/rdf+xml", `rdf:about="${KMH}"`],
    ["text/html,*/*;q=0.8", "text/html; charset=utf-8", '<h2 id="in-h">Incoming links'],
  ])("Accept %s", async (accept, type, fragment) => {
    const r = await w.fetch(view(KMH), { headers: { accept } });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe(type);
    expect((await r.text()).replace(/\s/g, "")).toContain(fragment.replace(/\s/g, ""));
  });

  test("format= for links; HTML links onward", async () => {
    const r = await w.fetch(view(KMH, "&format=html"));
    const page = await r.text();
    expect(page).toContain("<h1>Kilometre per Hour</h1>");
    expect(page).toContain(`<p class="iri"><code>${KMH}</code></p>`);
    expect(page).toContain('href="/qudt/resource?iri=http%3A%2F%2Fqudt.org%2Fvocab%2Fquantitykind%2FVelocity"');
    expect((await w.fetch(view(KMH, "&format=nt"))).headers.get("content-type")).toBe("application/n-triples; charset=utf-8");
  });

  test("a warm resource view reads a few blocks in at most 3 rounds", async () => {
    await w.fetch(view("http://qudt.org/vocab/unit/M"));
    const r = await w.fetch(view("http://qudt.org/vocab/unit/KiloGM"));
    expect(r.status).toBe(200);
    const c = counters(r);
    expect(c.rounds).toBeLessThanOrEqual(4); // the pointer (not cached in tests), then ≤3 rounds of blocks
    expect(c.bytes).toBeLessThan(200_000);
  });
});

describe("paging", () => {
  let small: Worker;
  beforeAll(async () => {
    small = await startWithExamples({ RESOURCE_PAGE_TRIPLES: "7" });
  });
  afterAll(() => small?.dispose());

  test("pages follow Link rel=next to the end and add up to the whole view", async () => {
    const whole = (await (await w.fetch(view(KMH, "&format=nt"))).text()).split("\n").filter((l) => l && !l.startsWith("#"));
    expect(whole.length).toBeGreaterThan(14);
    const seen: string[] = [];
    let url: string | null = `http://rete.test${view(KMH, "&format=nt")}`;
    let pages = 0;
    while (url) {
      const r = await small.fetch(url);
      expect(r.status).toBe(200);
      const lines = (await r.text()).split("\n").filter((l) => l);
      expect(lines[0]).toMatch(/^# \d+ triples/);
      seen.push(...lines.filter((l) => !l.startsWith("#")));
      const link = r.headers.get("link");
      url = link ? (link.match(/^<([^>]+)>; rel="next"$/)?.[1] ?? null) : null;
      if (url) expect(url).toContain("&format=nt");
      pages += 1;
    }
    expect(pages).toBe(Math.ceil(whole.length / 7));
    expect(seen.sort()).toEqual([...whole].sort());
  });

  test("HTML pages link to the next page", async () => {
    const page = await (await small.fetch(view(KMH, "&format=html"))).text();
    expect(page).toContain('rel="next" href="/qudt/resource?iri=http%3A%2F%2Fqudt.org%2Fvocab%2Funit%2FKiloM-PER-HR&amp;page=2&amp;format=html"');
  });

  test("past the last page is 404", async () => {
    const r = await small.fetch(view(KMH, "&page=999"));
    expect(r.status).toBe(404);
    expect((await r.json()).message).toContain("past the last page");
  });
});

describe("errors", () => {
  test("404 for an IRI without triples", async () => {
    const r = await w.fetch(view("http://qudt.org/vocab/unit/NO-SUCH-UNIT"));
    expect(r.status).toBe(404);
    expect(await r.json()).toMatchObject({ error: "not-found", message: "<http://qudt.org/vocab/unit/NO-SUCH-UNIT> has no triples in qudt" });
  });

  test("400 without iri, with an invalid one, or a bad page", async () => {
    expect((await w.fetch("/qudt/resource")).status).toBe(400);
    expect((await w.fetch(view("not an iri"))).status).toBe(400);
    expect((await w.fetch(view(KMH, "&page=0"))).status).toBe(400);
  });

  test("406 for a type a resource view cannot be", async () => {
    expect((await w.fetch(view(KMH), { headers: { accept: "text/csv" } })).status).toBe(406);
  });
});

describe("base-IRI mode", () => {
  test("local mapping /{ds}/id/PATH: 303 to the view in the negotiated format", async () => {
    const r = await w.fetch("/qudt/id/vocab/unit/KiloM-PER-HR", { redirect: "manual" });
    expect(r.status).toBe(303);
    expect(r.headers.get("location")).toBe(`http://rete.test/qudt/resource?iri=${encodeURIComponent(KMH)}&format=ttl`);
    expect(r.headers.get("vary")).toBe("Accept");
    const html = await w.fetch("/qudt/id/vocab/unit/KiloM-PER-HR", { headers: { accept: "text/html" }, redirect: "manual" });
    expect(html.headers.get("location")).toBe(`http://rete.test/qudt/resource?iri=${encodeURIComponent(KMH)}&format=html`);
  });

  test("on the base's own domain the request URL is the IRI", async () => {
    const r = await w.fetch(KMH, { headers: { accept: "application/ld+json" }, redirect: "manual" });
    expect(r.status).toBe(303);
    expect(r.headers.get("location")).toBe(`http://qudt.org/qudt/resource?iri=${encodeURIComponent(KMH)}&format=jsonld`);
  });

  test("hash IRIs: the document itself, 200", async () => {
    const r = await w.fetch("http://example.org/vocab", { headers: { accept: "application/n-triples" }, redirect: "manual" });
    expect(r.status).toBe(200);
    const text = await r.text();
    expect(text).toContain('<http://example.org/vocab> <http://www.w3.org/2000/01/rdf-schema#label> "The example vocabulary" .');
    expect(text).toContain('<http://example.org/vocab#Part> <http://www.w3.org/2000/01/rdf-schema#label> "Teil"@de .');
    expect(text).toContain("<http://example.org/vocab#partOf> <http://www.w3.org/2000/01/rdf-schema#range> <http://example.org/vocab#Thing> .");
    const local = await w.fetch("/hash-doc/id/vocab", { headers: { accept: "application/n-triples" } });
    expect(local.status).toBe(200);
    expect(await local.text()).toBe(text);
  });

  test("404 under the base for an IRI without triples; 404 for a dataset without a base", async () => {
    expect((await w.fetch("/qudt/id/vocab/unit/NOPE", { redirect: "manual" })).status).toBe(404);
    expect((await w.fetch("http://example.org/people/carol", { redirect: "manual" })).status).toBe(404);
    const r = await w.fetch("/schema-org/id/Person", { redirect: "manual" });
    expect(r.status).toBe(404);
    expect((await r.json()).message).toContain("BASE_IRIS");
    expect((await w.fetch("/no/such/route")).status).toBe(404);
  });
});
