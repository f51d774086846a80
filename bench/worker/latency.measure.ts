// Issue 12 §4: wall time per request with R2 as far away as on Cloudflare. The harness slows
// every call of the Worker's R2 binding by RETE_R2_LATENCY_MS (default "20,50"; mf.ts
// `r2LatencyMs`, a wrapped binding: the Worker is the deployed one) and measures, per request of
// bench/worker/requests.ts, p50/p95 of RETE_BENCH_RUNS samples (default 3) in three states:
//   cold isolate, cold cache  a new workerd, an empty Cache API (a location that never saw the file)
//   cold isolate, warm cache  a new workerd over the Cache API an earlier isolate filled
//   warm isolate              the same request again on one isolate (POINTER_TTL_S 60)
// with the x-rete-* counters of each state. Wall time is measured in Node around dispatchFetch,
// body included. Run (docs/BENCHMARK.md "Worker under R2 latency"):
//   RETE_SKIP_BUILD=1 nice -n 10 npx vitest run --config bench/worker/vitest.config.ts latency
// Writes build/worker-bench/latency.md.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "vitest";
import { counters, startWorker, type Options } from "../../tests/worker/mf.ts";
import { ACCEPT, type BenchRequest, DATASETS, fileOf, loadAverage, quantiles, requestsOf, settle, writeReport } from "./requests.ts";

const LATENCIES = (process.env.RETE_R2_LATENCY_MS ?? "20,50").split(",").map(Number);
const RUNS = Number(process.env.RETE_BENCH_RUNS ?? 3);

type Fetch = (path: string, init?: RequestInit) => Promise<Response>;

async function timed(fetch: Fetch, path: string) {
  const start = performance.now();
  const r = await fetch(path, { headers: { accept: ACCEPT }, redirect: "manual" });
  await r.arrayBuffer();
  const ms = performance.now() - start;
  expect([200, 303], path).toContain(r.status);
  return { ms, ...counters(r) };
}
type Sample = Awaited<ReturnType<typeof timed>>;

/** One request on a new isolate (a new workerd) over `options`' storage. */
async function onNewIsolate(request: BenchRequest, options: Options, publish = true): Promise<Sample> {
  const w = await startWorker({}, options);
  try {
    if (publish) await w.publish(request.dataset, fileOf(request.dataset));
    const sample = await timed(w.fetch, request.path);
    await settle();
    return sample;
  } finally {
    await w.dispose();
  }
}

const cell = (samples: Sample[]) => {
  const { p50, p95 } = quantiles(samples.map((s) => s.ms));
  return `${p50.toFixed(0)} / ${p95.toFixed(0)}`;
};

test("requests under simulated R2 latency", async () => {
  const lines = [
    `Load average at the start: ${loadAverage()}. ${RUNS} samples per cell; wall ms p50 / p95.`,
    "",
    "| R2 latency | dataset | request | cold isolate, cold cache | cold isolate, warm cache | warm isolate | rounds (cold / warm cache / warm) | R2 reads (cold / warm cache / warm) | cache hits (warm cache) | bytes read cold |",
    "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  ];
  for (const latency of LATENCIES) {
    for (const dataset of DATASETS) {
      const requests = requestsOf(dataset);
      // Warm: one isolate for the dataset, each request once to warm it, then RUNS times.
      const warm = new Map<string, Sample[]>();
      const w = await startWorker({ POINTER_TTL_S: "60" }, { r2LatencyMs: latency });
      try {
        await w.publish(dataset, fileOf(dataset));
        for (const request of requests) {
          await timed(w.fetch, request.path);
          const samples = [];
          for (let i = 0; i < RUNS; i++) samples.push(await timed(w.fetch, request.path));
          warm.set(request.name, samples);
        }
      } finally {
        await w.dispose();
      }
      for (const request of requests) {
        const coldCold = [];
        for (let i = 0; i < RUNS; i++) coldCold.push(await onNewIsolate(request, { r2LatencyMs: latency }));
        // One persisted location: a first isolate fills its Cache API, new isolates then use it.
        const persist = mkdtempSync(join(tmpdir(), "rete-latency-"));
        const coldWarm = [];
        try {
          await onNewIsolate(request, { persist, r2LatencyMs: latency });
          for (let i = 0; i < RUNS; i++) coldWarm.push(await onNewIsolate(request, { persist, r2LatencyMs: latency }, false));
        } finally {
          rmSync(persist, { recursive: true, force: true });
        }
        const [c, cw, h] = [coldCold[0], coldWarm[coldWarm.length - 1], warm.get(request.name)?.at(-1) as Sample];
        const line = `| ${latency} ms | ${dataset} | ${request.name} | ${cell(coldCold)} | ${cell(coldWarm)} | ${cell(warm.get(request.name) ?? [])} | ${c.rounds} / ${cw.rounds} / ${h.rounds} | ${c.reads} / ${cw.reads} / ${h.reads} | ${cw.cacheHits} | ${c.bytes} |`;
        lines.push(line);
        console.log(line);
      }
    }
  }
  lines.push("", `Load average at the end: ${loadAverage()}.`);
  writeReport("latency.md", lines);
});
