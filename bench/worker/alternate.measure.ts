// Small requests, two Worker builds side by side with their requests alternated one by one (issue
// 14, docs/BENCHMARK.md "Session 21: the per-request floor"). A warm small request costs 1–8 ms of
// workerd's CPU, about what the shared machine's load moves a run by between one build's rows and
// the other's (factor.measure.ts measures build after build); here both builds run at once, each in
// its own workerd with the dataset published, and each sample asks one build then the other (the
// order turned every sample), so that the load falls on both alike. Per request: the median CPU ms
// of each workerd's main thread (bench/worker/workerd.ts) over RETE_BENCH_RUNS samples after 3 warm
// ones, and the median of the per-sample ratios. The requests: "(harness)", a JavaScript Worker
// answering 204 in the same workerd (Miniflare's entry worker and workerd's own cost, which
// Cloudflare's front line pays outside the isolate); `ASK {}`; the resource view of one IRI (a point
// lookup route); a DESCRIBE of it; and the dataset's example queries (RETE_FACTOR_QUERIES=01,03
// picks some). RETE_BENCH_BUILDS="before=DIR,after=worker/build" (two), RETE_FACTOR_ONLY=qudt (one
// example dataset).
// Run: RETE_SKIP_BUILD=1 nice -n 10 npx vitest run --config bench/worker/vitest.config.ts alternate
// Writes build/worker-bench/alternate.md.
import { readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { expect, test } from "vitest";
import { FILES, ROOT, startWorker } from "../../tests/worker/mf.ts";
import { loadAverage, median, NOTHING, RESOURCES, sparqlPath, writeReport } from "./requests.ts";
import { cpuSplitMs, newWorkerd, threadCpu, workerdChildren } from "./workerd.ts";

const RUNS = Number(process.env.RETE_BENCH_RUNS ?? 40);
const DATASET = process.env.RETE_FACTOR_ONLY ?? "qudt";
const QUERIES = (process.env.RETE_FACTOR_QUERIES ?? "").split(",").filter(Boolean);
const BUILDS: [string, string][] = (process.env.RETE_BENCH_BUILDS ?? "before=worker/build,after=worker/build").split(",").map((b) => {
  const [label, dir] = b.split("=");
  return [label, resolve(ROOT, dir)];
});
const ACCEPT = "application/sparql-results+json, application/n-triples;q=0.9";

test("small requests, two builds alternated", async () => {
  if (BUILDS.length !== 2) throw new Error("RETE_BENCH_BUILDS names two builds");
  const [iri] = RESOURCES[DATASET] ?? [];
  if (!iri) throw new Error(`${DATASET} is not an example dataset with a resource (bench/worker/requests.ts)`);
  const dir = resolve(ROOT, "examples", DATASET, "queries");
  const queries = readdirSync(dir).filter((f) => f.endsWith(".rq") && (!QUERIES.length || QUERIES.some((q) => f.startsWith(q)))).sort();
  const requests: [string, string][] = [
    ["(harness) a JavaScript Worker answering 204", "http://twin.test/?harness"],
    ["ASK {}", sparqlPath(DATASET, "ASK {}")],
    ["resource view", `/${DATASET}/resource?iri=${encodeURIComponent(iri)}`],
    ["DESCRIBE", sparqlPath(DATASET, `DESCRIBE <${iri}>`)],
    ...queries.map((f): [string, string] => [f, sparqlPath(DATASET, readFileSync(resolve(dir, f), "utf8"))]),
  ];
  const opened = [];
  try {
    for (const [, build] of BUILDS) {
      const before = workerdChildren();
      const w = await startWorker({ POINTER_TTL_S: "3600" }, { build, warmer: NOTHING });
      opened.push({ w, pid: newWorkerd(before) });
      await w.publish(DATASET, resolve(FILES, `${DATASET}.rete`));
    }
    const ask = async (b: number, path: string, run: string) => {
      const { w, pid } = opened[b];
      const cpu = threadCpu(pid);
      const r = await w.fetch(`${path}&run=${run}`, { headers: { accept: ACCEPT } });
      await r.arrayBuffer();
      expect([200, 204], path).toContain(r.status);
      return { ms: cpuSplitMs(pid, cpu).main, status: r.status, length: r.headers.get("content-length") };
    };
    const lines = [
      `Load average at the start: ${loadAverage()}. ${DATASET}; medians of ${RUNS} samples, each one request to each build (order turned every sample); CPU ms of each workerd's main thread.`,
      "",
      `| request | status, bytes (both) | ${BUILDS[0][0]} | ${BUILDS[1][0]} | ${BUILDS[1][0]} ÷ ${BUILDS[0][0]} (median of per-sample ratios) |`,
      "| --- | --- | ---: | ---: | ---: |",
    ];
    for (const [label, path] of requests) {
      for (let i = 0; i < 3; i++) for (const b of [0, 1]) await ask(b, path, `warm${i}`);
      const samples: [number[], number[]] = [[], []];
      const shapes = new Set<string>();
      for (let i = 0; i < RUNS; i++) {
        for (const b of i % 2 ? [1, 0] : [0, 1]) {
          const { ms, status, length } = await ask(b, path, String(i));
          samples[b].push(ms);
          shapes.add(`${status}, ${length ?? "—"}`);
        }
      }
      // Both builds answer alike (status and length; tests/worker checks the bytes).
      const shape = [...shapes].join(" ≠ ");
      const ratios = samples[1].map((ms, i) => ms / samples[0][i]);
      const line = `| ${label} | ${shape} | ${median(samples[0]).toFixed(3)} | ${median(samples[1]).toFixed(3)} | ${median(ratios).toFixed(3)} |`;
      lines.push(line);
      console.log(line);
    }
    lines.push("", `Load average at the end: ${loadAverage()}.`);
    writeReport("alternate.md", lines);
  } finally {
    for (const { w } of opened) await w.dispose();
  }
});
