// R2 failing under the Worker (issue 18): each fault of the harness's faulty R2
// (tests/worker/r2-faults.js, a wrapper around workerd's R2 binding) at each kind of read gets
// its defined answer (502 storage, 503 dataset-changed with Retry-After, 500 corrupt-file
// naming the section, 404), and the same isolate then answers the same request exactly as a
// Worker that never saw a fault: nothing wrong was kept.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { FILES, RETE, startWorker, type Worker } from "./mf.ts";

const FILE = resolve(FILES, "schema-org.rete");
const OTHER = resolve(FILES, "qudt.rete");
const LABELS = "SELECT ?s ?label WHERE { ?s <http://www.w3.org/2000/01/rdf-schema#label> ?label } ORDER BY ?s LIMIT 20";
const QUERY = `/data/sparql?query=${encodeURIComponent(LABELS)}`;
const PATHS = [QUERY, "/data/card", "/data/summary", "/"];

/** Where each section of FILE starts (`rete inspect --json`). */
const SECTIONS: Record<string, number> = Object.fromEntries(
  JSON.parse(execFileSync(RETE, ["inspect", FILE, "--json"], { encoding: "utf8" })).sections.map((s: { kind: string; offset: number }) => [s.kind, s.offset]),
);

interface Rule {
  op?: "get" | "prefix" | "range" | "list";
  key?: string;
  skip?: number;
  times?: number;
  fault: string;
  ms?: number;
  bytes?: number;
  other?: string;
  at?: number;
}

/** Answers of a Worker that never saw a fault, by path. */
const expected = new Map<string, string>();
let fileKey = "";
let otherKey = "";

beforeAll(async () => {
  const clean = await startWorker();
  try {
    fileKey = `datasets/data/${await clean.publish("data", FILE)}.rete`;
    otherKey = `datasets/other/${await clean.publish("other", OTHER)}.rete`;
    for (const path of PATHS) {
      const r = await clean.fetch(path, { headers: { accept: "application/json" } });
      expect(r.status, path).toBe(200);
      expected.set(path, await r.text());
    }
  } finally {
    await clean.dispose();
  }
});

let w: Worker | undefined;
afterEach(async () => {
  await w?.dispose();
  w = undefined;
});

/** A Worker over the faulty R2 with both datasets published, and `rules` as its plan. The
 * pointers carry no `head`, so the file's first read, too, goes through the faulty R2. */
async function faulty(rules: Rule[], vars: Record<string, string> = {}): Promise<Worker> {
  w = await startWorker(vars, { faults: true });
  await w.publish("data", FILE, { head: false });
  await w.publish("other", OTHER, { head: false });
  await plan(w, rules);
  return w;
}

async function plan(worker: Worker, rules: Rule[]) {
  const r = await worker.fetch("/__faults", { method: "PUT", body: JSON.stringify(rules) });
  expect(r.status).toBe(200);
}

/** The request's answer is the error asked for, and a rule of the plan was used. */
async function expectError(worker: Worker, path: string, status: number, error: string, message: RegExp) {
  const r = await worker.fetch(path, { headers: { accept: "application/json" } });
  const text = await r.text();
  expect(r.status, text).toBe(status);
  expect(r.headers.get("content-type")).toBe("application/json");
  const body = JSON.parse(text);
  expect(body).toMatchObject({ error, status });
  expect(body.message).toMatch(message);
  expect(r.headers.get("retry-after")).toBe(status === 503 ? "1" : null);
  expect(r.headers.get("cache-control") ?? "").not.toMatch(/max-age=[1-9]/);
  const { rules } = await (await worker.fetch("/__faults")).json();
  expect(rules.some((rule: Rule) => rule.times === undefined || rule.times < 1), "no fault was injected").toBe(true);
}

/** Storage works again: the same isolate answers `paths` exactly as the clean Worker did. */
async function recovers(worker: Worker, paths = PATHS) {
  await plan(worker, []);
  for (const path of paths) {
    const r = await worker.fetch(path, { headers: { accept: "application/json" } });
    expect(r.status, path).toBe(200);
    expect(await r.text(), path).toBe(expected.get(path));
  }
}

const key = () => fileKey.replace(/[/.]/g, "\\$&");

describe("a read of the .rete that fails", () => {
  test("a ranged read that throws is a 502 naming the key", async () => {
    const worker = await faulty([{ op: "range", key: ".rete", fault: "throw", times: 1 }]);
    await expectError(worker, QUERY, 502, "storage", new RegExp(`^R2 ranged get of ${key()} failed: .*injected fault`));
    await recovers(worker);
  });

  test("the first read of the file throwing is a 502", async () => {
    const worker = await faulty([{ op: "prefix", key: ".rete", fault: "throw", times: 1 }]);
    await expectError(worker, "/data/card", 502, "storage", new RegExp(`^R2 get ${key()} failed: .*injected fault`));
    await recovers(worker);
  });

  test("a body that breaks off while read is a 502", async () => {
    const worker = await faulty([{ op: "range", key: ".rete", fault: "body-throw", times: 1 }]);
    await expectError(worker, QUERY, 502, "storage", new RegExp(`^R2 read of ${key()} failed: .*broke off`));
    await recovers(worker);
  });

  test("a read that never answers is a 502 at the request's time limit, not a hung request", async () => {
    const worker = await faulty([{ op: "range", key: ".rete", fault: "hang", times: 1 }], { MAX_TIME_MS: "3000" });
    const started = Date.now();
    await expectError(worker, QUERY, 502, "storage", new RegExp(`^R2 ranged get of ${key()} did not answer within the request's time limit \\(MAX_TIME_MS\\)`));
    expect(Date.now() - started).toBeLessThan(15_000);
    await recovers(worker);
  });

  test("slow reads give the right answer", async () => {
    const worker = await faulty([{ op: "range", key: ".rete", fault: "slow", ms: 200 }]);
    const r = await worker.fetch(QUERY, { headers: { accept: "application/json" } });
    expect(r.status).toBe(200);
    expect(await r.text()).toBe(expected.get(QUERY));
  });

  test("a ranged read shorter than asked is a 502, never bytes handed to a decoder", async () => {
    const worker = await faulty([{ op: "range", key: ".rete", fault: "short", bytes: 7, times: 1 }]);
    await expectError(worker, QUERY, 502, "storage", new RegExp(`^R2 returned \\d+ bytes of ${key()} at \\d+ for a \\d+-byte read$`));
    await recovers(worker);
  });

  test("a first read shorter than asked is a 502", async () => {
    const worker = await faulty([{ op: "prefix", key: ".rete", fault: "short", times: 1 }]);
    await expectError(worker, "/data/card", 502, "storage", new RegExp(`^R2 returned \\d+ bytes of ${key()} at 0 for a 16384-byte read$`));
    await recovers(worker);
  });

  test("another object's bytes for a pinned read (its etag differs) is a 503 dataset-changed", async () => {
    const worker = await faulty([{ op: "range", key: ".rete", fault: "other", other: otherKey, times: 1 }]);
    await expectError(worker, QUERY, 503, "dataset-changed", new RegExp(`^${key()} changed or disappeared while it was being read; retry$`));
    await recovers(worker);
  });

  test("the object gone between two rounds is a 503 dataset-changed", async () => {
    const worker = await faulty([{ op: "range", key: ".rete", fault: "missing", times: 1 }]);
    await expectError(worker, QUERY, 503, "dataset-changed", /changed or disappeared while it was being read; retry$/);
    await recovers(worker);
  });

  test("the object replaced between two rounds is a 503; once restored the isolate reads the new object", async () => {
    const worker = await faulty([{ op: "range", key: ".rete", fault: "replace", other: otherKey, times: 1 }]);
    await expectError(worker, QUERY, 503, "dataset-changed", /changed or disappeared while it was being read; retry$/);
    // Put the right bytes back: a new etag, which the isolate must learn (it forgot the old one).
    const bucket = await worker.mf.getR2Bucket("BUCKET");
    await bucket.put(fileKey, new Uint8Array(readFileSync(FILE)));
    await recovers(worker);
  });

  test("a damaged block is a 500 corrupt-file naming it", async () => {
    const worker = await faulty([{ op: "range", key: ".rete", fault: "flip", times: 1 }]);
    await expectError(worker, QUERY, 500, "corrupt-file", new RegExp(`^${key()}: corrupt (SPO|SOP|PSO|POS|OSP|OPS|DICTIONARY|dictionary) block \\d+ at byte \\d+`));
    await recovers(worker);
  });

  test("a damaged INDEX in the first read is a 500 corrupt-file naming it", async () => {
    const worker = await faulty([{ op: "prefix", key: ".rete", fault: "flip", at: SECTIONS.INDEX + 100, times: 1 }]);
    await expectError(worker, "/data/card", 500, "corrupt-file", new RegExp(`^${key()}: corrupt INDEX at byte ${SECTIONS.INDEX}: checksum mismatch$`));
    await recovers(worker);
  });

  test("a damaged CARD in the first read is a 500, and the isolate reads the file afresh after", async () => {
    // The first read (header, INDEX, CARD) is kept by the isolate once the file opens: damage in
    // it that only the card's checksum sees must not stay for the next requests.
    expect(SECTIONS.CARD + 100).toBeLessThan(16384);
    const worker = await faulty([{ op: "prefix", key: ".rete", fault: "flip", at: SECTIONS.CARD + 100, times: 1 }]);
    await expectError(worker, "/data/card", 500, "corrupt-file", new RegExp(`^corrupt CARD at byte ${SECTIONS.CARD}: checksum mismatch$`));
    await recovers(worker);
  });

  test("a damaged SUMMARY read is a 500 naming SUMMARY, and is not kept for the next request", async () => {
    const worker = await faulty([{ op: "range", key: ".rete", fault: "flip", times: 1 }]);
    await expectError(worker, "/data/summary", 500, "corrupt-file", /corrupt SUMMARY/);
    await recovers(worker, ["/data/summary", QUERY]);
  });
});

describe("the pointer (current.json)", () => {
  test("missing: 404 for the dataset; published again: served", async () => {
    const worker = await faulty([]);
    const bucket = await worker.mf.getR2Bucket("BUCKET");
    const pointer = await (await bucket.get("datasets/data/current.json"))!.arrayBuffer();
    await bucket.delete("datasets/data/current.json");
    const r = await worker.fetch("/data/card");
    expect(r.status).toBe(404);
    expect(await r.json()).toMatchObject({ error: "not-found", message: 'no dataset named "data"' });
    await bucket.put("datasets/data/current.json", new Uint8Array(pointer));
    await recovers(worker);
  });

  test("not JSON: a 502 naming the pointer", async () => {
    const worker = await faulty([]);
    const bucket = await worker.mf.getR2Bucket("BUCKET");
    const pointer = await (await bucket.get("datasets/data/current.json"))!.arrayBuffer();
    await bucket.put("datasets/data/current.json", "{ not json");
    const r = await worker.fetch("/data/card");
    const body = await r.json();
    expect(r.status, JSON.stringify(body)).toBe(502);
    expect(body.error).toBe("storage");
    expect(body.message).toMatch(/^datasets\/data\/current\.json: /);
    await bucket.put("datasets/data/current.json", new Uint8Array(pointer));
    await recovers(worker);
  });

  test("a read of it that throws is a 502", async () => {
    const worker = await faulty([{ op: "get", key: "data/current.json", fault: "throw", times: 1 }]);
    await expectError(worker, "/data/card", 502, "storage", /^R2 get datasets\/data\/current\.json failed: .*injected fault/);
    await recovers(worker);
  });

  test("a read of it cut short is a 502", async () => {
    const worker = await faulty([{ op: "get", key: "data/current.json", fault: "short", times: 1 }]);
    await expectError(worker, "/data/card", 502, "storage", /^R2 returned \d+ bytes of datasets\/data\/current\.json at 0 for a \d+-byte read$/);
    await recovers(worker);
  });

  test("a listing that throws is a 502 for the home page", async () => {
    const worker = await faulty([{ op: "list", fault: "throw", times: 1 }]);
    await expectError(worker, "/", 502, "storage", /^R2 list datasets\/ failed: .*injected fault/);
    await recovers(worker);
  });
});

afterAll(() => w?.dispose());
