// Issue 17: the Worker's memory for selective requests over a large file in local R2 (the
// scale curve's isolate-memory column, docs/BENCHMARK.md "Scale"). One workerd with its inspector
// on 127.0.0.1; RETE_SCALE_FILE (a LUBM file `rete build` wrote, e.g. 10M or 100M triples) is
// published into Miniflare's local R2. Each request is sent once on a fresh file (cold: nothing
// of the file in the isolate but what earlier requests left) and once more (warm). After each:
// the isolate's wasm linear memory (x-rete-memory, which only grows) and its V8 heap after a full
// GC, read through the inspector as bench/worker/load.measure.ts does (the GC runs when the
// isolate next handles a request, so a card request goes with each reading).
// RETE_SCALE_UNIVERSITIES is the file's universities (the queries name IRIs inside it).
// Run: RETE_SCALE_FILE=/tmp/lubm-62.rete RETE_SCALE_UNIVERSITIES=62 RETE_SKIP_BUILD=1 nice -n 10 \
//   npx vitest run --config bench/worker/vitest.config.ts scale
// Writes build/worker-bench/scale.md.
import { mkdirSync, statSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { expect, test } from "vitest";
import { counters, ROOT, startWorker } from "../../tests/worker/mf.ts";
import { ACCEPT, loadAverage, sparqlPath } from "./requests.ts";
import { Inspector, newWorkerd, rssBytes, workerdChildren } from "./workerd.ts";

const FILE = process.env.RETE_SCALE_FILE ?? "";
const UNIVERSITIES = Number(process.env.RETE_SCALE_UNIVERSITIES ?? 0);
const MB = 2 ** 20;
/** The issue's bound on the isolate's wasm memory. */
const WASM_BOUND_BYTES = 64 * MB;

const UB = "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#> PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> ";

/** [name, path]: selective requests naming IRIs of the last university, the middle one and the first. */
function requests(): [string, string][] {
  const last = UNIVERSITIES - 1;
  const middle = Math.floor(UNIVERSITIES / 2);
  return [
    ["DESCRIBE one IRI", `${sparqlPath("lubm", `DESCRIBE <http://www.Department3.University${last}.edu/FullProfessor3>`)}&format=nt`],
    ["one pattern, bound subject", sparqlPath("lubm", `SELECT ?p ?o WHERE { <http://www.Department5.University${middle}.edu/UndergraduateStudent42> ?p ?o }`)],
    ["ASK one triple", sparqlPath("lubm", `${UB}ASK { <http://www.Department3.University${middle}.edu/FullProfessor1> ub:worksFor <http://www.Department3.University${middle}.edu> }`)],
    ["LUBM q1", sparqlPath("lubm", `${UB}SELECT ?x WHERE { ?x rdf:type ub:GraduateStudent . ?x ub:takesCourse <http://www.Department0.University0.edu/GraduateCourse0> }`)],
    ["ASK { ?s ?p ?o }", sparqlPath("lubm", "ASK { ?s ?p ?o }")],
    ["dereference (resource view)", `/lubm/resource?iri=${encodeURIComponent(`http://www.Department1.University${last}.edu/AssistantProfessor2`)}`],
  ];
}

const mib = (bytes: number) => (bytes / MB).toFixed(1);

test.skipIf(!FILE || !UNIVERSITIES)("selective requests over a large file: wasm memory and V8 heap", async () => {
  const fileBytes = statSync(FILE).size;
  const before = workerdChildren();
  const w = await startWorker({}, { inspector: true, port: 0 });
  const pid = newWorkerd(before);
  try {
    await w.publish("lubm", FILE);
    console.log(`published ${fileBytes} bytes`);
    const origin = (await w.mf.ready).origin;
    expect(new URL(origin).hostname).toBe("127.0.0.1");
    const inspector = await Inspector.connect(w.mf);
    // An inspector command is answered when the isolate next handles a request after it arrived:
    // card requests go until it is (at most 50, 200 ms apart).
    const withRequest = async <T>(command: Promise<T>) => {
      let answered = false;
      const result = command.finally(() => {
        answered = true;
      });
      for (let i = 0; i < 50 && !answered; i++) {
        await (await fetch(`${origin}/lubm/card`)).arrayBuffer();
        await Promise.race([result, new Promise((done) => setTimeout(done, 200))]);
      }
      return result;
    };
    const heapAfterGc = async () => {
      await withRequest(inspector.send("HeapProfiler.collectGarbage"));
      return withRequest(inspector.heap());
    };
    const idle = await heapAfterGc();
    const rows: string[] = [`| before any query (after a card) | | | | ${mib(Number((await fetch(`${origin}/lubm/card`)).headers.get("x-rete-memory")))} | ${mib(idle.usedBytes)} | ${mib(rssBytes(pid))} |`];
    let maxWasm = 0;
    for (const [name, path] of requests()) {
      for (const pass of ["cold", "warm"]) {
        const r = await fetch(`${origin}${path}${pass === "warm" ? "&again" : ""}`, { headers: { accept: ACCEPT }, redirect: "manual" });
        const body = await r.text();
        expect(r.status, `${name}: ${body.slice(0, 300)}`).toBe(200);
        const c = counters(r);
        const heap = await heapAfterGc();
        maxWasm = Math.max(maxWasm, c.memory);
        rows.push(`| ${name} (${pass}) | ${c.rounds} | ${c.reads} | ${c.bytes} | ${mib(c.memory)} | ${mib(heap.usedBytes)} | ${mib(rssBytes(pid))} |`);
      }
    }
    const table = [
      `${FILE} (${fileBytes} bytes, LUBM(${UNIVERSITIES})) in Miniflare's local R2, ${new Date().toISOString()}, load ${loadAverage()}`,
      "",
      "| request | rounds | R2 reads | bytes | wasm memory MiB | V8 heap after GC MiB | workerd RSS MiB |",
      "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
      ...rows,
    ].join("\n");
    const dir = resolve(ROOT, "build/worker-bench");
    mkdirSync(dir, { recursive: true });
    writeFileSync(resolve(dir, "scale.md"), `${table}\n`);
    console.log(table);
    expect(maxWasm).toBeLessThanOrEqual(WASM_BOUND_BYTES);
  } finally {
    await w.dispose();
  }
});
