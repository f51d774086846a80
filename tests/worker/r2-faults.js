// The test harness's faulty R2 (issue 18): the built Worker (worker/build/index.js) with its
// BUCKET binding wrapped in an object that fails the way R2 can fail, as a plan says. Only
// tests/worker/mf.ts loads this module, as the entry of a Miniflare worker (`faults: true`);
// the deployed Worker never contains it. Every call still reaches the real R2 binding of
// workerd unless the plan says otherwise.
//
// The plan is a list of rules, set with `PUT /__faults` (JSON) and read back, with every call
// the Worker made since, with `GET /__faults`. A rule:
//   { op: "get" | "prefix" | "range" | "list",   which call (`get` reads a whole object, a pointer;
//                                                 `prefix` the first bytes of a .rete; `range` a
//                                                 read pinned to an etag; `list` a listing)
//     key: "…",                                   a substring of the key (or list prefix); all if absent
//     skip: N,                                    let the first N matching calls through
//     times: N,                                   then fail N of them (all if absent)
//     fault: "throw"       the call rejects (R2's internal error)
//          | "body-throw"  the object comes, reading its body rejects (a dropped connection)
//          | "hang"        the call never answers
//          | "slow"        answers after `ms` milliseconds
//          | "missing"     answers null (no such object, or a failed onlyIf)
//          | "short"       the body has `bytes` bytes fewer than R2 sent (default: half)
//          | "flip"        one byte of the body inverted: at `at` (from the body's start),
//                          else in its middle
//          | "other"       the object at `other` answers instead, its etag too, onlyIf ignored
//          | "replace"     the object is replaced by the one at `other` just before the call,
//                          which then runs as asked (R2 itself refuses a read pinned to the
//                          old etag) }
// The Worker's Cache API calls are recorded with them ({ op: "cache-match" | "cache-put", key }),
// so that a test can find the keys it used (a round's bundle is named by a hash of its ranges)
// and damage what is stored under them (edge-cache.spec.ts).
import Rete from "./index.js";

let rules = [];
let calls = [];

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** An object of R2's shape around other body bytes (or a body that fails to read). */
function withBody(object, read) {
  return {
    key: object.key,
    version: object.version,
    size: object.size,
    etag: object.etag,
    httpEtag: object.httpEtag,
    checksums: object.checksums,
    uploaded: object.uploaded,
    httpMetadata: object.httpMetadata,
    customMetadata: object.customMetadata,
    range: object.range,
    storageClass: object.storageClass,
    writeHttpMetadata: (headers) => object.writeHttpMetadata(headers),
    bodyUsed: false,
    get body() {
      return new ReadableStream({
        async start(controller) {
          controller.enqueue(new Uint8Array(await read()));
          controller.close();
        },
      });
    },
    arrayBuffer: async () => read(),
    text: async () => new TextDecoder().decode(await read()),
    json: async () => JSON.parse(new TextDecoder().decode(await read())),
  };
}

async function faulty(rule, op, key, options, real, inner) {
  switch (rule.fault) {
    case "throw":
      throw new Error(`injected fault: R2 ${op} of ${key} failed (internal error)`);
    case "hang":
      return new Promise(() => {});
    case "slow":
      await sleep(rule.ms ?? 1000);
      return real();
    case "missing":
      return null;
    case "replace": {
      const other = await inner.get(rule.other);
      await inner.put(key, await other.arrayBuffer());
      return real();
    }
    case "other":
      return inner.get(rule.other, options?.range ? { range: options.range } : undefined);
  }
  const object = await real();
  if (object === null || !("bodyUsed" in object)) return object;
  const bytes = new Uint8Array(await object.arrayBuffer());
  switch (rule.fault) {
    case "body-throw":
      return withBody(object, async () => {
        throw new Error(`injected fault: the body of ${key} broke off`);
      });
    case "short":
      return withBody(object, async () => bytes.slice(0, bytes.length - (rule.bytes ?? Math.ceil(bytes.length / 2))).buffer);
    case "flip":
      bytes[rule.at ?? bytes.length >> 1] ^= 0xff;
      return withBody(object, async () => bytes.buffer);
    default:
      throw new Error(`r2-faults.js: unknown fault ${JSON.stringify(rule.fault)}`);
  }
}

/** Named as workers-rs requires of an R2 binding (`Env::bucket` checks the constructor's name). */
class R2Bucket {
  constructor(inner) {
    this.inner = inner;
  }

  async get(key, options) {
    const op = options?.onlyIf ? "range" : options?.range ? "prefix" : "get";
    return this.call(op, key, options, () => this.inner.get(key, options));
  }

  async list(options) {
    return this.call("list", options?.prefix ?? "", options, () => this.inner.list(options));
  }

  head(key) {
    return this.inner.head(key);
  }

  async call(op, key, options, real) {
    calls.push({ op, key, ...(options?.range ? { range: options.range } : {}) });
    const rule = rules.find((r) => (r.op ?? op) === op && key.includes(r.key ?? "") && (r.times ?? 1) > 0);
    if (!rule) return real();
    if ((rule.skip ?? 0) > 0) {
      rule.skip--;
      return real();
    }
    if (rule.times !== undefined) rule.times--;
    return faulty(rule, op, key, options, real, this.inner);
  }
}

let cacheRecorded = false;

/** Records every `match` and `put` of the Cache API in `calls` (once per isolate: the methods of
 * the Cache prototype, which `caches.default` returns an instance of, are wrapped). */
function recordCacheCalls() {
  if (cacheRecorded) return;
  cacheRecorded = true;
  const proto = Object.getPrototypeOf(caches.default);
  const { match, put } = proto;
  const keyOf = (request) => (typeof request === "string" ? request : request.url);
  proto.match = function (request, options) {
    calls.push({ op: "cache-match", key: keyOf(request) });
    return match.call(this, request, options);
  };
  proto.put = function (request, response) {
    calls.push({ op: "cache-put", key: keyOf(request) });
    return put.call(this, request, response);
  };
}

export default class extends Rete {
  constructor(ctx, env) {
    super(ctx, { ...env, BUCKET: new R2Bucket(env.BUCKET) });
  }

  async fetch(request) {
    recordCacheCalls();
    if (new URL(request.url).pathname === "/__faults") {
      if (request.method === "PUT") {
        rules = await request.json();
        calls = [];
      }
      return Response.json({ rules, calls });
    }
    return super.fetch(request);
  }
}
