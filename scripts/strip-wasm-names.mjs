// Drops the "name" custom section (function names for debuggers) from the Worker's wasm.
//
// worker-build always keeps it (it passes wasm-opt --debuginfo): ~0.5 MB of demangled Rust names.
// workerd registers a V8 JIT code event handler on every isolate (its crash stack traces map code
// addresses to names), so V8 looks up and copies the name of every wasm function it compiles and
// hands it to workerd, the first lookup decoding the whole section. Functions are compiled on first
// call, so a new isolate's first request paid that in its CPU (docs/BENCHMARK.md "Where a new
// isolate's first request goes"). Without the section V8 names a function "wasm-function[N]".
// Nothing else reads it: the code, its data, imports, exports and the target_features section
// wasm-bindgen reads are byte for byte unchanged; only a wasm stack trace loses its names.
// The names are kept beside it, as a wasm module holding only that section (FILE → FILE without
// .wasm + .names.wasm, nothing imports it so it is not deployed), for the benchmarks that name
// what a request compiles (bench/worker/compiled.measure.ts).
// It fails when the file is not a wasm module or a section runs past its end.
//
// Usage: node scripts/strip-wasm-names.mjs worker/build/index_bg.wasm   (rewrites the file in place)
import { readFileSync, writeFileSync } from "node:fs";

const file = process.argv[2];
if (!file) throw new Error("usage: node scripts/strip-wasm-names.mjs FILE");
const wasm = readFileSync(file);
const MAGIC = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
if (wasm.length < 8 || MAGIC.some((b, i) => wasm[i] !== b)) throw new Error(`${file}: not a wasm module (version 1)`);

/** The unsigned LEB128 at `at`: [value, index past it]. */
function leb(at) {
  let value = 0;
  for (let shift = 0; shift < 35; shift += 7) {
    if (at >= wasm.length) break;
    const byte = wasm[at++];
    value += (byte & 0x7f) * 2 ** shift;
    if (byte < 0x80) return [value, at];
  }
  throw new Error(`${file}: a bad LEB128 number before byte ${at}`);
}

const kept = [wasm.subarray(0, 8)];
const names = [wasm.subarray(0, 8)];
let dropped = 0;
for (let at = 8; at < wasm.length; ) {
  const start = at;
  const id = wasm[at];
  const [size, body] = leb(at + 1);
  const end = body + size;
  if (end > wasm.length) throw new Error(`${file}: section ${id} at byte ${start} runs past the end`);
  let name = "";
  if (id === 0) {
    const [length, text] = leb(body);
    name = wasm.subarray(text, text + length).toString("utf8");
  }
  if (id === 0 && name === "name") {
    dropped += end - start;
    names.push(wasm.subarray(start, end));
  } else kept.push(wasm.subarray(start, end));
  at = end;
}
writeFileSync(file, Buffer.concat(kept));
if (dropped) writeFileSync(file.replace(/\.wasm$/, ".names.wasm"), Buffer.concat(names));
console.log(`strip-wasm-names: ${dropped ? `dropped the name section (${dropped} bytes)` : "no name section"} of ${file}`);
