// Names as people read them (issue 16): the resource page shows predicates by prefixed name and
// linked resources by label (skos:prefLabel before rdfs:label, English before other languages),
// the full IRI on hover and in the link; GET /{ds}/labels names IRIs for the site's result tables
// (JSON, 400/413, ETag and 304, CORS, rounds); GET /{ds}/search?types=1 lists each hit's types.
// Data: tests/worker/fixtures/names.ttl (built by global-setup.ts), and qudt for a cold lookup.
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { counters, FILES, RETE, startWorker, type Worker } from "./mf.ts";

let w: Worker;
const NAMES = resolve(FILES, "names.rete");
const P = "http://example.org/people/";
const FOAF_KNOWS = "http://xmlns.com/foaf/0.1/knows";

beforeAll(async () => {
  w = await startWorker({ MAX_QUERY_BYTES: "4096" });
  await w.publish("names", NAMES);
  await w.publish("qudt", resolve(FILES, "qudt.rete"));
});
afterAll(() => w?.dispose());

const json = (path: string, init?: RequestInit) => w.fetch(path, { headers: { accept: "application/json" }, ...init });
const labels = (...iris: string[]) => `/names/labels?${iris.map((iri) => `iri=${encodeURIComponent(iri)}`).join("&")}`;
const escapeHtml = (text: string) => text.replace(/&/g, "&amp;").replace(/"/g, "&quot;");
const href = (iri: string) => escapeHtml(`/names/resource?iri=${encodeURIComponent(iri)}`);
/** A named link as the page writes it. */
const named = (iri: string, name: string) => `<a class="iri named" href="${href(iri)}" title="${escapeHtml(iri)}">${name}</a>`;

describe("the resource page names things", () => {
  test("predicates by prefixed name, linked resources by label in the preferred language, the IRI on hover", async () => {
    const r = await w.fetch(`/names/resource?iri=${encodeURIComponent(`${P}ada`)}`, { headers: { accept: "text/html" } });
    expect(r.status).toBe(200);
    const page = await r.text();
    expect(page).toContain("<h1>Ada Lovelace</h1>");
    // Outgoing: foaf:knows Charles Babbage (skos:prefLabel over rdfs:label "C. Babbage").
    expect(page).toContain(`<td>${named(FOAF_KNOWS, "foaf:knows")}</td><td>${named(`${P}charles`, "Charles Babbage")}</td>`);
    // schema:birthPlace London: English over French and German.
    expect(page).toContain(named(`${P}london`, "London"));
    expect(page).toContain(named("http://schema.org/birthPlace", "schema:birthPlace"));
    // The type by prefixed name; the literal's language kept.
    expect(page).toContain(`Type: ${named("http://xmlns.com/foaf/0.1/Person", "foaf:Person")}`);
    expect(page).toContain('<span class="lit">Ada Lovelace, Mathematikerin</span> <span class="dt">@de</span>');
    // Incoming: a resource without a label goes by its prefixed name (the data's empty prefix or another).
    expect(page).toMatch(new RegExp(`title="${P}unnamed">[\\w-]*:unnamed</a>`));
    expect(page).not.toContain(`>${P}charles</a>`);
  });

  test("RDF forms are unchanged: full IRIs", async () => {
    const text = await (await w.fetch(`/names/resource?iri=${encodeURIComponent(`${P}ada`)}&format=nt`)).text();
    expect(text).toContain(`<${P}ada> <${FOAF_KNOWS}> <${P}charles> .`);
  });

  test("a cold page adds at most one round for its names", async () => {
    const kmh = encodeURIComponent("http://qudt.org/vocab/unit/KiloM-PER-HR");
    /** The rounds of a cold view in a fresh isolate. */
    const cold = async (accept: string): Promise<[number, string]> => {
      const fresh = await startWorker();
      try {
        await fresh.publish("qudt", resolve(FILES, "qudt.rete"));
        const r = await fresh.fetch(`/qudt/resource?iri=${kmh}`, { headers: { accept } });
        expect(r.status).toBe(200);
        return [counters(r).rounds, await r.text()];
      } finally {
        await fresh.dispose();
      }
    };
    const [html, page] = await cold("text/html");
    const [turtle] = await cold("text/turtle");
    // The type by its label; predicates by prefixed name.
    expect(page).toContain('title="http://qudt.org/schema/qudt/Unit">Unit</a>');
    expect(page).toContain('title="http://qudt.org/schema/qudt/applicableUnit">qudt:applicableUnit</a>');
    expect(html).toBeLessThanOrEqual(turtle + 1);
  });
});

describe("the SPARQL results page (no JavaScript) names things", () => {
  const page = async (query: string, host = w) => {
    const r = await host.fetch(`/names/sparql?query=${encodeURIComponent(query)}`, { headers: { accept: "text/html" } });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("text/html");
    return [await r.text(), r] as const;
  };

  test("a SELECT table shows labels, else prefixed names, the IRI on hover and in the link", async () => {
    const [html] = await page(`SELECT ?p ?o WHERE { <${P}ada> ?p ?o } ORDER BY ?p ?o`);
    // foaf:knows has a label ("knows"@en): a result cell is a resource, shown by label.
    expect(html).toContain(`<td>${named(FOAF_KNOWS, "knows")}</td><td>${named(`${P}charles`, "Charles Babbage")}</td>`);
    expect(html).toContain(named(`${P}london`, "London"));
    expect(html).toContain(named("http://schema.org/birthPlace", "schema:birthPlace"));
    expect(html).toContain(named("http://xmlns.com/foaf/0.1/Person", "foaf:Person"));
    expect(html).toContain('<span class="lit">Ada Lovelace, Mathematikerin</span> <span class="dt">@de</span>');
    expect(html).not.toContain(`>${P}charles</a>`);
    const [unnamed] = await page(`SELECT ?s WHERE { ?s <${FOAF_KNOWS}> <${P}ada> } ORDER BY ?s`);
    expect(unnamed).toMatch(new RegExp(`title="${P}unnamed">[\\w-]*:unnamed</a>`));
  });

  test("a CONSTRUCT table shows predicates by prefixed name; the JSON answer keeps full IRIs", async () => {
    const [html] = await page(`CONSTRUCT { <${P}ada> ?p ?o } WHERE { <${P}ada> ?p ?o }`);
    expect(html).toContain(`<td>${named(`${P}ada`, "Ada Lovelace")}</td><td>${named(FOAF_KNOWS, "foaf:knows")}</td><td>${named(`${P}charles`, "Charles Babbage")}</td>`);
    const r = await json(`/names/sparql?query=${encodeURIComponent(`SELECT ?o WHERE { <${P}ada> <${FOAF_KNOWS}> ?o }`)}`);
    expect((await r.json()).results.bindings[0].o.value).toBe(`${P}charles`);
  });

  test("cold, the names cost at most two rounds more than the answer", async () => {
    const query = "SELECT ?unit ?kind WHERE { GRAPH ?g { ?unit <http://qudt.org/schema/qudt/hasQuantityKind> ?kind } } ORDER BY ?unit LIMIT 5";
    const cold = async (accept: string): Promise<[number, string]> => {
      const fresh = await startWorker();
      try {
        await fresh.publish("qudt", resolve(FILES, "qudt.rete"));
        const r = await fresh.fetch(`/qudt/sparql?query=${encodeURIComponent(query)}`, { headers: { accept } });
        expect(r.status).toBe(200);
        return [counters(r).rounds, await r.text()];
      } finally {
        await fresh.dispose();
      }
    };
    const [html, text] = await cold("text/html");
    const [plain] = await cold("application/sparql-results+json");
    expect(text).toMatch(/<a class="iri named" href="[^"]+" title="http:\/\/qudt\.org\/vocab\/constant\/[^"]+">(?!http)[^<]+<\/a>/);
    expect(text).toMatch(/title="http:\/\/qudt\.org\/vocab\/quantitykind\/[^"]+">(?!http)[^<]+<\/a>/);
    expect(html).toBeLessThanOrEqual(plain + 2);
  });
});

describe("GET /{ds}/labels", () => {
  test("labels, languages and prefixed names, in the order asked, each IRI once", async () => {
    const r = await json(labels(`${P}charles`, `${P}london`, FOAF_KNOWS, `${P}unnamed`, "http://nowhere.example/x", `${P}charles`));
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/json");
    const body = await r.json();
    expect(body.cut).toBe(false);
    expect(body.names).toEqual([
      { iri: `${P}charles`, label: "Charles Babbage", lang: "en", prefixed: expect.stringMatching(/:charles$/) },
      { iri: `${P}london`, label: "London", lang: "en", prefixed: expect.stringMatching(/:london$/) },
      { iri: FOAF_KNOWS, label: "knows", lang: "en", prefixed: "foaf:knows" },
      { iri: `${P}unnamed`, prefixed: expect.stringMatching(/:unnamed$/) },
      { iri: "http://nowhere.example/x" },
    ]);
    const german = await (await json(`${labels(`${P}ada`, FOAF_KNOWS)}&lang=de`)).json();
    expect(german.names.map((n: { label: string }) => n.label)).toEqual(["Ada Lovelace, Mathematikerin", "kennt"]);
    const c = counters(r);
    expect(c.rounds).toBeGreaterThanOrEqual(1);
  });

  test("no iri, too many, too long: 4xx JSON; POST: 405", async () => {
    const many = Array.from({ length: 101 }, (_, i) => `${P}x${i}`);
    for (const [path, status, text] of [
      ["/names/labels", 400, "iri="],
      [labels(...many), 400, "at most 100"],
      [labels(`${P}${"a".repeat(4100)}`), 413, "4096"],
    ] as const) {
      const r = await json(path);
      expect(r.status, path).toBe(status);
      expect((await r.json()).message).toContain(text);
    }
    expect((await w.fetch(labels(`${P}ada`), { method: "POST" })).status).toBe(405);
  });

  test("cacheable: ETag per set of IRIs, 304, CORS", async () => {
    const r = await json(labels(`${P}ada`));
    const etag = r.headers.get("etag");
    expect(etag).toMatch(/^"[0-9a-f]{32}-[0-9a-f]{16}"$/);
    expect(r.headers.get("access-control-allow-origin")).toBe("*");
    expect((await json(labels(`${P}charles`))).headers.get("etag")).not.toBe(etag);
    expect((await json(labels(`${P}ada`), { headers: { accept: "application/json", "if-none-match": etag! } })).status).toBe(304);
  });

  test("cold on qudt: the open, then at most 3 rounds (dictionary, PSO, labels)", async () => {
    const fresh = await startWorker();
    try {
      await fresh.publish("qudt", resolve(FILES, "qudt.rete"));
      const iris = ["http://qudt.org/vocab/unit/KiloM-PER-HR", "http://qudt.org/vocab/quantitykind/Velocity", "http://qudt.org/schema/qudt/applicableUnit"];
      const r = await fresh.fetch(`/qudt/labels?${iris.map((i) => `iri=${encodeURIComponent(i)}`).join("&")}`, { headers: { accept: "application/json" } });
      const body = await r.json();
      expect(body.names[0]).toMatchObject({ label: "Kilometre per Hour", lang: "en" });
      expect(body.names[1].label).toBe("Velocity");
      expect(body.names[2].prefixed).toBe("qudt:applicableUnit");
      expect(counters(r).rounds).toBeLessThanOrEqual(4);
    } finally {
      await fresh.dispose();
    }
  });
});

describe("search hits' types", () => {
  test("types=1 lists each hit's rdf:type IRIs, as `rete search --types` does", async () => {
    const r = await json("/names/search?q=babbage&types=1");
    expect(r.status).toBe(200);
    const body = await r.json();
    expect(body.results[0].iri).toBe(`${P}charles`);
    expect([...body.results[0].types].sort()).toEqual(["http://schema.org/Person", "http://xmlns.com/foaf/0.1/Person"]);
    const cli = JSON.parse(execFileSync(RETE, ["search", NAMES, "babbage", "--json", "--types"], { encoding: "utf8" }));
    expect(body.results).toEqual(cli.results);
    const plain = await (await json("/names/search?q=babbage")).json();
    expect(Object.keys(plain.results[0])).toEqual(["iri", "label", "lang", "score"]);
    expect((await json("/names/search?q=babbage&types=maybe")).status).toBe(400);
  });
});
