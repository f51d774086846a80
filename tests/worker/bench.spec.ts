// Opt-in (RETE_BENCH=1; docs/BENCHMARK.md "Worker"): what each example query costs through the
// Worker in real workerd over Miniflare's local R2: rounds, R2 requests, bytes read and wall
// time, cold (a fresh isolate: pointer, header and every block read) and warm (the same query
// again: header, INDEX and blocks cached in the isolate). Writes build/worker-bench/examples.md.
import { readdirSync, readFileSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, test } from "vitest";
import { counters, FILES, ROOT, startWorker } from "./mf.ts";

const BENCH = process.env.RETE_BENCH === "1";
const RUNS = 5;

describe.skipIf(!BENCH)("example queries through the Worker", () => {
  test("measure", async () => {
    const lines = [
      "| dataset | query | file bytes | rounds | R2 requests | bytes read | share | cold ms | warm ms (median of 5) | warm rounds |",
      "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ];
    for (const name of readdirSync(resolve(ROOT, "examples")).sort()) {
      const dir = resolve(ROOT, "examples", name, "queries");
      const file = resolve(FILES, `${name}.rete`);
      const fileBytes = statSync(file).size;
      for (const q of readdirSync(dir).filter((f) => f.endsWith(".rq")).sort()) {
        const query = readFileSync(resolve(dir, q), "utf8");
        const w = await startWorker({ POINTER_TTL_S: "60" });
        await w.publish(name, file);
        const path = `/${name}/sparql?query=${encodeURIComponent(query)}`;
        let start = performance.now();
        const cold = await w.fetch(path);
        await cold.arrayBuffer();
        const coldMs = performance.now() - start;
        expect(cold.status).toBe(200);
        const c = counters(cold);
        const warm: number[] = [];
        let warmRounds = 0;
        for (let i = 0; i < RUNS; i++) {
          start = performance.now();
          const r = await w.fetch(`${path}&run=${i}`);
          await r.arrayBuffer();
          warm.push(performance.now() - start);
          warmRounds = counters(r).rounds;
        }
        warm.sort((a, b) => a - b);
        await w.dispose();
        lines.push(
          `| ${name} | ${q} | ${fileBytes} | ${c.rounds} | ${c.reads} | ${c.bytes} | ${((100 * c.bytes) / fileBytes).toFixed(1)}% | ${coldMs.toFixed(0)} | ${warm[RUNS >> 1].toFixed(1)} | ${warmRounds} |`,
        );
      }
    }
    mkdirSync(resolve(ROOT, "build/worker-bench"), { recursive: true });
    writeFileSync(resolve(ROOT, "build/worker-bench/examples.md"), `${lines.join("\n")}\n`);
    console.log(lines.join("\n"));
  }, 600_000);
});
