// Starts what the browser tests load: the examples published into a fresh local R2
// (scripts/publish-examples.sh, which also builds the Worker and the site) and `wrangler dev` on a
// free port over it (tests/shared/wrangler-dev.ts). Gives the tests its URL; stops wrangler when
// the run ends, whether the tests passed or not, and if the run itself dies.
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { resolve } from "node:path";
import type { TestProject } from "vitest/node";
import { QUIET, ROOT, startWranglerDev } from "../shared/wrangler-dev";

const STATE = resolve(ROOT, "build/browser-state");

declare module "vitest" {
  export interface ProvidedContext {
    baseURL: string;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  rmSync(STATE, { recursive: true, force: true });
  execFileSync("bash", ["scripts/publish-examples.sh", "--persist-to", STATE], { cwd: ROOT, stdio: ["ignore", "inherit", "inherit"], env: { ...process.env, ...QUIET } });
  const { baseURL, stop } = await startWranglerDev(STATE);
  project.provide("baseURL", baseURL);
  return stop;
}
