// Before the clients suite: installs the clients (install.sh; cached outside the clone), builds the
// `rete` CLI and the fixture's .rete file, publishes it as dataset `people` into a fresh local R2,
// builds the Worker's wasm and starts `wrangler dev` over it (tests/shared/wrangler-dev.ts).
// Gives the specs the endpoint's URL, the .rete file (for `rete query` references) and where each
// client was installed, or the log of its failed install.
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { resolve } from "node:path";
import type { TestProject } from "vitest/node";
import { QUIET, ROOT, startWranglerDev } from "../shared/wrangler-dev";

const BUILD = resolve(ROOT, "build/clients");
const STATE = resolve(BUILD, "state");

/** One client install: its directory, or the log of why it failed. */
export interface Install {
  ok: boolean;
  path: string;
}

declare module "vitest" {
  export interface ProvidedContext {
    baseURL: string;
    reteFile: string;
    installs: Record<string, Install>;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  const run = (program: string, args: string[]) => execFileSync(program, args, { cwd: ROOT, stdio: ["ignore", "inherit", "inherit"], env: { ...process.env, ...QUIET } });
  const report = execFileSync("bash", ["tests/clients/install.sh"], { cwd: ROOT, encoding: "utf8" });
  const installs: Record<string, Install> = {};
  for (const line of report.trim().split("\n")) {
    const [name, status, path] = line.split(" ");
    installs[name] = { ok: status === "ok", path };
  }

  run("cargo", ["build", "--release", "--quiet", "-p", "rete-publisher"]);
  // Built here rather than by wrangler dev's own build step, whose time counts against its start-up.
  run("bash", ["scripts/build-worker.sh"]);
  rmSync(BUILD, { recursive: true, force: true });
  mkdirSync(BUILD, { recursive: true });
  const reteFile = resolve(BUILD, "people.rete");
  const rete = resolve(ROOT, "target/release/rete");
  run(rete, ["build", resolve(ROOT, "tests/clients/fixtures/people.trig"), "-o", reteFile]);
  run(rete, ["publish", reteFile, "--name", "people", "--local", "--persist-to", STATE]);

  const { baseURL, stop } = await startWranglerDev(STATE);
  project.provide("baseURL", baseURL);
  project.provide("reteFile", reteFile);
  project.provide("installs", installs);
  return stop;
}
