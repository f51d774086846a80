// Issue 12 §5: CPU time per request in workerd, cold and warm, for every request of
// bench/worker/requests.ts. workerd runs a Worker's JavaScript and wasm on its main thread; the
// CPU it spends per request is read from /proc/PID/task/*/schedstat before and after (bench/
// worker/workerd.ts), split into the main thread and the others (V8's background compilers, GC
// helpers, I/O). The process also hosts Miniflare's local R2 and Cache API (Durable Objects), so
// a request that reads is charged their work too (warm: Miniflare's workers are warmed through a
// twin isolate of the Worker before the measured isolate's first request); with RETE_CPU_PROFILE=1 V8's sampling profiler
// on the Worker's own isolate gives its busy time alone. Per request:
//   startup   CPU of a new workerd from spawn to ready (parse and instantiate the Worker's wasm)
//   cold      the first request of that new isolate (RETE_BENCH_RUNS new isolates, median)
//   warm      the same request again on the isolate (median of RETE_BENCH_RUNS, after one more)
// RETE_CPU_FIRST_IN_PROCESS=1 (with RETE_CPU_WARM_CACHE=1): the measured isolate is the first of
// its workerd to run the Worker's wasm. V8 shares a wasm module's compiled code between the
// isolates of a process, so after the twin's requests the measured isolate's first request found
// the code of its path compiled (it compiled ~15 functions itself) and only logged it for
// workerd's code map. Here a first workerd answers the request twice into a persisted Cache API
// and R2, and a second workerd over the same files measures: its twin is a JavaScript Worker
// that calls R2 and the Cache API (warming Miniflare's own workers), and the measured isolate
// compiles every function its first request reaches, as a new isolate on a machine where the
// Worker did not run does.
// Cloudflare's Free plan allows 10 ms of CPU per request, Paid 30 s (wrangler.toml).
// RETE_BENCH_BUILDS="before=DIR,after=worker/build" measures two Worker builds side by side (each
// sample of one, then the same of the other), a row each.
// Run: RETE_SKIP_BUILD=1 nice -n 10 npx vitest run --config bench/worker/vitest.config.ts cpu
// Writes build/worker-bench/cpu.md.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { resolve } from "node:path";
import { expect, test } from "vitest";
import { counters, ROOT, startWorker, type Worker } from "../../tests/worker/mf.ts";
import { ACCEPT, type BenchRequest, DATASETS, loadAverage, median, NOTHING, OTHER, readyFirstRequest, requestsOf, settle, WARMER, warmLocation, writeReport } from "./requests.ts";
import { cpuSplitMs, Inspector, newWorkerd, threadCpu, workerdChildren } from "./workerd.ts";

const RUNS = Number(process.env.RETE_BENCH_RUNS ?? 3);
const PROFILE = process.env.RETE_CPU_PROFILE === "1" || Boolean(process.env.RETE_CPU_PROFILE_TOP);
/** With RETE_CPU_PROFILE_TOP=N, the N functions the cold request's isolate was busy in the most. */
const PROFILE_TOP = Number(process.env.RETE_CPU_PROFILE_TOP ?? 0);
const WARM_CACHE = process.env.RETE_CPU_WARM_CACHE === "1";
const FIRST_IN_PROCESS = WARM_CACHE && process.env.RETE_CPU_FIRST_IN_PROCESS === "1";

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

/** A Worker in its own workerd, with the pid to watch and its inspector; with `persist`, R2 and
 * the Cache API kept in that directory, and a JavaScript twin (RETE_CPU_FIRST_IN_PROCESS). */
async function isolate(vars: Record<string, string>, build: string, persist?: string) {
  const before = workerdChildren();
  const w = await startWorker(vars, { inspector: PROFILE, build, ...(persist ? { persist, warmer: WARMER } : { twin: true }) });
  const pid = newWorkerd(before);
  const startup = cpuSplitMs(pid, new Map());
  const inspector = PROFILE ? await Inspector.connect(w.mf) : undefined;
  return { w, pid, startup, inspector };
}


/** The CPU one request costs, its waitUntil work (cache writes) included. */
async function measure(w: Worker, pid: number, inspector: Inspector | undefined, request: BenchRequest, top = 0) {
  const work = async () => {
    const r = await w.fetch(request.path, { method: request.method ?? "GET", headers: { accept: ACCEPT }, redirect: "manual" });
    await r.arrayBuffer();
    await settle(100);
    return r;
  };
  const before = threadCpu(pid);
  const { result: r, busyMs, top: busiest } = inspector ? await inspector.busyMs(work) : { result: await work(), busyMs: undefined, top: [] };
  if (top > 0) console.log(`${request.dataset} ${request.name}: busy ${busyMs?.toFixed(1)} ms in\n${busiest.slice(0, top).map(([name, ms]) => `  ${ms.toFixed(2)} ${name}`).join("\n")}`);
  const cpu: Cpu = { ...cpuSplitMs(pid, before), isolate: busyMs };
  expect([200, 204, 303], request.path).toContain(r.status);
  return { cpu, ...counters(r) };
}

const ms = (values: number[]) => median(values).toFixed(1);
const column = (samples: Cpu[], pick: (c: Cpu) => number | undefined) => {
  const values = samples.map(pick).filter((v): v is number => v !== undefined);
  return values.length ? ms(values) : "—";
};

test.skipIf(process.env.RETE_CPU_SIMULATORS_ONLY === "1")("CPU per request", async () => {
  const lines = [
    `Load average at the start: ${loadAverage()}. ${WARM_CACHE ? `Cold isolate in a warm location (the Cache API holds the request's pieces)${FIRST_IN_PROCESS ? ", the first of its workerd to run the wasm" : ""}. ` : "Cold isolate, cold cache. "}Medians of ${RUNS}; CPU ms of workerd's main thread (+ its other threads)${PROFILE ? "; isolate: V8 profiler busy time of the Worker's isolate alone" : ""}.`,
    "",
    `| dataset | request | startup | cold: main (+ others) | ${PROFILE ? "cold: isolate | " : ""}warm: main (+ others) | ${PROFILE ? "warm: isolate | " : ""}R2 reads cold | cache calls cold (hits) | plan |`,
    `| --- | --- | ---: | ---: | ${PROFILE ? "---: | " : ""}---: | ${PROFILE ? "---: | " : ""}---: | ---: | --- |`,
  ];
  for (const dataset of DATASETS) {
    // What any request pays before its route: Miniflare's entry worker, the Worker's fetch handler
    // (config, URL, headers) and, on a new isolate, the first run of that code.
    const preflight: BenchRequest = { dataset, name: "OPTIONS preflight (no route work)", path: `/${dataset}/sparql`, method: "OPTIONS" };
    for (const request of [preflight, ...requestsOf(dataset)]) {
      const samples = BUILDS.map(() => ({ startups: [] as Cpu[], cold: [] as Cpu[], warm: [] as Cpu[], reads: 0, subrequests: 0, hits: 0 }));
      for (let run = 0; run < RUNS; run++) {
        for (const [b, [, build]] of BUILDS.entries()) {
          const s = samples[b];
          const persist = FIRST_IN_PROCESS ? mkdtempSync(resolve(tmpdir(), "rete-cpu-")) : undefined;
          if (persist) await warmLocation({ POINTER_TTL_S: "60" }, build, persist, request);
          const { w, pid, startup, inspector } = await isolate({ POINTER_TTL_S: "60" }, build, persist);
          try {
            // With RETE_CPU_WARM_CACHE=1 the twin asks the same request of the same dataset: the
            // measured isolate is then a cold isolate in a warm location (its pieces in the Cache API).
            const twinPath = WARM_CACHE ? request.path : request.path.replace(`/${dataset}/`, `/${OTHER[dataset]}/`);
            await readyFirstRequest(w, dataset, persist, twinPath, request.method);
            await settle(100);
            s.startups.push(startup);
            const first = await measure(w, pid, inspector, request, PROFILE_TOP);
            s.cold.push(first.cpu);
            s.reads = first.reads;
            s.subrequests = first.subrequests;
            s.hits = first.cacheHits;
            if (run === 0) {
              await measure(w, pid, inspector, request);
              for (let i = 0; i < RUNS; i++) s.warm.push((await measure(w, pid, inspector, request)).cpu);
            }
          } finally {
            inspector?.close();
            await w.dispose();
            if (persist) rmSync(persist, { recursive: true, force: true });
          }
        }
      }
      for (const [b, [label]] of BUILDS.entries()) {
        const { startups, cold, warm, reads, subrequests, hits } = samples[b];
        const coldMain = median(cold.map((c) => c.main));
        const warmMain = median(warm.map((c) => c.main));
        const plan = Math.max(coldMain, warmMain) <= FREE_PLAN_CPU_MS ? "Free" : warmMain <= FREE_PLAN_CPU_MS ? "Free warm, Paid cold" : "Paid";
        const both = (samples: Cpu[]) => `${column(samples, (c) => c.main)} (+${column(samples, (c) => c.others)})`;
        const name = label ? `${request.name}, ${label}` : request.name;
        const line = `| ${dataset} | ${name} | ${column(startups, (c) => c.main + c.others)} | ${both(cold)} | ${PROFILE ? `${column(cold, (c) => c.isolate)} | ` : ""}${both(warm)} | ${PROFILE ? `${column(warm, (c) => c.isolate)} | ` : ""}${reads} | ${subrequests - reads} (${hits}) | ${plan} |`;
        lines.push(line);
        console.log(line);
      }
    }
  }
  lines.push("", `Load average at the end: ${loadAverage()}.`);
  writeReport(`cpu${WARM_CACHE ? "-warm-cache" : ""}${FIRST_IN_PROCESS ? "-first-in-process" : ""}.md`, lines);
});

/** A JavaScript Worker that only calls the local R2 and Cache API, `n` times in a row. */
const CALLER = `
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const n = Number(url.searchParams.get("n"));
    const what = url.searchParams.get("what");
    for (let i = 0; i < n; i++) {
      const key = "http://pieces.test/" + i;
      if (what === "r2") await (await env.BUCKET.get("blob", { range: { offset: i * 16384, length: 16384 } })).arrayBuffer();
      if (what === "put") await caches.default.put(key, new Response(new Uint8Array(16384), { headers: { "cache-control": "max-age=3600" } }));
      if (what === "match") await (await caches.default.match(key))?.arrayBuffer();
    }
    return new Response("ok");
  },
};`;

test("what Miniflare's local R2 and Cache API cost per call", async () => {
  const { Miniflare } = await import("miniflare");
  const before = workerdChildren();
  const mf = new Miniflare({ modules: true, script: CALLER, r2Buckets: { BUCKET: "rete" }, compatibilityDate: "2026-04-26" });
  await mf.ready;
  const pid = newWorkerd(before);
  try {
    await (await mf.getR2Bucket("BUCKET")).put("blob", new Uint8Array(64 * 16384));
    const N = 40;
    const cost = async (what: string, n: number) => {
      const t = threadCpu(pid);
      await (await mf.dispatchFetch(`http://x.test/?what=${what}&n=${n}`)).text();
      await settle(100);
      return cpuSplitMs(pid, t).main;
    };
    const lines = [`Load average: ${loadAverage()}. CPU ms of workerd's main thread per call (16 KiB each), median of 3 runs of ${N} calls, less a request with none.`, "", "| call | ms per call |", "| --- | ---: |"];
    for (const what of ["r2", "put", "match"]) {
      await cost(what, N); // warm
      const per = [];
      for (let i = 0; i < 3; i++) per.push(((await cost(what, N)) - (await cost(what, 0))) / N);
      lines.push(`| ${{ r2: "R2 ranged get", put: "Cache API put", match: "Cache API match (hit)" }[what]} | ${median(per).toFixed(2)} |`);
    }
    writeReport("cpu-simulators.md", lines);
  } finally {
    await mf.dispose();
  }
});


// What workerd's main thread spends on a request that reaches a Worker doing nothing, through the
// same path as the measured requests (Miniflare's entry worker forwarding it, a twin isolate
// warmed first, a new isolate's first request, then warm): the part of every row above that is
// not the Worker's (on Cloudflare there is no entry worker, and the runtime's own request
// handling is not charged to the Worker). "Worker's own" = main − this − simulator calls.
test("what a request to a Worker that does nothing costs here", async () => {
  const { Miniflare } = await import("miniflare");
  const lines = [`Load average: ${loadAverage()}. CPU ms of workerd's main thread, medians of ${RUNS} new workerds (warm: of ${RUNS} repeats after one).`, "", "| request | cold: main (+ others) | warm: main (+ others) |", "| --- | ---: | ---: |"];
  const cold: { main: number; others: number }[] = [];
  const warm: { main: number; others: number }[] = [];
  for (let run = 0; run < RUNS; run++) {
    const before = workerdChildren();
    const mf = new Miniflare({
      workers: [
        { name: "nothing", modules: true, script: NOTHING, compatibilityDate: "2026-04-26" },
        { name: "twin", modules: true, script: NOTHING, compatibilityDate: "2026-04-26", routes: ["twin.test/*"] },
      ],
    });
    await mf.ready;
    const pid = newWorkerd(before);
    try {
      const ask = async (url: string) => {
        const t = threadCpu(pid);
        await (await mf.dispatchFetch(url)).arrayBuffer();
        await settle(100);
        return cpuSplitMs(pid, t);
      };
      for (let i = 0; i < 2; i++) await ask("http://twin.test/");
      await settle(100);
      cold.push(await ask("http://rete.test/"));
      await ask("http://rete.test/");
      for (let i = 0; i < RUNS; i++) warm.push(await ask("http://rete.test/"));
    } finally {
      await mf.dispose();
    }
  }
  const both = (samples: { main: number; others: number }[]) => `${ms(samples.map((c) => c.main))} (+${ms(samples.map((c) => c.others))})`;
  lines.push(`| GET to a Worker that answers 204 at once | ${both(cold)} | ${both(warm)} |`);
  writeReport("cpu-floor.md", lines);
});
