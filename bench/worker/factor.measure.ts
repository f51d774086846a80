// Issue 14 "In the Worker": the Worker's factor on a warm isolate against the native engine in one
// process, on the same .rete file and the same queries, side by side in one run. Native:
// bench_queries --write (open once, each query RETE_BENCH_RUNS times, the answer written into
// memory as SPARQL JSON or N-Triples as the Worker writes it; median wall and CPU of the query
// thread). Worker: the built Worker in workerd over Miniflare's local R2, wrangler.toml's [vars]
// (RETE_WORKER_VARS='{"CACHE_BYTES":"…"}' overrides some); per query one request to warm the
// isolate, then RETE_BENCH_RUNS more: median wall time as the client sees it (Node → workerd and
// back; a warm `ASK {}` gives that floor) and median CPU of workerd's main thread, which runs the
// Worker's wasm (bench/worker/workerd.ts). Target: ≤ 1.5 × native + 5 ms. "warm rounds" > 0: a
// warm request read blocks again. Datasets: the files bench/query.py builds in build/query-bench/
// (LUBM(10), CLDR; skipped when missing) and the examples; RETE_FACTOR_ONLY=cldr,qudt picks some,
// RETE_FACTOR_QUERIES=q06,q14 some queries of those.
// RETE_BENCH_BUILDS="s=DIR,o3=worker/build" measures several Worker builds side by side (a row
// each). RETE_CPU_PROFILE=1 adds V8's sampling profile of the Worker's isolate over the warm runs:
// its busy samples per request, the functions with most self time (build/worker-bench/
// factor-profile.md; by wasm name once the build's index_bg.names.wasm is appended to its wasm),
// and the same count for Miniflare's entry worker (it proxies each request in the same workerd
// thread; Cloudflare's front line does that outside the isolate); each profile is written for
// DevTools or a script (build/worker-bench/factor-DATASET_BUILD_QUERY.cpuprofile, .entry.cpuprofile
// the entry worker's). V8 samples an isolate only while it runs and the sampler thread keeps its
// interval only on an idle machine: take shares from a profile, times from a run without it.
// RETE_FACTOR_FLOORS=1 runs a JavaScript Worker answering 204 at once beside the Worker (a second
// worker in the same workerd, to which Miniflare routes http://twin.test/) and measures it first,
// as "(harness)": what Miniflare's entry worker and workerd cost a request that reaches a Worker
// doing nothing, the part of every row that is not the Worker's ("(floor) ASK {}" less it is the
// Worker's own floor); and, for an example dataset, two small requests of one resource (README
// "Worker"): its resource view (a point lookup route) and a SPARQL DESCRIBE of it. RETE_FACTOR_BUDGET=1 runs native under the Worker's default limits
// (`bench_queries --budget`: the step hooks and meters the Worker pays), to tell the meter's share
// of a factor from wasm's. RETE_FACTOR_COLD=1 starts a new workerd per query, so that each query's
// first request is its isolate's first (cold: the pointer, the open and every block read from
// Miniflare's R2; its status, rounds, subrequests and main-thread CPU in a column of their own;
// Miniflare's own R2 and Cache API workers run in that thread too), and its warm runs find only its
// own blocks kept. "wasm MiB": the isolate's wasm linear memory after the query's last run
// (`x-rete-memory`; it only grows, so after a dataset's last query it is the isolate's peak).
// RETE_FACTOR_RUNS_LOG=1 prints each warm run's CPU, workerd's main thread and its other threads
// (V8's background TurboFan compiles), to stderr: a median can hide runs made before a hot function's
// optimized code arrived (docs/BENCHMARK.md "Session 21: the wasm's inlining").
// Run: RETE_SKIP_BUILD=1 nice -n 10 npx vitest run --config bench/worker/vitest.config.ts factor
// Writes build/worker-bench/factor.md.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, resolve } from "node:path";
import { expect, test } from "vitest";
import { counters, FILES, ROOT, startWorker } from "../../tests/worker/mf.ts";
import { loadAverage, median, NOTHING, RESOURCES, sparqlPath, writeReport } from "./requests.ts";
import { cpuSplitMs, Inspector, newWorkerd, threadCpu, workerdChildren } from "./workerd.ts";

const RUNS = Number(process.env.RETE_BENCH_RUNS ?? 5);
const VARS: Record<string, string> = JSON.parse(process.env.RETE_WORKER_VARS ?? "{}");
const ONLY = (process.env.RETE_FACTOR_ONLY ?? "").split(",").filter(Boolean);
/** Query files whose names start with one of these (RETE_FACTOR_QUERIES=q06,q14); all when empty. */
const QUERIES = (process.env.RETE_FACTOR_QUERIES ?? "").split(",").filter(Boolean);
const PROFILE = process.env.RETE_CPU_PROFILE === "1";
const NATIVE_BUDGET = process.env.RETE_FACTOR_BUDGET === "1";
const COLD = process.env.RETE_FACTOR_COLD === "1";
const FLOORS = process.env.RETE_FACTOR_FLOORS === "1";
const RUNS_LOG = process.env.RETE_FACTOR_RUNS_LOG === "1";
const BUILDS: [string, string][] = (process.env.RETE_BENCH_BUILDS ?? "=worker/build").split(",").map((b) => {
  const [label, dir] = b.split("=");
  return [label, resolve(ROOT, dir)];
});
const NATIVE = resolve(ROOT, "target/release/examples/bench_queries");
const QUERY_BENCH = resolve(ROOT, "build/query-bench");
/** SPARQL JSON for solutions, N-Triples for graphs: both easy to count rows in. */
const ACCEPT = "application/sparql-results+json, application/n-triples;q=0.9";
/** The Accept-Encoding sent (RETE_FACTOR_ENCODING); by default fetch's own (undici: gzip, deflate, br). A
 * compressed answer shows its encoding in the status column: workerd compresses it in the thread measured
 * (Miniflare's entry worker does what Cloudflare's front line does, for the content types it lists). */
const ENCODING = process.env.RETE_FACTOR_ENCODING;

const queries = (...dirs: string[]) =>
  dirs.flatMap((dir) =>
    readdirSync(resolve(ROOT, dir))
      .filter((f) => f.endsWith(".rq") && (!QUERIES.length || QUERIES.some((q) => f.startsWith(q))))
      .sort()
      .map((f) => resolve(ROOT, dir, f)),
  );

/** name, .rete file, queries. */
const DATASETS: [string, string, string[]][] = [
  ["lubm-10", resolve(QUERY_BENCH, "lubm-10.rete"), queries("bench/lubm-queries", "bench/lubm-shapes")],
  ["cldr", resolve(QUERY_BENCH, "cldr.rete"), queries("bench/cldr-queries")],
  ...["dbpedia-ontology", "qudt", "schema-org"].map((name): [string, string, string[]] => [name, resolve(FILES, `${name}.rete`), queries(`examples/${name}/queries`)]),
];

/** The rows of an answer: bindings of SPARQL JSON, 1 for a boolean, lines of N-Triples. */
function rows(body: string, type: string): number {
  if (type.includes("sparql-results+json")) {
    const json = JSON.parse(body);
    return "boolean" in json ? 1 : json.results.bindings.length;
  }
  return body.split("\n").filter((l) => l.trim()).length;
}

/** Native medians per query file: bench_queries over the same file. */
function native(file: string, qs: string[]): Map<string, { rows: number; median_ms: number; median_cpu_ms: number }> {
  const out = execFileSync(NATIVE, [file, ...qs, "--runs", String(RUNS), "--write", ...(NATIVE_BUDGET ? ["--budget"] : [])], { encoding: "utf8", maxBuffer: 1 << 26 });
  const byQuery = new Map();
  for (const line of out.split("\n").filter((l) => l.startsWith("{"))) {
    const measured = JSON.parse(line);
    if (measured.query) byQuery.set(measured.query, measured);
  }
  return byQuery;
}

test("the Worker against the native engine, warm", async () => {
  mkdirSync(resolve(ROOT, "build/worker-bench"), { recursive: true });
  if (process.env.RETE_SKIP_BUILD !== "1") {
    execFileSync("cargo", ["build", "--release", "--quiet", "-p", "rete-publisher", "--example", "bench_queries"], { cwd: ROOT, stdio: "inherit" });
  }
  const profiles: string[] = [];
  const lines = [
    `Load average at the start: ${loadAverage()}. Native${NATIVE_BUDGET ? " under the Worker's default limits (--budget)" : ""}. Worker vars: wrangler.toml's [vars]${Object.keys(VARS).length ? ` with ${JSON.stringify(VARS)}` : ""}; medians of ${RUNS} warm runs; CPU: native query thread, workerd's main thread.`,
    "",
    `| dataset | query | rows | native ms (CPU) | Worker warm ms (CPU) | factor, wall | CPU | ≤ 1.5× native + 5 ms, wall (CPU) | warm rounds | status | wasm MiB |${COLD ? " cold: status, rounds, subrequests, CPU ms |" : ""}`,
    `| --- | --- | ---: | ---: | ---: | ---: | ---: | :---: | ---: | ---: | ---: |${COLD ? " --- |" : ""}`,
  ];
  /** A new workerd over the build with the dataset published. */
  const open = async (build: string, name: string, file: string) => {
    const before = workerdChildren();
    const w = await startWorker({ POINTER_TTL_S: "3600", ...VARS }, { build, inspector: PROFILE, ...(FLOORS ? { warmer: NOTHING } : {}) });
    const pid = newWorkerd(before);
    const inspector = PROFILE ? await Inspector.connect(w.mf, FLOORS ? "rete" : "") : undefined;
    const entry = PROFILE ? await Inspector.connect(w.mf, "core:entry") : undefined;
    await w.publish(name, file);
    return { w, pid, inspector, entry };
  };
  const close = async (opened?: Awaited<ReturnType<typeof open>>) => {
    opened?.inspector?.close();
    opened?.entry?.close();
    await opened?.w.dispose();
  };
  for (const [name, file, qs] of DATASETS) {
    if (!existsSync(file) || (ONLY.length && !ONLY.includes(name))) continue;
    const measured = native(file, qs);
    for (const [buildLabel, build] of BUILDS) {
      const tag = buildLabel ? `${name}, ${buildLabel}` : name;
      let opened: Awaited<ReturnType<typeof open>> | undefined;
      try {
        // label, path, the query file native measured (none for the floors)
        const requests: [string, string, string | undefined][] = [
          ...(FLOORS ? [["(harness) a JavaScript Worker answering 204", "http://twin.test/?harness", undefined] as [string, string, undefined]] : []),
          ["(floor) ASK {}", sparqlPath(name, "ASK {}"), undefined],
          ...(FLOORS && RESOURCES[name]
            ? [
                ["(route) resource view", `/${name}/resource?iri=${encodeURIComponent(RESOURCES[name][0])}`, undefined] as [string, string, undefined],
                ["(route) DESCRIBE", sparqlPath(name, `DESCRIBE <${RESOURCES[name][0]}>`), undefined] as [string, string, undefined],
              ]
            : []),
          ...qs.map((q): [string, string, string] => [basename(q), sparqlPath(name, readFileSync(q, "utf8")), q]),
        ];
        for (const [label, path, q] of requests) {
          if (!opened || COLD) {
            await close(opened);
            opened = undefined;
            opened = await open(build, name, file);
          }
          const { w, pid, inspector, entry } = opened;
          const headers: Record<string, string> = { accept: ACCEPT, ...(ENCODING ? { "accept-encoding": ENCODING } : {}) };
          const firstCpu = threadCpu(pid);
          const first = await w.fetch(`${path}&run=warmup`, { headers });
          await first.arrayBuffer();
          const firstLimit = first.headers.get("x-rete-limit");
          const coldCell = COLD ? ` ${firstLimit ? `${first.status} ${firstLimit}` : first.status}, ${counters(first).rounds}, ${counters(first).subrequests}, ${cpuSplitMs(pid, firstCpu).main.toFixed(1)} |` : "";
          const [times, cpus] = [[] as number[], [] as number[]];
          const others: number[] = [];
          let last = { status: "", rows: 0, rounds: 0, memory: 0 };
          await inspector?.startProfile();
          await entry?.startProfile();
          for (let i = 0; i < RUNS; i++) {
            const [start, cpu] = [performance.now(), threadCpu(pid)];
            const r = await w.fetch(`${path}&run=${i}`, { headers });
            const body = await r.text();
            times.push(performance.now() - start);
            const split = cpuSplitMs(pid, cpu);
            cpus.push(split.main);
            others.push(split.others);
            const [limit, encoding] = [r.headers.get("x-rete-limit"), r.headers.get("content-encoding")];
            last = { status: `${limit ? `${r.status} ${limit}` : r.status}${encoding ? ` ${encoding}` : ""}`, rows: r.status === 200 ? rows(body, r.headers.get("content-type") ?? "") : 0, rounds: counters(r).rounds, memory: counters(r).memory };
          }
          if (inspector && entry) {
            const [own, proxy] = [await inspector.stopProfile(), await entry.stopProfile()];
            const stem = `${tag} ${label}`.replace(/[^A-Za-z0-9.-]+/g, "_");
            writeFileSync(resolve(ROOT, `build/worker-bench/factor-${stem}.cpuprofile`), JSON.stringify(own.profile));
            writeFileSync(resolve(ROOT, `build/worker-bench/factor-${stem}.entry.cpuprofile`), JSON.stringify(proxy.profile));
            const share = (samples: number) => `${((100 * samples) / Math.max(own.busySamples, 1)).toFixed(1)}%`;
            profiles.push(
              `### ${tag} ${label}`,
              "",
              `Busy samples per request (every 100 µs nominal): the Worker's isolate ${(own.busySamples / RUNS).toFixed(1)}, Miniflare's entry worker ${(proxy.busySamples / RUNS).toFixed(1)}.`,
              "",
              ...own.topSamples.slice(0, 25).map(([fn, samples]) => `    ${share(samples)} ${fn}`),
              "",
            );
          }
          if (RUNS_LOG) console.error(`RUNS ${tag} ${label} ${cpus.map((c) => c.toFixed(1)).join(" ")} others ${others.map((c) => c.toFixed(1)).join(" ")}`);
          const n = q ? measured.get(q) : undefined;
          const [ms, cpu] = [median(times), median(cpus)];
          const factor = n ? `${(ms / Math.max(n.median_ms, 1e-3)).toFixed(1)}×` : "—";
          const cpuFactor = n ? `${(cpu / Math.max(n.median_cpu_ms, 1e-3)).toFixed(1)}×` : "—";
          const met = n ? `${ms <= 1.5 * n.median_ms + 5 ? "yes" : "no"} (${cpu <= 1.5 * n.median_cpu_ms + 5 ? "yes" : "no"})` : "—";
          const nativeCell = n ? `${n.median_ms.toFixed(2)} (${n.median_cpu_ms.toFixed(2)})` : "—";
          const rowCell = n && last.status.startsWith("200") && n.rows !== last.rows ? `${last.rows} (native ${n.rows})` : String(last.rows);
          const line = `| ${tag} | ${label} | ${rowCell} | ${nativeCell} | ${ms.toFixed(2)} (${cpu.toFixed(2)}) | ${factor} | ${cpuFactor} | ${met} | ${last.rounds} | ${last.status} | ${(last.memory / 2 ** 20).toFixed(1)} |${coldCell}`;
          lines.push(line);
          console.log(line);
        }
      } finally {
        await close(opened);
      }
    }
  }
  lines.push("", `Load average at the end: ${loadAverage()}.`);
  writeReport("factor.md", lines);
  if (PROFILE) writeFileSync(resolve(ROOT, "build/worker-bench/factor-profile.md"), `${profiles.join("\n")}\n`);
  console.log(lines.join("\n"));
  expect(lines.length).toBeGreaterThan(4);
});
