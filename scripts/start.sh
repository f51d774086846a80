#!/usr/bin/env bash
# `npm start`: set up the machine, build the `rete` CLI, turn every dataset under examples/ into
# build/examples/<name>.rete, show what each file holds and run one sample query on each.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup.sh

echo "== cargo build --release -p rete-publisher"
cargo build --release -p rete-publisher
rete=target/release/rete

mkdir -p build/examples
has_query=true
"$rete" query --help >/dev/null 2>&1 || has_query=false

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
  echo "== $name: rete inspect $out"
  "$rete" inspect "$out"

  query=$(find "$dir/queries" -maxdepth 1 -name '*.rq' 2>/dev/null | sort | head -n 1)
  [[ -n $query ]] || continue
  echo "== $name: rete query $out --file $query"
  if $has_query; then
    "$rete" query "$out" --file "$query"
  else
    echo "(skipped: this build of rete has no 'query' subcommand yet)"
  fi
done

echo
printf "Built:"; printf " %s" build/examples/*.rete; echo

# Serving at the edge: once worker/ holds the Worker, this is where it starts locally, with the
# files above in a local R2 bucket: `wrangler dev --local --ip 127.0.0.1 --port 8787
# --show-interactive-dev-session=false`, with WRANGLER_SEND_METRICS=false
# WRANGLER_SEND_ERROR_REPORTS=false CLOUDFLARE_CF_FETCH_ENABLED=false set so it stays offline.
