// The block cache across a restart of `wrangler dev` (issue 12 §2): the Cache API is Miniflare's,
// persisted under --persist-to with the local R2. A query answered once, then again by a new
// `wrangler dev` process (a new isolate, the cache kept), reads at most its pointer from R2.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, expect, test } from "vitest";
import { QUIET, startWranglerDev, type WranglerDev } from "../shared/wrangler-dev.ts";
import { counters, FILES, RETE } from "./mf.ts";

const persist = mkdtempSync(join(tmpdir(), "rete-restart-"));
let running: WranglerDev | undefined;
afterAll(() => {
  running?.stop();
  rmSync(persist, { recursive: true, force: true });
});

async function query(dev: WranglerDev, path: string) {
  const r = await fetch(`${dev.baseURL}${path}`);
  return { status: r.status, body: await r.text(), ...counters(r) };
}

/** Stops a `wrangler dev` and waits until its port is closed. */
async function stop(dev: WranglerDev) {
  dev.stop();
  for (let i = 0; i < 100; i++) {
    try {
      await fetch(`${dev.baseURL}/`);
    } catch {
      return;
    }
    await new Promise((done) => setTimeout(done, 200));
  }
}

test("after a restart of wrangler dev, a repeated query reads nothing but its pointer from R2", async () => {
  execFileSync(RETE, ["publish", resolve(FILES, "qudt.rete"), "--name", "qudt", "--local", "--persist-to", persist], { stdio: "ignore", env: { ...process.env, ...QUIET } });
  const text = readFileSync(resolve(import.meta.dirname, "../../examples/qudt/queries/01-unit-lookup.rq"), "utf8");
  const path = `/qudt/sparql?query=${encodeURIComponent(text)}`;

  running = await startWranglerDev(persist);
  const cold = await query(running, path);
  expect(cold.status).toBe(200);
  expect(cold.reads).toBeGreaterThan(2);
  expect(cold.cacheHits).toBe(0);
  // The cache is written after the answer (waitUntil); give it a moment before the restart.
  await new Promise((done) => setTimeout(done, 2000));
  await stop(running);

  running = await startWranglerDev(persist);
  const warm = await query(running, path);
  expect(warm.status).toBe(200);
  expect(warm.body).toBe(cold.body);
  // At most the pointer (wrangler dev's start-up probe of / may have read it moments before).
  expect(warm.reads, "nothing but the pointer from R2").toBeLessThanOrEqual(1);
  expect(warm.bytes).toBeLessThan(1024);
  expect(warm.cacheHits).toBeGreaterThan(0);
  expect(warm.rounds).toBe(cold.rounds);
}, 600_000);
