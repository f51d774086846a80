// What a warm isolate's request costs after workerd makes another isolate in its process (issue
// 12 §5). workerd sets every new isolate's memory pressure to "moderate" (Worker::Isolate's
// constructor), and V8 answers with a flush of the Liftoff code of every wasm module of the
// process (--flush-liftoff-code): a warm isolate then compiles again, in its next request, what
// that request reaches and V8 had not tiered up to TurboFan (docs/BENCHMARK.md "Compiling at
// module start"). Per request of bench/worker/requests.ts, in one workerd whose JavaScript twin
// makes a new isolate on demand (a Worker Loader): the request warm, a new isolate elsewhere in
// the process, the same request again, and once more. CPU ms of workerd's main thread, medians.
// Run: RETE_BENCH_DATASETS=qudt RETE_BENCH_RUNS=5 RETE_SKIP_BUILD=1 nice -n 10 npx vitest run --config bench/worker/vitest.config.ts flush
// RETE_BENCH_BUILD=DIR picks a Worker build (default worker/build). Writes build/worker-bench/flush.md.
import { resolve } from "node:path";
import { expect, test } from "vitest";
import { ROOT, startWorker, type Worker } from "../../tests/worker/mf.ts";
import { ACCEPT, type BenchRequest, DATASETS, fileOf, loadAverage, median, requestsOf, settle, writeReport } from "./requests.ts";
import { cpuSplitMs, newWorkerd, threadCpu, workerdChildren } from "./workerd.ts";

const RUNS = Number(process.env.RETE_BENCH_RUNS ?? 5);
const BUILD = resolve(ROOT, process.env.RETE_BENCH_BUILD ?? "worker/build");

/** Makes a new isolate (a dynamic Worker of its own) for each `?isolate=ID`. */
const SPAWNER = `
export default {
  async fetch(request, env) {
    const id = new URL(request.url).searchParams.get("isolate");
    const worker = env.LOADER.get(id, () => ({
      compatibilityDate: "2026-04-26",
      mainModule: "a.js",
      modules: { "a.js": "export default { fetch() { return new Response('a new isolate') } }" },
    }));
    return worker.getEntrypoint().fetch(request);
  },
};`;

async function cpu(w: Worker, pid: number, path: string, accept = ACCEPT): Promise<number> {
  const before = threadCpu(pid);
  const r = await w.fetch(path, { headers: { accept }, redirect: "manual" });
  await r.arrayBuffer();
  await settle(100);
  expect([200, 204, 303], path).toContain(r.status);
  return cpuSplitMs(pid, before).main;
}

test("a warm isolate after a new isolate in its process", async () => {
  const lines = [
    `Load average at the start: ${loadAverage()}. Medians of ${RUNS}; CPU ms of workerd's main thread.`,
    "",
    "| dataset | request | warm | a new isolate elsewhere (its own request) | then the same request | and again |",
    "| --- | --- | ---: | ---: | ---: | ---: |",
  ];
  for (const dataset of DATASETS) {
    for (const request of requestsOf(dataset) as BenchRequest[]) {
      const before = workerdChildren();
      const w = await startWorker({ POINTER_TTL_S: "600" }, { build: BUILD, warmer: SPAWNER, loader: true });
      const pid = newWorkerd(before);
      try {
        await w.publish(dataset, fileOf(dataset));
        for (let i = 0; i < 3; i++) await cpu(w, pid, request.path);
        const warm: number[] = [];
        const spawn: number[] = [];
        const after: number[] = [];
        const again: number[] = [];
        for (let run = 0; run < RUNS; run++) {
          warm.push(await cpu(w, pid, request.path));
          spawn.push(await cpu(w, pid, `http://twin.test/?isolate=${run}`, "*/*"));
          after.push(await cpu(w, pid, request.path));
          again.push(await cpu(w, pid, request.path));
        }
        const line = `| ${dataset} | ${request.name} | ${median(warm).toFixed(1)} | ${median(spawn).toFixed(1)} | ${median(after).toFixed(1)} | ${median(again).toFixed(1)} |`;
        console.log(line);
        lines.push(line);
      } finally {
        await w.dispose();
      }
    }
  }
  lines.push("", `Load average at the end: ${loadAverage()}.`);
  writeReport("flush.md", lines);
});
