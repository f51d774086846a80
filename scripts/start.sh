#!/usr/bin/env bash
# `npm start`: set up the machine, build the `rete` CLI, the Worker and the site, publish every
# dataset under examples/ into wrangler's local R2 (scripts/publish-examples.sh), then serve them
# with `wrangler dev` on http://127.0.0.1:8787 until Ctrl-C. README "Worker" has curl examples.
#
# Usage: scripts/start.sh [--no-serve]     (--no-serve: stop after publishing)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# wrangler stays off the network (TOOLCHAIN.md): no metrics, error reports or update checks.
export WRANGLER_SEND_METRICS=false WRANGLER_SEND_ERROR_REPORTS=false CLOUDFLARE_CF_FETCH_ENABLED=false WRANGLER_HIDE_BANNER=true

bash scripts/setup.sh
bash scripts/publish-examples.sh

[[ ${1:-} == --no-serve ]] && exit 0

echo
echo "== wrangler dev on http://127.0.0.1:8787 (Ctrl-C stops it). Open it in a browser, or try:"
echo "   curl -H 'Accept: application/json' http://127.0.0.1:8787/"
echo "   curl 'http://127.0.0.1:8787/qudt/sparql?query=SELECT%20*%20WHERE%20%7B%20GRAPH%20%3Fg%20%7B%20%3Fs%20%3Fp%20%3Fo%20%7D%20%7D%20LIMIT%205'"
exec npx wrangler dev --local --ip 127.0.0.1 --port 8787 --show-interactive-dev-session=false
