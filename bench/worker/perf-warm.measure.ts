// Where a warm request of one query spends workerd's main thread (issue 14, docs/BENCHMARK.md
// "Session 23: what a large answer costs the Worker alone"): `perf record` of that thread alone over
// RETE_BENCH_RUNS warm requests (after three to warm the isolate), split by where each sample's own
// code lives: code V8 generated (the Worker's wasm and its JavaScript glue: "[JIT]", perf has no
// names for it; V8's CPU profile, RETE_CPU_PROFILE=1 in factor.measure.ts, names the wasm), workerd
// (V8's runtime and builtins, kj's HTTP and streams, tcmalloc), the kernel (page faults, the
// socket) and libc (memmove, memset). The factor's Worker column is this thread's CPU; what is not
// generated code is what the Worker pays around its wasm, which native does not. Linux only;
// needs perf and the right to record this user's processes. perf inflates the thread (~1.3–1.7×):
// read shares, not times.
// Run: RETE_PERF_QUERY=bench/lubm-queries/q14.rq RETE_SKIP_BUILD=1 nice -n 10 npx vitest run \
//        --config bench/worker/vitest.config.ts perf-warm        (→ build/worker-bench/perf-warm.md)
// RETE_BENCH_BUILD=DIR picks a Worker build (default worker/build); RETE_PERF_DATASET=NAME=FILE
// another .rete (default lubm-10=build/query-bench/lubm-10.rete, which bench/query.py builds);
// RETE_WORKER_VARS='{"MAX_ROWS_PRODUCED":"1000000"}' overrides [vars] as in factor.measure.ts.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { expect, test } from "vitest";
import { ROOT, startWorker } from "../../tests/worker/mf.ts";
import { loadAverage, settle, sparqlPath, writeReport } from "./requests.ts";
import { newWorkerd, threadCpu, workerdChildren } from "./workerd.ts";

const BUILD = resolve(ROOT, process.env.RETE_BENCH_BUILD ?? "worker/build");
const QUERY = resolve(ROOT, process.env.RETE_PERF_QUERY ?? "bench/lubm-queries/q14.rq");
const [NAME, FILE] = (process.env.RETE_PERF_DATASET ?? "lubm-10=build/query-bench/lubm-10.rete").split("=");
const RUNS = Number(process.env.RETE_BENCH_RUNS ?? 10);
const VARS: Record<string, string> = JSON.parse(process.env.RETE_WORKER_VARS ?? "{}");
const OUT = resolve(ROOT, "build/worker-bench/perf-warm.data");
/** perf's sampling rate: every 50 µs of the thread's CPU. */
const SAMPLE_HZ = 20_000;

/** perf's report of `file` as [share %, what] rows, `sort` by dso or by dso and symbol. */
function report(file: string, sort: string): [number, string][] {
  const text = execFileSync("perf", ["report", "-i", file, "--no-children", "-g", "none", "--sort", sort, "-q"], { encoding: "utf8", maxBuffer: 64 << 20, stdio: ["ignore", "pipe", "ignore"] });
  return text
    .split("\n")
    .map((line) => line.trim().match(/^([\d.]+)%\s+(.*)$/))
    .filter((m): m is RegExpMatchArray => m !== null)
    .map((m): [number, string] => [Number(m[1]), m[2].replace(/\s+/g, " ").replace(/^\[JIT\] tid \d+/, "[JIT]").slice(0, 140)]);
}

test("a warm request's main thread by where its code lives", async () => {
  mkdirSync(resolve(ROOT, "build/worker-bench"), { recursive: true });
  const before = workerdChildren();
  const w = await startWorker({ POINTER_TTL_S: "3600", ...VARS }, { build: BUILD });
  const pid = newWorkerd(before);
  let ms = 0;
  try {
    await w.publish(NAME, resolve(ROOT, FILE));
    const path = sparqlPath(NAME, readFileSync(QUERY, "utf8"));
    const headers = { accept: "application/sparql-results+json, application/n-triples;q=0.9" };
    for (let i = 0; i < 3; i++) await (await w.fetch(`${path}&warm=${i}`, { headers })).arrayBuffer();
    const perf: ChildProcess = spawn("perf", ["record", "-q", "-e", "cpu-clock", "-F", String(SAMPLE_HZ), "-g", "-t", String(pid), "-o", OUT], { stdio: "inherit" });
    await settle(2000);
    const start = threadCpu(pid).get(pid)?.ns ?? 0;
    for (let i = 0; i < RUNS; i++) {
      const r = await w.fetch(`${path}&run=${i}`, { headers });
      await r.arrayBuffer();
      expect(r.status).toBe(200);
    }
    ms = ((threadCpu(pid).get(pid)?.ns ?? 0) - start) / 1e6 / RUNS;
    perf.kill("SIGINT");
    await new Promise((done) => perf.on("exit", done));
  } finally {
    await w.dispose();
  }
  const lines = [
    `${NAME} ${QUERY.slice(ROOT.length + 1)}, build ${BUILD}: ${RUNS} warm requests, ${ms.toFixed(2)} ms of workerd's main thread each under perf. Load average ${loadAverage()}.`,
    "",
    "| where the sample's code lives | share |",
    "| --- | ---: |",
    ...report(OUT, "dso").map(([share, dso]) => `| ${dso} | ${share.toFixed(2)} % |`),
    "",
    "Outside generated code, by symbol (self):",
    "",
    ...report(OUT, "dso,sym")
      .filter(([, what]) => !what.startsWith("[JIT]"))
      .slice(0, 25)
      .map(([share, what]) => `    ${share.toFixed(2)} % ${what}`),
  ];
  writeReport("perf-warm.md", lines);
  expect(ms).toBeGreaterThan(0);
});
