#!/usr/bin/env bash
# `npm start`: set up the machine, build the `rete` CLI and the Worker's wasm, turn every dataset
# under examples/ into build/examples/<name>.rete, publish each into wrangler's local R2 (bucket
# `rete` in .wrangler/state, as `rete publish --local` lays it out), then serve them with
# `wrangler dev` on http://127.0.0.1:8787 until Ctrl-C. README "Worker" has curl examples.
#
# Usage: scripts/start.sh [--no-serve]     (--no-serve: stop after publishing)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# wrangler stays off the network (TOOLCHAIN.md): no metrics, error reports or update checks.
export WRANGLER_SEND_METRICS=false WRANGLER_SEND_ERROR_REPORTS=false CLOUDFLARE_CF_FETCH_ENABLED=false WRANGLER_HIDE_BANNER=true

bash scripts/setup.sh

echo "== cargo build --release -p rete-publisher"
cargo build --release -p rete-publisher
rete=target/release/rete

echo "== scripts/build-worker.sh (the Worker's wasm, into worker/build/)"
bash scripts/build-worker.sh

mkdir -p build/examples
for dir in examples/*/; do
  dir=${dir%/}
  name=$(basename "$dir")
  mapfile -t inputs < <(find "$dir" -maxdepth 1 -type f \
    \( -name '*.nt' -o -name '*.nq' -o -name '*.ttl' -o -name '*.trig' -o -name '*.rdf' \
       -o -name '*.nt.gz' -o -name '*.nq.gz' -o -name '*.ttl.gz' -o -name '*.trig.gz' \) | sort)
  ((${#inputs[@]})) || { echo "start: no data file in $dir" >&2; exit 1; }
  out=build/examples/$name.rete

  echo
  echo "== $name: rete build ${inputs[*]} -o $out"
  "$rete" build "${inputs[@]}" -o "$out"
  echo "== $name: rete publish $out --name $name --local"
  "$rete" publish "$out" --name "$name" --local
done

[[ ${1:-} == --no-serve ]] && exit 0

echo
echo "== wrangler dev on http://127.0.0.1:8787 (Ctrl-C stops it). Try:"
echo "   curl -H 'Accept: application/json' http://127.0.0.1:8787/"
echo "   curl 'http://127.0.0.1:8787/qudt/sparql?query=SELECT%20*%20WHERE%20%7B%20GRAPH%20%3Fg%20%7B%20%3Fs%20%3Fp%20%3Fo%20%7D%20%7D%20LIMIT%205'"
exec npx wrangler dev --local --ip 127.0.0.1 --port 8787 --show-interactive-dev-session=false
