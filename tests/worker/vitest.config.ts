// The Worker suite: vitest in Node driving real workerd through Miniflare (tests/worker/mf.ts).
// `npm test` runs it as the "worker" suite; alone: npx vitest run --config tests/worker/vitest.config.ts
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    root: new URL("../..", import.meta.url).pathname,
    include: ["tests/worker/**/*.spec.ts"],
    globalSetup: ["tests/worker/global-setup.ts"],
    // Each spec file starts its own workerd; two at a time is what 2 cores take.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
