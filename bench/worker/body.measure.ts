// What a large answer's body costs workerd's main thread besides the Worker's own work (issue 14,
// docs/BENCHMARK.md "Session 20: large answers", "Session 23: what a large answer costs the Worker
// alone"): a JavaScript Worker in the same harness as the factor benchmark (Miniflare's entry worker
// in front, the body read by Node) answers N bytes of SPARQL JSON content type in one of several
// shapes: one body (a fresh copy, as a Worker holding the answer in wasm memory would have to make),
// a ReadableStream of chunks that are each a new Uint8Array filled from a buffer kept in the
// isolate (what the Worker's wasm glue does with each chunk of its wasm memory: `new Uint8Array(n)`
// and a copy), a byte stream (`type: "bytes"`, the stream allocating each chunk and the pull
// filling it) and a FixedLengthStream written chunk by chunk (a known length, no chunked
// encoding); and a 1-byte body, the floor of a request. Each is asked once to warm, then
// RETE_BENCH_RUNS times, the shapes alternated within each round (order reversed every other
// round): median CPU of workerd's main thread. What a shape takes for N bytes, less the 1-byte
// body, is what the factor's Worker column pays for an answer of N bytes besides its wasm, and
// native (bench_queries --write, into a Vec) does not. RETE_BODY_SIZES=7205586,9386402 picks the
// sizes (default 1 MiB and 11 MiB; LUBM q14's and q06's answers are those two).
// Run: nice -n 10 npx vitest run --config bench/worker/vitest.config.ts body   (→ build/worker-bench/body.md)
import { Miniflare } from "miniflare";
import { expect, test } from "vitest";
import { loadAverage, median, writeReport } from "./requests.ts";
import { cpuSplitMs, newWorkerd, threadCpu, workerdChildren } from "./workerd.ts";

const RUNS = Number(process.env.RETE_BENCH_RUNS ?? 5);
const SIZES = (process.env.RETE_BODY_SIZES ?? `${1 << 20},${11 << 20}`).split(",").map(Number);
/** Shape names: "one", "stream:N" (N-byte chunks), "bytes:N", "fixed:N", "floor". */
const SHAPES = ["floor", "one", `stream:${64 << 10}`, `stream:${256 << 10}`, `stream:${1 << 20}`, `bytes:${256 << 10}`, `fixed:${256 << 10}`];

const WORKER = `
const source = new Uint8Array(${Math.max(...SIZES)}).fill(0x61);
export default {
  async fetch(request) {
    const url = new URL(request.url);
    const bytes = Number(url.searchParams.get("bytes"));
    const [shape, size] = url.searchParams.get("shape").split(":");
    const chunk = Number(size);
    const headers = { "content-type": "application/sparql-results+json" };
    const copy = (from, n) => { const c = new Uint8Array(n); c.set(source.subarray(from, from + n)); return c; };
    if (shape === "floor") return new Response("a", { headers });
    if (shape === "one") return new Response(copy(0, bytes), { headers });
    let sent = 0;
    if (shape === "stream") {
      return new Response(new ReadableStream({
        pull(controller) {
          if (sent >= bytes) return controller.close();
          const n = Math.min(chunk, bytes - sent);
          controller.enqueue(copy(sent, n));
          sent += n;
        },
      }), { headers });
    }
    if (shape === "bytes") {
      return new Response(new ReadableStream({
        type: "bytes",
        autoAllocateChunkSize: chunk,
        pull(controller) {
          const request = controller.byobRequest;
          if (sent >= bytes) { controller.close(); request?.respond(0); return; }
          const view = request.view;
          const n = Math.min(view.byteLength, bytes - sent);
          new Uint8Array(view.buffer, view.byteOffset, n).set(source.subarray(sent, sent + n));
          request.respond(n);
          sent += n;
        },
      }), { headers });
    }
    const { readable, writable } = new FixedLengthStream(bytes);
    const writer = writable.getWriter();
    (async () => {
      for (let from = 0; from < bytes; from += chunk) await writer.write(copy(from, Math.min(chunk, bytes - from)));
      await writer.close();
    })();
    return new Response(readable, { headers });
  },
};`;

test("a large body's cost in workerd's main thread", async () => {
  const before = workerdChildren();
  const mf = new Miniflare({ modules: true, script: WORKER, compatibilityDate: "2026-04-26" });
  await mf.ready;
  const pid = newWorkerd(before);
  const lines = [
    `Load average at the start: ${loadAverage()}. Medians of ${RUNS} warm runs, shapes alternated; CPU of workerd's main thread.`,
    "",
    "| bytes | shape | CPU ms | less the 1-byte body | content-length | content-encoding |",
    "| ---: | --- | ---: | ---: | ---: | --- |",
  ];
  try {
    for (const bytes of SIZES) {
      const url = (shape: string) => `http://body.test/?bytes=${bytes}&shape=${shape}`;
      const cpus = new Map(SHAPES.map((shape) => [shape, [] as number[]]));
      const seen = new Map<string, string>();
      for (const shape of SHAPES) await (await mf.dispatchFetch(url(shape))).arrayBuffer();
      for (let i = 0; i < RUNS; i++) {
        for (const shape of i % 2 ? [...SHAPES].reverse() : SHAPES) {
          const cpu = threadCpu(pid);
          const r = await mf.dispatchFetch(url(shape));
          const body = await r.arrayBuffer();
          cpus.get(shape)?.push(cpuSplitMs(pid, cpu).main);
          expect(body.byteLength).toBe(shape === "floor" ? 1 : bytes);
          seen.set(shape, `${r.headers.get("content-length") ?? "—"} | ${r.headers.get("content-encoding") ?? "none"}`);
        }
      }
      const floor = median(cpus.get("floor") ?? []);
      for (const shape of SHAPES) {
        const cpu = median(cpus.get(shape) ?? []);
        const line = `| ${shape === "floor" ? 1 : bytes} | ${shape} | ${cpu.toFixed(2)} | ${shape === "floor" ? "—" : (cpu - floor).toFixed(2)} | ${seen.get(shape)} |`;
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
