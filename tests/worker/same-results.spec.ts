// Every example query (examples/*/queries/*.rq) answered through the Worker, over R2 range reads,
// gives the same results as `rete query` on the same .rete file: SELECT solutions as a multiset,
// ASK booleans, CONSTRUCT/DESCRIBE triples as sets (blank node labels ignored).
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { counters, FILES, RETE, ROOT, startWithExamples, type Worker } from "./mf.ts";

let w: Worker;
beforeAll(async () => {
  w = await startWithExamples();
});
afterAll(() => w?.dispose());

const cases: [string, string][] = [];
for (const name of readdirSync(resolve(ROOT, "examples")).sort()) {
  const dir = resolve(ROOT, "examples", name, "queries");
  let files: string[] = [];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith(".rq")).sort();
  } catch {
    continue;
  }
  for (const file of files) cases.push([name, resolve(dir, file)]);
}

const isGraph = (query: string) => /^\s*(CONSTRUCT|DESCRIBE)\b/im.test(query.replace(/^\s*(#.*|PREFIX.*|BASE.*)$/gim, ""));

/** Solutions as sorted JSON strings, so row order does not matter. */
function solutions(json: { boolean?: boolean; results?: { bindings: object[] } }) {
  if (json.boolean !== undefined) return json.boolean;
  return json.results?.bindings.map((b) => JSON.stringify(Object.entries(b).sort())).sort();
}

/** N-Triples lines as a sorted set, blank node labels blanked. */
function triples(nt: string) {
  return [...new Set(nt.split("\n").filter((l) => l.trim()).map((l) => l.replace(/_:[A-Za-z0-9]+/g, "_:b")))].sort();
}

describe("the Worker answers like `rete query`", () => {
  test.each(cases)("%s %s", async (name, file) => {
    const query = readFileSync(file, "utf8");
    const graph = isGraph(query);
    const format = graph ? "nt" : "json";
    const expected = execFileSync(RETE, ["query", resolve(FILES, `${name}.rete`), "--file", file, "--format", format], { encoding: "utf8", maxBuffer: 1 << 28 });
    const r = await w.fetch(`/${name}/sparql?query=${encodeURIComponent(query)}&format=${format}`);
    const body = await r.text();
    expect(r.status, body).toBe(200);
    if (graph) {
      expect(triples(body)).toEqual(triples(expected));
    } else {
      expect(solutions(JSON.parse(body))).toEqual(solutions(JSON.parse(expected)));
    }
    const c = counters(r);
    expect(c.reads).toBeGreaterThan(0);
    expect(c.bytes).toBeLessThanOrEqual(readFileSync(resolve(FILES, `${name}.rete`)).length * 2);
  });
});
