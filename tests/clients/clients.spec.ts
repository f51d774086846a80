// Each real client runs every case of cases.ts against the endpoint, in one process per client
// (drivers/*); each (client, case) is one test comparing the client's answer with `rete query` on
// the same file. A client whose install failed fails all its tests with the install log.
import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { type Raw, canonical, reference } from "./answers";
import { CASES } from "./cases";

const DRIVERS = resolve(import.meta.dirname, "drivers");
const CASES_FILE = resolve(import.meta.dirname, "../../build/clients/cases.json");

interface Client {
  name: string;
  /** The install (tests/clients/install.sh) it needs. */
  install: string;
  /** The command running all cases: program, arguments, extra environment. */
  command: (installed: string) => [string, string[], Record<string, string>];
}

const CLIENTS: Client[] = [
  { name: "SPARQLWrapper", install: "python", command: (dir) => ["python3", [resolve(DRIVERS, "python_clients.py"), "sparqlwrapper", CASES_FILE], { PYTHONPATH: dir }] },
  { name: "rdflib SPARQLStore", install: "python", command: (dir) => ["python3", [resolve(DRIVERS, "python_clients.py"), "rdflib", CASES_FILE], { PYTHONPATH: dir }] },
  { name: "fetch-sparql-endpoint", install: "npm", command: (dir) => ["node", [resolve(DRIVERS, "node_clients.mjs"), "fetch-sparql-endpoint", resolve(dir, "node_modules"), CASES_FILE], {}] },
  { name: "Comunica", install: "npm", command: (dir) => ["node", [resolve(DRIVERS, "node_clients.mjs"), "comunica", resolve(dir, "node_modules"), CASES_FILE], {}] },
  { name: "Jena ARQ", install: "jena", command: (dir) => ["java", ["-cp", `${dir}/lib/*`, resolve(DRIVERS, "JenaClient.java"), CASES_FILE], {}] },
];

const reteFile = inject("reteFile");
const installs = inject("installs");

beforeAll(() => {
  writeFileSync(CASES_FILE, JSON.stringify({ endpoint: `${inject("baseURL")}/people/sparql`, cases: CASES }));
});

for (const client of CLIENTS) {
  describe(client.name, () => {
    let answers: Record<string, Raw> | Error;

    beforeAll(async () => {
      const install = installs[client.install];
      if (!install?.ok) {
        answers = new Error(`installing ${client.install} failed:\n${install ? readFileSync(install.path, "utf8") : "no report"}`);
        return;
      }
      const [program, args, env] = client.command(install.path);
      try {
        const { stdout } = await promisify(execFile)(program, args, { env: { ...process.env, ...env }, maxBuffer: 64 << 20, timeout: 120_000 });
        answers = JSON.parse(stdout);
      } catch (error) {
        answers = new Error(`${client.name} did not run: ${error}`);
      }
    }, 150_000);

    for (const c of CASES) {
      it(c.id, () => {
        if (answers instanceof Error) throw answers;
        expect(canonical(answers[c.id])).toEqual(reference(reteFile, c.form, c.query));
      });
    }
  });
}
