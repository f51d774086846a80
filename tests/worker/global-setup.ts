// Before any spec: build the `rete` CLI and the Worker's wasm (both incremental), and the .rete
// files the specs publish into Miniflare's R2: examples/* and tests/worker/fixtures/*.ttl, built
// by the CLI into build/test-worker/. RETE_SKIP_BUILD=1 skips the two cargo builds (CI that
// built them in an earlier step).
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync } from "node:fs";
import { resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../..");
const FILES = resolve(ROOT, "build/test-worker");
const RETE = resolve(ROOT, "target/release/rete");

function run(program: string, args: string[]) {
  execFileSync(program, args, { cwd: ROOT, stdio: ["ignore", "inherit", "inherit"] });
}

export default function setup() {
  if (process.env.RETE_SKIP_BUILD !== "1") {
    run("cargo", ["build", "--release", "--quiet", "-p", "rete-publisher"]);
    run("bash", ["scripts/build-worker.sh"]);
  }
  mkdirSync(FILES, { recursive: true });
  const inputs: [string, string][] = [];
  for (const name of readdirSync(resolve(ROOT, "examples"))) {
    const dir = resolve(ROOT, "examples", name);
    const data = readdirSync(dir).filter((f) => /\.(nt|nq|ttl|trig|rdf)(\.gz)?$/.test(f));
    if (data.length) inputs.push([name, data.map((f) => resolve(dir, f)).join("\n")]);
  }
  for (const f of readdirSync(resolve(ROOT, "tests/worker/fixtures")).filter((f) => f.endsWith(".ttl"))) {
    inputs.push([f.replace(/\.ttl$/, ""), resolve(ROOT, "tests/worker/fixtures", f)]);
  }
  for (const [name, files] of inputs) {
    execFileSync(RETE, ["build", ...files.split("\n"), "-o", resolve(FILES, `${name}.rete`)], { cwd: ROOT, stdio: "ignore" });
  }
}
