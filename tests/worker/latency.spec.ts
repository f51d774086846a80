// R2 latency in the Worker's measures (issue 12 §4). On Cloudflare every call of the R2 binding
// is a round trip from the edge location to R2 (tens of ms); local R2 answers in ~1 ms. The
// harness (mf.ts, `r2LatencyMs`) wraps the binding so that each call waits first: the Worker
// runs unchanged, and a round of concurrent reads costs one latency, as on the edge. Checked
// here: a slowed request answers the same, with the same counters, at least one latency per
// round later. The measurements under latency are bench/worker/latency.measure.ts
// (docs/BENCHMARK.md "Worker under R2 latency").
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { expect, test } from "vitest";
import { counters, FILES, ROOT, startWorker, type Options } from "./mf.ts";

/** Cache writes run after the answer (waitUntil): let them land before an isolate goes away. */
const settle = () => new Promise((done) => setTimeout(done, 300));

const query = (file: string) => readFileSync(resolve(ROOT, "examples/qudt/queries", file), "utf8");
const sparql = (text: string) => `/qudt/sparql?query=${encodeURIComponent(text)}`;

async function timed(fetch: (path: string, init?: RequestInit) => Promise<Response>, path: string) {
  const start = performance.now();
  const r = await fetch(path, { headers: { accept: "application/json, text/turtle;q=0.9" }, redirect: "manual" });
  const body = await r.text();
  return { ms: performance.now() - start, status: r.status, body, ...counters(r) };
}

/** One request on a new Worker over `storage` with qudt published. */
async function onNewIsolate(path: string, storage: Options) {
  const w = await startWorker({}, storage);
  try {
    await w.publish("qudt", resolve(FILES, "qudt.rete"));
    const result = await timed(w.fetch, path);
    await settle();
    return result;
  } finally {
    await w.dispose();
  }
}

test("the simulated latency delays every round and changes nothing else", async () => {
  const path = sparql(query("01-unit-lookup.rq"));
  const fast = await onNewIsolate(path, {});
  const slow = await onNewIsolate(path, { r2LatencyMs: 250 });
  expect(slow.status).toBe(200);
  expect(slow.body).toBe(fast.body);
  const same = ({ reads, bytes, cacheHits, subrequests, rounds }: typeof fast) => ({ reads, bytes, cacheHits, subrequests, rounds });
  expect(same(slow)).toEqual(same(fast));
  // Each round waits once (its reads wait side by side): a lower bound whatever the load.
  expect(slow.ms, `${slow.rounds} rounds at 250 ms`).toBeGreaterThanOrEqual(slow.rounds * 250);
}, 60_000);
