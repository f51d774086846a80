#!/usr/bin/env bash
# Installs the SPARQL clients the clients suite drives, each pinned, from the package registries
# (PyPI, npm with a lockfile, Maven Central), into a cache outside the clone keyed by the pinned
# versions, so a second run (or CI with a warm cache) installs nothing. Prints one line per client:
#   <client> ok <path>     or     <client> FAILED <log file>
# and never stops at the first failure: the suite turns a failed install into a failed test.
#
# Usage: tests/clients/install.sh   (cache root: $RETE_CLIENTS_CACHE, default ~/.cache/rete-clients)
set -uo pipefail

SPARQLWRAPPER_VERSION=2.0.0
RDFLIB_VERSION=7.6.0
JENA_VERSION=5.6.0

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${RETE_CLIENTS_CACHE:-$HOME/.cache/rete-clients}
mkdir -p "$cache"

# install NAME DIR COMMAND...: runs COMMAND once into DIR (a marker file records success).
install() {
  local name=$1 dir=$2
  shift 2
  local log=$cache/$name.log
  if [[ -f $dir/.installed ]]; then
    echo "$name ok $dir"
    return
  fi
  rm -rf "$dir"
  mkdir -p "$dir"
  if "$@" >"$log" 2>&1; then
    touch "$dir/.installed"
    echo "$name ok $dir"
  else
    echo "$name FAILED $log"
  fi
}

python_clients() {
  python3 -m pip install --quiet --disable-pip-version-check --no-warn-script-location --target "$1" \
    "SPARQLWrapper==$SPARQLWRAPPER_VERSION" "rdflib==$RDFLIB_VERSION"
}

# The npm clients install from tests/clients/npm's package-lock.json (npm ci), so their transitive
# dependencies are pinned too. Its override: Comunica 4.5.0's SPARQL source reads results through
# fetch-sparql-endpoint 6.2.0, whose sparqljson-parse ^3 builds language-tagged literals with
# rdf-data-factory 2's literal(value, {language}) but is handed Comunica's rdf-data-factory 1,
# which makes them plain literals (a Comunica bug, not the endpoint's); that one copy stays at
# sparqljson-parse 2.2.0. Comunica 5.x needs Node 22 (its undici uses zstd).
npm_clients() {
  cp "$here/npm/package.json" "$here/npm/package-lock.json" "$1/"
  npm ci --prefix "$1" --no-audit --no-fund
}

# Jena ARQ's jars with all their dependencies, copied by Maven from a one-dependency project.
jena() {
  cat >"$1/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>rete</groupId><artifactId>jena-client</artifactId><version>1</version>
  <dependencies>
    <dependency><groupId>org.apache.jena</groupId><artifactId>jena-arq</artifactId><version>$JENA_VERSION</version></dependency>
  </dependencies>
</project>
POM
  mvn -B -q -f "$1/pom.xml" -Dmaven.repo.local="$cache/m2" dependency:copy-dependencies -DoutputDirectory="$1/lib"
}

install python "$cache/python-sparqlwrapper$SPARQLWRAPPER_VERSION-rdflib$RDFLIB_VERSION" python_clients "$cache/python-sparqlwrapper$SPARQLWRAPPER_VERSION-rdflib$RDFLIB_VERSION" &
npm_dir=$cache/npm-$(sha256sum "$here/npm/package-lock.json" | cut -c1-16)
install npm "$npm_dir" npm_clients "$npm_dir" &
install jena "$cache/jena-$JENA_VERSION" jena "$cache/jena-$JENA_VERSION" &
wait
