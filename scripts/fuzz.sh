#!/usr/bin/env bash
# rete's fuzzing (fuzz/README.md): cargo-fuzz (libFuzzer) on a pinned nightly toolchain.
#
# Usage: scripts/fuzz.sh setup                 install the nightly toolchain and cargo-fuzz (once)
#        scripts/fuzz.sh build                 build every target (instrumented, no sanitizer)
#        scripts/fuzz.sh seeds [--quick]       write the seed corpora (fuzz/seeds.py)
#        scripts/fuzz.sh run TARGET SECONDS [LIBFUZZER-ARG...]
#                                              one campaign at nice 19; its executions go to
#                                              fuzz/campaigns.tsv (committed: the totals of every
#                                              session), its log to build/fuzz/logs/ (not kept)
#        scripts/fuzz.sh until TARGET EXECUTIONS
#                                              runs of 30 min until the target's executions over all
#                                              campaigns reach EXECUTIONS (stops at the first finding)
#        scripts/fuzz.sh totals                executions and time per target over all campaigns
#        scripts/fuzz.sh smoke [SECONDS]       setup, build, quick seeds, then each target for
#                                              SECONDS (default 15); ends with `N passed, N failed`.
#                                              (npm test runs fuzz/tests/smoke.rs instead: stable
#                                              Rust, no nightly toolchain or instrumented build)
#
# Limits of every run (issue 18): 1 s of CPU time per input, 256 MiB of RSS, and no single
# allocation over 256 MiB. The targets enforce the CPU time and the allocation size themselves
# (fuzz/src/limits.rs says why); libFuzzer's wall-clock -timeout of 30 s catches a hang.
# A finding is written to build/fuzz/artifacts/TARGET/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

NIGHTLY=nightly-2026-10-30
CARGO_FUZZ_VERSION=0.13.2
RETE_TOOLS=${RETE_TOOLS:-$HOME/.cache/rete-tools}
CARGO_FUZZ_ROOT=$RETE_TOOLS/cargo-fuzz-$CARGO_FUZZ_VERSION
TARGETS=(read_file query_damaged build_input request)
OUT=build/fuzz
# One line per campaign, committed, so that `totals` counts every session's campaigns.
LEDGER=fuzz/campaigns.tsv

# Per-target libFuzzer options: the dictionary and the longest input.
options_of() {
  case $1 in
    read_file) echo "-dict=fuzz/dict/rete.dict -max_len=65536" ;;
    query_damaged) echo "-dict=fuzz/dict/rete.dict -max_len=4096" ;;
    build_input) echo "-dict=fuzz/dict/turtle.dict -max_len=16384" ;;
    request) echo "-dict=fuzz/dict/sparql.dict -max_len=8192" ;;
    *) echo "fuzz.sh: unknown target '$1' (${TARGETS[*]})" >&2; return 1 ;;
  esac
}
LIMITS=(-timeout=30 -rss_limit_mb=256 -malloc_limit_mb=256)

setup() {
  rustup toolchain list | grep -q "^$NIGHTLY" || rustup toolchain install "$NIGHTLY" --profile minimal >/dev/null
  if [[ ! -x $CARGO_FUZZ_ROOT/bin/cargo-fuzz ]]; then
    echo "fuzz.sh: building cargo-fuzz $CARGO_FUZZ_VERSION into $CARGO_FUZZ_ROOT (once; 2-4 min)" >&2
    cargo install --quiet --locked --root "$CARGO_FUZZ_ROOT" cargo-fuzz --version "$CARGO_FUZZ_VERSION"
  fi
}

build() {
  # No sanitizer: the workspace forbids unsafe code, and the C in zstd-sys is not instrumented
  # by cargo-fuzz anyway; AddressSanitizer would halve the speed and its quarantine alone would
  # break the 256 MiB RSS limit. Overflow checks and debug assertions stay on (cargo-fuzz default).
  PATH=$CARGO_FUZZ_ROOT/bin:$PATH cargo "+$NIGHTLY" fuzz build --sanitizer none
}

binary_of() { echo "target/x86_64-unknown-linux-gnu/release/$1"; }

# run TARGET SECONDS [ARGS...]: one campaign; prints its executions.
run() {
  local target=$1 seconds=$2
  shift 2
  local options
  options=$(options_of "$target")
  mkdir -p "$OUT/corpus/$target" "$OUT/artifacts/$target" "$OUT/logs" "$OUT/seeds/$target"
  local log
  # The pid too: two lanes of one target may start in the same second, and a shared log
  # mixes both campaigns' figures (2026-11-27, 11:44).
  log=$OUT/logs/$target-$(date -u +%Y%m%dT%H%M%SZ)-$$.log
  local started=$SECONDS status=0
  # shellcheck disable=SC2086
  nice -n 19 "$(binary_of "$target")" "$OUT/corpus/$target" "$OUT/seeds/$target" $options "${LIMITS[@]}" \
    -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$OUT/artifacts/$target/" "$@" >"$log" 2>&1 || status=$?
  local executions crashes
  executions=$(awk '/^stat::number_of_executed_units:/ { print $2 }' "$log")
  # A finding is a crash, leak, timeout or out-of-memory input; libFuzzer also writes a
  # "slow-unit" (a run over 10 s of wall time: at nice 19 on a loaded machine, mostly waiting
  # for a core), which the targets' own CPU-time limit judges instead.
  crashes=$(grep -cE "^artifact_prefix=.*Test unit written to .*/(crash|leak|timeout|oom)-" "$log" || true)
  [[ -f $LEDGER ]] || printf 'started_utc\ttarget\tseconds\texecutions\tfindings\tload_1m\tlog\n' >"$LEDGER"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u -d "@$(($(date +%s) - SECONDS + started))" +%FT%TZ)" "$target" "$((SECONDS - started))" \
    "${executions:-0}" "$crashes" "$(cut -d' ' -f1 /proc/loadavg)" "$log" >>"$LEDGER"
  echo "$target: ${executions:-0} executions in $((SECONDS - started)) s, $crashes findings (log $log)"
  if ((status != 0)); then
    grep -m1 -A3 -E "panicked at|ERROR: libFuzzer|==rete-fuzz==" "$log" >&2 || tail -20 "$log" >&2
    return 1
  fi
}

totals() {
  [[ -f $LEDGER ]] || { echo "no campaigns yet ($LEDGER)"; return; }
  awk -F'\t' 'NR > 1 { runs[$2] += $4; secs[$2] += $3; found[$2] += $5; n[$2]++ }
    END { for (t in runs) printf "%-16s %12d executions  %8d s  %3d campaigns  %d findings\n", t, runs[t], secs[t], n[t], found[t] }' "$LEDGER" | sort
}

executions_of() {
  [[ -f $LEDGER ]] || { echo 0; return; }
  awk -F'\t' -v t="$1" 'NR > 1 && $2 == t { n += $4 } END { print n + 0 }' "$LEDGER"
}

until_executions() {
  local target=$1 wanted=$2
  while (($(executions_of "$target") < wanted)); do
    run "$target" 1800 || return 1
  done
  echo "$target: $(executions_of "$target") executions in all"
}

smoke() {
  local seconds=${1:-15} passed=0 failed=0
  setup
  build
  [[ -x target/release/rete ]] || cargo build --release -p rete-publisher --quiet
  python3 fuzz/seeds.py --quick
  for target in "${TARGETS[@]}"; do
    if run "$target" "$seconds"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
  done
  echo "fuzz: $passed passed, $failed failed"
  ((failed == 0))
}

case ${1:-} in
  setup) setup ;;
  build) setup && build ;;
  seeds) shift; python3 fuzz/seeds.py "$@" ;;
  run) shift; (($# >= 2)) || { echo "usage: scripts/fuzz.sh run TARGET SECONDS [ARGS...]" >&2; exit 2; }; run "$@" ;;
  until) shift; (($# == 2)) || { echo "usage: scripts/fuzz.sh until TARGET EXECUTIONS" >&2; exit 2; }; until_executions "$@" ;;
  totals) totals ;;
  smoke) shift; smoke "$@" ;;
  *) sed -n '2,20p' "$0" >&2; exit 2 ;;
esac
