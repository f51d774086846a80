// One Miniflare instance running the built Worker (worker/build/) in real workerd, over an
// in-memory R2 bucket filled the way `rete publish` lays datasets out (README "R2 layout"):
// datasets/NAME/<content-hash>.rete, versions/<hash>.json and the current.json pointer.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { Miniflare } from "miniflare";

export const ROOT = resolve(import.meta.dirname, "../..");
/** The .rete files global-setup.ts builds from examples/ and tests/worker/fixtures/. */
export const FILES = resolve(ROOT, "build/test-worker");
export const RETE = resolve(ROOT, "target/release/rete");

/** wrangler.toml's [vars], as the deployed Worker sees them (tests override some). */
export function wranglerVars(): Record<string, string> {
  const toml = readFileSync(resolve(ROOT, "wrangler.toml"), "utf8");
  const section = toml.split(/^\[vars\]\s*$/m)[1]?.split(/^\[/m)[0] ?? "";
  const vars: Record<string, string> = {};
  for (const line of section.split("\n")) {
    const m = line.match(/^([A-Z_]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/);
    if (m) vars[m[1]] = m[2] ?? m[3];
  }
  return vars;
}

/** The content hash of a .rete (header bytes 0x10..0x20, a little-endian u128) as 32 hex digits. */
export function contentHash(bytes: Uint8Array): string {
  return Array.from(bytes.subarray(0x10, 0x20)).reverse().map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The card's `title` and `license`, those it has, as `rete publish` copies them into the entry. */
function cardMembers(file: string): { title?: string; license?: string } {
  const { card } = JSON.parse(execFileSync(RETE, ["inspect", file, "--json"], { encoding: "utf8" }));
  return Object.fromEntries(["title", "license"].filter((m) => typeof card[m] === "string").map((m) => [m, card[m]]));
}

export interface Worker {
  mf: Miniflare;
  /** dispatchFetch with a path on http://rete.test (or a full URL). */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** Publishes a .rete file under a name, as `rete publish` does (its card's title and licence
   * in the entry, when it has them); returns its version. */
  publish(name: string, file: string): Promise<string>;
  dispose(): Promise<void>;
}

export const ORIGIN = "http://rete.test";

/** Where a Worker keeps R2 and the Cache API: in memory (default), or in a directory that a
 * later Worker (a new isolate, as after a restart of `wrangler dev`) opens again. */
export interface Storage {
  persist?: string;
}

export async function startWorker(vars: Record<string, string> = {}, storage: Storage = {}): Promise<Worker> {
  const persisted = storage.persist ? { r2Persist: resolve(storage.persist, "r2"), cachePersist: resolve(storage.persist, "cache") } : {};
  const mf = new Miniflare({
    modules: true,
    modulesRoot: resolve(ROOT, "worker/build"),
    scriptPath: resolve(ROOT, "worker/build/index.js"),
    modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"] }],
    compatibilityDate: "2026-04-26",
    r2Buckets: { BUCKET: "rete" },
    ...persisted,
    bindings: { ...wranglerVars(), POINTER_TTL_S: "0", ...vars },
  });
  await mf.ready;
  const bucket = await mf.getR2Bucket("BUCKET");
  const publish = async (name: string, file: string) => {
    const bytes = new Uint8Array(readFileSync(file));
    const version = contentHash(bytes);
    const key = `datasets/${name}/${version}.rete`;
    await bucket.put(key, bytes);
    const entry = {
      name,
      version,
      key,
      bytes: bytes.length,
      quads: Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0x28, true)),
      published_at: "2026-11-21T12:00:00.000Z",
      ...cardMembers(file),
    };
    const json = new TextEncoder().encode(`${JSON.stringify(entry)}\n`);
    await bucket.put(`datasets/${name}/versions/${version}.json`, json);
    await bucket.put(`datasets/${name}/current.json`, json);
    return version;
  };
  return {
    mf,
    fetch: (path, init) => mf.dispatchFetch(path.startsWith("http") ? path : `${ORIGIN}${path}`, init as never) as unknown as Promise<Response>,
    publish,
    dispose: () => mf.dispose(),
  };
}

/** Starts a Worker with the example datasets (and the test fixtures) published. */
export async function startWithExamples(vars: Record<string, string> = {}): Promise<Worker> {
  const worker = await startWorker(vars);
  for (const name of ["qudt", "dbpedia-ontology", "schema-org", "hash-doc"]) {
    await worker.publish(name, resolve(FILES, `${name}.rete`));
  }
  return worker;
}

/** The x-rete-* counters of a response. */
export function counters(response: Response) {
  const n = (h: string) => Number(response.headers.get(h));
  return {
    reads: n("x-rete-reads"),
    bytes: n("x-rete-bytes"),
    cacheHits: n("x-rete-cache-hits"),
    subrequests: n("x-rete-subrequests"),
    rounds: n("x-rete-rounds"),
    memory: n("x-rete-memory"),
  };
}
