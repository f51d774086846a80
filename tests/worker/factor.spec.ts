// Opt-in (RETE_BENCH=1; docs/BENCHMARK.md "Worker against native"): the Worker's factor on a warm
// isolate against the native engine in one process, on the same .rete file and the same
// queries, side by side in one run (issue 14, "In the Worker"). Native: bench_queries (open
// once, each query RETE_BENCH_RUNS times, median wall). Worker: real workerd over Miniflare's
// local R2 with wrangler.toml's [vars] (RETE_WORKER_VARS='{"CACHE_BYTES":"…"}' overrides some),
// one request to warm the isolate, then RETE_BENCH_RUNS more, median wall time as the client sees
// it (Node → workerd and back included; a warm `ASK {}` gives that floor), and median CPU time of
// the workerd process per request (the sum of its threads' schedstat, so it holds workerd's own
// HTTP handling too) beside native's CPU time of the query thread: on a machine others keep busy,
// CPU time is the steadier of the two. Target: ≤ 1.5 × native + 5 ms. "warm rounds" > 0 means a warm request read blocks again (its cache could not keep
// what the query touches). Datasets: the files bench/query.py builds in build/query-bench/
// (LUBM(10), CLDR; missing ones are skipped) and the examples; RETE_FACTOR_ONLY=cldr,qudt picks
// some. Writes build/worker-bench/factor.md. RETE_PROFILE=1 also samples V8's CPU profile of the
// Worker over each query's warm runs (the inspector on RETE_INSPECTOR_PORT, default 8841): the
// functions with most self time, by wasm function name, in build/worker-bench/profile.md.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, resolve } from "node:path";
import { describe, expect, test } from "vitest";
import { counters, FILES, ROOT, startWorker } from "./mf.ts";

const BENCH = process.env.RETE_BENCH === "1";
const RUNS = Number(process.env.RETE_BENCH_RUNS ?? 5);
const VARS: Record<string, string> = JSON.parse(process.env.RETE_WORKER_VARS ?? "{}");
const ONLY = (process.env.RETE_FACTOR_ONLY ?? "").split(",").filter(Boolean);
const PROFILE = process.env.RETE_PROFILE === "1";
const INSPECTOR_PORT = Number(process.env.RETE_INSPECTOR_PORT ?? 8841);
const NATIVE = resolve(ROOT, "target/release/examples/bench_queries");
const QB = resolve(ROOT, "build/query-bench");

const queries = (...dirs: string[]) =>
  dirs.flatMap((dir) => readdirSync(resolve(ROOT, dir)).filter((f) => f.endsWith(".rq")).sort().map((f) => resolve(ROOT, dir, f)));

/** name, .rete file, queries. */
const DATASETS: [string, string, string[]][] = [
  ["lubm-10", resolve(QB, "lubm-10.rete"), queries("bench/lubm-queries", "bench/lubm-shapes")],
  ["cldr", resolve(QB, "cldr.rete"), queries("bench/cldr-queries")],
  ...["dbpedia-ontology", "qudt", "schema-org"].map((name): [string, string, string[]] => [name, resolve(FILES, `${name}.rete`), queries(`examples/${name}/queries`)]),
];

/** The workerd process Miniflare started for this process. */
function workerdPid(): number {
  for (const entry of readdirSync("/proc").filter((e) => /^\d+$/.test(e))) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (comm === "workerd" && ppid === process.pid) return Number(entry);
    } catch {
      // a process that ended while listed
    }
  }
  throw new Error("no workerd child process found");
}

/** CPU time of every thread of a process so far, in ms (schedstat: ns on CPU). */
function cpuMs(pid: number): number {
  let ns = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // a thread that ended while listed
    }
  }
  return ns / 1e6;
}

/** V8's sampling profiler of the Worker, over the DevTools protocol. */
class Profiler {
  private next = 1;
  private waiting = new Map<number, (result: unknown) => void>();
  private socket: import("ws").WebSocket;
  private constructor(socket: import("ws").WebSocket) {
    this.socket = socket;
    socket.on("message", (data) => {
      const message = JSON.parse(String(data));
      this.waiting.get(message.id)?.(message.result);
      this.waiting.delete(message.id);
    });
  }
  static async connect(port: number): Promise<Profiler> {
    const [target] = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
    // ws: Miniflare's own dependency (Node 20 has no WebSocket client without a flag); loaded only here.
    const { WebSocket } = await import("ws");
    const socket = new WebSocket(target.webSocketDebuggerUrl);
    await new Promise((open, fail) => socket.once("open", open).once("error", fail));
    const profiler = new Profiler(socket);
    await profiler.send("Profiler.enable");
    await profiler.send("Profiler.setSamplingInterval", { interval: 100 });
    return profiler;
  }
  send(method: string, params: object = {}): Promise<any> {
    const id = this.next++;
    this.socket.send(JSON.stringify({ id, method, params }));
    return new Promise((done) => this.waiting.set(id, done));
  }
  /** Self time per function name, largest first, as "name share%" lines. */
  async stop(top: number): Promise<string[]> {
    const { profile } = await this.send("Profiler.stop");
    const self = new Map<string, number>();
    let total = 0;
    for (const node of profile.nodes) {
      const name = node.callFrame.functionName || `(${node.callFrame.url || "anonymous"})`;
      self.set(name, (self.get(name) ?? 0) + node.hitCount);
      total += node.hitCount;
    }
    return [...self].sort((a, b) => b[1] - a[1]).slice(0, top).map(([name, hits]) => `${((100 * hits) / total).toFixed(1)}% ${name}`);
  }
  close() {
    this.socket.close();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/** The rows of an answer: bindings of SPARQL JSON, 1 for a boolean, lines of N-Triples. */
function rows(body: string, type: string): number {
  if (type.includes("sparql-results+json")) {
    const json = JSON.parse(body);
    return "boolean" in json ? 1 : json.results.bindings.length;
  }
  return body.split("\n").filter((l) => l.trim()).length;
}

describe.skipIf(!BENCH)("the Worker against the native engine, warm", () => {
  test("measure", async () => {
    if (process.env.RETE_SKIP_BUILD !== "1") {
      execFileSync("cargo", ["build", "--release", "--quiet", "-p", "rete-publisher", "--example", "bench_queries"], { cwd: ROOT, stdio: "inherit" });
    }
    const profiles: string[] = [];
    const lines = [
      `Worker vars: wrangler.toml's [vars]${Object.keys(VARS).length ? ` with ${JSON.stringify(VARS)}` : ""}; medians of ${RUNS} warm runs.`,
      "",
      "| dataset | query | rows | native ms (CPU) | Worker warm ms (CPU) | factor, wall | CPU | ≤ 1.5× native + 5 ms (CPU) | warm rounds | status |",
      "| --- | --- | ---: | ---: | ---: | ---: | ---: | :---: | ---: | ---: |",
    ];
    for (const [name, file, qs] of DATASETS) {
      if (!existsSync(file) || (ONLY.length && !ONLY.includes(name))) continue;
      const native = new Map<string, { rows: number; median_ms: number; median_cpu_ms: number }>();
      const out = execFileSync(NATIVE, [file, ...qs, "--runs", String(RUNS)], { encoding: "utf8", maxBuffer: 1 << 26 });
      for (const line of out.split("\n").filter((l) => l.startsWith('{"'))) {
        const j = JSON.parse(line);
        if (j.query) native.set(j.query, j);
      }
      const w = await startWorker({ POINTER_TTL_S: "3600", ...VARS }, PROFILE ? { inspectorPort: INSPECTOR_PORT } : {});
      const profiler = PROFILE ? await Profiler.connect(INSPECTOR_PORT) : undefined;
      try {
        await w.publish(name, file);
        const pid = workerdPid();
        const ask = `/${name}/sparql?query=${encodeURIComponent("ASK {}")}`;
        const floor: number[] = [];
        const floorCpu: number[] = [];
        for (let i = 0; i <= RUNS; i++) {
          const [start, cpu] = [performance.now(), cpuMs(pid)];
          await (await w.fetch(`${ask}&run=${i}`)).arrayBuffer();
          if (i > 0) floor.push(performance.now() - start);
          if (i > 0) floorCpu.push(cpuMs(pid) - cpu);
        }
        lines.push(`| ${name} | (floor) ASK {} | 1 | — | ${median(floor).toFixed(2)} (${median(floorCpu).toFixed(2)}) | — | — | — | 0 | 200 |`);
        for (const q of qs) {
          const text = readFileSync(q, "utf8");
          const path = `/${name}/sparql?query=${encodeURIComponent(text)}`;
          const headers = { accept: "application/sparql-results+json, application/n-triples;q=0.9" };
          await (await w.fetch(`${path}&run=warmup`, { headers })).arrayBuffer();
          const times: number[] = [];
          const cpus: number[] = [];
          let last = { status: 0, rows: 0, rounds: 0 };
          await profiler?.send("Profiler.start");
          for (let i = 0; i < RUNS; i++) {
            const [start, cpu] = [performance.now(), cpuMs(pid)];
            const r = await w.fetch(`${path}&run=${i}`, { headers });
            const body = await r.text();
            times.push(performance.now() - start);
            cpus.push(cpuMs(pid) - cpu);
            last = { status: r.status, rows: r.status === 200 ? rows(body, r.headers.get("content-type") ?? "") : 0, rounds: counters(r).rounds };
          }
          if (profiler) profiles.push(`### ${name} ${basename(q)}`, "", ...(await profiler.stop(25)).map((l) => `    ${l}`), "");
          const n = native.get(q);
          const [ms, cpu] = [median(times), median(cpus)];
          const factor = n ? ms / Math.max(n.median_ms, 1e-3) : NaN;
          const cpuFactor = n ? cpu / Math.max(n.median_cpu_ms, 1e-3) : NaN;
          const met = n ? `${ms <= 1.5 * n.median_ms + 5 ? "yes" : "no"} (${cpu <= 1.5 * n.median_cpu_ms + 5 ? "yes" : "no"})` : "—";
          const rowNote = n && last.status === 200 && n.rows !== last.rows ? ` (native ${n.rows})` : "";
          lines.push(`| ${name} | ${basename(q)} | ${last.rows}${rowNote} | ${n ? `${n.median_ms.toFixed(2)} (${n.median_cpu_ms.toFixed(2)})` : "—"} | ${ms.toFixed(2)} (${cpu.toFixed(2)}) | ${factor.toFixed(1)}× | ${cpuFactor.toFixed(1)}× | ${met} | ${last.rounds} | ${last.status} |`);
        }
      } finally {
        profiler?.close();
        await w.dispose();
      }
    }
    mkdirSync(resolve(ROOT, "build/worker-bench"), { recursive: true });
    writeFileSync(resolve(ROOT, "build/worker-bench/factor.md"), `${lines.join("\n")}\n`);
    if (PROFILE) writeFileSync(resolve(ROOT, "build/worker-bench/profile.md"), `${profiles.join("\n")}\n`);
    console.log(lines.join("\n"));
    expect(lines.length).toBeGreaterThan(4);
  }, 3_600_000);
});
