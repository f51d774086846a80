// The deploy path (README "Deploy to Cloudflare", issue 12 §7): `wrangler deploy --dry-run
// --outdir` builds the bundle `wrangler deploy` would upload, without the network or an account,
// and the bundle must fit the Free plan's Worker size limit, 3 MiB after compression: by
// wrangler's own figure ("Total Upload: … / gzip: …") and by the gzip -9 sizes of the files it
// wrote (the wasm and the JS modules), both printed (docs/BENCHMARK.md "Deploy bundle").
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, expect, test } from "vitest";
import { QUIET } from "../shared/wrangler-dev.ts";
import { ROOT } from "./mf.ts";

const FREE_PLAN_BYTES = 3 * 1024 * 1024;
const outdir = mkdtempSync(join(tmpdir(), "rete-deploy-"));
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

test("wrangler deploy --dry-run builds a bundle that fits the Free plan (3 MiB compressed)", () => {
  const run = spawnSync("npx", ["wrangler", "deploy", "--dry-run", "--outdir", outdir], { cwd: ROOT, encoding: "utf8", env: { ...process.env, ...QUIET } });
  const output = `${run.stdout}${run.stderr}`;
  expect(run.status, output).toBe(0);
  expect(output).toMatch(/--dry-run: exiting now/);
  // Wrangler's own measure of what it would upload: "Total Upload: 3298.41 KiB / gzip: 1178.44 KiB".
  const reported = output.match(/Total Upload: ([\d.]+) KiB \/ gzip: ([\d.]+) KiB/);
  expect(reported, "wrangler reports the upload size").not.toBeNull();
  const wranglerGzipBytes = Number(reported?.[2]) * 1024;
  console.log(`deploy bundle: wrangler reports ${reported?.[1]} KiB, gzip ${reported?.[2]} KiB`);
  expect(wranglerGzipBytes).toBeLessThanOrEqual(FREE_PLAN_BYTES);
  const bundle = files(outdir).filter((f) => !f.endsWith(".map") && !f.endsWith("README.md"));
  const sizes = bundle.map((f) => {
    const bytes = readFileSync(f);
    return { file: relative(outdir, f), bytes: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
  });
  expect(sizes.some((s) => s.file.endsWith(".wasm")), "the bundle holds the wasm").toBe(true);
  const total = sizes.reduce((n, s) => n + s.gzip, 0);
  for (const s of sizes) console.log(`deploy bundle: ${s.file} ${s.bytes} bytes, ${s.gzip} gzip -9`);
  console.log(`deploy bundle: ${total} bytes gzip -9 in all, ${((100 * total) / FREE_PLAN_BYTES).toFixed(1)}% of the Free plan's 3 MiB`);
  expect(total).toBeLessThanOrEqual(FREE_PLAN_BYTES);
}, 600_000);
