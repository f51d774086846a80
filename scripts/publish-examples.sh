#!/usr/bin/env bash
# Builds what `wrangler dev` serves and fills its local R2 with the examples: the `rete` CLI, the
# Worker's wasm (scripts/build-worker.sh), the site (scripts/build-site.mjs), then every dataset
# under examples/ built into build/examples/<name>.rete and published with `rete publish --local`
# (bucket `rete`, as wrangler.toml binds it). Shared by scripts/start.sh and the browser tests.
#
# Usage: scripts/publish-examples.sh [--persist-to DIR]   (default .wrangler/state, wrangler's own)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

persist=(--persist-to .wrangler/state)
[[ ${1:-} == --persist-to ]] && persist=(--persist-to "$2")

# wrangler stays off the network (TOOLCHAIN.md): no metrics, error reports or update checks.
export WRANGLER_SEND_METRICS=false WRANGLER_SEND_ERROR_REPORTS=false CLOUDFLARE_CF_FETCH_ENABLED=false WRANGLER_HIDE_BANNER=true

echo "== cargo build --release -p rete-publisher"
cargo build --release -p rete-publisher
rete=target/release/rete

echo "== scripts/build-worker.sh (the Worker's wasm, into worker/build/)"
bash scripts/build-worker.sh
echo "== scripts/build-site.mjs (the site, into build/site/)"
node scripts/build-site.mjs

mkdir -p build/examples
for dir in examples/*/; do
  dir=${dir%/}
  name=$(basename "$dir")
  mapfile -t inputs < <(find "$dir" -maxdepth 1 -type f \
    \( -name '*.nt' -o -name '*.nq' -o -name '*.ttl' -o -name '*.trig' -o -name '*.rdf' \
       -o -name '*.nt.gz' -o -name '*.nq.gz' -o -name '*.ttl.gz' -o -name '*.trig.gz' \) | sort)
  ((${#inputs[@]})) || { echo "publish-examples: no data file in $dir" >&2; exit 1; }
  out=build/examples/$name.rete

  echo
  echo "== $name: rete build ${inputs[*]} -o $out"
  "$rete" build "${inputs[@]}" -o "$out"
  echo "== $name: rete publish $out --name $name --local ${persist[*]}"
  "$rete" publish "$out" --name "$name" --local "${persist[@]}"
done
