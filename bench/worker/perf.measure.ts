// Where a new isolate's first request spends workerd's main thread (issue 12 §5): `perf record`
// of that thread alone around the first request of a new isolate in a warm location (a twin
// isolate asked the same request twice first, as in cpu.measure.ts), then around the same
// request warm. workerd is not stripped, so V8's compilers, its runtime and workerd's own code
// have names; code V8 generated (the Worker's wasm, JavaScript) has none. Each sample is put in
// one bucket by the frames of its stack (`bucket`): wasm compiled on first call (Liftoff, and
// the code-event logging workerd asks V8 for), JavaScript compiled on first call, tier-up
// triggers, wasm and JavaScript running, the runtime under or beside them, workerd's I/O, the
// kernel. Linux only; needs perf and the right to record this user's processes.
// Run: RETE_BENCH_DATASETS=qudt RETE_BENCH_ONLY=01- RETE_SKIP_BUILD=1 nice -n 10 npx vitest run --config bench/worker/vitest.config.ts perf
// RETE_BENCH_BUILD=DIR picks a Worker build (default worker/build); RETE_PERF_PREWARM=PATH has
// the measured isolate answer PATH (another dataset's request) before the measured one.
// RETE_PERF_FIRST_IN_PROCESS=1: the measured isolate is the first of its workerd to run the wasm
// (a first workerd warms the Cache API; a JavaScript twin warms Miniflare's workers), so it
// compiles every function it reaches, as RETE_CPU_FIRST_IN_PROCESS in cpu.measure.ts.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { resolve } from "node:path";
import { test } from "vitest";
import { ROOT, startWorker } from "../../tests/worker/mf.ts";
import { ACCEPT, DATASETS, readyFirstRequest, requestsOf, settle, WARMER, warmLocation } from "./requests.ts";
import { newWorkerd, threadCpu, workerdChildren } from "./workerd.ts";

const BUILD = resolve(ROOT, process.env.RETE_BENCH_BUILD ?? "worker/build");
const OUT = resolve(ROOT, "build/worker-bench/perf");
const FIRST_IN_PROCESS = process.env.RETE_PERF_FIRST_IN_PROCESS === "1";
/** perf's sampling period: 50 µs of the thread's CPU. */
const SAMPLE_HZ = 20_000;

/** Records thread `tid` while `work` runs (perf takes a second or two to start under load). */
async function record(tid: number, file: string, work: () => Promise<void>) {
  const perf: ChildProcess = spawn("perf", ["record", "-q", "-e", "cpu-clock", "-F", String(SAMPLE_HZ), "-g", "-t", String(tid), "-o", file], { stdio: "inherit" });
  await settle(2000);
  const before = threadCpu(tid).get(tid)?.ns ?? 0;
  await work();
  const ms = ((threadCpu(tid).get(tid)?.ns ?? 0) - before) / 1e6;
  perf.kill("SIGINT");
  await new Promise((done) => perf.on("exit", done));
  return ms;
}

/** The bucket of one sample, from its frames (leaf first; "" for generated code). */
function bucket(frames: string[]): string {
  const all = frames.join("|");
  const leaf = frames[0] ?? "";
  if (all.includes("Runtime_WasmCompileLazy")) return all.includes("LogCode") || all.includes("LogOutstandingCodes") ? "wasm compiled on first call: code-event logging" : "wasm compiled on first call: Liftoff";
  if (all.includes("TriggerTierUp")) return "wasm tier-up trigger";
  if (all.includes("Runtime_CompileLazy") || all.includes("Compiler::Compile")) return "JavaScript compiled on first call";
  if (all.includes("sqlite3")) return "Miniflare's R2 and Cache API (SQLite)";
  if (all.includes("Heap::") || all.includes("Scavenge") || all.includes("MarkCompact")) return "V8 garbage collection";
  if (all.includes("page_fault")) return "kernel: page faults";
  if (leaf.startsWith("[k]")) return "kernel: other";
  if (all.includes("JSToWasm")) {
    if (leaf === "") return "generated code (wasm, glue) under the Worker's wasm";
    if (all.includes("WasmToJs")) return "runtime called from the Worker's wasm";
    return "V8 runtime under the Worker's wasm";
  }
  if (leaf === "") return "generated code (JavaScript) outside wasm";
  if (leaf.startsWith("Builtins_") || leaf.includes("v8::")) return "V8 runtime outside wasm";
  return "workerd (I/O, requests, promises)";
}

/** The samples of thread `tid` in `file`, by bucket, as ms. */
function buckets(file: string, tid: number): [string, number][] {
  const text = execFileSync("perf", ["script", "-i", file, "--tid", String(tid), "-F", "tid,ip,sym,dso"], { encoding: "utf8", maxBuffer: 256 << 20, stdio: ["ignore", "pipe", "ignore"] });
  const counts = new Map<string, number>();
  for (const sample of text.split("\n\n")) {
    const lines = sample.trim().split("\n").slice(1).map((l) => l.trim()).filter(Boolean);
    if (!lines.length) continue;
    const frames = lines.map((line) => {
      const rest = line.replace(/^\S+\s*/, "");
      const open = rest.lastIndexOf(" (");
      const symbol = open >= 0 ? rest.slice(0, open) : rest;
      const dso = open >= 0 ? rest.slice(open) : "";
      if (symbol === "[unknown]" || symbol === "") return "";
      return dso.includes("kernel") ? `[k] ${symbol}` : symbol;
    });
    const b = bucket(frames);
    counts.set(b, (counts.get(b) ?? 0) + 1000 / SAMPLE_HZ);
  }
  return [...counts.entries()].sort((a, b) => b[1] - a[1]);
}

test("perf of a new isolate's first request", async () => {
  mkdirSync(OUT, { recursive: true });
  for (const dataset of DATASETS) {
    for (const request of requestsOf(dataset)) {
      const persist = FIRST_IN_PROCESS ? mkdtempSync(resolve(tmpdir(), "rete-perf-")) : undefined;
      if (persist) await warmLocation({ POINTER_TTL_S: "60" }, BUILD, persist, request);
      const before = workerdChildren();
      const w = await startWorker({ POINTER_TTL_S: "60" }, { build: BUILD, ...(persist ? { persist, warmer: WARMER } : { twin: true }) });
      const pid = newWorkerd(before);
      try {
        await readyFirstRequest(w, dataset, persist, request.path);
        if (process.env.RETE_PERF_PREWARM) await (await w.fetch(process.env.RETE_PERF_PREWARM, { headers: { accept: ACCEPT }, redirect: "manual" })).arrayBuffer();
        await settle(100);
        const ask = async () => {
          const r = await w.fetch(request.path, { headers: { accept: ACCEPT }, redirect: "manual" });
          await r.arrayBuffer();
          await settle(100);
        };
        const name = `${dataset}-${request.name.replace(/[^a-z0-9]+/gi, "_")}`;
        const lines = [];
        for (const phase of ["cold", "warm"]) {
          if (phase === "warm") await ask();
          const file = `${OUT}/${name}-${phase}.data`;
          const ms = await record(pid, file, ask);
          const split = buckets(file, pid);
          const sampled = split.reduce((sum, [, v]) => sum + v, 0);
          lines.push(`${dataset} ${request.name}, ${phase}: main thread ${ms.toFixed(1)} ms (${sampled.toFixed(1)} ms sampled)`);
          for (const [name, v] of split) lines.push(`  ${v.toFixed(2).padStart(6)} ms  ${name}`);
        }
        console.log(lines.join("\n"));
      } finally {
        await w.dispose();
        if (persist) rmSync(persist, { recursive: true, force: true });
      }
    }
  }
});
