// The browser suite: real headless Chromium (Debian's, driven by playwright-core) against
// `wrangler dev` serving the examples (global-setup.ts). `npm test` runs it as the "browser"
// suite; alone: npx vitest run --config tests/browser/vitest.config.ts
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    root: new URL("../..", import.meta.url).pathname,
    include: ["tests/browser/**/*.spec.ts"],
    globalSetup: ["tests/browser/global-setup.ts"],
    // One wrangler dev and one browser: the pages share them, one test file at a time.
    fileParallelism: false,
    testTimeout: 60_000,
    // Publishing the examples and starting wrangler dev: the Worker's wasm may need a build first.
    hookTimeout: 900_000,
  },
});
