// Issue 17 (FORMAT.md §4.3): a file with a directory of nodes, served. qudt (55,541 quads) built
// with fixed blocks of 1,024 quads and nodes of at most 32 entries (`--block-quads 1024
// --node-entries 32`, hidden flags: a directory of depth 1 in all seven directories, required
// feature bit 1, as the writer makes past 8.4M quads with 16,384 and 512)
// answers every request like the file built flat. Cold (a new isolate, an empty Cache API), a
// request takes at most 2 rounds more than the flat file's bound (tests/worker/rounds.spec.ts):
// the nodes of its terms, then the nodes of the terms it prints. The nodes are kept with the
// file's blocks under its content hash, so the same request again on the same isolate reads no
// more than it does on the flat file.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { counters, RETE, ROOT, startWorker } from "./mf.ts";
import { ROUND_CASES, sparql } from "./qudt-rounds.ts";

/** The flat file's bounds (qudt-rounds.ts) and a scan. The card is not compared: it names its
 * file's content hash and size. */
const CASES: [string, string, number][] = [
  ...ROUND_CASES,
  ["a scan", sparql("SELECT (COUNT(*) AS ?n) WHERE { ?s a qudt:Unit }"), 64],
];

const dir = mkdtempSync(resolve(tmpdir(), "rete-directory-"));
const files: Record<string, string> = {};
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function build(name: string, flags: string[]) {
  const output = resolve(dir, `${name}.rete`);
  execFileSync(RETE, ["build", "-q", resolve(ROOT, "examples/qudt/qudt.trig"), "-o", output, ...flags], { cwd: ROOT, env: { ...process.env, SOURCE_DATE_EPOCH: "1700000000" } });
  return output;
}

beforeAll(() => {
  files.flat = build("flat", []);
  files.tree = build("tree", ["--block-quads", "1024", "--node-entries", "32"]);
});

/** One request on a new isolate, the file published as `qudt`; then the same again on that isolate. */
async function coldThenWarm(file: string, path: string) {
  const w = await startWorker();
  try {
    await w.publish("qudt", file);
    const headers = { accept: "application/json, text/turtle;q=0.9" };
    const first = await w.fetch(path, { headers, redirect: "manual" });
    const cold = { status: first.status, body: await first.text(), ...counters(first) };
    const second = await w.fetch(path, { headers, redirect: "manual" });
    const warm = { status: second.status, body: await second.text(), ...counters(second) };
    return { cold, warm };
  } finally {
    await w.dispose();
  }
}

describe("a directory of depth 1 (FORMAT.md §4.3)", () => {
  test("the file has the directory: format 2, required feature bits 1 and 3", () => {
    const bytes = readFileSync(files.tree);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    expect(view.getUint16(0x08, true)).toBe(2);
    // Bit 1 is the directory's; other bits (bit 2, value-ordered literals: qudt has numbers) may be set too.
    expect(view.getBigUint64(0x48, true) & 2n).toBe(2n);
    // Bit 3: its fixed-size blocks carry coding bytes (FORMAT.md §6.1), which the Worker's reader decodes below.
    expect(view.getBigUint64(0x48, true) & 8n).toBe(8n);
    const flat = new DataView(readFileSync(files.flat).buffer).getBigUint64(0x48, true);
    expect(flat & 2n).toBe(0n);
    expect(flat & 8n).toBe(0n);
  });

  for (const [name, path, most] of CASES) {
    test(`${name}: same answer as flat, at most ${most} + 2 rounds cold, as few reads warm`, async () => {
      const flat = await coldThenWarm(files.flat, path);
      const tree = await coldThenWarm(files.tree, path);
      console.log(`directory: ${name}: status ${flat.cold.status} / ${tree.cold.status}; cold rounds flat ${flat.cold.rounds}, depth 1 ${tree.cold.rounds}; bytes ${flat.cold.bytes} vs ${tree.cold.bytes}; warm reads ${flat.warm.reads} vs ${tree.warm.reads}`);
      expect([200, 303]).toContain(tree.cold.status);
      expect(tree.cold.status).toBe(flat.cold.status);
      if (name !== "the card") expect(tree.cold.body).toBe(flat.cold.body);
      expect(tree.warm.body).toBe(tree.cold.body);
      expect(tree.cold.rounds).toBeLessThanOrEqual(most + 2);
      expect(tree.warm.reads).toBe(flat.warm.reads);
    }, 60_000);
  }
});
