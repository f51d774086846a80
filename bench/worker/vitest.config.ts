// The Worker benchmarks (issue 12 §4–§6; docs/BENCHMARK.md "Worker"): vitest in Node driving the
// built Worker in real workerd through the test harness (tests/worker/mf.ts), one file at a time,
// never part of `npm test`. One file: npx vitest run --config bench/worker/vitest.config.ts latency
// Each writes its table to build/worker-bench/<name>.md and prints it.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    root: new URL("../..", import.meta.url).pathname,
    include: ["bench/worker/**/*.measure.ts"],
    globalSetup: ["tests/worker/global-setup.ts"],
    // Measurements side by side, never two at once on a shared machine.
    maxWorkers: 1,
    fileParallelism: false,
    // Node 20: a WebSocket client for workerd's inspector (bench/worker/workerd.ts).
    execArgv: ["--experimental-websocket"],
    testTimeout: 3_600_000,
    hookTimeout: 600_000,
  },
});
