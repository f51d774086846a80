// Issue 12 §5: CPU time per request in workerd, cold and warm, for every request of
// bench/worker/requests.ts. workerd runs a Worker's JavaScript and wasm on its main thread; the
// CPU it spends per request is read from /proc/PID/task/*/schedstat before and after (bench/
// worker/workerd.ts), split into the main thread and the others (V8's background compilers, GC
// helpers, I/O). The process also hosts Miniflare's local R2 and Cache API (Durable Objects), so
// a request that reads is charged their work too; with RETE_CPU_PROFILE=1 V8's sampling profiler
// on the Worker's own isolate gives its busy time alone. Per request:
//   startup   CPU of a new workerd from spawn to ready (parse and instantiate the Worker's wasm)
//   cold      the first request of that new isolate (RETE_BENCH_RUNS new isolates, median)
//   warm      the same request again on the isolate (median of RETE_BENCH_RUNS, after one more)
// Cloudflare's Free plan allows 10 ms of CPU per request, Paid 30 s (wrangler.toml).
// RETE_BENCH_BUILDS="before=DIR,after=worker/build" measures two Worker builds side by side (each
// sample of one, then the same of the other), a row each.
// Run: RETE_SKIP_BUILD=1 nice -n 10 npx vitest run --config bench/worker/vitest.config.ts cpu
// Writes build/worker-bench/cpu.md.
import { mkdirSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { expect, test } from "vitest";
import { counters, ROOT, startWorker, type Worker } from "../../tests/worker/mf.ts";
import { ACCEPT, type BenchRequest, DATASETS, fileOf, loadAverage, median, requestsOf, settle } from "./requests.ts";
import { cpuSplitMs, Inspector, newWorkerd, threadCpu, workerdChildren } from "./workerd.ts";

const RUNS = Number(process.env.RETE_BENCH_RUNS ?? 3);
const PROFILE = process.env.RETE_CPU_PROFILE === "1";
const FREE_PLAN_CPU_MS = 10;
/** The Worker builds measured: [label, directory]. */
const BUILDS: [string, string][] = (process.env.RETE_BENCH_BUILDS ?? "=worker/build").split(",").map((b) => {
  const [label, dir] = b.split("=");
  return [label, resolve(ROOT, dir)];
});

interface Cpu {
  main: number;
  others: number;
  /** The Worker's isolate alone (V8 profiler), when RETE_CPU_PROFILE=1. */
  isolate?: number;
}

/** A Worker in its own workerd, with the pid to watch and its inspector. */
async function isolate(vars: Record<string, string>, build: string) {
  const before = workerdChildren();
  const w = await startWorker(vars, { inspector: PROFILE, build });
  const pid = newWorkerd(before);
  const startup = cpuSplitMs(pid, new Map());
  const inspector = PROFILE ? await Inspector.connect(w.mf) : undefined;
  return { w, pid, startup, inspector };
}

/** The CPU one request costs, its waitUntil work (cache writes) included. */
async function measure(w: Worker, pid: number, inspector: Inspector | undefined, request: BenchRequest) {
  const work = async () => {
    const r = await w.fetch(request.path, { method: request.method ?? "GET", headers: { accept: ACCEPT }, redirect: "manual" });
    await r.arrayBuffer();
    await settle(100);
    return r;
  };
  const before = threadCpu(pid);
  const { result: r, busyMs } = inspector ? await inspector.busyMs(work) : { result: await work(), busyMs: undefined };
  const cpu: Cpu = { ...cpuSplitMs(pid, before), isolate: busyMs };
  expect([200, 204, 303], request.path).toContain(r.status);
  return { cpu, ...counters(r) };
}

const ms = (values: number[]) => median(values).toFixed(1);
const column = (samples: Cpu[], pick: (c: Cpu) => number | undefined) => {
  const values = samples.map(pick).filter((v): v is number => v !== undefined);
  return values.length ? ms(values) : "—";
};

test("CPU per request", async () => {
  const lines = [
    `Load average at the start: ${loadAverage()}. Medians of ${RUNS}; CPU ms of workerd's main thread (+ its other threads)${PROFILE ? "; isolate: V8 profiler busy time of the Worker's isolate alone" : ""}.`,
    "",
    `| dataset | request | startup | cold: main (+ others) | ${PROFILE ? "cold: isolate | " : ""}warm: main (+ others) | ${PROFILE ? "warm: isolate | " : ""}R2 reads cold | cache calls cold | plan |`,
    `| --- | --- | ---: | ---: | ${PROFILE ? "---: | " : ""}---: | ${PROFILE ? "---: | " : ""}---: | ---: | --- |`,
  ];
  for (const dataset of DATASETS) {
    // What any request pays before its route: Miniflare's entry worker, the Worker's fetch handler
    // (config, URL, headers) and, on a new isolate, the first run of that code.
    const preflight: BenchRequest = { dataset, name: "OPTIONS preflight (no route work)", path: `/${dataset}/sparql`, method: "OPTIONS" };
    for (const request of [preflight, ...requestsOf(dataset)]) {
      const samples = BUILDS.map(() => ({ startups: [] as Cpu[], cold: [] as Cpu[], warm: [] as Cpu[], reads: 0, subrequests: 0 }));
      for (let run = 0; run < RUNS; run++) {
        for (const [b, [, build]] of BUILDS.entries()) {
          const s = samples[b];
          const { w, pid, startup, inspector } = await isolate({ POINTER_TTL_S: "60" }, build);
          try {
            await w.publish(dataset, fileOf(dataset));
            s.startups.push(startup);
            const first = await measure(w, pid, inspector, request);
            s.cold.push(first.cpu);
            s.reads = first.reads;
            s.subrequests = first.subrequests;
            if (run === 0) {
              await measure(w, pid, inspector, request);
              for (let i = 0; i < RUNS; i++) s.warm.push((await measure(w, pid, inspector, request)).cpu);
            }
          } finally {
            inspector?.close();
            await w.dispose();
          }
        }
      }
      for (const [b, [label]] of BUILDS.entries()) {
        const { startups, cold, warm, reads, subrequests } = samples[b];
        const coldMain = median(cold.map((c) => c.main));
        const warmMain = median(warm.map((c) => c.main));
        const plan = Math.max(coldMain, warmMain) <= FREE_PLAN_CPU_MS ? "Free" : warmMain <= FREE_PLAN_CPU_MS ? "Free warm, Paid cold" : "Paid";
        const both = (samples: Cpu[]) => `${column(samples, (c) => c.main)} (+${column(samples, (c) => c.others)})`;
        const name = label ? `${request.name}, ${label}` : request.name;
        const line = `| ${dataset} | ${name} | ${column(startups, (c) => c.main + c.others)} | ${both(cold)} | ${PROFILE ? `${column(cold, (c) => c.isolate)} | ` : ""}${both(warm)} | ${PROFILE ? `${column(warm, (c) => c.isolate)} | ` : ""}${reads} | ${subrequests - reads} | ${plan} |`;
        lines.push(line);
        console.log(line);
      }
    }
  }
  lines.push("", `Load average at the end: ${loadAverage()}.`);
  mkdirSync(resolve(ROOT, "build/worker-bench"), { recursive: true });
  writeFileSync(resolve(ROOT, "build/worker-bench/cpu.md"), `${lines.join("\n")}\n`);
  console.log(lines.join("\n"));
});
