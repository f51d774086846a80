// /{ds}/sparql: the SPARQL 1.1 Protocol (GET, POST direct and form), content negotiation and
// format=, the service description, and every error the route can answer.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { counters, startWithExamples, startWorker, FILES, RETE, type Worker } from "./mf.ts";

let w: Worker;
beforeAll(async () => {
  w = await startWithExamples();
});
afterAll(() => w?.dispose());

const SELECT = "SELECT ?label WHERE { <http://schema.org/Person> <http://www.w3.org/2000/01/rdf-schema#label> ?label }";
const ASK = "ASK { <http://schema.org/Person> a <http://www.w3.org/2000/01/rdf-schema#Class> }";
const CONSTRUCT = "CONSTRUCT { <http://schema.org/Person> ?p ?o } WHERE { <http://schema.org/Person> ?p ?o }";
const get = (query: string, accept?: string, extra = "") =>
  w.fetch(`/schema-org/sparql?query=${encodeURIComponent(query)}${extra}`, accept ? { headers: { accept } } : undefined);

function expectCommon(r: Response) {
  expect(r.headers.get("access-control-allow-origin")).toBe("*");
  const c = counters(r);
  for (const value of [c.reads, c.bytes, c.cacheHits, c.subrequests, c.rounds, c.memory]) expect(Number.isInteger(value)).toBe(true);
  expect(c.subrequests).toBeGreaterThanOrEqual(c.reads);
}

describe("SELECT and ASK formats", () => {
  test("JSON by default, with ETag, Cache-Control and counters", async () => {
    const r = await get(SELECT);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/sparql-results+json");
    expect(r.headers.get("etag")).toMatch(/^"[0-9a-f]{32}-[0-9a-f]{16}"$/);
    expect(r.headers.get("cache-control")).toMatch(/max-age=\d+/);
    expect(r.headers.get("vary")).toBe("Accept");
    expectCommon(r);
    const body = await r.json();
    expect(body.head.vars).toEqual(["label"]);
    expect(body.results.bindings).toEqual([{ label: { type: "literal", value: "Person" } }]);
  });

  test.each([
    ["application/sparql-results+xml", "application/sparql-results+xml", "<literal>Person</literal>"],
    ["text/csv", "text/csv; charset=utf-8", "label\r\nPerson\r\n"],
    ["text/tab-separated-values", "text/tab-separated-values; charset=utf-8", '?label\n"Person"\n'],
    ["application/json", "application/sparql-results+json", '"value":"Person"'],
    ["text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "text/html; charset=utf-8", "<td><span class=\"lit\">Person</span></td>"],
  ])("Accept %s", async (accept, type, fragment) => {
    const r = await get(SELECT, accept);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe(type);
    expect(await r.text()).toContain(fragment);
  });

  test("a long Accept list mixing result and RDF types serves the best listed one", async () => {
    const accept = "application/sparql-results+xml;q=0.9, application/rdf+xml, application/sparql-results+json;q=0.8, text/turtle;q=0.7, */*;q=0.1";
    const select = await get(SELECT, accept);
    expect(select.headers.get("content-type")).toBe("application/sparql-results+xml");
    const construct = await get(CONSTRUCT, accept);
    expect(construct.headers.get("content-type")).toBe("application/rdf+xml");
    expect(await construct.text()).toContain("rdf:RDF");
  });

  test("ASK in JSON and XML", async () => {
    expect(await (await get(ASK)).json()).toEqual({ head: {}, boolean: true });
    const xml = await (await get(ASK, "application/sparql-results+xml")).text();
    expect(xml).toContain("<boolean>true</boolean>");
  });

  test("format= overrides Accept, by short name or media type", async () => {
    const csv = await get(SELECT, "application/sparql-results+json", "&format=csv");
    expect(csv.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    const xml = await get(SELECT, undefined, `&format=${encodeURIComponent("application/sparql-results+xml")}`);
    expect(xml.headers.get("content-type")).toBe("application/sparql-results+xml");
  });

  test("default-graph-uri and named-graph-uri pick the dataset", async () => {
    const count = encodeURIComponent("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }");
    const unit = encodeURIComponent("http://qudt.org/vocab/unit/");
    const r = await w.fetch(`/qudt/sparql?query=${count}&default-graph-uri=${unit}`);
    expect((await r.json()).results.bindings[0].n.value).toBe("22360");
    const graphs = encodeURIComponent("SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g");
    const prefix = encodeURIComponent("http://qudt.org/vocab/prefix/");
    const named = await w.fetch(`/qudt/sparql?query=${graphs}&named-graph-uri=${unit}&named-graph-uri=${prefix}`);
    const rows = (await named.json()).results.bindings.map((b: { g: { value: string }; n: { value: string } }) => [b.g.value, b.n.value]).sort();
    expect(rows).toEqual([["http://qudt.org/vocab/prefix/", "305"], ["http://qudt.org/vocab/unit/", "22360"]]);
  });

  test("qudt is built with default_graph = \"union\": a query without FROM sees every graph", async () => {
    const count = encodeURIComponent("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }");
    expect((await (await w.fetch(`/qudt/sparql?query=${count}`)).json()).results.bindings[0].n.value).toBe("55541");
    const from = encodeURIComponent("SELECT (COUNT(*) AS ?n) FROM <http://qudt.org/vocab/unit/> WHERE { ?s ?p ?o }");
    expect((await (await w.fetch(`/qudt/sparql?query=${from}`)).json()).results.bindings[0].n.value).toBe("22360");
    const description = await (await w.fetch("/qudt/sparql")).text();
    expect(description).toContain("sd:UnionDefaultGraph");
    expect(await (await w.fetch("/schema-org/sparql")).text()).not.toContain("UnionDefaultGraph");
  });

  test("an unknown function is an expression error, said once in x-rete-warning", async () => {
    const r = await get("SELECT ?label WHERE { <http://schema.org/Person> <http://www.w3.org/2000/01/rdf-schema#label> ?label FILTER(<http://example.org/f>(?label)) }");
    expect(r.status).toBe(200);
    expect((await r.json()).results.bindings).toEqual([]);
    expect(r.headers.get("x-rete-warning")).toContain("<http://example.org/f>");
    expect((await get(SELECT)).headers.get("x-rete-warning")).toBeNull();
  });

  test("unknown parameters are ignored", async () => {
    const r = await get(SELECT, undefined, "&timeout=5&debug=on&output=whatever");
    expect(r.status).toBe(200);
    expect((await r.json()).results.bindings).toHaveLength(1);
  });
});

describe("CONSTRUCT and DESCRIBE formats", () => {
  test.each([
    [undefined, "text/turtle; charset=utf-8", "<http://schema.org/Person>"],
    ["text/turtle", "text/turtle; charset=utf-8", "<http://schema.org/Person>"],
    ["application/n-triples", "application/n-triples; charset=utf-8", '<http://schema.org/Person> <http://www.w3.org/2000/01/rdf-schema#label> "Person" .'],
    ["application/ld+json", "application/ld+json", '"@id"'],
    ["application/rdf+xml", "application/rdf+xml", "rdf:Description"],
    ["application/n-quads", "application/n-quads; charset=utf-8", "<http://schema.org/Person>"],
  ])("Accept %s", async (accept, type, fragment) => {
    const r = await get(CONSTRUCT, accept);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe(type);
    expect(await r.text()).toContain(fragment);
  });

  test("TriG, and HTML for people", async () => {
    const trig = await get(CONSTRUCT, "application/trig");
    expect(trig.headers.get("content-type")).toBe("application/trig; charset=utf-8");
    expect(await trig.text()).toContain("<http://schema.org/Person>");
    const html = await get(CONSTRUCT, "text/html");
    expect(html.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const page = await html.text();
    expect(page).toContain('<th scope="col">subject</th><th scope="col">predicate</th><th scope="col">object</th>');
    // IRIs by name (issue 16): the label, the IRI on hover and in the link.
    expect(page).toContain('<a class="iri named" href="/schema-org/resource?iri=http%3A%2F%2Fschema.org%2FPerson" title="http://schema.org/Person">Person</a>');
    const ask = await get(ASK, "text/html");
    expect(await ask.text()).toContain("Answer: <strong>true</strong>");
  });

  test("DESCRIBE gives the resource's triples", async () => {
    const r = await get("DESCRIBE <http://schema.org/Person>", "application/n-triples");
    const lines = (await r.text()).trim().split("\n");
    expect(lines.length).toBeGreaterThan(3);
    expect(lines.every((l) => l.startsWith("<http://schema.org/Person> "))).toBe(true);
  });

  test("JSON-LD parses", async () => {
    const body = await (await get(CONSTRUCT, "application/ld+json")).json();
    expect(JSON.stringify(body)).toContain("http://schema.org/Person");
  });
});

describe("POST", () => {
  test("application/sparql-query", async () => {
    const r = await w.fetch("/schema-org/sparql", { method: "POST", headers: { "content-type": "application/sparql-query" }, body: SELECT });
    expect(r.status).toBe(200);
    expect((await r.json()).results.bindings[0].label.value).toBe("Person");
  });

  test("form encoding, with format in the body", async () => {
    const body = new URLSearchParams({ query: SELECT, format: "tsv" });
    const r = await w.fetch("/schema-org/sparql", { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("text/tab-separated-values; charset=utf-8");
  });

  test("a query longer than a URL allows", async () => {
    const values = Array.from({ length: 2000 }, (_, i) => `<http://schema.org/x${i}>`).join(" ");
    const query = `SELECT ?label WHERE { VALUES ?s { ${values} <http://schema.org/Person> } ?s <http://www.w3.org/2000/01/rdf-schema#label> ?label }`;
    expect(query.length).toBeGreaterThan(30_000);
    const r = await w.fetch("/schema-org/sparql", { method: "POST", headers: { "content-type": "application/sparql-query" }, body: query });
    expect(r.status).toBe(200);
    expect((await r.json()).results.bindings).toEqual([{ label: { type: "literal", value: "Person" } }]);
  });

  test("415 for another body type", async () => {
    const r = await w.fetch("/schema-org/sparql", { method: "POST", headers: { "content-type": "text/plain" }, body: SELECT });
    expect(r.status).toBe(415);
    expect((await r.json()).error).toBe("unsupported-media-type");
  });

  test("413 for a query over MAX_QUERY_BYTES", async () => {
    const r = await w.fetch("/schema-org/sparql", { method: "POST", headers: { "content-type": "application/sparql-query" }, body: `#${"x".repeat(70_000)}\n${SELECT}` });
    expect(r.status).toBe(413);
    expect((await r.json()).error).toBe("query-too-large");
  });
});

describe("errors", () => {
  test("400 with the parse position and a caret, worded as by the CLI", async () => {
    const query = "SELECT ?s WHERE {\n  ?s ?p ?o .\n  ?s <a b> ?o\n}";
    const r = await get(query);
    expect(r.status).toBe(400);
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(r.headers.get("cache-control")).toBe("no-store");
    const body = await r.json();
    expect(body).toMatchObject({ error: "syntax", status: 400, line: 3, column: 11, offset: 41 });
    expect(body.message).toMatch(/^invalid query at line 3 column 11: /);
    expect(body.pointer).toBe("  ?s <a b> ?o\n          ^");
    const cli = spawnSync(RETE, ["query", resolve(FILES, "schema-org.rete"), query], { encoding: "utf8" });
    expect(cli.stderr).toContain(`rete: ${body.message}`);
  });

  test("404 for an unknown dataset", async () => {
    const r = await w.fetch(`/nope/sparql?query=${encodeURIComponent(SELECT)}`);
    expect(r.status).toBe(404);
    expect(await r.json()).toMatchObject({ error: "not-found", message: 'no dataset named "nope"' });
  });

  test("an Accept the query form cannot be served in gets its default, not 406", async () => {
    for (const accept of ["text/turtle", "image/png"]) {
      const r = await get(SELECT, accept);
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toBe("application/sparql-results+json");
    }
  });

  test("a format= the query form cannot be written in defers to Accept; two queries are a 400", async () => {
    const r = await get(SELECT, "application/sparql-results+xml", "&format=ttl");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/sparql-results+xml");
    const two = await w.fetch(`/schema-org/sparql?query=${encodeURIComponent(SELECT)}&query=${encodeURIComponent(ASK)}`);
    expect(two.status).toBe(400);
  });

  test("400 for an invalid default-graph-uri", async () => {
    const r = await get(SELECT, undefined, "&default-graph-uri=not%20an%20iri");
    expect(r.status).toBe(400);
    expect((await r.json()).message).toContain("default-graph-uri");
  });

  test("405 for PUT, with Allow", async () => {
    const r = await w.fetch("/schema-org/sparql", { method: "PUT", body: "x" });
    expect(r.status).toBe(405);
    expect(r.headers.get("allow")).toBe("GET, HEAD, POST, OPTIONS");
  });

  test("501 for SERVICE", async () => {
    const r = await get("SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }");
    expect(r.status).toBe(501);
    expect((await r.json()).error).toBe("unsupported");
  });
});

describe("caching and CORS", () => {
  test("If-None-Match gives 304 with the same ETag, without reading the file", async () => {
    const first = await get(SELECT);
    const etag = first.headers.get("etag") ?? "";
    const again = await w.fetch(`/schema-org/sparql?query=${encodeURIComponent(SELECT)}`, { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);
    expect(again.headers.get("etag")).toBe(etag);
    expect(await again.text()).toBe("");
    expect(counters(again).bytes).toBeLessThan(1000); // the pointer at most
    const other = await get(SELECT, "text/csv");
    expect(other.headers.get("etag")).not.toBe(etag);
  });

  test("OPTIONS preflight", async () => {
    const r = await w.fetch("/schema-org/sparql", { method: "OPTIONS", headers: { origin: "https://example.org", "access-control-request-method": "POST" } });
    expect(r.status).toBe(204);
    expect(r.headers.get("access-control-allow-origin")).toBe("*");
    expect(r.headers.get("access-control-allow-methods")).toContain("POST");
    expect(r.headers.get("access-control-allow-headers")).toBe("Accept, Content-Type, If-None-Match");
  });

  test("OPTIONS preflight allows the request headers the browser names", async () => {
    const asked = "content-type, x-requested-with, authorization";
    const r = await w.fetch("/schema-org/sparql", { method: "OPTIONS", headers: { origin: "https://example.org", "access-control-request-method": "POST", "access-control-request-headers": asked } });
    expect(r.status).toBe(204);
    expect(r.headers.get("access-control-allow-headers")).toBe(asked);
    expect(r.headers.get("vary")).toContain("Access-Control-Request-Headers");
  });

  test("HEAD has the headers and no body", async () => {
    const r = await w.fetch(`/schema-org/sparql?query=${encodeURIComponent(SELECT)}`, { method: "HEAD" });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/sparql-results+json");
    expect(await r.text()).toBe("");
  });
});

describe("service description", () => {
  test("Turtle with VoID statistics, without a query", async () => {
    const r = await w.fetch("/qudt/sparql");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("text/turtle; charset=utf-8");
    const text = await r.text();
    expect(text).toContain("sd:Service");
    expect(text).toContain("<http://rete.test/qudt/sparql>");
    expect(text).toContain("void:triples 55541");
    expect(text).toContain("sd:namedGraph");
    expect(text).toContain("<http://qudt.org/vocab/unit/>");
  });

  test("JSON-LD, and 304 for its ETag", async () => {
    const r = await w.fetch("/qudt/sparql", { headers: { accept: "application/ld+json" } });
    expect(r.headers.get("content-type")).toBe("application/ld+json");
    expect(JSON.stringify(await r.json())).toContain("http://www.w3.org/ns/sparql-service-description#Service");
    const again = await w.fetch("/qudt/sparql", { headers: { accept: "application/ld+json", "if-none-match": r.headers.get("etag") ?? "" } });
    expect(again.status).toBe(304);
  });

  test("N-Triples and an HTML form", async () => {
    const nt = await w.fetch("/qudt/sparql", { headers: { accept: "application/n-triples" } });
    expect(await nt.text()).toContain("<http://www.w3.org/ns/sparql-service-description#endpoint>");
    const html = await w.fetch("/qudt/sparql", { headers: { accept: "text/html" } });
    expect(html.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await html.text()).toContain('<form class="query" method="get" action="/qudt/sparql">');
  });
});

describe("budgets", () => {
  // A term lookup, its triples, then the terms of the answer: more than one round of blocks.
  const JOIN = "SELECT * WHERE { <http://schema.org/Person> ?p ?o . ?o ?q ?x }";
  const ALL = "SELECT * WHERE { ?s ?p ?o }";
  test.each([
    ["MAX_ROWS_PRODUCED", "10", ALL, "rows-produced", "query exceeded the limit of 10 result rows"],
    ["MAX_QUADS_SCANNED", "100", ALL, "quads-scanned", "query exceeded the limit of 100 quads scanned"],
    ["MAX_STEPS", "1000", ALL, "steps", "query exceeded the limit of 1000 evaluation steps"],
    ["MAX_ROUNDS", "1", JOIN, "rounds", "query needs more than 1 rounds of reads"],
    ["MAX_SUBREQUESTS", "6", JOIN, "subrequests", "query needs more than 6 subrequests"],
    ["MAX_READ_BYTES", "20000", JOIN, "read-bytes", "query needs more than 20000 bytes read from storage"],
    // Without compressed blocks kept in the isolate, a query's decoded blocks must all fit at once.
    ["CACHE_BYTES", "200000", ALL, "cache-bytes", "bytes", { COMPRESSED_CACHE_BYTES: "0" }],
  ])("%s=%s: 422 naming %s, and the isolate keeps serving", async (name, value, query, limit, message, extra: Record<string, string> = {}) => {
    const small = await startWorker({ [name]: value, ...extra });
    try {
      await small.publish("schema-org", resolve(FILES, "schema-org.rete"));
      const r = await small.fetch(`/schema-org/sparql?query=${encodeURIComponent(query)}`);
      const body = await r.json();
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.headers.get("x-rete-limit")).toBe(limit);
      expect(body).toMatchObject({ error: "budget", status: 422, limit });
      expect(body.message).toContain(message);
      const ok = await small.fetch(`/schema-org/sparql?query=${encodeURIComponent(ASK)}`);
      expect(ok.status).toBe(200);
    } finally {
      await small.dispose();
    }
  });
});

describe("the isolate's compressed blocks and computed values (issue 14: what native answers)", () => {
  // Every literal of qudt decoded: 419,282 sealed bytes that decode to 1.4 MB of blocks (`rete cost`).
  const SCAN = 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o FILTER(CONTAINS(STR(?o), "e")) }';
  const sparql = (worker: Worker, query: string) => worker.fetch(`/qudt/sparql?query=${encodeURIComponent(query)}`);

  test("a scan whose decoded blocks exceed CACHE_BYTES answers, and on the warm isolate reads nothing: no R2 read, no Cache API call", async () => {
    const expected = await (await sparql(w, SCAN)).json();
    expect(Number(expected.results.bindings[0].n.value)).toBeGreaterThan(1000);
    const small = await startWorker({ CACHE_BYTES: "600000", POINTER_TTL_S: "60" });
    try {
      await small.publish("qudt", resolve(FILES, "qudt.rete"));
      const cold = await sparql(small, SCAN);
      expect(cold.status).toBe(200);
      expect(await cold.json()).toEqual(expected);
      expect(counters(cold).reads).toBeGreaterThan(1);
      for (let i = 0; i < 2; i++) {
        const warm = await sparql(small, SCAN);
        expect(warm.status).toBe(200);
        expect(await warm.json()).toEqual(expected);
        expect(counters(warm)).toMatchObject({ reads: 0, subrequests: 0, cacheHits: 0, bytes: 0 });
      }
      // Without the compressed blocks the same scan cannot hold its blocks (the limit above).
      const none = await startWorker({ CACHE_BYTES: "600000", COMPRESSED_CACHE_BYTES: "0" });
      try {
        await none.publish("qudt", resolve(FILES, "qudt.rete"));
        const r = await sparql(none, SCAN);
        expect(r.status).toBe(422);
        expect(r.headers.get("x-rete-limit")).toBe("cache-bytes");
      } finally {
        await none.dispose();
      }
    } finally {
      await small.dispose();
    }
  });

  test("LANG of every literal answers under a MAX_COMPUTED_BYTES that one value per row would exceed; distinct values still count", async () => {
    // More than 250 literals: "en" counted per row (41 bytes with its datatype) would pass 10,000.
    const PER_LANGUAGE = "SELECT ?l (COUNT(*) AS ?n) WHERE { ?s ?p ?o FILTER(isLiteral(?o)) } GROUP BY (LANG(?o) AS ?l) ORDER BY ?l";
    const expected = await (await sparql(w, PER_LANGUAGE)).json();
    const literals = expected.results.bindings.reduce((sum: number, b: { n: { value: string } }) => sum + Number(b.n.value), 0);
    expect(literals).toBeGreaterThan(250);
    const small = await startWorker({ MAX_COMPUTED_BYTES: "10000" });
    try {
      await small.publish("qudt", resolve(FILES, "qudt.rete"));
      const r = await sparql(small, PER_LANGUAGE);
      expect(r.status).toBe(200);
      expect(await r.json()).toEqual(expected);
      const distinct = await sparql(small, 'SELECT (COUNT(?v) AS ?n) WHERE { ?s ?p ?o FILTER(isLiteral(?o)) BIND(CONCAT(STR(?o), "!") AS ?v) }');
      expect(distinct.status).toBe(422);
      expect(distinct.headers.get("x-rete-limit")).toBe("computed-bytes");
    } finally {
      await small.dispose();
    }
  });
});

describe("query slots", () => {
  test("a request waiting for a slot past MAX_TIME_MS gets 503 busy", async () => {
    const one = await startWorker({ MAX_CONCURRENT_QUERIES: "1", MAX_TIME_MS: "3000" });
    try {
      await one.publish("qudt", resolve(FILES, "qudt.rete"));
      // A large streamed answer the client does not read holds the only slot.
      const held = await one.fetch(`/qudt/sparql?query=${encodeURIComponent("SELECT * WHERE { GRAPH <http://qudt.org/vocab/unit/> { ?s ?p ?o } }")}&format=xml`);
      expect(held.status).toBe(200);
      expect(Number(held.headers.get("x-rete-answer-bytes"))).toBeGreaterThan(1 << 20);
      const r = await one.fetch(`/qudt/sparql?query=${encodeURIComponent(ASK)}`);
      expect(r.status).toBe(503);
      expect(r.headers.get("retry-after")).toBe("1");
      expect((await r.json()).error).toBe("busy");
      await held.body?.cancel();
    } finally {
      await one.dispose();
    }
  });
});

describe("large answers stream", () => {
  test("a 2 MB answer arrives whole and parses", async () => {
    const r = await w.fetch(`/qudt/sparql?query=${encodeURIComponent("SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }")}`, { headers: { accept: "application/sparql-results+json" } });
    expect(r.status).toBe(200);
    expect(Number(r.headers.get("x-rete-answer-bytes"))).toBeGreaterThan(1 << 20);
    const body = await r.json();
    expect(body.results.bindings).toHaveLength(55541);
    expect(counters(r).memory).toBeLessThan(64 << 20);
  });
});
