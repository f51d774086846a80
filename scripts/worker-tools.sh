# Sourced by scripts/setup.sh and scripts/build-worker.sh: where the Worker's build tools live.
# worker-build and wasm-bindgen-cli are built from crates.io into ~/.cache/rete-tools/<name>-<version>
# (outside the clone, so a CI cache keeps them across fresh clones); wasm-opt and esbuild come from npm.
# WASM_BINDGEN_VERSION must equal the wasm-bindgen version in Cargo.lock (worker/Cargo.toml pins it).
WORKER_BUILD_VERSION=0.8.7
WASM_BINDGEN_VERSION=0.2.130
RETE_TOOLS=${RETE_TOOLS:-$HOME/.cache/rete-tools}
WORKER_BUILD_BIN=$RETE_TOOLS/worker-build-$WORKER_BUILD_VERSION/bin/worker-build
WASM_BINDGEN_BIN=$RETE_TOOLS/wasm-bindgen-$WASM_BINDGEN_VERSION/bin/wasm-bindgen
WASM_OPT_BIN=$PWD/node_modules/.bin/wasm-opt
ESBUILD_BIN=$PWD/node_modules/.bin/esbuild
