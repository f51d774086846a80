// The block cache every isolate of a location shares (the Workers Cache API, README "Worker",
// issue 12 §2): pieces of a file keyed by its content hash and byte range, written after their
// bytes were checked. Asserted through the headers: a new isolate (a new Miniflare over the same
// persisted R2 and Cache API, as after a restart of `wrangler dev`) that repeats a request reads
// only the pointer from R2 (x-rete-reads 1) and takes the rest from the cache
// (x-rete-cache-hits), one Cache API call a round (the round's bundle), with the same answer;
// without a bundle, a lookup per piece as the subrequests allow (on the Free plan's 50, a request
// of more than ~36 pieces reads the rest from R2); a cache entry that fails its check is never
// used; R2 reads and Cache API calls together stay within MAX_SUBREQUESTS.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { contentHash, counters, FILES, startWorker, type Worker } from "./mf.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function persistDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "rete-edge-cache-"));
  dirs.push(dir);
  return dir;
}

const sparql = (query: string) => `/qudt/sparql?query=${encodeURIComponent(query)}`;
/** Requests of every kind of route, each on a cold isolate below. */
const REQUESTS = [
  sparql(readFileSync(resolve(import.meta.dirname, "../../examples/qudt/queries/01-unit-lookup.rq"), "utf8")),
  sparql(readFileSync(resolve(import.meta.dirname, "../../examples/qudt/queries/06-same-dimension-as-energy.rq"), "utf8")),
  sparql("DESCRIBE <http://qudt.org/vocab/unit/KiloM-PER-HR>"),
  `/qudt/resource?iri=${encodeURIComponent("http://qudt.org/vocab/unit/M")}`,
  "/qudt/card",
  "/qudt/summary",
  "/qudt/summary?level=0",
];

/** Cache writes run after the answer (waitUntil): let them finish before an isolate goes away. */
const settle = () => new Promise((done) => setTimeout(done, 500));

async function answer(w: Worker, path: string) {
  const r = await w.fetch(path, { headers: { accept: "application/json, text/turtle;q=0.9" } });
  return { status: r.status, body: await r.text(), ...counters(r) };
}

/** The Paid plan's subrequests per request. */
const PAID = { MAX_SUBREQUESTS: "1000" };

/** A new isolate over `persist` answering `path`, until the writes of earlier isolates (done after
 * their answers, with waitUntil) are all in the cache; each attempt is a fresh isolate. */
async function warmCacheAnswer(persist: string, path: string, vars: Record<string, string> = PAID) {
  let last: Awaited<ReturnType<typeof answer>> | undefined;
  for (let attempt = 0; attempt < 6; attempt++) {
    const w = await startWorker(vars, { persist });
    try {
      last = await answer(w, path);
      if (last.reads === 1) return last;
      await settle();
    } finally {
      await w.dispose();
    }
  }
  return last;
}

describe("the Cache API between isolates", () => {
  test("a new isolate repeating a request reads only the pointer from R2, with the same answer", async () => {
    const persist = persistDir();
    const publisher = await startWorker({}, { persist });
    await publisher.publish("qudt", resolve(FILES, "qudt.rete"));
    await publisher.dispose();
    for (const path of REQUESTS) {
      // Each request first on an isolate of its own (what earlier requests left in the Cache API
      // it may use), then on new isolates until the cache holds all it read.
      const w = await startWorker(PAID, { persist });
      let cold;
      try {
        cold = await answer(w, path);
        await settle();
      } finally {
        await w.dispose();
      }
      expect(cold.status, path).toBe(200);
      const warm = await warmCacheAnswer(persist, path);
      expect(warm?.status, path).toBe(200);
      expect(warm?.body, path).toBe(cold.body);
      expect(warm?.reads, `${path}: only the pointer from R2`).toBe(1);
      expect(warm?.bytes, `${path}: the pointer, ~22 KB with the file's first read`).toBeLessThan(24 * 1024);
      // A request the pointer's head answers alone (the card) has nothing to take from the cache.
      if (cold.reads > 1) expect(warm?.cacheHits, path).toBeGreaterThan(0);
      expect(warm?.rounds, `${path}: the cache saves reads, not rounds`).toBe(cold.rounds);
      // Each round of the earlier isolate is one entry (its bundle): one Cache API call a round,
      // besides the pointer's R2 read and the lookup of whether the location has seen the file.
      expect(warm?.subrequests, `${path}: one Cache API call a round`).toBeLessThanOrEqual((warm?.rounds ?? 0) + 1);
    }
  }, 300_000);

  test("on the Free plan's 50 subrequests a warm location still saves most R2 reads", async () => {
    const persist = persistDir();
    const w = await startWorker({}, { persist });
    await w.publish("qudt", resolve(FILES, "qudt.rete"));
    let cold;
    try {
      cold = await answer(w, REQUESTS[3]);
      await settle();
    } finally {
      await w.dispose();
    }
    const warm = await warmCacheAnswer(persist, REQUESTS[3], {});
    expect(warm?.body).toBe(cold.body);
    expect(warm?.cacheHits).toBeGreaterThan(20);
    expect(warm?.reads).toBeLessThan(cold.reads / 2);
    expect(warm?.subrequests).toBeLessThanOrEqual(50);
  }, 120_000);

  test("the first isolate's own cold requests: R2 reads, no hits, subrequests within the budget", async () => {
    const w = await startWorker();
    try {
      await w.publish("qudt", resolve(FILES, "qudt.rete"));
      const r = await answer(w, REQUESTS[1]);
      expect(r.status).toBe(200);
      expect(r.cacheHits).toBe(0);
      expect(r.reads).toBeGreaterThan(2);
      // Lookups and writes are subrequests too: more than the R2 reads, no more than the budget.
      expect(r.subrequests).toBeGreaterThan(r.reads);
      expect(r.subrequests).toBeLessThanOrEqual(50);
    } finally {
      await w.dispose();
    }
  });

  test("an entry that fails its check is not used, and is replaced by checked bytes", async () => {
    const persist = persistDir();
    const w = await startWorker({}, { persist });
    const file = resolve(FILES, "qudt.rete");
    // A pointer without the first read, so that the open looks in the cache for it.
    const version = await w.publish("qudt", file, { head: false });
    // Garbage where the file's first read would be cached.
    const caches = await w.mf.getCaches();
    const key = `https://rete-blocks.invalid/${version}/0-16384`;
    const { Response } = await import("miniflare");
    await caches.default.put(key, new Response("not the first read", { headers: { "cache-control": "public, max-age=3600" } }));
    try {
      const r = await answer(w, "/qudt/card");
      expect(r.status).toBe(200);
      expect(JSON.parse(r.body).content_hash).toBe(contentHash(readFileSync(file)));
      expect(r.reads, "the first read came from R2").toBeGreaterThanOrEqual(2);
      await settle();
    } finally {
      await w.dispose();
    }
    const again = await warmCacheAnswer(persist, "/qudt/card");
    expect(again?.reads).toBe(1);
    expect(again?.cacheHits).toBeGreaterThan(0);
  }, 120_000);

  test("R2 reads and Cache API calls share MAX_SUBREQUESTS: never more, and past it a 422", async () => {
    for (const max of [4, 8, 12, 20]) {
      const w = await startWorker({ MAX_SUBREQUESTS: String(max) });
      try {
        await w.publish("qudt", resolve(FILES, "qudt.rete"));
        const r = await w.fetch(REQUESTS[1]);
        const c = counters(r);
        expect(c.subrequests, `MAX_SUBREQUESTS=${max}`).toBeLessThanOrEqual(max);
        if (r.status === 422) {
          expect(r.headers.get("x-rete-limit")).toBe("subrequests");
          expect((await r.json()).message).toContain(`more than ${max} subrequests`);
        } else {
          expect(r.status).toBe(200);
        }
      } finally {
        await w.dispose();
      }
    }
  });
});
