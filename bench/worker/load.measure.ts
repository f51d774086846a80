// Issue 12 §6: the Worker under concurrent load, and its memory over time. One workerd serving
// HTTP on 127.0.0.1 (never another interface) with wrangler.toml's vars, qudt and schema-org
// published; RETE_LOAD_CONCURRENCY clients (default "1,4,16,64,128") each send requests of a
// mixed workload back to back for RETE_LOAD_SECONDS (default 10) per level, at most
// RETE_LOAD_MAX_REQUESTS (default 20,000) per level. Per level: requests/s, p50/p99 latency,
// statuses, and errors (anything but the workload's expected status: 200, 303, or the designed
// 422 of the budget query). Memory, sampled every RETE_LOAD_SAMPLE_S seconds (default 1) over
// the whole run: workerd's RSS, the isolate's wasm linear memory (x-rete-memory) and, with
// RETE_LOAD_HEAP=1, the Worker isolate's V8 heap after a full GC, read through workerd's
// inspector (one DevTools session for the run: HeapProfiler.collectGarbage, then
// Runtime.getHeapUsage), and beside it the same of Miniflare's own isolates in the process (its
// entry worker, the local R2 and Cache API), summed. workerd runs an inspector command that needs the isolate when the
// isolate next handles a request: an idle isolate answers a GC only after the next request,
// so the sampler's own request goes with each reading.
// RETE_LOAD_WORKLOAD=cldr:01,02,04,12,13: the workload is instead those queries of
// bench/cldr-queries over build/query-bench/cldr.rete (these five: the whole-dataset scans, each
// decoding 19–28 MB of blocks from 5.8–7.2 MB sealed), for the isolate's memory with its block
// caches, held answers and compressed blocks in use at once (issue 14, session 17).
// RETE_LOAD_BUILD=DIR: another Worker build than worker/build; RETE_WORKER_VARS='{"CACHE_BYTES":"…"}'
// overrides vars.
// Run: RETE_SKIP_BUILD=1 nice -n 10 npx vitest run --config bench/worker/vitest.config.ts load
// §6's run: RETE_LOAD_HEAP=1 RETE_LOAD_CONCURRENCY=64 RETE_LOAD_SECONDS=60 RETE_LOAD_MAX_REQUESTS=1000000 RETE_LOAD_SAMPLE_S=5 …
// Writes build/worker-bench/load.md.
import { readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { expect, test } from "vitest";
import { ROOT, startWorker } from "../../tests/worker/mf.ts";
import { fileOf, loadAverage, quantiles, sparqlPath, writeReport } from "./requests.ts";
import { Inspector, newWorkerd, rssBytes, workerdChildren } from "./workerd.ts";

const LEVELS = (process.env.RETE_LOAD_CONCURRENCY ?? "1,4,16,64,128").split(",").map(Number);
const SECONDS = Number(process.env.RETE_LOAD_SECONDS ?? 10);
const MAX_REQUESTS = Number(process.env.RETE_LOAD_MAX_REQUESTS ?? 20_000);
/** Read the isolate's V8 heap through workerd's inspector (RETE_LOAD_HEAP=1). */
const HEAP = process.env.RETE_LOAD_HEAP === "1";
/** Seconds between two memory samples. */
const SAMPLE_S = Number(process.env.RETE_LOAD_SAMPLE_S ?? 1);
/** An inspector command unanswered for this long leaves the heap columns of its sample empty. */
const INSPECTOR_TIMEOUT_MS = 10_000;

const Q = "PREFIX qudt: <http://qudt.org/schema/qudt/> PREFIX unit: <http://qudt.org/vocab/unit/> ";
/** The workload: [name, path, expected status, weight]. */
const WORKLOAD: [string, string, number, number][] = [
  ["one pattern", sparqlPath("qudt", `${Q}SELECT ?p ?o WHERE { unit:KiloM-PER-HR ?p ?o }`), 200, 4],
  ["BGP of 2", sparqlPath("qudt", `${Q}SELECT ?u WHERE { ?u qudt:symbol "km/h" ; qudt:hasQuantityKind ?k }`), 200, 2],
  ["ASK", sparqlPath("schema-org", "ASK { <http://schema.org/alumni> <http://schema.org/inverseOf> ?x }"), 200, 1],
  ["DESCRIBE", sparqlPath("schema-org", "DESCRIBE <http://schema.org/PostalAddress>"), 200, 1],
  ["card", "/qudt/card", 200, 1],
  ["summary", "/schema-org/summary", 200, 1],
  ["resource view", `/qudt/resource?iri=${encodeURIComponent("http://qudt.org/vocab/unit/M")}`, 200, 1],
  ["dereference", "/schema-org/id/Person", 303, 1],
  // Every quad of qudt (55,541): more rows than MAX_ROWS_PRODUCED allows → 422 rows-produced.
  ["over a budget", sparqlPath("qudt", "SELECT * WHERE { ?s ?p ?o }"), 422, 1],
];
/** A request that takes longer than this counts as an error (and the level does not hang). */
const TIMEOUT_MS = 30_000;
const CLDR = (process.env.RETE_LOAD_WORKLOAD ?? "").match(/^cldr:(.+)$/)?.[1].split(",");
const CLDR_QUERIES = resolve(ROOT, "bench/cldr-queries");
const CLDR_WORKLOAD: [string, string, number, number][] = (CLDR ?? []).map((n) => {
  const f = readdirSync(CLDR_QUERIES).find((name) => name.startsWith(`${n}-`) && name.endsWith(".rq"));
  if (!f) throw new Error(`no query ${n}-*.rq in bench/cldr-queries`);
  return [f, sparqlPath("cldr", readFileSync(resolve(CLDR_QUERIES, f), "utf8")), 200, 1];
});
const MIX = (CLDR ? CLDR_WORKLOAD : WORKLOAD).flatMap((w) => Array(w[3]).fill(w) as (typeof w)[]);
/** Requests answered since the run started (every level), for the memory table. */
let answeredSoFar = 0;

interface Level {
  concurrency: number;
  seconds: number;
  latencies: number[];
  statuses: Map<number, number>;
  errors: string[];
}

async function runLevel(origin: string, concurrency: number): Promise<Level> {
  const level: Level = { concurrency, seconds: 0, latencies: [], statuses: new Map(), errors: [] };
  const start = performance.now();
  const end = start + SECONDS * 1000;
  let sent = 0;
  const client = async (id: number) => {
    for (let i = id; performance.now() < end && sent < MAX_REQUESTS; i += concurrency) {
      sent++;
      const [name, path, expected] = MIX[i % MIX.length];
      const t = performance.now();
      try {
        const r = await fetch(`${origin}${path}`, { headers: { accept: "application/sparql-results+json, application/json;q=0.9, text/turtle;q=0.8" }, redirect: "manual", signal: AbortSignal.timeout(TIMEOUT_MS) });
        await r.arrayBuffer();
        level.latencies.push(performance.now() - t);
        answeredSoFar++;
        level.statuses.set(r.status, (level.statuses.get(r.status) ?? 0) + 1);
        if (r.status !== expected) level.errors.push(`${name}: ${r.status} (expected ${expected})`);
      } catch (error) {
        level.errors.push(`${name}: ${error}${(error as Error).cause ? ` (${(error as Error).cause})` : ""}`);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, id) => client(id)));
  level.seconds = (performance.now() - start) / 1000;
  return level;
}

const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(1);

test("load and memory", async () => {
  const before = workerdChildren();
  const build = process.env.RETE_LOAD_BUILD ? resolve(ROOT, process.env.RETE_LOAD_BUILD) : undefined;
  const w = await startWorker({ MAX_ROWS_PRODUCED: "5000", ...JSON.parse(process.env.RETE_WORKER_VARS ?? "{}") }, { inspector: HEAP, port: 0, ...(build ? { build } : {}) });
  const pid = newWorkerd(before);
  const origin = (await w.mf.ready).origin;
  expect(new URL(origin).hostname).toBe("127.0.0.1");
  await w.publish("qudt", fileOf("qudt"));
  await w.publish("schema-org", fileOf("schema-org"));
  if (CLDR) await w.publish("cldr", resolve(ROOT, "build/query-bench/cldr.rete"));
  const loadAtStart = loadAverage();
  const t0 = performance.now();
  const memory: string[] = [];
  let wasmBytes = 0;
  const samplerErrors: string[] = [];
  const inspector = HEAP ? await Inspector.connect(w.mf) : undefined;
  // Miniflare's own isolates: they serve every request, so a GC there is answered at once.
  const otherIds = HEAP ? (await Inspector.targets(w.mf)).filter((id) => id !== "core:user:") : [];
  let others = await Promise.all(otherIds.map(async (id) => ({ id, isolate: await Inspector.connect(w.mf, id) })));
  const answered = <T>(what: Promise<T>, label: string) =>
    Promise.race([what, new Promise<never>((_, fail) => setTimeout(() => fail(new Error(`${label}: no answer in ${INSPECTOR_TIMEOUT_MS} ms`)), INSPECTOR_TIMEOUT_MS))]);
  /** The isolate's V8 heap after a full GC (the GC runs when the isolate next handles a request). */
  const heapAfterGc = async (isolate: Inspector | undefined) => {
    if (!isolate) return { usedBytes: Number.NaN, totalBytes: Number.NaN };
    await answered(isolate.send("HeapProfiler.collectGarbage"), "HeapProfiler.collectGarbage");
    return answered(isolate.heap(), "Runtime.getHeapUsage");
  };
  const sample = async (label: string) => {
    let heap = { usedBytes: Number.NaN, totalBytes: Number.NaN };
    let othersUsed = Number.NaN;
    const reading = heapAfterGc(inspector).then(
      (h) => {
        heap = h;
      },
      (error) => samplerErrors.push(`${label}: the heap reading: ${error}`),
    );
    // An isolate no request of the workload reaches would never run its GC: one that does not
    // answer the first reading (INSPECTOR_TIMEOUT_MS) is left out from then on, the others summed.
    const otherReadings = Promise.allSettled(others.map((o) => heapAfterGc(o.isolate))).then((rest) => {
      const silent = others.filter((_, i) => rest[i].status === "rejected");
      for (const o of silent) o.isolate.close();
      if (silent.length) console.log(`left out of the heap readings (no answer): ${silent.map((o) => o.id).join(", ")}`);
      others = others.filter((_, i) => rest[i].status === "fulfilled");
      const read = rest.flatMap((r) => (r.status === "fulfilled" ? [r.value.usedBytes] : []));
      if (read.length) othersUsed = read.reduce((sum, used) => sum + used, 0);
    });
    try {
      const r = await fetch(`${origin}/qudt/card`, { signal: AbortSignal.timeout(TIMEOUT_MS) });
      await r.arrayBuffer();
      wasmBytes = Number(r.headers.get("x-rete-memory"));
    } catch (error) {
      // Counted as an error of the run: the sampler is one more client.
      samplerErrors.push(`${label}: the sampler's card request: ${error}${(error as Error).cause ? ` (${(error as Error).cause})` : ""}`);
    }
    await Promise.all([reading, otherReadings]);
    const v8 = (bytes: number) => (Number.isNaN(bytes) ? "" : mb(bytes));
    memory.push(`| ${((performance.now() - t0) / 1000).toFixed(0)} | ${label} | ${answeredSoFar} | ${mb(rssBytes(pid))} | ${v8(heap.usedBytes)} | ${v8(heap.totalBytes)} | ${mb(wasmBytes)} | ${v8(othersUsed)} |`);
  };
  await sample("idle, before any load");
  const levels: Level[] = [];
  try {
    for (const concurrency of LEVELS) {
      let running = true;
      const sampler = (async () => {
        while (running) {
          await new Promise((done) => setTimeout(done, SAMPLE_S * 1000));
          if (running) await sample(`c = ${concurrency}`);
        }
      })();
      const level = await runLevel(origin, concurrency);
      running = false;
      await sampler;
      levels.push(level);
      await sample(`after c = ${concurrency}`);
      const { p50, p99 } = { p50: quantiles(level.latencies).p50, p99: [...level.latencies].sort((a, b) => a - b)[Math.ceil(0.99 * level.latencies.length) - 1] };
      console.log(`c=${concurrency}: ${level.latencies.length} in ${level.seconds.toFixed(1)} s, p50 ${p50.toFixed(1)} p99 ${p99.toFixed(1)}, errors ${level.errors.length}: ${level.errors.slice(0, 5).join("; ")}`);
    }
  } finally {
    inspector?.close();
    for (const other of others) other.isolate.close();
    await w.dispose();
  }
  const summed = others.map((o) => o.id).join(", ");
  const lines = [
    `Load average at the start of the run: ${loadAtStart}; at the end: ${loadAverage()}. ${SECONDS} s per level (at most ${MAX_REQUESTS} requests), the load generator in the same machine.`,
    "",
    "| concurrency | requests | seconds | requests/s | p50 ms | p99 ms | statuses | errors |",
    "| ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |",
    ...levels.map((l) => {
      const sorted = [...l.latencies].sort((a, b) => a - b);
      const p = (q: number) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)].toFixed(1);
      const statuses = [...l.statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s}: ${n}`).join(", ");
      return `| ${l.concurrency} | ${l.latencies.length} | ${l.seconds.toFixed(1)} | ${(l.latencies.length / l.seconds).toFixed(0)} | ${p(0.5)} | ${p(0.99)} | ${statuses} | ${l.errors.length} |`;
    }),
    "",
    `| s | when | requests answered | workerd RSS MiB | isolate V8 heap used MiB${HEAP ? " (after a full GC)" : ""} | V8 heap size MiB | wasm memory MiB | Miniflare's isolates' V8 heap used MiB |`,
    "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...memory,
    ...(HEAP ? ["", `Miniflare's isolates summed: ${summed}.`] : []),
  ];
  const errors = [...levels.flatMap((l) => l.errors), ...samplerErrors];
  if (errors.length) lines.push("", "Errors (first 20):", ...errors.slice(0, 20).map((e) => `- ${e}`));
  writeReport("load.md", lines);
});
