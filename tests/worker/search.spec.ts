// GET /{ds}/search?q=&lang=&limit= (issue 16): `rete search --json`'s contract over HTTP, the
// same hits as the CLI on the same file, what a search costs in rounds and R2 reads, the usual
// headers (ETag, 304, CORS, cacheable), budgets as 422 JSON, the HTML page and its no-script
// form, a file without an index, the Service Description's text:query feature, and text:query
// through /{ds}/sparql.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { counters, FILES, RETE, ROOT, startWorker, type Worker } from "./mf.ts";

let w: Worker;
const dir = mkdtempSync(resolve(tmpdir(), "rete-search-"));
const PEOPLE = resolve(dir, "people.rete");

/** People, places and a bank; Lincoln the person is linked to most (as in publisher/tests/search.rs). */
const DATA = `@prefix : <http://example.org/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix foaf: <http://xmlns.com/foaf/0.1/> .
:lincoln rdfs:label "Abraham Lincoln"@en , "Abraham Lincoln"@fr ; skos:altLabel "Honest Abe"@en .
:lincolnshire rdfs:label "Lincolnshire"@en .
:lincoln-ne skos:prefLabel "Lincoln, Nebraska"@en .
:melisande foaf:name "Mélisande" .
:linc-bank rdfs:label "LINC Bank" .
:w1 :about :lincoln . :w2 :about :lincoln . :w3 :about :lincoln . :w4 :about :lincoln .
:w5 :about :lincoln-ne .
`;

function build(name: string, flags: string[] = []): string {
  const output = resolve(dir, `${name}.rete`);
  execFileSync(RETE, ["build", "-q", resolve(dir, "people.ttl"), "-o", output, ...flags], { cwd: ROOT });
  return output;
}

/** `rete search FILE QUERY --json` */
function cli(file: string, query: string, ...flags: string[]) {
  return JSON.parse(execFileSync(RETE, ["search", file, query, "--json", ...flags], { encoding: "utf8" }));
}

const get = (path: string, init?: RequestInit) => w.fetch(path, { headers: { accept: "application/json" }, ...init });

beforeAll(async () => {
  writeFileSync(resolve(dir, "people.ttl"), DATA);
  build("people");
  // A query limit below what workerd takes in a URL (wrangler.toml's is 64 KiB, for POSTed SPARQL).
  w = await startWorker({ MAX_QUERY_BYTES: "4096" });
  await w.publish("people", PEOPLE);
  await w.publish("plain", build("plain", ["--no-search"]));
  await w.publish("qudt", resolve(FILES, "qudt.rete"));
});
afterAll(async () => {
  await w?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

describe("GET /{ds}/search", () => {
  test("the CLI's JSON contract, best first, the same hits as `rete search` on the file", async () => {
    const r = await get("/people/search?q=linc");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/json");
    const body = await r.json();
    expect(Object.keys(body)).toEqual(["query", "results", "cut", "rounds", "requests", "bytes"]);
    expect(body.query).toBe("linc");
    expect(body.results[0]).toEqual({ iri: "http://example.org/lincoln", label: "Abraham Lincoln", lang: expect.any(String), score: expect.any(Number) });
    for (const hit of body.results) expect(Object.keys(hit)).toEqual(["iri", "label", "lang", "score"]);
    const scores = body.results.map((hit: { score: number }) => hit.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(body.results).toEqual(cli(PEOPLE, "linc").results);
    // What the request read, in the body and the headers alike.
    const c = counters(r);
    expect(body).toMatchObject({ rounds: c.rounds, requests: c.reads, bytes: c.bytes });
  });

  test.each([
    ["abr LINC", [], ["http://example.org/lincoln"]],
    ["Mélis", [], ["http://example.org/melisande"]],
    ["linc", ["--lang", "fr"], ["http://example.org/lincoln"]],
    ["linc", ["--lang", ""], ["http://example.org/linc-bank"]],
    ["zebra", [], []],
  ])("q=%s %j: the CLI's hits", async (q, flags, expected) => {
    const params = new URLSearchParams({ q });
    if (flags.length) params.set("lang", flags[1]);
    const body = await (await get(`/people/search?${params}`)).json();
    expect(body.results.map((hit: { iri: string }) => hit.iri)).toEqual(expected);
    expect(body.results).toEqual(cli(PEOPLE, q, ...flags).results);
  });

  test("limit= caps the hits; out of range, a missing q, a q too long: 4xx JSON", async () => {
    expect((await (await get("/people/search?q=linc&limit=2")).json()).results).toHaveLength(2);
    for (const [path, status, text] of [
      ["/people/search?q=linc&limit=0", 400, "limit"],
      ["/people/search?q=linc&limit=many", 400, "limit"],
      ["/people/search", 400, "q="],
      [`/people/search?q=${"a".repeat(4097)}`, 413, "longer than 4096 bytes"],
    ] as const) {
      const r = await get(path);
      expect(r.status, path).toBe(status);
      expect(r.headers.get("content-type")).toBe("application/json");
      expect((await r.json()).message).toContain(text);
    }
  });

  test("cold: at most 4 rounds (pointer, open, posting blocks, names); warm in the same isolate: names only", async () => {
    const fresh = await startWorker();
    try {
      await fresh.publish("qudt", resolve(FILES, "qudt.rete"));
      const cold = await fresh.fetch("/qudt/search?q=kilomet", { headers: { accept: "application/json" } });
      const body = await cold.json();
      expect(body.results.length).toBeGreaterThan(0);
      expect(body.results[0].label.toLowerCase()).toContain("kilomet");
      expect(counters(cold).rounds).toBeLessThanOrEqual(4);
      const again = await fresh.fetch("/qudt/search?q=kilomet&limit=19", { headers: { accept: "application/json" } });
      expect(counters(again).rounds).toBeLessThanOrEqual(1);
    } finally {
      await fresh.dispose();
    }
  });

  test("cacheable: a strong ETag per query, 304 on If-None-Match, CORS", async () => {
    const r = await get("/people/search?q=linc");
    const etag = r.headers.get("etag");
    expect(etag).toMatch(/^"[0-9a-f]{32}-[0-9a-f]{16}"$/);
    expect(r.headers.get("cache-control")).toContain("max-age");
    expect(r.headers.get("access-control-allow-origin")).toBe("*");
    const other = await get("/people/search?q=linc&lang=en");
    expect(other.headers.get("etag")).not.toBe(etag);
    const cached = await get("/people/search?q=linc", { headers: { accept: "application/json", "if-none-match": etag! } });
    expect(cached.status).toBe(304);
    const preflight = await w.fetch("/people/search?q=linc", { method: "OPTIONS", headers: { origin: "http://elsewhere.test", "access-control-request-method": "GET" } });
    expect(preflight.status).toBe(204);
    expect((await w.fetch("/people/search?q=linc", { method: "POST" })).status).toBe(405);
  });

  test("a file built with --no-search: 404 JSON that says so", async () => {
    const r = await get("/plain/search?q=linc");
    expect(r.status).toBe(404);
    expect(await r.json()).toMatchObject({ error: "not-found", status: 404, message: expect.stringContaining("no search index") });
  });

  test.each([
    ["MAX_SUBREQUESTS", "2", "subrequests"],
    ["MAX_READ_BYTES", "2000", "read-bytes"],
    // Rounds of blocks after the open: postings, then names; one is not enough.
    ["MAX_ROUNDS", "1", "rounds"],
  ])("%s=%s: 422 naming %s", async (name, value, limit) => {
    const small = await startWorker({ [name]: value });
    try {
      await small.publish("qudt", resolve(FILES, "qudt.rete"));
      const r = await small.fetch("/qudt/search?q=metre", { headers: { accept: "application/json" } });
      const body = await r.json();
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.headers.get("x-rete-limit")).toBe(limit);
      expect(body).toMatchObject({ error: "budget", status: 422, limit });
    } finally {
      await small.dispose();
    }
  });
});

describe("the search page", () => {
  test("HTML for browsers: the form, each hit a link to its resource page", async () => {
    const r = await w.fetch("/people/search?q=linc", { headers: { accept: "text/html" } });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const html = await r.text();
    expect(html).toContain('<form class="search" role="search" method="get" action="/people/search"');
    expect(html).toContain('<a href="/people/resource?iri=http%3A%2F%2Fexample.org%2Flincoln">Abraham Lincoln</a>');
    expect(html).toContain('data-page="search"');
    const empty = await (await w.fetch("/people/search", { headers: { accept: "text/html" } })).text();
    expect(empty).toContain('action="/people/search"');
    expect(empty).not.toContain("<ol");
  });

  test("the dataset page has a search box when the file has an index, not otherwise", async () => {
    const page = await (await w.fetch("/people", { headers: { accept: "text/html" } })).text();
    expect(page).toContain('<form class="search" role="search" method="get" action="/people/search"');
    const plain = await (await w.fetch("/plain", { headers: { accept: "text/html" } })).text();
    expect(plain).not.toContain('class="search"');
  });

  test("the home page's form names a dataset; /_search sends it on with 303", async () => {
    const home = await (await w.fetch("/", { headers: { accept: "text/html" } })).text();
    expect(home).toContain('action="/_search"');
    expect(home).toContain('<option value="people">people</option>');
    const r = await w.fetch("/_search?ds=people&q=abr+linc&limit=5", { redirect: "manual" });
    expect(r.status).toBe(303);
    expect(r.headers.get("location")).toBe("/people/search?q=abr+linc&limit=5");
    expect((await w.fetch("/_search?q=linc")).status).toBe(400);
  });
});

describe("the search index elsewhere", () => {
  test("the Service Description names the text:query feature when the file has an index", async () => {
    const sd = async (ds: string) => (await w.fetch(`/${ds}/sparql`, { headers: { accept: "text/turtle" } })).text();
    expect(await sd("people")).toMatch(/sd:feature <http:\/\/jena\.apache\.org\/text#query>/);
    expect(await sd("plain")).not.toContain("jena.apache.org/text#query");
  });

  test("the card says the dataset has a search index", async () => {
    expect((await (await get("/people/card")).json()).search).toBeTruthy();
    expect((await (await get("/plain/card")).json()).search ?? null).toBeNull();
  });

  test("text:query through /{ds}/sparql starts from a name", async () => {
    const query = `PREFIX text: <http://jena.apache.org/text#> PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
SELECT ?s WHERE { ?s text:query (rdfs:label "linc*" 10) . ?w <http://example.org/about> ?s }`;
    const r = await w.fetch(`/people/sparql?query=${encodeURIComponent(query)}`, { headers: { accept: "application/sparql-results+json" } });
    expect(r.status).toBe(200);
    const rows = (await r.json()).results.bindings.map((b: { s: { value: string } }) => b.s.value);
    expect(rows.filter((s: string) => s === "http://example.org/lincoln")).toHaveLength(4);
  });
});
