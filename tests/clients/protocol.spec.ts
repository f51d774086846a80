// The SPARQL 1.1 Protocol (https://www.w3.org/TR/sparql11-protocol/) against `wrangler dev`: the
// cases of the W3C protocol test suite (data-sparql11/protocol), rewritten for this read-only
// endpoint, plus what real clients send: long Accept lists, unknown parameters, HEAD, CORS
// preflight. Answers with data are compared with `rete query` on the same file.
import { describe, expect, inject, it } from "vitest";
import { canonical, reference } from "./answers";

const endpoint = `${inject("baseURL")}/people/sparql`;
const reteFile = inject("reteFile");

const EX = "http://example.org/";
const SELECT = "PREFIX ex: <http://example.org/> SELECT ?s ?o WHERE { ?s ex:name ?o }";
const CONSTRUCT = "PREFIX ex: <http://example.org/> CONSTRUCT { ?s ex:label ?o } WHERE { ?s ex:name ?o }";
const FORM = "application/x-www-form-urlencoded";
const JENA_SELECT_ACCEPT =
  "application/sparql-results+json, application/sparql-results+xml;q=0.9, text/tab-separated-values;q=0.7, text/csv;q=0.5, application/json;q=0.2, application/xml;q=0.2, */*;q=0.1";

function get(params: Record<string, string | string[]>, headers: Record<string, string> = {}, method = "GET"): Promise<Response> {
  const search = new URLSearchParams();
  for (const [name, values] of Object.entries(params)) for (const value of [values].flat()) search.append(name, value);
  return fetch(`${endpoint}?${search}`, { method, headers });
}

function post(body: string, contentType: string, headers: Record<string, string> = {}, query = ""): Promise<Response> {
  return fetch(`${endpoint}${query}`, { method: "POST", body, headers: { "content-type": contentType, ...headers } });
}

function form(params: Record<string, string | string[]>): string {
  const search = new URLSearchParams();
  for (const [name, values] of Object.entries(params)) for (const value of [values].flat()) search.append(name, value);
  return search.toString();
}

/** The response's SELECT answer, in the comparable shape of answers.ts. */
async function solutions(response: Response) {
  expect(response.status, await response.clone().text()).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^application\/sparql-results\+json/);
  const json = await response.json();
  return canonical({ vars: json.head.vars, rows: json.results.bindings });
}

/** An error response: its status, and a body that says what went wrong. */
async function refused(response: Response, status: number | number[], says: RegExp) {
  const body = await response.text();
  expect([status].flat(), body).toContain(response.status);
  expect(body).toMatch(says);
}

describe("query operation", () => {
  it("GET with a query parameter", async () => {
    expect(await solutions(await get({ query: SELECT }))).toEqual(reference(reteFile, "select", SELECT));
  });

  it("POST with URL-encoded parameters", async () => {
    expect(await solutions(await post(form({ query: SELECT }), FORM))).toEqual(reference(reteFile, "select", SELECT));
  });

  it("POST directly, application/sparql-query", async () => {
    expect(await solutions(await post(SELECT, "application/sparql-query"))).toEqual(reference(reteFile, "select", SELECT));
  });

  it("POST directly with a charset and non-ASCII text in the query", async () => {
    const query = 'PREFIX ex: <http://example.org/> SELECT ?s WHERE { ?s ex:city "Zürich" }';
    const answer = await solutions(await post(query, "application/sparql-query; charset=UTF-8"));
    expect(answer).toEqual(reference(reteFile, "select", query));
    expect((answer as { rows: string[] }).rows).toHaveLength(1);
  });

  it("POST URL-encoded with a charset", async () => {
    expect(await solutions(await post(form({ query: SELECT }), `${FORM}; charset=UTF-8`))).toEqual(reference(reteFile, "select", SELECT));
  });
});

describe("dataset", () => {
  const ALL = "SELECT ?s ?p ?o WHERE { ?s ?p ?o }";
  const NAMED = "SELECT ?g ?s ?p ?o WHERE { GRAPH ?g { ?s ?p ?o } }";

  it("default-graph-uri picks the default graph", async () => {
    const expected = reference(reteFile, "select", `SELECT ?s ?p ?o FROM <${EX}g1> WHERE { ?s ?p ?o }`);
    expect(await solutions(await get({ query: ALL, "default-graph-uri": `${EX}g1` }))).toEqual(expected);
    expect((expected as { rows: string[] }).rows).toHaveLength(2);
  });

  it("several default-graph-uri are merged", async () => {
    const expected = reference(reteFile, "select", `SELECT ?s ?p ?o FROM <${EX}g1> FROM <${EX}g2> WHERE { ?s ?p ?o }`);
    expect(await solutions(await get({ query: ALL, "default-graph-uri": [`${EX}g1`, `${EX}g2`] }))).toEqual(expected);
  });

  it("named-graph-uri, one and several, with default-graph-uri", async () => {
    const one = reference(reteFile, "select", `SELECT ?g ?s ?p ?o FROM NAMED <${EX}g2> WHERE { GRAPH ?g { ?s ?p ?o } }`);
    expect(await solutions(await get({ query: NAMED, "named-graph-uri": `${EX}g2` }))).toEqual(one);
    const both = reference(reteFile, "select", `SELECT ?g ?s ?p ?o FROM <${EX}g1> FROM NAMED <${EX}g1> FROM NAMED <${EX}g2> WHERE { GRAPH ?g { ?s ?p ?o } }`);
    const params = { query: NAMED, "default-graph-uri": `${EX}g1`, "named-graph-uri": [`${EX}g1`, `${EX}g2`] };
    expect(await solutions(await post(form(params), FORM))).toEqual(both);
  });

  it("the protocol's dataset wins over FROM in the query", async () => {
    const query = `SELECT ?s ?p ?o FROM <${EX}g2> WHERE { ?s ?p ?o }`;
    const expected = reference(reteFile, "select", `SELECT ?s ?p ?o FROM <${EX}g1> WHERE { ?s ?p ?o }`);
    expect(await solutions(await get({ query, "default-graph-uri": `${EX}g1` }))).toEqual(expected);
  });

  it("default-graph-uri in the URL of a direct POST", async () => {
    const expected = reference(reteFile, "select", `SELECT ?s ?p ?o FROM <${EX}g2> WHERE { ?s ?p ?o }`);
    expect(await solutions(await post(ALL, "application/sparql-query", {}, `?default-graph-uri=${encodeURIComponent(`${EX}g2`)}`))).toEqual(expected);
  });
});

describe("bad requests", () => {
  it("POST without a query: 400", async () => {
    await refused(await post(form({ "default-graph-uri": `${EX}g1` }), FORM), 400, /query/);
  });

  it("two query parameters: 400", async () => {
    await refused(await get({ query: [SELECT, SELECT] }), 400, /more than one query/);
    await refused(await post(form({ query: SELECT }), FORM, {}, `?query=${encodeURIComponent(SELECT)}`), 400, /more than one query/);
  });

  it("query and update together: 400", async () => {
    await refused(await post(form({ query: SELECT, update: "CLEAR ALL" }), FORM), 400, /update/i);
  });

  it("a malformed query: 400 naming where", async () => {
    await refused(await get({ query: "SELECT ?s WHERE { ?s ?p }" }), 400, /line 1/);
    await refused(await post("SELEKT * WHERE {}", "application/sparql-query"), 400, /line 1/);
  });

  it("a POST body of another type: 415", async () => {
    await refused(await post(SELECT, "text/plain"), 415, /application\/sparql-query/);
  });

  it("a POST without a Content-Type: 415", async () => {
    await refused(await fetch(endpoint, { method: "POST", body: new Blob([SELECT]) }), 415, /application\/sparql-query/);
  });

  it("a query body that is not UTF-8: 400", async () => {
    const latin1 = Uint8Array.from([...Buffer.from('SELECT * WHERE { ?s ?p "'), 0xfc, ...Buffer.from('" }')]);
    const r = await fetch(endpoint, { method: "POST", body: latin1, headers: { "content-type": "application/sparql-query" } });
    await refused(r, 400, /UTF-8/);
  });

  it("another method (PUT, DELETE): 405 with Allow", async () => {
    for (const method of ["PUT", "DELETE"]) {
      const r = await fetch(`${endpoint}?query=${encodeURIComponent(SELECT)}`, { method });
      expect(r.headers.get("allow")).toContain("POST");
      await refused(r, 405, /method/);
    }
  });

  it("updates are refused: the endpoint is read-only", async () => {
    const update = `INSERT DATA { <${EX}x> <${EX}y> <${EX}z> }`;
    await refused(await post(form({ update }), FORM), [403, 405, 501], /read-only/);
    await refused(await post(update, "application/sparql-update"), [403, 405, 501], /read-only/);
    await refused(await get({ update }), [403, 405, 501], /read-only/);
  });
});

describe("content negotiation", () => {
  const ASK = "ASK { ?s ?p ?o }";

  for (const [accept, type] of [
    ["application/sparql-results+json", "application/sparql-results+json"],
    ["application/sparql-results+xml", "application/sparql-results+xml"],
    ["text/csv", "text/csv"],
    ["text/tab-separated-values", "text/tab-separated-values"],
  ]) {
    it(`SELECT and ASK as ${type}`, async () => {
      for (const query of [SELECT, ASK]) {
        if (query === ASK && type.startsWith("text/")) continue; // ASK has no CSV/TSV form
        const r = await get({ query }, { accept });
        expect(r.status).toBe(200);
        expect(r.headers.get("content-type")).toContain(type);
        expect((await r.text()).length).toBeGreaterThan(0);
      }
    });
  }

  for (const [accept, type] of [
    ["text/turtle", "text/turtle"],
    ["application/n-triples", "application/n-triples"],
    ["application/rdf+xml", "application/rdf+xml"],
    ["application/ld+json", "application/ld+json"],
  ]) {
    it(`CONSTRUCT and DESCRIBE as ${type}`, async () => {
      for (const query of [CONSTRUCT, `DESCRIBE <${EX}alice>`]) {
        const r = await get({ query }, { accept });
        expect(r.status).toBe(200);
        expect(r.headers.get("content-type")).toContain(type);
        expect(await r.text()).toMatch(/example\.org/);
      }
    });
  }

  it("*/* and no Accept: SPARQL JSON for solutions, Turtle for graphs", async () => {
    for (const headers of [{ accept: "*/*" }, {}]) {
      expect((await get({ query: SELECT }, headers)).headers.get("content-type")).toContain("application/sparql-results+json");
      expect((await get({ query: CONSTRUCT }, headers)).headers.get("content-type")).toContain("text/turtle");
    }
  });

  it("a long Accept list with q-values (Jena's) picks the best one served", async () => {
    expect((await get({ query: SELECT }, { accept: JENA_SELECT_ACCEPT })).headers.get("content-type")).toContain("application/sparql-results+json");
    const xmlFirst = "text/csv;q=0.3, application/sparql-results+json;q=0.5, application/sparql-results+xml";
    expect((await get({ query: SELECT }, { accept: xmlFirst })).headers.get("content-type")).toContain("application/sparql-results+xml");
  });

  it("solution and graph types in one Accept: each query form gets its own", async () => {
    const accept = "application/sparql-results+xml, application/rdf+xml";
    expect((await get({ query: SELECT }, { accept })).headers.get("content-type")).toContain("application/sparql-results+xml");
    const r = await get({ query: CONSTRUCT }, { accept });
    expect(r.headers.get("content-type")).toContain("application/rdf+xml");
    expect(await r.text()).toMatch(/<rdf:RDF/);
  });

  it("an Accept naming nothing served gets the default rather than 406", async () => {
    const r = await get({ query: SELECT }, { accept: "application/rdf+xml" });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("application/sparql-results+json");
    const g = await get({ query: CONSTRUCT }, { accept: "application/sparql-results+json" });
    expect(g.status).toBe(200);
    expect(g.headers.get("content-type")).toContain("text/turtle");
  });
});

describe("what else clients send", () => {
  it("unknown parameters are ignored", async () => {
    const params = { query: SELECT, timeout: "5000", output: "json", debug: "on", "should-sponge": "" };
    expect(await solutions(await get(params))).toEqual(reference(reteFile, "select", SELECT));
    expect(await solutions(await post(form(params), FORM))).toEqual(reference(reteFile, "select", SELECT));
  });

  it("HEAD: the GET's status and type, no body", async () => {
    const r = await get({ query: SELECT }, {}, "HEAD");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("application/sparql-results+json");
    expect(await r.text()).toBe("");
  });

  it("CORS preflight for a POST with a Content-Type", async () => {
    const r = await fetch(endpoint, {
      method: "OPTIONS",
      headers: { origin: "https://example.com", "access-control-request-method": "POST", "access-control-request-headers": "content-type" },
    });
    expect(r.status).toBeLessThan(300);
    expect(r.headers.get("access-control-allow-origin")).toBe("*");
    expect(r.headers.get("access-control-allow-methods")).toContain("POST");
    expect(r.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("content-type");
  });

  it("the answer of a CORS POST is readable from any origin", async () => {
    const r = await post(SELECT, "application/sparql-query", { origin: "https://example.com" });
    expect(r.headers.get("access-control-allow-origin")).toBe("*");
    expect(await solutions(r)).toEqual(reference(reteFile, "select", SELECT));
  });
});
