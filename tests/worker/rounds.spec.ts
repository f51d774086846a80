// Sequential rounds of reads when everything is cold (issue 12 §3): a new isolate, an empty Cache
// API. `rete publish` puts the file's first read (header, INDEX, usually CARD) in the dataset's
// pointer (`head`), so the open costs no round of its own: the pointer's round holds it. Targets,
// the pointer included: a dereference or a one-pattern query in at most 3 rounds, a BGP of k
// patterns in at most k + 2, the card in 1. A pointer written before `head` existed still works,
// with the open's round back. Asserted through x-rete-rounds.
import { resolve } from "node:path";
import { describe, expect, test } from "vitest";
import { counters, FILES, startWorker } from "./mf.ts";
import { ROUND_CASES, sparql } from "./qudt-rounds.ts";

/** Request → the most rounds it may take cold, the pointer included. */
const CASES: [string, string, number][] = [
  ...ROUND_CASES,
  ["BGP of 3 patterns", sparql('SELECT ?u ?c WHERE { ?u qudt:symbol "km/h" ; qudt:hasQuantityKind ?k . ?k qudt:applicableUnit ?c }'), 5],
];

/** One request on a new isolate with an empty cache. */
async function cold(path: string, head: boolean) {
  const w = await startWorker();
  try {
    await w.publish("qudt", resolve(FILES, "qudt.rete"), { head });
    const r = await w.fetch(path, { headers: { accept: "application/json, text/turtle;q=0.9" }, redirect: "manual" });
    return { status: r.status, body: await r.text(), ...counters(r) };
  } finally {
    await w.dispose();
  }
}

describe("cold rounds, the pointer included", () => {
  for (const [name, path, most] of CASES) {
    test(`${name}: at most ${most}, one more without the pointer's head, same answer`, async () => {
      const withHead = await cold(path, true);
      const without = await cold(path, false);
      expect([200, 303]).toContain(withHead.status);
      expect(withHead.body).toBe(without.body);
      console.log(`cold rounds: ${name}: ${withHead.rounds} (pointer without head: ${without.rounds}), R2 reads ${withHead.reads} vs ${without.reads}`);
      expect(withHead.rounds).toBeLessThanOrEqual(most);
      expect(without.rounds).toBe(withHead.rounds + 1);
      expect(without.reads).toBe(withHead.reads + 1);
    }, 60_000);
  }
});
