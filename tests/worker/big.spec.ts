// Opt-in (RETE_BIG=1; docs/BENCHMARK.md "Worker"): the Worker over a .rete larger than an
// isolate's 128 MB, LUBM(160) (~24M triples, ~150 MB), built once into build/worker-bench/.
// Selective queries must read under 1% of the file, keep the wasm instance's memory far below
// 128 MB, and answer as `rete query` does; a query over the whole file must stop at a budget
// with a 422 while the isolate keeps serving.
import { execFileSync, execSync } from "node:child_process";
import { existsSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { counters, RETE, ROOT, startWorker, type Worker } from "./mf.ts";

const BIG = process.env.RETE_BIG === "1";
const UNIVERSITIES = Number(process.env.RETE_BIG_UNIVERSITIES ?? 160);
const DIR = resolve(ROOT, "build/worker-bench");
const FILE = resolve(DIR, `lubm-${UNIVERSITIES}.rete`);
const MB = 1 << 20;

const UB = "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>\nPREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>\n";
const SELECTIVE: [string, string][] = [
  ["LUBM q1: graduate students of one course", `${UB}SELECT ?x WHERE { ?x rdf:type ub:GraduateStudent . ?x ub:takesCourse <http://www.Department0.University0.edu/GraduateCourse0> }`],
  ["LUBM q4: professors of one department with name, email, phone", `${UB}SELECT ?x ?name ?email ?phone WHERE { ?x rdf:type ub:Professor . ?x ub:worksFor <http://www.Department0.University0.edu> . ?x ub:name ?name . ?x ub:emailAddress ?email . ?x ub:telephone ?phone }`],
  ["ASK one triple", `${UB}ASK { <http://www.Department3.University77.edu/FullProfessor1> ub:worksFor <http://www.Department3.University77.edu> }`],
  ["DESCRIBE one IRI", "DESCRIBE <http://www.Department12.University140.edu/AssociateProfessor2>"],
  ["one pattern, bound subject", `${UB}SELECT ?p ?o WHERE { <http://www.Department5.University99.edu/UndergraduateStudent42> ?p ?o }`],
];

interface Row {
  name: string;
  status: number;
  rounds: number;
  reads: number;
  bytes: number;
  memory: number;
  coldMs: number;
  warmMs: number;
}
const rows: Row[] = [];

describe.skipIf(!BIG)(`a .rete larger than 128 MB: LUBM(${UNIVERSITIES})`, () => {
  let w: Worker;
  let fileBytes = 0;

  beforeAll(async () => {
    mkdirSync(DIR, { recursive: true });
    if (!existsSync(FILE)) {
      execSync(`set -o pipefail; python3 bench/lubm.py --universities ${UNIVERSITIES} --seed 0 -o - | ${RETE} build - --format nt -o ${FILE}`, { cwd: ROOT, shell: "/bin/bash", stdio: "inherit" });
    }
    fileBytes = statSync(FILE).size;
    expect(fileBytes).toBeGreaterThan(128 * MB);
    w = await startWorker();
    await w.publish("lubm", FILE);
  }, 3_600_000);

  afterAll(async () => {
    await w?.dispose();
    if (rows.length) {
      const table = [
        `LUBM(${UNIVERSITIES}): ${fileBytes} bytes`,
        "| request | status | rounds | R2 requests | bytes read | share of file | wasm memory | cold ms | warm ms |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ...rows.map((r) => `| ${r.name} | ${r.status} | ${r.rounds} | ${r.reads} | ${r.bytes} | ${((100 * r.bytes) / fileBytes).toFixed(3)}% | ${(r.memory / MB).toFixed(1)} MiB | ${r.coldMs} | ${r.warmMs} |`),
      ].join("\n");
      writeFileSync(resolve(DIR, "big.md"), `${table}\n`);
      console.log(table);
    }
  });

  async function timed(path: string, init?: RequestInit) {
    const start = performance.now();
    const r = await w.fetch(path, init);
    const body = await r.text();
    return { r, body, ms: Math.round(performance.now() - start) };
  }

  test("the card: header and CARD only", async () => {
    const cold = await timed("/lubm/card");
    expect(cold.r.status).toBe(200);
    expect(JSON.parse(cold.body).quads).toBeGreaterThan(20_000_000);
    const warm = await timed("/lubm/card?again");
    const c = counters(cold.r);
    rows.push({ name: "card", status: 200, ...c, coldMs: cold.ms, warmMs: warm.ms });
    expect(c.bytes).toBeLessThan(64 * 1024 + 1024);
  });

  test.each(SELECTIVE)("%s: under 1%% of the file, same results as rete query", async (name, query) => {
    const path = `/lubm/sparql?query=${encodeURIComponent(query)}&format=${query.includes("DESCRIBE") ? "nt" : "json"}`;
    const cold = await timed(path);
    expect(cold.r.status, cold.body).toBe(200);
    const c = counters(cold.r);
    const warm = await timed(`${path}&warm`);
    rows.push({ name, status: cold.r.status, ...c, coldMs: cold.ms, warmMs: warm.ms });
    expect(c.bytes).toBeLessThan(fileBytes / 100);
    expect(c.memory).toBeLessThan(64 * MB);
    const expected = execFileSync(RETE, ["query", FILE, query, "--format", query.includes("DESCRIBE") ? "nt" : "json"], { encoding: "utf8", maxBuffer: 1 << 28 });
    if (query.includes("DESCRIBE")) {
      expect(cold.body.split("\n").filter(Boolean).sort()).toEqual(expected.split("\n").filter(Boolean).sort());
    } else {
      const norm = (text: string) => {
        const json = JSON.parse(text);
        return json.boolean ?? json.results.bindings.map((b: object) => JSON.stringify(Object.entries(b).sort())).sort();
      };
      expect(norm(cold.body)).toEqual(norm(expected));
    }
  });

  test("a resource view", async () => {
    const path = `/lubm/resource?iri=${encodeURIComponent("http://www.Department0.University0.edu/FullProfessor0")}`;
    const cold = await timed(path);
    expect(cold.r.status).toBe(200);
    expect(cold.body).toContain("<http://swat.cse.lehigh.edu/onto/univ-bench.owl#worksFor>");
    const warm = await timed(`${path}&format=ttl`);
    const c = counters(cold.r);
    rows.push({ name: "resource view of one IRI", status: 200, ...c, coldMs: cold.ms, warmMs: warm.ms });
    expect(c.bytes).toBeLessThan(fileBytes / 100);
  });

  test("eight selective queries at once: the cache pool bounds memory", async () => {
    const queries = Array.from({ length: 8 }, (_, i) => `/lubm/sparql?query=${encodeURIComponent(`DESCRIBE <http://www.Department${i}.University${150 - i}.edu/FullProfessor${i}>`)}`);
    const start = performance.now();
    const responses = await Promise.all(queries.map((path) => w.fetch(path)));
    const bodies = await Promise.all(responses.map((r) => r.text()));
    const ms = Math.round(performance.now() - start);
    responses.forEach((r, i) => expect(r.status, bodies[i]).toBe(200));
    const memory = Math.max(...responses.map((r) => counters(r).memory));
    const sum = (key: "rounds" | "reads" | "bytes") => responses.reduce((n, r) => n + counters(r)[key], 0);
    rows.push({ name: "8 DESCRIBEs at once (sums)", status: 200, rounds: sum("rounds"), reads: sum("reads"), bytes: sum("bytes"), memory, coldMs: ms, warmMs: 0 });
    expect(memory).toBeLessThan(96 * MB);
  });

  test("a query over the whole file stops at a budget with 422, and the isolate keeps serving", async () => {
    const cold = await timed(`/lubm/sparql?query=${encodeURIComponent("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")}`);
    expect(cold.r.status, cold.body).toBe(422);
    const limit = JSON.parse(cold.body).limit;
    expect(["quads-scanned", "cache-bytes", "read-bytes", "rounds", "steps"]).toContain(limit);
    const c = counters(cold.r);
    rows.push({ name: `COUNT(*) of everything → 422 ${limit}`, status: 422, ...c, coldMs: cold.ms, warmMs: 0 });
    expect(c.memory).toBeLessThan(128 * MB);
    const after = await timed(`/lubm/sparql?query=${encodeURIComponent(SELECTIVE[2][1])}`);
    expect(after.r.status).toBe(200);
    expect(counters(after.r).memory).toBeLessThan(128 * MB);
  });
});
