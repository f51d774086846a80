#!/usr/bin/env bash
# Builds the Worker's wasm and JS shim into worker/build/ (what wrangler.toml's `main` names) with
# worker-build, pointing it at the pinned tools that scripts/setup.sh installs: wasm-bindgen of
# exactly the version in Cargo.lock, wasm-opt from the npm package binaryen, esbuild from npm.
# Without these variables worker-build would try to download them (TOOLCHAIN.md).
# worker-build runs wasm-opt as `-O` (binaryen's -Os) over the opt-level 3 wasm: -O2, -O3 and no
# wasm-opt at all gave the same warm CPU within the machine's noise, and -O4 aborts in binaryen
# 132's wasm-opt (docs/BENCHMARK.md "Session 17: how the wasm is built"), so it keeps its default.
#
# Usage: scripts/build-worker.sh [--dev]     (default: the wasm-release profile of Cargo.toml)
# Does nothing when worker/build/ is newer than its sources; RETE_FORCE_BUILD=1 builds anyway.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/worker-tools.sh

profile=(--profile wasm-release)
[[ ${1:-} == --dev ]] && profile=(--dev)

# Up to date: nothing the wasm is built from is newer than its output (wasm-opt alone takes ~40 s).
out=worker/build/index.js
if [[ -f $out && -z ${RETE_FORCE_BUILD:-} && ${1:-} != --dev ]] &&
  [[ -z $(find worker/src worker/Cargo.toml core/src core/Cargo.toml layout/src layout/Cargo.toml vendor Cargo.toml Cargo.lock .cargo/config.toml -newer "$out" -print -quit) ]]; then
  exit 0
fi

for tool in "$WORKER_BUILD_BIN" "$WASM_BINDGEN_BIN" "$WASM_OPT_BIN" "$ESBUILD_BIN"; do
  [[ -x $tool ]] || { echo "build-worker: $tool is missing; run scripts/setup.sh" >&2; exit 1; }
done
export WASM_BINDGEN_BIN WASM_OPT_BIN ESBUILD_BIN
cd worker
"$WORKER_BUILD_BIN" "${profile[@]}"
# The glue's wasm imports compiled at module start, not in a new isolate's first request.
node ../scripts/eager-glue.mjs build/index.js
# No function names in the wasm: V8 copies each compiled function's name to workerd's code map.
node ../scripts/strip-wasm-names.mjs build/index_bg.wasm
