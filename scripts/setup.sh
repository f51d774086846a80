#!/usr/bin/env bash
# Installs what building and testing rete needs on a fresh Debian machine of this project's kind
# (Rust, Node 20 and Python already there; only the package registries reachable).
# Idempotent: each step first checks and does nothing when its part is in place.
# Quiet on success; on failure prints the failing step's output and exits non-zero.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PYOXIGRAPH_VERSION=0.5.13
APT_PACKAGES=(clang chromium)   # clang: zstd-sys for wasm32; chromium: the browser tests (TOOLCHAIN.md)
RUST_TARGETS=(wasm32-unknown-unknown)

log=$(mktemp)
trap 'rm -f "$log"' EXIT

fail() {
  echo "setup: $*" >&2
  exit 1
}

# Runs a command with its output kept aside; shows that output only if the command fails.
run() {
  local what=$1
  shift
  if ! "$@" >"$log" 2>&1; then
    echo "setup: $what failed: $*" >&2
    cat "$log" >&2
    exit 1
  fi
}

for tool in cargo rustup node npm python3; do
  command -v "$tool" >/dev/null 2>&1 || fail "'$tool' is not on PATH; this machine kind should ship it"
done

# Rust targets.
installed_targets=$(rustup target list --installed)
for target in "${RUST_TARGETS[@]}"; do
  grep -qx "$target" <<<"$installed_targets" || run "rustup target add $target" rustup target add "$target"
done

# Debian packages: 'apt-get update' only when one is missing.
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  sudo=()
  if ((EUID != 0)); then
    command -v sudo >/dev/null 2>&1 || fail "need root to install ${missing[*]} (run as root or install sudo)"
    sudo=(sudo)
  fi
  export DEBIAN_FRONTEND=noninteractive
  run "apt-get update" "${sudo[@]}" apt-get update
  run "apt-get install ${missing[*]}" "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
fi

# Node packages: 'npm ci' when node_modules is missing or was installed from another lockfile.
stamp=node_modules/.rete-setup-stamp
want=$(cat package.json package-lock.json | sha256sum | cut -d' ' -f1)
if [[ ! -d node_modules || ! -f $stamp || $(<"$stamp") != "$want" ]]; then
  run "npm ci" npm ci --no-audit --no-fund --loglevel=error
  echo "$want" >"$stamp"
fi

# pyoxigraph: the reference SPARQL engine for scripts/check-examples.py and differential tests.
if ! python3 -c 'import pyoxigraph' >/dev/null 2>&1; then
  pip=(python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore "pyoxigraph==$PYOXIGRAPH_VERSION")
  if ! "${pip[@]}" >"$log" 2>&1; then
    # A Debian system Python refuses plain 'pip install' (PEP 668); this machine kind uses pyenv.
    grep -q externally-managed "$log" || { echo "setup: pip install pyoxigraph failed:" >&2; cat "$log" >&2; exit 1; }
    run "pip install pyoxigraph" "${pip[@]}" --break-system-packages
  fi
  python3 -c 'import pyoxigraph' >/dev/null 2>&1 || fail "pyoxigraph installed but cannot be imported by python3"
fi

# The Worker's build tools (scripts/worker-tools.sh): worker-build and wasm-bindgen-cli, built from
# crates.io into ~/.cache/rete-tools/<name>-<version> when missing. That costs ~1,000 CPU-seconds
# once (10-20 min on 2 cores), so keep the directory across CI runs; wasm-opt and esbuild come
# from node_modules above. wasm-bindgen-cli goes without --locked: its lockfile names a crate
# version the registry lacks (TOOLCHAIN.md).
source scripts/worker-tools.sh
locked=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print }' Cargo.lock)
[[ $locked == "$WASM_BINDGEN_VERSION" ]] || fail "Cargo.lock has wasm-bindgen $locked but scripts/worker-tools.sh builds the CLI $WASM_BINDGEN_VERSION; make them equal"
if [[ ! -x $WORKER_BUILD_BIN ]]; then
  echo "setup: building worker-build $WORKER_BUILD_VERSION into $RETE_TOOLS (once; 5-10 min)" >&2
  run "cargo install worker-build" cargo install --quiet --locked --root "$RETE_TOOLS/worker-build-$WORKER_BUILD_VERSION" worker-build --version "$WORKER_BUILD_VERSION"
fi
if [[ ! -x $WASM_BINDGEN_BIN ]]; then
  echo "setup: building wasm-bindgen-cli $WASM_BINDGEN_VERSION into $RETE_TOOLS (once; 5-10 min)" >&2
  run "cargo install wasm-bindgen-cli" cargo install --quiet --root "$RETE_TOOLS/wasm-bindgen-$WASM_BINDGEN_VERSION" wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION"
fi
