// Runs the Worker's warm-up once when the module starts, then makes its wasm instance anew.
//
// V8 compiles a wasm function the first time it is called, so a new isolate's first request
// compiled the code it ran: 15–45 ms of CPU here, against the Free plan's 10 ms a request
// (docs/BENCHMARK.md "CPU per request"). worker/src/warm_up.rs exports `__rete_warm_up`, which
// answers requests about a small dataset built into the wasm; the code V8 compiles belongs to the
// module, not to the instance, and module start has its own CPU limit (1 s). This edits
// worker-build's bundle (worker/build/index.js, minified by esbuild) in place:
// - worker-build's shim makes every wasm export a method of the Worker's entrypoint; the warm-up
//   is not one (it would be callable over RPC): that line goes;
// - at the end of the module's top level it calls the warm-up, ignoring any failure, then the
//   glue's reset (wasm-bindgen's `__wbg_reset_state`, what the shim calls after a panic): a new
//   instance of the same module, with none of the warm-up's state (open files, block caches,
//   pointers) and alive even when the warm-up trapped (a panic marks an instance terminated).
// It fails when the bundle does not have the expected shape (a new worker-build or wasm-bindgen),
// so that a change is seen rather than the warm-up silently lost.
//
// Usage: node scripts/warm-up-at-start.mjs worker/build/index.js   (rewrites the file in place)
import { readFileSync, writeFileSync } from "node:fs";

const file = process.argv[2];
if (!file) throw new Error("usage: node scripts/warm-up-at-start.mjs FILE");
let src = readFileSync(file, "utf8");

/** The one match of `pattern` in the bundle. */
function only(pattern, what) {
  const all = [...src.matchAll(new RegExp(pattern, "g"))];
  if (all.length !== 1) throw new Error(`${file}: ${what} (${pattern}) is there ${all.length} times, not once; worker-build's bundle changed`);
  return all[0];
}

// `Entrypoint.prototype.__rete_warm_up = exports.__rete_warm_up;` as the shim writes it, minified.
const method = only(String.raw`\w+\.prototype\.__rete_warm_up=([\w$]+);`, "the warm-up's entrypoint method");
const warmUp = method[1];
src = src.slice(0, method.index) + src.slice(method.index + method[0].length);
// The shim's reinitialization after a panic: `console.log("Reinitializing Wasm application"), exports.__wbg_reset_state()`.
const reset = only(String.raw`console\.log\("Reinitializing Wasm application"\),([\w$]+)\(\)`, "the shim's reset call")[1];
// The module's last statement: its exports.
const exports = only(String.raw`export\{[^}]*\};?\s*$`, "the bundle's export statement");
src = `${src.slice(0, exports.index)}try{${warmUp}()}catch{}${reset}();\n${src.slice(exports.index)}`;
writeFileSync(file, src);
console.log(`warm-up-at-start: ${file} runs the warm-up (${warmUp}) at module start, then a new instance (${reset})`);
