// Makes V8 compile the Worker's wasm imports when the module starts rather than in a request.
//
// worker-build's JavaScript glue (worker/build/index.js) passes the wasm an object of ~120 import
// functions (`"./index_bg.js":{__proto__:null, name:function(…){…}, …}`), built at module start.
// V8 compiles a JavaScript function the first time it is called, so a new isolate's first request
// compiled every import it reached (R2, the Cache API, Response, strings): ~2 ms of its CPU, which
// Cloudflare counts against the request's limit (docs/BENCHMARK.md "Where a new isolate's first
// request goes"). A function expression in parentheses is compiled together with the function
// around it (V8's PIFE heuristic), here the one building the imports at module start, whose CPU
// counts against the startup limit instead. This wraps each import function in parentheses; the
// code is otherwise unchanged. It fails when the glue does not have the expected shape (a new
// worker-build or wasm-bindgen), so that a change is seen rather than silently undone.
//
// Usage: node scripts/eager-glue.mjs worker/build/index.js   (rewrites the file in place)
import { readFileSync, writeFileSync } from "node:fs";

const file = process.argv[2];
if (!file) throw new Error("usage: node scripts/eager-glue.mjs FILE");
const src = readFileSync(file, "utf8");
const MARKER = '"./index_bg.js":{__proto__:null,';
const at = src.indexOf(MARKER);
if (at < 0 || src.indexOf(MARKER, at + 1) >= 0) {
  throw new Error(`${file}: the wasm imports object (${MARKER}) is not there exactly once; worker-build's glue changed`);
}

/** Index past the string or template literal that starts at `j`. */
function pastString(j) {
  const quote = src[j];
  for (j++; j < src.length; j++) {
    if (src[j] === "\\") j++;
    else if (quote === "`" && src[j] === "$" && src[j + 1] === "{") j = pastBlock(j + 1) - 1;
    else if (src[j] === quote) return j + 1;
  }
  throw new Error(`${file}: a string is not closed`);
}

/** Index past the bracketed block that opens at `j`. */
function pastBlock(j) {
  let depth = 0;
  while (j < src.length) {
    const c = src[j];
    if (c === '"' || c === "'" || c === "`") {
      j = pastString(j);
      continue;
    }
    if (c === "/" && (src[j + 1] === "/" || src[j + 1] === "*")) throw new Error(`${file}: a comment in the imports object at byte ${j}`);
    if ("{([".includes(c)) depth++;
    if ("})]".includes(c) && --depth === 0) return j + 1;
    j++;
  }
  throw new Error(`${file}: a block is not closed`);
}

let out = src.slice(0, at + MARKER.length);
let i = at + MARKER.length;
let wrapped = 0;
while (src[i] !== "}") {
  const colon = src.indexOf(":", i);
  if (colon < 0) throw new Error(`${file}: an import without a value at byte ${i}`);
  out += src.slice(i, colon + 1);
  i = colon + 1;
  if (src.startsWith("function(", i)) {
    const end = pastBlock(src.indexOf("{", i));
    out += `(${src.slice(i, end)})`;
    wrapped++;
    i = end;
  } else {
    // A value that is not a function expression (WebAssembly.JSTag, or one wrapped already).
    let j = i;
    while (j < src.length && src[j] !== "," && src[j] !== "}") j = src[j] === "(" ? pastBlock(j) : j + 1;
    out += src.slice(i, j);
    i = j;
  }
  if (src[i] === ",") out += src[i++];
  else if (src[i] !== "}") throw new Error(`${file}: unexpected ${JSON.stringify(src[i])} after an import at byte ${i}`);
}
out += src.slice(i);
writeFileSync(file, out);
console.log(`eager-glue: ${wrapped} import functions of ${file} compiled at module start`);
