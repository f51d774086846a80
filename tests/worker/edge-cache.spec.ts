// The block cache every isolate of a location shares (the Workers Cache API, README "Worker",
// issue 12 §2): pieces of a file keyed by its content hash and byte range, written after their
// bytes were checked. Asserted through the headers: a new isolate (a new Miniflare over the same
// persisted R2 and Cache API, as after a restart of `wrangler dev`) that repeats a request reads
// only the pointer from R2 (x-rete-reads 1) and takes the rest from the cache
// (x-rete-cache-hits), one Cache API call a round (the round's bundle), with the same answer;
// without a bundle, a lookup per piece as the subrequests allow (on the Free plan's 50, a request
// of more than ~36 pieces reads the rest from R2); a cache entry or a round's bundle that fails its
// check is never used, and is written over with checked bytes; R2 reads and Cache API calls
// together stay within MAX_SUBREQUESTS.
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
      // A query whose rounds are all bundles: the first bundle found also tells that the
      // location has seen the file, so the pointer's round and one call per round of blocks.
      if (path === REQUESTS[0]) expect(warm?.subrequests, `${path}: no separate "seen here" lookup`).toBe(warm?.rounds);
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

  test("on the Free plan's 50 subrequests a round of more pieces than the cache's share is still stored whole", async () => {
    // Rounds of 37-38 pieces: their bundle is written before the pieces, whose writes then take
    // the rest of the cache's share of subrequests (before, the bundle was the write left out).
    const queries = ["03-units-per-quantity-kind.rq", "08-construct-length-units.rq", "10-graph-sizes.rq"];
    for (const name of queries) {
      const path = sparql(readFileSync(resolve(import.meta.dirname, "../../examples/qudt/queries", name), "utf8"));
      const persist = persistDir();
      const w = await startWorker({}, { persist });
      let cold;
      try {
        await w.publish("qudt", resolve(FILES, "qudt.rete"));
        cold = await answer(w, path);
        await settle();
      } finally {
        await w.dispose();
      }
      expect(cold.status, name).toBe(200);
      const warm = await warmCacheAnswer(persist, path, {});
      expect(warm?.body, name).toBe(cold.body);
      expect(warm?.reads, `${name}: only the pointer from R2`).toBe(1);
      expect(warm?.subrequests, `${name}: one Cache API call a round`).toBeLessThanOrEqual((warm?.rounds ?? 0) + 1);
    }
  }, 180_000);

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

  test("a damaged round bundle is not used: the answer stays right, and checked bytes replace it", async () => {
    const persist = persistDir();
    const path = REQUESTS[0];
    // The first isolate reads the query's rounds from R2 and stores each round as a bundle; the
    // harness's R2 wrapper records the Cache API keys it used (tests/worker/r2-faults.js).
    const first = await startWorker(PAID, { persist, faults: true });
    let reference;
    let bundles: string[] = [];
    try {
      await first.publish("qudt", resolve(FILES, "qudt.rete"));
      reference = await answer(first, path);
      await settle();
      const { calls } = await (await first.fetch("/__faults")).json();
      bundles = calls.filter((c: { op: string; key: string }) => c.op === "cache-put" && c.key.includes("/round-")).map((c: { key: string }) => c.key);
    } finally {
      await first.dispose();
    }
    expect(reference.status).toBe(200);
    expect(bundles.length, "a round of two pieces or more is stored as one bundle").toBeGreaterThan(0);
    const { Response } = await import("miniflare");
    // Every bundle damaged, then a new isolate asks the same query: one byte inverted in the
    // bundle's middle (the length its key names, so that each piece is checked), or cut short.
    for (const damage of ["flip", "short"]) {
      const w = await startWorker(PAID, { persist, faults: true });
      try {
        const caches = await w.mf.getCaches();
        const good = new Map<string, Buffer>();
        for (const key of bundles) {
          const stored = await caches.default.match(key);
          expect(stored, `${key} is in the cache`).toBeDefined();
          const bytes = Buffer.from(await (stored as Response).arrayBuffer());
          good.set(key, bytes);
          const bad = damage === "flip" ? Buffer.from(bytes) : bytes.subarray(0, bytes.length >> 1);
          if (damage === "flip") bad[bad.length >> 1] ^= 0xff;
          await caches.default.put(key, new Response(bad, { headers: { "cache-control": "public, max-age=3600" } }));
        }
        const r = await answer(w, path);
        expect(r.status, damage).toBe(200);
        expect(r.body, `${damage}: the same answer, nothing of the damaged bundle served`).toBe(reference.body);
        await settle();
        const { calls } = await (await w.fetch("/__faults")).json();
        for (const key of bundles) {
          expect(calls.some((c: { op: string; key: string }) => c.op === "cache-match" && c.key === key), `${damage}: ${key} was looked up`).toBe(true);
          // Not reused: the round's checked pieces were written over it.
          const now = Buffer.from(await ((await caches.default.match(key)) as Response).arrayBuffer());
          expect(now.equals(good.get(key) as Buffer), `${damage}: ${key} holds the checked round again`).toBe(true);
        }
      } finally {
        await w.dispose();
      }
    }
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
