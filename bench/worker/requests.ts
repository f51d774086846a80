// What the Worker benchmarks ask: per example dataset, the card, the summary, a resource view, a
// dereference (303, base-IRI mode) and every example query (examples/NAME/queries/*.rq), the
// same GET URLs a client sends. RETE_BENCH_DATASETS (comma-separated, default all three) and
// RETE_BENCH_ONLY (substrings of the request's name, comma-separated) narrow them.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { FILES, ROOT, startWorker, type Worker } from "../../tests/worker/mf.ts";

export interface BenchRequest {
  dataset: string;
  /** "card", "summary", "resource view", "dereference (303)" or the query's file name. */
  name: string;
  path: string;
  /** GET unless said. */
  method?: string;
  /** The query's text, for SPARQL requests. */
  query?: string;
}

/** A resource each dataset describes, and its local dereference path (wrangler.toml BASE_IRIS). */
export const RESOURCES: Record<string, [string, string]> = {
  qudt: ["http://qudt.org/vocab/unit/KiloM-PER-HR", "/qudt/id/vocab/unit/KiloM-PER-HR"],
  "schema-org": ["http://schema.org/Person", "/schema-org/id/Person"],
  "dbpedia-ontology": ["http://dbpedia.org/ontology/Person", "/dbpedia-ontology/id/Person"],
};

export const DATASETS = (process.env.RETE_BENCH_DATASETS ?? "qudt,schema-org,dbpedia-ontology").split(",").filter(Boolean);

export const fileOf = (dataset: string) => resolve(FILES, `${dataset}.rete`);

export const sparqlPath = (dataset: string, query: string) => `/${dataset}/sparql?query=${encodeURIComponent(query)}`;

export function requestsOf(dataset: string): BenchRequest[] {
  const [iri, deref] = RESOURCES[dataset];
  const dir = resolve(ROOT, "examples", dataset, "queries");
  const queries = readdirSync(dir).filter((f) => f.endsWith(".rq")).sort();
  const all: BenchRequest[] = [
    { dataset, name: "card", path: `/${dataset}/card` },
    { dataset, name: "summary", path: `/${dataset}/summary` },
    { dataset, name: "resource view", path: `/${dataset}/resource?iri=${encodeURIComponent(iri)}` },
    { dataset, name: "dereference (303)", path: deref },
    ...queries.map((name) => {
      const query = readFileSync(resolve(dir, name), "utf8");
      return { dataset, name, path: sparqlPath(dataset, query), query };
    }),
  ];
  const only = process.env.RETE_BENCH_ONLY?.split(",");
  return only ? all.filter((r) => only.some((part) => r.name.includes(part))) : all;
}

/** JSON where the route offers it, Turtle for graphs, as a client library asks. */
export const ACCEPT = "application/sparql-results+json, application/json;q=0.9, text/turtle;q=0.8";

/** p50 and p95 of samples (nearest rank). */
export function quantiles(samples: number[]): { p50: number; p95: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.max(0, Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1))];
  return { p50: at(0.5), p95: at(0.95) };
}

export const median = (samples: number[]) => quantiles(samples).p50;

/** The machine's 1-minute load average, to print beside a table. */
export function loadAverage(): string {
  return readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
}

/** Writes a benchmark's report to build/worker-bench/`name` and prints it. */
export function writeReport(name: string, lines: string[]): void {
  mkdirSync(resolve(ROOT, "build/worker-bench"), { recursive: true });
  writeFileSync(resolve(ROOT, "build/worker-bench", name), `${lines.join("\n")}\n`);
  console.log(lines.join("\n"));
}

/** A JavaScript Worker that answers at once: what the harness costs a request by itself. */
export const NOTHING = `export default { fetch() { return new Response(null, { status: 204 }); } };`;

/** Cache writes run after the answer (waitUntil): let them land before an isolate goes away. */
export const settle = (ms = 300) => new Promise((done) => setTimeout(done, ms));

/** A twin that warms Miniflare's R2 and Cache API from JavaScript, so that the measured isolate
 * is the first of its workerd to run the Worker's wasm (`startWorker`'s `warmer`); GET
 * http://twin.test/?key=KEY reads that R2 object. */
export const WARMER = `
export default {
  async fetch(request, env) {
    const pointer = await env.BUCKET.get(new URL(request.url).searchParams.get("key"));
    await pointer?.arrayBuffer();
    await caches.default.put("https://warmer.invalid/x", new Response("x", { headers: { "cache-control": "max-age=60" } }));
    await (await caches.default.match("https://warmer.invalid/x"))?.arrayBuffer();
    return new Response("warm");
  },
};`;

/** A first workerd publishes `request`'s dataset and answers `request` twice with R2 and the
 * Cache API kept in `persist`: a location that has seen it, for a second workerd over the same
 * directory. */
export async function warmLocation(vars: Record<string, string>, build: string, persist: string, request: BenchRequest) {
  const w = await startWorker(vars, { build, persist });
  try {
    await w.publish(request.dataset, fileOf(request.dataset));
    for (let i = 0; i < 2; i++) await (await w.fetch(request.path, { method: request.method ?? "GET", redirect: "manual" })).arrayBuffer();
    await settle(300);
  } finally {
    await w.dispose();
  }
}

/** Each dataset's other dataset, which the twin isolate asks so that the measured one stays cold. */
export const OTHER: Record<string, string> = { qudt: "schema-org", "schema-org": "qudt", "dbpedia-ontology": "qudt" };

/** Readies a Worker for a measured first request of `dataset`. First in its process (`persist`,
 * after `warmLocation`): the warmer reads the pointer twice. Otherwise both datasets are published
 * and the twin isolate asks `twinPath` twice, so that Miniflare's own workers (entry, local R2,
 * Cache API) are warm and what the measured isolate pays first is its own. */
export async function readyFirstRequest(w: Worker, dataset: string, persist: string | undefined, twinPath: string, method = "GET") {
  if (persist) {
    const pointer = `datasets/${dataset}/current.json`;
    for (let i = 0; i < 2; i++) await (await w.fetch(`http://twin.test/?key=${encodeURIComponent(pointer)}`)).arrayBuffer();
    return;
  }
  await w.publish(dataset, fileOf(dataset));
  await w.publish(OTHER[dataset], fileOf(OTHER[dataset]));
  for (let i = 0; i < 2; i++) await (await w.fetch(`http://twin.test${twinPath}`, { method, redirect: "manual" })).arrayBuffer();
}
