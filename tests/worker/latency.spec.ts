// R2 latency in the Worker's measures (issue 12 §4). On Cloudflare every call of the R2 binding
// is a round trip from the edge location to R2 (tens of ms); local R2 answers in ~1 ms. The
// harness (mf.ts, `r2LatencyMs`) wraps the binding so that each call waits first: the Worker
// runs unchanged, and a round of concurrent reads costs one latency, as on the edge.
//
// Always: the simulation itself is checked (a slowed request answers the same, with the same
// counters, at least one latency per round later). Opt-in (RETE_BENCH=1, docs/BENCHMARK.md
// "Worker under R2 latency"): p50/p95 wall time per request at each latency of
// RETE_R2_LATENCY_MS (default "20,50"), for a cold isolate with a cold cache, a cold isolate with
// a warm cache (a new Miniflare over the Cache API an earlier one filled) and a warm isolate,
// with rounds, R2 reads, cache hits and bytes; RETE_BENCH_RUNS samples each (default 5).
// Writes build/worker-bench/latency.md.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, test } from "vitest";
import { counters, FILES, ROOT, startWorker, type Options } from "./mf.ts";

const BENCH = process.env.RETE_BENCH === "1";
const LATENCIES = (process.env.RETE_R2_LATENCY_MS ?? "20,50").split(",").map(Number);
const RUNS = Number(process.env.RETE_BENCH_RUNS ?? 5);
/** Cache writes run after the answer (waitUntil): let them land before an isolate goes away. */
const settle = () => new Promise((done) => setTimeout(done, 300));

const query = (file: string) => readFileSync(resolve(ROOT, "examples/qudt/queries", file), "utf8");
const sparql = (text: string) => `/qudt/sparql?query=${encodeURIComponent(text)}`;
/** The routes and the qudt example queries: name → path. */
const REQUESTS: [string, string][] = [
  ["card", "/qudt/card"],
  ["summary", "/qudt/summary"],
  ["resource view", `/qudt/resource?iri=${encodeURIComponent("http://qudt.org/vocab/unit/KiloM-PER-HR")}`],
  ["dereference (303)", "/qudt/id/vocab/unit/KiloM-PER-HR"],
  ...["01-unit-lookup.rq", "02-velocity-units.rq", "05-narrower-than-energy.rq", "06-same-dimension-as-energy.rq", "07-ask-ucum-code.rq", "10-graph-sizes.rq"].map(
    (f): [string, string] => [f, sparql(query(f))],
  ),
];

async function timed(fetch: (path: string, init?: RequestInit) => Promise<Response>, path: string) {
  const start = performance.now();
  const r = await fetch(path, { headers: { accept: "application/json, text/turtle;q=0.9" }, redirect: "manual" });
  const body = await r.text();
  return { ms: performance.now() - start, status: r.status, body, ...counters(r) };
}

/** One request on a new Worker over `storage` with qudt published (unless `publish` is false). */
async function onNewIsolate(path: string, storage: Options, publish = true) {
  const w = await startWorker({}, storage);
  try {
    if (publish) await w.publish("qudt", resolve(FILES, "qudt.rete"));
    const result = await timed(w.fetch, path);
    await settle();
    return result;
  } finally {
    await w.dispose();
  }
}

test("the simulated latency delays every round and changes nothing else", async () => {
  const path = sparql(query("01-unit-lookup.rq"));
  const fast = await onNewIsolate(path, {});
  const slow = await onNewIsolate(path, { r2LatencyMs: 250 });
  expect(slow.status).toBe(200);
  expect(slow.body).toBe(fast.body);
  const same = ({ reads, bytes, cacheHits, subrequests, rounds }: typeof fast) => ({ reads, bytes, cacheHits, subrequests, rounds });
  expect(same(slow)).toEqual(same(fast));
  // Each round waits once (its reads wait side by side): a lower bound whatever the load.
  expect(slow.ms, `${slow.rounds} rounds at 250 ms`).toBeGreaterThanOrEqual(slow.rounds * 250);
}, 60_000);

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
const p = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return `${quantile(sorted, 0.5).toFixed(0)} / ${quantile(sorted, 0.95).toFixed(0)}`;
};

describe.skipIf(!BENCH)("requests under R2 latency", () => {
  test("measure", async () => {
    const lines = [
      `RUNS = ${RUNS} samples per cell; wall ms p50 / p95, measured from Node around dispatchFetch.`,
      "",
      "| R2 latency | request | cold isolate, cold cache | cold isolate, warm cache | warm isolate | rounds cold | R2 reads cold | cache hits (warm cache) | R2 reads (warm cache) | bytes cold |",
      "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ];
    for (const latency of LATENCIES) {
      for (const [name, path] of REQUESTS) {
        const coldCold = [];
        for (let i = 0; i < RUNS; i++) coldCold.push(await onNewIsolate(path, { r2LatencyMs: latency }));
        // One persisted location: a first isolate fills its cache, new isolates then use it.
        const persist = mkdtempSync(join(tmpdir(), "rete-latency-"));
        try {
          await onNewIsolate(path, { persist, r2LatencyMs: latency });
          const coldWarm = [];
          for (let i = 0; i < RUNS; i++) coldWarm.push(await onNewIsolate(path, { persist, r2LatencyMs: latency }, false));
          const w = await startWorker({ POINTER_TTL_S: "60" }, { r2LatencyMs: latency });
          await w.publish("qudt", resolve(FILES, "qudt.rete"));
          await timed(w.fetch, path);
          const warm = [];
          for (let i = 0; i < RUNS; i++) warm.push(await timed(w.fetch, path));
          await w.dispose();
          for (const r of [...coldCold, ...coldWarm, ...warm]) expect([200, 303], name).toContain(r.status);
          const c = coldCold[0];
          const cw = coldWarm[coldWarm.length - 1];
          lines.push(
            `| ${latency} ms | ${name} | ${p(coldCold.map((r) => r.ms))} | ${p(coldWarm.map((r) => r.ms))} | ${p(warm.map((r) => r.ms))} | ${c.rounds} | ${c.reads} | ${cw.cacheHits} | ${cw.reads} | ${c.bytes} |`,
          );
        } finally {
          rmSync(persist, { recursive: true, force: true });
        }
      }
    }
    mkdirSync(resolve(ROOT, "build/worker-bench"), { recursive: true });
    writeFileSync(resolve(ROOT, "build/worker-bench/latency.md"), `${lines.join("\n")}\n`);
    console.log(lines.join("\n"));
  }, 3_600_000);
});
