// What a large answer's body costs workerd's main thread besides the Worker's own work (issue 14,
// docs/BENCHMARK.md "Session 20: large answers"): a JavaScript Worker in the same harness as the
// factor benchmark (Miniflare's entry worker in front, the body read by Node) answers N bytes of
// SPARQL JSON content type, either as one body or as a ReadableStream of chunks that are each
// a new Uint8Array filled from a buffer kept in the isolate (what the Worker's wasm glue does
// with each chunk of its wasm memory: `new Uint8Array(n)` and a copy). Each (size, chunk) is
// asked once to warm, then RETE_BENCH_RUNS times: median CPU of workerd's main thread. What it
// takes for N bytes is what the factor's Worker column pays for an answer of N bytes before
// any wasm runs, and native (bench_queries --write, into a Vec) does not.
// Run: nice -n 10 npx vitest run --config bench/worker/vitest.config.ts body   (→ build/worker-bench/body.md)
import { Miniflare } from "miniflare";
import { expect, test } from "vitest";
import { loadAverage, median, writeReport } from "./requests.ts";
import { cpuSplitMs, newWorkerd, threadCpu, workerdChildren } from "./workerd.ts";

const RUNS = Number(process.env.RETE_BENCH_RUNS ?? 5);
const SIZES = [1 << 20, 11 << 20];
const CHUNKS = [0, 64 << 10, 256 << 10, 1 << 20];

const WORKER = `
const source = new Uint8Array(${Math.max(...SIZES)}).fill(0x61);
export default {
  async fetch(request) {
    const url = new URL(request.url);
    const bytes = Number(url.searchParams.get("bytes"));
    const chunk = Number(url.searchParams.get("chunk"));
    const headers = { "content-type": "application/sparql-results+json" };
    if (chunk === 0) return new Response(source.subarray(0, bytes), { headers });
    let sent = 0;
    const body = new ReadableStream({
      pull(controller) {
        if (sent >= bytes) return controller.close();
        const n = Math.min(chunk, bytes - sent);
        const copy = new Uint8Array(n);
        copy.set(source.subarray(sent, sent + n));
        controller.enqueue(copy);
        sent += n;
      },
    });
    return new Response(body, { headers });
  },
};`;

test("a large body's cost in workerd's main thread", async () => {
  const before = workerdChildren();
  const mf = new Miniflare({ modules: true, script: WORKER, compatibilityDate: "2026-04-26" });
  await mf.ready;
  const pid = newWorkerd(before);
  const lines = [
    `Load average at the start: ${loadAverage()}. Medians of ${RUNS} warm runs; CPU of workerd's main thread.`,
    "",
    "| bytes | chunk | CPU ms | content-encoding |",
    "| ---: | ---: | ---: | --- |",
  ];
  try {
    for (const bytes of SIZES) {
      for (const chunk of CHUNKS) {
        const url = `http://body.test/?bytes=${bytes}&chunk=${chunk}`;
        await (await mf.dispatchFetch(url)).arrayBuffer();
        const cpus: number[] = [];
        let encoding = "";
        for (let i = 0; i < RUNS; i++) {
          const cpu = threadCpu(pid);
          const r = await mf.dispatchFetch(url);
          const body = await r.arrayBuffer();
          cpus.push(cpuSplitMs(pid, cpu).main);
          expect(body.byteLength).toBe(bytes);
          encoding = r.headers.get("content-encoding") ?? "none";
        }
        const line = `| ${bytes} | ${chunk || "one body"} | ${median(cpus).toFixed(2)} | ${encoding} |`;
        lines.push(line);
        console.log(line);
      }
    }
  } finally {
    await mf.dispose();
  }
  lines.push("", `Load average at the end: ${loadAverage()}.`);
  writeReport("body.md", lines);
  expect(lines.length).toBeGreaterThan(4);
});
