// Starts `wrangler dev --local` on a free port over a local R2 persisted in a given directory (filled
// beforehand by `rete publish --local --persist-to DIR`), waits until it answers, and stops it (its
// whole process group) when asked or when the test run itself exits. Shared by the suites that
// test a real `wrangler dev`: tests/browser and tests/clients. Wrangler stays off the network.
import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { resolve } from "node:path";

export const ROOT = resolve(import.meta.dirname, "../..");

/** Environment that keeps wrangler off the network (TOOLCHAIN.md). */
export const QUIET = { WRANGLER_SEND_METRICS: "false", WRANGLER_SEND_ERROR_REPORTS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_HIDE_BANNER: "true" };

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

/** A running `wrangler dev`: its URL and how to stop it. */
export interface WranglerDev {
  baseURL: string;
  stop: () => void;
}

export async function startWranglerDev(persistTo: string): Promise<WranglerDev> {
  const port = await freePort();
  const baseURL = `http://127.0.0.1:${port}`;
  let log = "";
  const wrangler: ChildProcess = spawn("npx", ["wrangler", "dev", "--local", "--ip", "127.0.0.1", "--port", String(port), "--persist-to", persistTo, "--show-interactive-dev-session=false"], {
    cwd: ROOT,
    env: { ...process.env, ...QUIET },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  wrangler.stdout?.on("data", (chunk) => (log += chunk));
  wrangler.stderr?.on("data", (chunk) => (log += chunk));
  const stop = () => {
    if (wrangler.pid && wrangler.exitCode === null) {
      try {
        process.kill(-wrangler.pid, "SIGTERM"); // the group: npx, wrangler and workerd
      } catch {
        // already gone
      }
    }
  };
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
  return { baseURL, stop };
}
