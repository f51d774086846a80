// The clients suite: real SPARQL clients (SPARQLWrapper, rdflib, fetch-sparql-endpoint, Comunica,
// Jena ARQ) and the SPARQL 1.1 Protocol's cases against `wrangler dev` serving a fixture
// (global-setup.ts). `npm test` runs it as the "clients" suite; alone:
// npx vitest run --config tests/clients/vitest.config.ts
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    root: new URL("../..", import.meta.url).pathname,
    include: ["tests/clients/**/*.spec.ts"],
    globalSetup: ["tests/clients/global-setup.ts"],
    testTimeout: 60_000,
    // Installing the clients on a cold cache, and building the Worker's wasm if it is stale.
    hookTimeout: 900_000,
  },
});
