// RDF 1.2 triple terms over the Worker: a format 2.0 file (required_features bit 0, FORMAT.md §2)
// answers SPARQL 1.2 in every result format, refuses JSON-LD for an answer that holds triple
// terms (406 naming the formats that can), and resource pages show triple terms with their parts.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { FILES, startWorker, type Worker } from "./mf.ts";

let w: Worker;
beforeAll(async () => {
  w = await startWorker();
  await w.publish("tt", resolve(FILES, "triple-terms.rete"));
});
afterAll(() => w?.dispose());

const EX = "http://example.org/";
const RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#";
const sparql = (query: string, accept?: string) =>
  w.fetch(`/tt/sparql?query=${encodeURIComponent(query)}`, accept ? { headers: { accept } } : undefined);

test("the file is format 2.0 with required feature bit 0", () => {
  const bytes = readFileSync(resolve(FILES, "triple-terms.rete"));
  expect([bytes.readUInt16LE(0x08), bytes.readUInt16LE(0x0a)]).toEqual([2, 0]);
  // Bit 0 is the triple terms'; bit 2 (value-ordered literals) is set too when the data has numbers or dates.
  expect(bytes.readBigUInt64LE(0x48) & 1n).toBe(1n);
});

describe("SELECT over triple terms", () => {
  const REIFIED = `PREFIX : <${EX}> SELECT ?r ?t WHERE { ?r <${RDF}reifies> ?t } ORDER BY ?r`;

  test("SPARQL JSON 1.2: a triple term binding has its parts, nested ones too", async () => {
    const r = await sparql(`PREFIX : <${EX}> SELECT ?t WHERE { :claim <${RDF}reifies> ?t }`);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/sparql-results+json");
    const body = await r.json();
    expect(body.results.bindings).toEqual([
      {
        t: {
          type: "triple",
          value: {
            subject: { type: "uri", value: `${EX}bob` },
            predicate: { type: "uri", value: `${EX}says` },
            object: {
              type: "triple",
              value: {
                subject: { type: "uri", value: `${EX}alice` },
                predicate: { type: "uri", value: `${EX}age` },
                object: { type: "literal", value: "30", datatype: "http://www.w3.org/2001/XMLSchema#integer" },
              },
            },
          },
        },
      },
    ]);
  });

  test("patterns inside triple terms, the annotation syntax and the 1.2 functions", async () => {
    const q = `PREFIX : <${EX}> SELECT ?who ?since (isTRIPLE(?t) AS ?is) (SUBJECT(OBJECT(?t)) AS ?inner) WHERE {
      { ?who :knows :bob {| :since ?since |} } UNION { :claim <${RDF}reifies> ?t . FILTER(PREDICATE(?t) = :says) }
    }`;
    const body = await (await sparql(q)).json();
    const rows = body.results.bindings.map((b: Record<string, { value: unknown }>) => Object.fromEntries(Object.entries(b).map(([k, v]) => [k, v.value])));
    expect(rows).toContainEqual({ who: `${EX}alice`, since: "2019" });
    expect(rows).toContainEqual({ is: "true", inner: `${EX}alice` });
  });

  test.each([
    ["application/sparql-results+xml", `<triple><subject><uri>${EX}bob</uri></subject><predicate><uri>${EX}says</uri></predicate><object><triple>`],
    ["text/tab-separated-values", `<<( <${EX}bob> <${EX}says> <<( <${EX}alice> <${EX}age> 30 )>> )>>`],
    ["text/csv", `${EX}bob ${EX}says ${EX}alice ${EX}age 30`], // CSV writes a triple term as its parts
    ["text/html", '<span class="triple">&lt;&lt;( <a'],
  ])("%s writes triple terms", async (accept, fragment) => {
    const r = await sparql(REIFIED, accept);
    expect(r.status).toBe(200);
    // Whitespace before a tag or a term is layout (XML indentation, the space between parts).
    const squeeze = (text: string) => text.replace(/\s+</g, "<");
    expect(squeeze(await r.text())).toContain(squeeze(fragment));
  });
});

describe("CONSTRUCT with triple terms", () => {
  const CONSTRUCT = `CONSTRUCT { ?r <${RDF}reifies> ?t } WHERE { ?r <${RDF}reifies> ?t }`;

  test.each([
    ["application/n-triples", `<${EX}claim> <${RDF}reifies> <<( <${EX}bob> <${EX}says> <<( <${EX}alice> <${EX}age> "30"^^<http://www.w3.org/2001/XMLSchema#integer> )>> )>> .`],
    ["text/turtle", "<<("],
    ["application/rdf+xml", 'rdf:parseType="Triple"'],
  ])("%s writes them", async (accept, fragment) => {
    const r = await sparql(CONSTRUCT, accept);
    expect(r.status).toBe(200);
    expect(await r.text()).toContain(fragment);
  });

  test("JSON-LD, which has no triple terms, is refused with 406 naming the formats that can", async () => {
    const r = await sparql(CONSTRUCT, "application/ld+json");
    expect(r.status).toBe(406);
    const body = await r.json();
    expect(body.error).toBe("not-acceptable");
    expect(body.message).toMatch(/^application\/ld\+json cannot hold RDF 1\.2 triple terms/);
    expect(body.available).toContain("application/n-triples");
    expect(body.available).not.toContain("application/ld+json");
  });

  test("JSON-LD of a graph without triple terms still works", async () => {
    const r = await sparql(`CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o FILTER(!isTRIPLE(?o)) }`, "application/ld+json");
    expect(r.status).toBe(200);
    expect(await r.text()).toContain(`${EX}alice`);
  });
});

describe("resource pages", () => {
  const view = (iri: string, format: string) => w.fetch(`/tt/resource?iri=${encodeURIComponent(iri)}&format=${format}`);

  test("HTML shows a triple term with its parts linked", async () => {
    const r = await view(`${EX}claim`, "html");
    expect(r.status).toBe(200);
    const page = await r.text();
    expect(page).toContain('<span class="triple">&lt;&lt;( <a');
    expect(page).toContain(`href="/tt/resource?iri=${encodeURIComponent(`${EX}alice`)}"`);
  });

  test("N-Triples writes the triple term; JSON-LD is refused", async () => {
    expect(await (await view(`${EX}claim`, "nt")).text()).toContain(`<${EX}claim> <${RDF}reifies> <<( <${EX}bob>`);
    expect((await view(`${EX}claim`, "jsonld")).status).toBe(406);
  });
});
