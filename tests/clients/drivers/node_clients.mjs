// Runs the suite's queries through a JavaScript SPARQL client against the endpoint and prints each
// answer as JSON in the SPARQL-results term model (see tests/clients/clients.spec.ts).
//
// Usage: node node_clients.mjs fetch-sparql-endpoint|comunica NODE_MODULES_DIR CASES.json
// The clients are loaded from NODE_MODULES_DIR (tests/clients/install.sh's cache), not the repo.
// fetch-sparql-endpoint GETs short queries and POSTs long ones (forceGetIfUrlLengthBelow);
// Comunica queries the endpoint as a `sparql` source with its own Accept lists and methods.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const [client, modules, casesFile] = process.argv.slice(2);
const require = createRequire(join(modules, "package.json"));
const spec = JSON.parse(readFileSync(casesFile, "utf8"));

function term(t) {
  switch (t.termType) {
    case "NamedNode":
      return { type: "uri", value: t.value };
    case "BlankNode":
      return { type: "bnode", value: t.value };
    case "Literal":
      return t.language ? { type: "literal", value: t.value, "xml:lang": t.language } : { type: "literal", value: t.value, datatype: t.datatype.value };
    default:
      throw new Error(`unexpected term ${t.termType}`);
  }
}

const toArray = (stream) =>
  new Promise((done, fail) => {
    const items = [];
    stream.on("data", (item) => items.push(item));
    stream.on("error", fail);
    stream.on("end", () => done(items));
  });

function fetchSparqlEndpoint() {
  const { SparqlEndpointFetcher } = require("fetch-sparql-endpoint");
  const fetcher = new SparqlEndpointFetcher({ forceGetIfUrlLengthBelow: 2000 });
  return async ({ form, query }) => {
    if (form === "ask") return { boolean: await fetcher.fetchAsk(spec.endpoint, query) };
    if (form === "select") {
      const stream = await fetcher.fetchBindings(spec.endpoint, query);
      const vars = new Promise((done) => stream.on("variables", (vs) => done(vs.map((v) => v.value))));
      const rows = (await toArray(stream)).map((row) => Object.fromEntries(Object.entries(row).map(([name, value]) => [name, term(value)])));
      return { vars: await vars, rows };
    }
    const quads = await toArray(await fetcher.fetchTriples(spec.endpoint, query));
    return { triples: quads.map((q) => [term(q.subject), term(q.predicate), term(q.object)]) };
  };
}

function comunica() {
  const { QueryEngine } = require("@comunica/query-sparql");
  const engine = new QueryEngine();
  const context = { sources: [{ type: "sparql", value: spec.endpoint }] };
  return async ({ form, query }) => {
    if (form === "ask") return { boolean: await engine.queryBoolean(query, context) };
    if (form === "select") {
      const result = await engine.query(query, context);
      const vars = (await result.metadata()).variables.map((v) => v.value);
      const bindings = await (await result.execute()).toArray();
      const rows = bindings.map((b) => Object.fromEntries([...b].map(([variable, value]) => [variable.value, term(value)])));
      return { vars, rows };
    }
    const quads = await (await engine.queryQuads(query, context)).toArray();
    return { triples: quads.map((q) => [term(q.subject), term(q.predicate), term(q.object)]) };
  };
}

const run = { "fetch-sparql-endpoint": fetchSparqlEndpoint, comunica }[client]();
const answers = {};
for (const c of spec.cases) {
  try {
    answers[c.id] = await run(c);
  } catch (error) {
    answers[c.id] = { error: String(error?.stack ?? error) };
  }
}
process.stdout.write(JSON.stringify(answers));
