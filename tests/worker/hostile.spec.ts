// Hostile requests (issue 18): a fixed-seed generator of odd query texts, parameters, paths,
// methods and headers against one Worker over a real dataset. Every answer must be defined: a
// 2xx/3xx, or a 4xx/5xx whose body is the JSON error of http_error.rs or, for a client that
// accepts HTML, the site's error page (never a 500 "internal",
// a 502 without R2 failing, or a dropped connection); and the isolate answers a plain query
// exactly right after each batch. A failure prints the request, which replays with the seed.
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { FILES, startWorker, type Worker } from "./mf.ts";

const REQUESTS_PER_BATCH = 60;
const BATCHES = 5;

let w: Worker;
let plain = "";
const PLAIN = `/data/sparql?query=${encodeURIComponent("SELECT ?s WHERE { ?s a ?t } ORDER BY ?s LIMIT 5")}`;

beforeAll(async () => {
  // A small time limit and budgets, so that a query bomb ends in a budget error quickly.
  // A small MAX_QUERY_BYTES so that a query over it is a short body (a long one reset by the 413
  // before it is written is the HTTP client's affair, not the Worker's).
  w = await startWorker({ MAX_TIME_MS: "5000", MAX_STEPS: "200000", MAX_ROWS_PRODUCED: "5000", MAX_QUERY_BYTES: "4096" });
  await w.publish("data", resolve(FILES, "schema-org.rete"));
  const r = await w.fetch(PLAIN, { headers: { accept: "application/sparql-results+json" } });
  expect(r.status).toBe(200);
  plain = await r.text();
});
afterAll(() => w?.dispose());

/** mulberry32: small, fixed-seed. */
function generator(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const below = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[below(items.length)];
  return { next, below, pick };
}
type Gen = ReturnType<typeof generator>;

const PIECES = [
  "SELECT", "*", "WHERE", "{", "}", "?s", "?p", "?o", "?x", "a", ".", ";", ",", "(", ")", "OPTIONAL", "UNION", "MINUS",
  "FILTER", "BIND", "AS", "VALUES", "GRAPH", "SERVICE", "<http://schema.org/Thing>", "<http://www.w3.org/2000/01/rdf-schema#label>",
  "rdfs:label", "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>", "BASE <http://x/>", '"x"@en', '"1"^^<http://www.w3.org/2001/XMLSchema#integer>',
  "1e308", "-0", "9999999999999999999999", "/", "|", "^", "*", "+", "?", "!", "ORDER BY", "GROUP BY", "HAVING", "LIMIT", "OFFSET",
  "COUNT(*)", "DISTINCT", "REGEX(?o, \"(a*)*b\")", "STRLEN(?o)", "CONCAT(?o,?o,?o,?o)", "DESCRIBE", "CONSTRUCT", "ASK", "INSERT DATA",
  "LOAD <http://x/>", "#", "\n", "\u0000", "\uffff", "\ud800", "é", "\"\"\"", "'", "\\", "_:b", "[]", "<>", "<x y>", "@en-", "$",
];

/** A query text: pieces of SPARQL in a random order, sometimes a valid query with noise, sometimes deep nesting. */
function queryText(g: Gen): string {
  switch (g.below(5)) {
    case 0:
      return `SELECT * WHERE { ${"{ ".repeat(1 + g.below(300))}?s ?p ?o ${"} ".repeat(g.below(301))}}`;
    case 1:
      return `SELECT * WHERE { ?s ${"(<http://x/p>|^<http://x/q>)*/".repeat(1 + g.below(40))}<http://x/r> ?o }`;
    case 2:
      return Array.from({ length: 1 + g.below(3) }, () => "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }").join(" ");
    default:
      return Array.from({ length: g.below(40) }, () => g.pick(PIECES)).join(g.pick([" ", "", "\t", "\n"]));
  }
}

const MEDIA = ["application/sparql-results+json", "application/sparql-results+xml", "text/csv", "text/tab-separated-values", "text/turtle", "application/n-triples", "application/ld+json", "text/html", "*/*", "application/*", "image/png", ";;;", "text/html;q=abc", "application/json; charset=utf-16", ""];

function accept(g: Gen): string {
  return Array.from({ length: 1 + g.below(4) }, () => `${g.pick(MEDIA)}${g.below(2) ? `;q=${g.pick(["0", "0.5", "1", "-1", "2", "x"])}` : ""}`).join(g.pick([",", ", ", ";"]));
}

function junk(g: Gen): string {
  return g.pick(["", "%", "%zz", "%00", "%ff%fe", "a".repeat(g.below(20_000)), "<http://schema.org/Thing>", "http://schema.org/Thing", "../../x", "\u2028", "?&=#"]);
}

interface Sent {
  path: string;
  init: RequestInit;
}

/** One request: a route, its parameters (some doubled, some broken), a method and headers. */
function request(g: Gen): Sent {
  const params: [string, string][] = [];
  const route = g.pick(["/data/sparql", "/data/sparql", "/data/sparql", "/data/card", "/data/summary", "/data/summary/members", "/data/resource", "/data/.well-known/void", "/data", "/", "/nodata/sparql", `/${junk(g)}`, "/data/id/x"]);
  for (let i = g.below(4); i > 0; i--) {
    const name = g.pick(["query", "query", "format", "default-graph-uri", "named-graph-uri", "iri", "limit", "page", "offset", "class", "property", junk(g)]);
    params.push([name, name === "query" ? queryText(g) : junk(g)]);
  }
  // (Lone surrogates made well-formed: encodeURIComponent throws on them.)
  const search = params.map(([k, v]) => `${encodeURIComponent(k.toWellFormed())}=${g.below(8) ? encodeURIComponent(v.toWellFormed()) : v.replace(/[#\s]/g, "")}`).join("&");
  const method = g.pick(["GET", "GET", "GET", "HEAD", "POST", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"]);
  const headers: Record<string, string> = { accept: accept(g) };
  // (Header values stay printable ASCII: fetch itself refuses others before sending.)
  if (g.below(3) === 0) headers["if-none-match"] = g.pick(['"x"', "*", "W/\"1\"", junk(g).slice(0, 200).replace(/[^\x20-\x7e]/g, "")]);
  const init: RequestInit = { method, headers };
  if (method === "POST") {
    headers["content-type"] = g.pick(["application/sparql-query", "application/x-www-form-urlencoded", "application/sparql-update", "text/plain", "multipart/form-data", "application/sparql-query; charset=latin1"]);
    // Sometimes over MAX_QUERY_BYTES (4 KiB here).
    const text = g.below(10) ? queryText(g) : `SELECT * WHERE { ${"?s ?p ?o . ".repeat(400)}}`;
    init.body = g.below(2) ? text : `query=${encodeURIComponent(text.toWellFormed())}&${search}`;
  }
  return { path: `${route}${search ? `?${search}` : ""}`, init };
}

async function check(sent: Sent) {
  let what = `${sent.init.method} ${sent.path.slice(0, 300)} ${JSON.stringify(sent.init.headers).slice(0, 300)} ${String(sent.init.body ?? "").slice(0, 300)}`;
  const r = await w.fetch(sent.path, sent.init);
  const text = await r.text();
  what = `${what} -> ${r.status} ${r.headers.get("content-type")} ${text.slice(0, 300)}`;
  expect(r.status, what).toBeGreaterThanOrEqual(200);
  expect(r.status, what).toBeLessThan(600);
  expect([500, 502], what).not.toContain(r.status);
  const html = (r.headers.get("content-type") ?? "").startsWith("text/html");
  if (r.status >= 400 && sent.init.method !== "HEAD" && html) {
    // The site's page with the error, for clients that accept HTML.
    expect(String((sent.init.headers as Record<string, string>).accept), what).toContain("text/html");
    expect(text.startsWith("<!doctype html>"), what).toBe(true);
  } else if (r.status >= 400 && sent.init.method !== "HEAD") {
    expect(r.headers.get("content-type"), what).toBe("application/json");
    const body = JSON.parse(text);
    expect(body.status, what).toBe(r.status);
    expect(typeof body.error, what).toBe("string");
    expect(typeof body.message, what).toBe("string");
  }
}

describe("hostile requests get defined answers", () => {
  for (let batch = 0; batch < BATCHES; batch++) {
    test(`batch ${batch} (seed ${1800 + batch}): ${REQUESTS_PER_BATCH} requests, then a plain query answers right`, async () => {
      const g = generator(1800 + batch);
      for (let i = 0; i < REQUESTS_PER_BATCH; i++) {
        await check(request(g));
      }
      const r = await w.fetch(PLAIN, { headers: { accept: "application/sparql-results+json" } });
      expect(r.status).toBe(200);
      expect(await r.text()).toBe(plain);
    });
  }
});
