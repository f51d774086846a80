// Which wasm functions a new isolate's first request compiles (issue 12 §5): V8 compiles a wasm
// function the first time it is called (lazy compilation), in the request, and each one costs
// its compile plus the JIT code event workerd asks V8 for (bench/worker/perf.measure.ts). A
// uprobe on V8's wasm::CompileLazy in workerd records the index of every function compiled
// while a new isolate in a warm location answers its first request, the first isolate of its
// workerd to run the wasm (V8 shares compiled wasm between the isolates of a process; a first
// workerd filled the Cache API, as RETE_CPU_FIRST_IN_PROCESS in cpu.measure.ts); the indices are named from the build's names
// (index_bg.names.wasm, which scripts/strip-wasm-names.mjs keeps beside the wasm; or
// RETE_BENCH_NAMES, a wasm of the same build with its names) and summed by crate: functions,
// and wasm code bytes (what Liftoff compiles).
// Linux only; needs perf and root (the uprobe). The probe is added for the run and removed after.
// Run: RETE_BENCH_DATASETS=qudt RETE_BENCH_ONLY=01- RETE_SKIP_BUILD=1 nice -n 10 npx vitest run --config bench/worker/vitest.config.ts compiled
// RETE_BENCH_BUILD=DIR picks a Worker build (default worker/build).
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { resolve } from "node:path";
import { test } from "vitest";
import { ROOT, startWorker } from "../../tests/worker/mf.ts";
import { ACCEPT, DATASETS, requestsOf, settle, WARMER, warmLocation } from "./requests.ts";
import { newWorkerd, workerdChildren } from "./workerd.ts";

const BUILD = resolve(ROOT, process.env.RETE_BENCH_BUILD ?? "worker/build");
const NAMES = resolve(ROOT, process.env.RETE_BENCH_NAMES ?? (existsSync(`${BUILD}/index_bg.names.wasm`) ? `${BUILD}/index_bg.names.wasm` : `${BUILD}/index_bg.wasm`));
const OUT = resolve(ROOT, "build/worker-bench/compiled");
const EVENT = "probe_workerd:rete_compile_lazy";
const TOP = Number(process.env.RETE_BENCH_TOP ?? 25);

/** Function names (by index, imports first) and code sizes (by index) of a wasm module. */
function wasmFunctions(file: string): { names: Map<number, string>; sizes: Map<number, number> } {
  const wasm = readFileSync(file);
  const names = new Map<number, string>();
  const sizes = new Map<number, number>();
  let at = 8;
  const leb = () => {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = wasm[at++];
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
    }
  };
  const skipLimits = () => {
    const flags = leb();
    leb();
    if (flags & 1) leb();
  };
  let imported = 0;
  while (at < wasm.length) {
    const id = wasm[at++];
    const size = leb();
    const end = at + size;
    if (id === 2) {
      for (let n = leb(); n > 0; n--) {
        // The module's and the field's names (read the length first: `at += leb()` would add it
        // to the position before the length).
        for (let name = 0; name < 2; name++) {
          const length = leb();
          at += length;
        }
        const kind = wasm[at++];
        if (kind === 0) {
          leb();
          imported++;
        } else if (kind === 1) {
          at++;
          skipLimits();
        } else if (kind === 2) skipLimits();
        else if (kind === 3) at += 2;
        else if (kind === 4) {
          at++;
          leb();
        }
      }
    } else if (id === 10) {
      for (let n = leb(), i = 0; i < n; i++) {
        const length = leb();
        sizes.set(imported + i, length);
        at += length;
      }
    } else if (id === 0) {
      const length = leb();
      const name = wasm.subarray(at, at + length).toString("utf8");
      at += length;
      while (name === "name" && at < end) {
        const sub = wasm[at++];
        const subEnd = leb() + at;
        if (sub === 1) {
          for (let n = leb(); n > 0; n--) {
            const index = leb();
            const length = leb();
            names.set(index, wasm.subarray(at, at + length).toString("utf8"));
            at += length;
          }
        }
        at = subEnd;
      }
    }
    at = end;
  }
  return { names, sizes };
}

/** The crate of a demangled Rust name, its first path's first segment: `<rete_core::x::Y as
 * core::fmt::Display>::fmt` → rete_core, `<&T as core::fmt::Debug>::fmt` → core (generic code is
 * counted where it is defined, not where it was instantiated). */
function crateOf(name: string | undefined): string {
  if (!name) return "(unnamed)";
  return name.match(/([a-z_][a-z0-9_]*)::/)?.[1] ?? name.slice(0, 30);
}

/** The workerd binary Miniflare runs, and the file offset of V8's wasm::CompileLazy in it. */
function compileLazyOffset(): { binary: string; offset: string } {
  const require = createRequire(import.meta.url);
  const binary = realpathSync(process.env.MINIFLARE_WORKERD_PATH ?? require("workerd").default ?? require("workerd"));
  const symbols = execFileSync("nm", [binary], { encoding: "utf8", maxBuffer: 1 << 30 });
  const line = symbols.split("\n").find((l) => l.endsWith(" _ZN2v88internal4wasm11CompileLazyEPNS0_7IsolateEPNS1_12NativeModuleEi"));
  if (!line) throw new Error(`${binary}: no symbol v8::internal::wasm::CompileLazy(Isolate*, NativeModule*, int); a new V8?`);
  const address = BigInt(`0x${line.split(" ")[0]}`);
  // perf probe takes an address in the file: the virtual address less its segment's displacement.
  const segments = execFileSync("readelf", ["-lW", binary], { encoding: "utf8" }).split("\n").filter((l) => l.trim().startsWith("LOAD"));
  for (const segment of segments) {
    const [, fileOffset, virtual, , , memSize] = segment.trim().split(/\s+/);
    const start = BigInt(virtual);
    if (address >= start && address < start + BigInt(memSize)) return { binary, offset: `0x${(address - start + BigInt(fileOffset)).toString(16)}` };
  }
  throw new Error(`${binary}: CompileLazy at ${address.toString(16)} is in no segment`);
}

test("wasm functions compiled by a new isolate's first request", async () => {
  mkdirSync(OUT, { recursive: true });
  const { sizes } = wasmFunctions(`${BUILD}/index_bg.wasm`);
  const { names } = wasmFunctions(NAMES);
  if (names.size === 0) throw new Error(`${NAMES} has no name section: point RETE_BENCH_NAMES at a wasm of this build with its names`);
  const { binary, offset } = compileLazyOffset();
  execFileSync("perf", ["probe", "-q", "-x", binary, "-a", `rete_compile_lazy=${offset} index=%dx:s32`], { stdio: "inherit" });
  try {
    for (const dataset of DATASETS) {
      for (const request of requestsOf(dataset)) {
        const persist = mkdtempSync(resolve(tmpdir(), "rete-compiled-"));
        await warmLocation({ POINTER_TTL_S: "60" }, BUILD, persist, request);
        const before = workerdChildren();
        const w = await startWorker({ POINTER_TTL_S: "60" }, { build: BUILD, persist, warmer: WARMER });
        const pid = newWorkerd(before);
        try {
          const pointer = `datasets/${dataset}/current.json`;
          for (let i = 0; i < 2; i++) await (await w.fetch(`http://twin.test/?key=${encodeURIComponent(pointer)}`)).arrayBuffer();
          await settle(100);
          const file = `${OUT}/${dataset}-${request.name.replace(/[^a-z0-9]+/gi, "_")}.data`;
          const perf: ChildProcess = spawn("perf", ["record", "-q", "-e", EVENT, "-p", String(pid), "-o", file], { stdio: "inherit" });
          await settle(2000);
          const r = await w.fetch(request.path, { headers: { accept: ACCEPT }, redirect: "manual" });
          await r.arrayBuffer();
          await settle(100);
          perf.kill("SIGINT");
          await new Promise((done) => perf.on("exit", done));
          const text = execFileSync("perf", ["script", "-i", file, "-F", "tid,event,trace"], { encoding: "utf8", maxBuffer: 256 << 20, stdio: ["ignore", "pipe", "ignore"] });
          const compiled = [...text.matchAll(/index=(-?\d+)/g)].map((m) => Number(m[1]));
          // The isolate's own compiles: Miniflare's workers run in other threads' isolates too.
          const byCrate = new Map<string, { functions: number; bytes: number }>();
          let bytes = 0;
          for (const index of compiled) {
            const crate = crateOf(names.get(index));
            const sum = byCrate.get(crate) ?? { functions: 0, bytes: 0 };
            sum.functions++;
            sum.bytes += sizes.get(index) ?? 0;
            bytes += sizes.get(index) ?? 0;
            byCrate.set(crate, sum);
          }
          const lines = [`${dataset} ${request.name} (status ${r.status}): ${compiled.length} wasm functions compiled on first call, ${(bytes / 1024).toFixed(0)} KiB of wasm code`];
          for (const [crate, sum] of [...byCrate.entries()].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, TOP)) {
            lines.push(`  ${String(sum.functions).padStart(5)} fns ${(sum.bytes / 1024).toFixed(1).padStart(7)} KiB  ${crate}`);
          }
          if (process.env.RETE_BENCH_LIST) {
            for (const index of compiled) lines.push(`    ${index} ${sizes.get(index) ?? 0} ${names.get(index) ?? "?"}`);
          }
          console.log(lines.join("\n"));
        } finally {
          await w.dispose();
          rmSync(persist, { recursive: true, force: true });
        }
      }
    }
  } finally {
    execFileSync("perf", ["probe", "-q", "-d", EVENT]);
  }
});
