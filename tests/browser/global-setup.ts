// Starts what the browser tests load: the examples published into a fresh local R2
// (scripts/publish-examples.sh, which also builds the Worker and the site) and `wrangler dev` on a
// free port over it. Gives the tests its URL; stops wrangler (its whole process group) when the
// run ends, whether the tests passed or not, and if the run itself dies.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { createServer } from "node:net";
import { resolve } from "node:path";
import type { TestProject } from "vitest/node";

const ROOT = resolve(import.meta.dirname, "../..");
const STATE = resolve(ROOT, "build/browser-state");
const QUIET = { WRANGLER_SEND_METRICS: "false", WRANGLER_SEND_ERROR_REPORTS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_HIDE_BANNER: "true" };

declare module "vitest" {
  export interface ProvidedContext {
    baseURL: string;
  }
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? done(address.port) : fail(new Error("no port"))));
    });
  });
}

let wrangler: ChildProcess | undefined;

function stop(): void {
  if (wrangler?.pid && wrangler.exitCode === null) {
    try {
      process.kill(-wrangler.pid, "SIGTERM"); // the group: npx, wrangler and workerd
    } catch {
      // already gone
    }
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  rmSync(STATE, { recursive: true, force: true });
  execFileSync("bash", ["scripts/publish-examples.sh", "--persist-to", STATE], { cwd: ROOT, stdio: ["ignore", "inherit", "inherit"], env: { ...process.env, ...QUIET } });
  const port = await freePort();
  const baseURL = `http://127.0.0.1:${port}`;
  let log = "";
  wrangler = spawn("npx", ["wrangler", "dev", "--local", "--ip", "127.0.0.1", "--port", String(port), "--persist-to", STATE, "--show-interactive-dev-session=false"], {
    cwd: ROOT,
    env: { ...process.env, ...QUIET },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  wrangler.stdout?.on("data", (chunk) => (log += chunk));
  wrangler.stderr?.on("data", (chunk) => (log += chunk));
  process.once("exit", stop);

  const deadline = Date.now() + 180_000;
  for (;;) {
    if (wrangler.exitCode !== null) throw new Error(`wrangler dev exited with ${wrangler.exitCode}:\n${log}`);
    try {
      const response = await fetch(`${baseURL}/`, { headers: { accept: "application/json" } });
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      stop();
      throw new Error(`wrangler dev did not answer on ${baseURL} within 180 s:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  project.provide("baseURL", baseURL);
  return stop;
}
