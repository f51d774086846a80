// One Miniflare instance running the built Worker (worker/build/) in real workerd, over an
// in-memory R2 bucket filled the way `rete publish` lays datasets out (README "R2 layout"):
// datasets/NAME/<content-hash>.rete, versions/<hash>.json and the current.json pointer.
import { execFileSync } from "node:child_process";
import { closeSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { Miniflare } from "miniflare";

export const ROOT = resolve(import.meta.dirname, "../..");
/** The .rete files global-setup.ts builds from examples/ and tests/worker/fixtures/. */
export const FILES = resolve(ROOT, "build/test-worker");
export const RETE = resolve(ROOT, "target/release/rete");
/** A reader's first read of a file (FORMAT.md §1), which `rete publish` puts in the pointer. */
export const FIRST_READ_BYTES = 16384;

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

/** `length` bytes of `file` from `offset`, in a buffer of their own. */
function readPart(file: string, offset: number, length: number): Uint8Array {
  const part = new Uint8Array(length);
  const fd = openSync(file, "r");
  try {
    for (let done = 0; done < length; ) {
      const n = readSync(fd, part, done, length - done, offset + done);
      if (n === 0) throw new Error(`${file}: ended at byte ${offset + done}, ${length - done} bytes short`);
      done += n;
    }
  } finally {
    closeSync(fd);
  }
  return part;
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
   * in the entry, when it has them, and its first read as `head`; `{ head: false }` writes an
   * entry from before `head` existed); returns its version. */
  publish(name: string, file: string, options?: { head?: boolean }): Promise<string>;
  dispose(): Promise<void>;
}

export const ORIGIN = "http://rete.test";

/** Files up to this size are put whole; larger ones in parts of PART_BYTES (the 100M-triple file). */
const PUT_WHOLE_MAX_BYTES = 256 * 2 ** 20;
const PART_BYTES = 64 * 2 ** 20;

/** Options of a test Worker. */
export interface Options {
  /** Where it keeps R2 and the Cache API: in memory (default), or in this directory, which a
   * later Worker (a new isolate, as after a restart of `wrangler dev`) opens again. */
  persist?: string;
  /** Wrap the R2 binding in the harness's faulty R2 (tests/worker/r2-faults.js; plan: PUT /__faults). */
  faults?: boolean;
  /** Simulated R2 latency (issue 12 §4): every call of the Worker's R2 binding waits this long
   * before it reaches R2, as a round trip from an edge location to R2 would. Only the test
   * harness does this (a wrapped binding around the real one, R2_LATENCY_WRAPPER); the
   * Worker's code is the deployed one. */
  r2LatencyMs?: number;
  /** Open workerd's inspector (V8's DevTools protocol) on a free port: `mf.getInspectorURL()`.
   * The benchmarks read the isolate's heap and CPU profile through it (bench/worker/). */
  inspector?: boolean;
  /** Serve HTTP on 127.0.0.1 at this port (0: a free one; `mf.ready` resolves to the URL), for
   * clients that need a socket (the load benchmark). */
  port?: number;
  /** The built Worker to run (a worker-build output directory); worker/build/ by default. The
   * CPU benchmark runs two builds side by side (bench/worker/cpu.measure.ts). */
  build?: string;
  /** Run a second copy of the Worker, in an isolate of its own, answering requests to
   * http://twin.test/ (the first answers every other host). The CPU benchmark warms Miniflare's
   * own workers (its entry, the local R2 and Cache API) through the twin before it measures
   * the first request of the other isolate. */
  twin?: boolean;
  /** Instead of a twin of the Worker, this JavaScript Worker (a module's text) answers
   * http://twin.test/, with the same R2 bucket (and the location's Cache API): it warms
   * Miniflare's own workers without running the Worker's wasm, so that the measured isolate is
   * the first of its workerd to run it (V8 shares a wasm module's compiled code between the
   * isolates of a process: a twin would have compiled it). */
  warmer?: string;
  /** Give the `warmer` a Worker Loader binding, LOADER, with which it can make new isolates in
   * the process while the Worker runs (bench/worker/flush.measure.ts). */
  loader?: boolean;
}

/** The binding the Worker sees as BUCKET when R2 is slowed: a module of the harness, run in the
 * Worker's isolate, that forwards every call to the real bucket (INNER) after LATENCY_MS.
 * workers-rs accepts a binding by its class name, hence `R2Bucket`. */
const R2_LATENCY_WRAPPER = `
const wait = (ms) => new Promise((done) => setTimeout(done, ms));
class R2Bucket {
  constructor(inner, ms) { this.inner = inner; this.ms = ms; }
  async head(...args) { await wait(this.ms); return this.inner.head(...args); }
  async get(...args) { await wait(this.ms); return this.inner.get(...args); }
  async put(...args) { await wait(this.ms); return this.inner.put(...args); }
  async delete(...args) { await wait(this.ms); return this.inner.delete(...args); }
  async list(...args) { await wait(this.ms); return this.inner.list(...args); }
  async createMultipartUpload(...args) { await wait(this.ms); return this.inner.createMultipartUpload(...args); }
  resumeMultipartUpload(...args) { return this.inner.resumeMultipartUpload(...args); }
}
export default function (env) {
  return new R2Bucket(env.INNER, Number(env.LATENCY_MS));
}
`;

export async function startWorker(vars: Record<string, string> = {}, options: Options = {}): Promise<Worker> {
  const build = options.build ?? resolve(ROOT, "worker/build");
  const persisted = options.persist ? { r2Persist: resolve(options.persist, "r2"), cachePersist: resolve(options.persist, "cache") } : {};
  // The faulty R2 is the entry module beside the built Worker, so that it imports ./index.js.
  const entry = options.faults
    ? { script: readFileSync(resolve(ROOT, "tests/worker/r2-faults.js"), "utf8"), scriptPath: resolve(build, "r2-faults.js") }
    : { scriptPath: resolve(build, "index.js") };
  const worker = {
    modules: true,
    modulesRoot: build,
    ...entry,
    modulesRules: [
      { type: "CompiledWasm" as const, include: ["**/*.wasm"] },
      { type: "ESModule" as const, include: ["**/*.js"] },
    ],
    compatibilityDate: "2026-04-26",
    bindings: { ...wranglerVars(), POINTER_TTL_S: "0", ...vars },
  };
  const slow = options.r2LatencyMs !== undefined;
  const shared = {
    ...persisted,
    ...(options.inspector ? { inspectorPort: 0 } : {}),
    ...(options.port !== undefined ? { host: "127.0.0.1", port: options.port } : {}),
  };
  const mf = slow
    ? new Miniflare({
        ...shared,
        workers: [
          { ...worker, name: "rete", wrappedBindings: { BUCKET: { scriptName: "r2-latency", bindings: { LATENCY_MS: options.r2LatencyMs ?? 0 } } } },
          { name: "r2-latency", modules: true, script: R2_LATENCY_WRAPPER, r2Buckets: { INNER: "rete" } },
        ],
      })
    : options.twin || options.warmer
      ? new Miniflare({
          ...shared,
          workers: [
            { ...worker, name: "rete", r2Buckets: { BUCKET: "rete" } },
            options.warmer
              ? { name: "twin", modules: true, script: options.warmer, compatibilityDate: worker.compatibilityDate, routes: ["twin.test/*"], r2Buckets: { BUCKET: "rete" }, ...(options.loader ? { workerLoaders: { LOADER: {} } } : {}) }
              : { ...worker, name: "twin", routes: ["twin.test/*"], r2Buckets: { BUCKET: "rete" } },
          ],
        })
      : new Miniflare({ ...worker, ...shared, r2Buckets: { BUCKET: "rete" } });
  await mf.ready;
  // Publishing goes to the bucket itself, at full speed.
  const bucket = slow ? await mf.getR2Bucket("INNER", "r2-latency") : await mf.getR2Bucket("BUCKET");
  const publish = async (name: string, file: string, { head = true }: { head?: boolean } = {}) => {
    const size = statSync(file).size;
    // The first read's bytes: the header (content hash, quads) and the pointer's `head`.
    const first = readPart(file, 0, Math.min(size, FIRST_READ_BYTES));
    const version = contentHash(first);
    const key = `datasets/${name}/${version}.rete`;
    if (size <= PUT_WHOLE_MAX_BYTES) {
      await bucket.put(key, new Uint8Array(readFileSync(file)));
    } else {
      // Miniflare's proxy sends a put's body as one string, which V8 caps at 512 MiB; parts are
      // read one at a time, so files over 2 GiB (Node's limit of one read) publish too.
      const upload = await bucket.createMultipartUpload(key);
      const parts = [];
      for (let offset = 0, number = 1; offset < size; offset += PART_BYTES, number++) {
        parts.push(await upload.uploadPart(number, readPart(file, offset, Math.min(PART_BYTES, size - offset))));
      }
      await upload.complete(parts);
    }
    const entry = {
      name,
      version,
      key,
      bytes: size,
      quads: Number(new DataView(first.buffer, first.byteOffset).getBigUint64(0x28, true)),
      published_at: "2026-11-21T12:00:00.000Z",
      ...cardMembers(file),
      ...(head ? { head: Buffer.from(first).toString("base64") } : {}),
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
