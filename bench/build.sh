#!/usr/bin/env bash
# Reproducible build benchmark for `rete build` (docs/BENCHMARK.md, section "Build").
#
#   1. builds the CLI: `cargo build --release -p rete-publisher`, timed, into its own target
#      directory (BENCH_DIR/target) so it neither waits for nor disturbs other builds; the first
#      run (or --clean) is a from-scratch build including every dependency; with --baseline,
#      builds the baseline's CLI too;
#   2. generates LUBM data with bench/lubm.py (seed 0) and compresses it with gzip -9, timed;
#   3. runs `rete build` RUNS times for every --threads × --mem combination under
#      `/usr/bin/time -v` and reports the medians: wall time, triples/s (parsed statements /
#      wall time), peak RSS, output size against the N-Triples and against gzip -9; with
#      --baseline, each run of the CLI is followed by the same run of the baseline's, so that
#      both see the same load, and the report gives the ratios;
#   4. checks that every output of a CLI is byte-identical and that `rete verify` accepts one;
#   5. does the same once for each dataset under examples/ (size against gzip -9);
#   6. prints Markdown tables and the targets with pass/fail (for the CLI, not the baseline).
#
# Usage: bench/build.sh [UNIVERSITIES] [options]
#   UNIVERSITIES          LUBM size (default 8: about 1.19M triples)
#   --runs N              runs per configuration (default 3; the median is reported)
#   --threads "2 1"       thread counts to measure (default "2 1")
#   --mem "1GiB 256MiB 64MiB"  memory budgets to measure (default "1GiB 256MiB 64MiB")
#   --clean               remove BENCH_DIR/target first (a from-scratch cargo build)
#   --rev REV             build the CLI from commit REV (a `git archive` copy in BENCH_DIR/src-SHA)
#                         instead of the working tree, e.g. --rev HEAD while others edit it
#   --baseline REV        also build the CLI of commit REV and run it after each run of the
#                         CLI under test (same input, options and output name), for ratios
#   --nice N              run each `rete build` under `nice -n N` in its own session whose autogroup
#                         is reniced too (e.g. -10 as root, to measure on a machine that others keep
#                         busy; cargo build and gzip are not reniced)
#   --no-examples         skip the examples/ datasets
#   --dir DIR             working directory (default build/bench; env BENCH_DIR)
#
# Everything it writes stays in BENCH_DIR: the data, the .rete files, raw per-run logs
# (runs.tsv, *.time, *.err) and the report (report.md, also printed on stdout).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$(pwd)

UNIVERSITIES=8
RUNS=3
THREADS="2 1"
MEMS="1GiB 256MiB 64MiB"
CLEAN=0
REV=
BASELINE=
NICE=
EXAMPLES=1
BENCH_DIR=${BENCH_DIR:-build/bench}
RSS_SLACK_MIB=64 # "peak RSS within --mem + a small constant": the constant we allow

while (($#)); do
  case $1 in
    --runs) RUNS=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --mem) MEMS=$2; shift 2 ;;
    --clean) CLEAN=1; shift ;;
    --rev) REV=$2; shift 2 ;;
    --baseline) BASELINE=$2; shift 2 ;;
    --nice) NICE=$2; shift 2 ;;
    --no-examples) EXAMPLES=0; shift ;;
    --dir) BENCH_DIR=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    [0-9]*) UNIVERSITIES=$1; shift ;;
    *) echo "build.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

mkdir -p "$BENCH_DIR"
BENCH_DIR=$(cd "$BENCH_DIR" && pwd)
log() { echo "[bench] $*" >&2; }

# /usr/bin/time (GNU time, for -v's peak RSS); the shell keyword cannot report memory.
if ! /usr/bin/time -v true >/dev/null 2>&1; then
  log "installing GNU time"
  (apt-get install -y time >/dev/null 2>&1 || { apt-get update >/dev/null 2>&1 && apt-get install -y time >/dev/null 2>&1; }) || {
    echo "build.sh: /usr/bin/time is missing and apt-get install time failed" >&2
    exit 1
  }
fi

now() { date +%s.%N; }
elapsed() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$1" "$2"; }

# ---------------------------------------------------------------------------------------------
# 1. The CLI.
export CARGO_TARGET_DIR=$BENCH_DIR/target
if ((CLEAN)); then rm -rf "$CARGO_TARGET_DIR"; fi
if [[ -x $CARGO_TARGET_DIR/release/rete ]]; then CARGO_KIND=incremental; else CARGO_KIND="from scratch"; fi
# source_of REV: a `git archive` copy of commit REV in BENCH_DIR/src-SHA (made once), on stdout.
source_of() {
  local sha source
  sha=$(git rev-parse --verify "$1^{commit}")
  source=$BENCH_DIR/src-$sha
  if [[ ! -d $source ]]; then
    mkdir -p "$source.tmp"
    git archive "$sha" | tar -x -C "$source.tmp"
    # A commit may list a workspace member that was never committed: drop such members so
    # that `-p rete-publisher` still builds (the copy is ours; the repository is untouched).
    python3 - "$source.tmp" <<'PY'
import os, re, sys
root = sys.argv[1]
path = os.path.join(root, "Cargo.toml")
text = open(path).read()
def keep(match):
    members = re.findall(r'"([^"]+)"', match.group(1))
    present = [m for m in members if os.path.exists(os.path.join(root, m, "Cargo.toml"))]
    for m in set(members) - set(present):
        print(f"[bench] {m} is listed as a workspace member but missing at this commit; dropped from the copy", file=sys.stderr)
    return "members = [" + ", ".join(f'"{m}"' for m in present) + "]"
open(path, "w").write(re.sub(r"^members = \[([^\]]*)\]", keep, text, count=1, flags=re.M))
PY
    mv "$source.tmp" "$source"
  fi
  echo "$source"
}

# build_cli SOURCE NAME: cargo build in SOURCE, the binary copied to BENCH_DIR/NAME (both
# CLIs share the target directory, where the second build would replace the first's binary).
build_cli() {
  (cd "$1" && /usr/bin/time -v -o "$BENCH_DIR/cargo-$2.time" cargo build --release -p rete-publisher) >"$BENCH_DIR/cargo-$2.log" 2>&1 || { tail -50 "$BENCH_DIR/cargo-$2.log" >&2; exit 1; }
  cp "$CARGO_TARGET_DIR/release/rete" "$BENCH_DIR/$2"
}

SOURCE=$ROOT
if [[ -n $REV ]]; then
  SOURCE=$(source_of "$REV")
  SOURCE_DESC="commit $(git rev-parse --verify "$REV^{commit}")"
else
  SOURCE_DESC="working tree at $(git rev-parse HEAD)$(git diff --quiet HEAD -- core publisher Cargo.toml Cargo.lock || echo ' with uncommitted changes')"
fi
log "cargo build --release -p rete-publisher ($CARGO_KIND, $SOURCE_DESC, target dir $CARGO_TARGET_DIR)"
t0=$(now)
build_cli "$SOURCE" rete
CARGO_SECONDS=$(elapsed "$t0" "$(now)")
CARGO_CPU=$(awk -F': ' '/User time|System time/ { s += $2 } END { printf "%.0f", s }' "$BENCH_DIR/cargo-rete.time")
CARGO_LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
RETE=$BENCH_DIR/rete
log "cargo build: ${CARGO_SECONDS} s wall, ${CARGO_CPU} s CPU"
CLIS=(rete)
BASELINE_DESC=
if [[ -n $BASELINE ]]; then
  BASELINE_DESC="commit $(git rev-parse --verify "$BASELINE^{commit}")"
  log "cargo build --release -p rete-publisher (baseline, $BASELINE_DESC)"
  build_cli "$(source_of "$BASELINE")" rete-baseline
  CLIS=(rete rete-baseline)
fi

# ---------------------------------------------------------------------------------------------
# 2. The data.
NT=$BENCH_DIR/lubm-$UNIVERSITIES.nt
log "generating $NT"
t0=$(now)
python3 bench/lubm.py --universities "$UNIVERSITIES" --seed 0 -o "$NT" 2>"$BENCH_DIR/lubm.log"
GEN_SECONDS=$(elapsed "$t0" "$(now)")
TRIPLES=$(wc -l <"$NT")
log "gzip -9"
t0=$(now)
gzip -9 -n -c "$NT" >"$NT.gz"
GZIP_SECONDS=$(elapsed "$t0" "$(now)")

# ---------------------------------------------------------------------------------------------
# 3. The builds. One line per run in runs.tsv.
RUNS_TSV=$BENCH_DIR/runs.tsv
printf 'cli\tthreads\tmem\trun\twall_s\tcli_s\tcpu_s\tmax_rss_kib\tparsed\tquads\tfile_bytes\tsha256\tloadavg\n' >"$RUNS_TSV"

wall_seconds() { # "Elapsed (wall clock) time (h:mm:ss or m:ss): 1:02.34" → seconds
  awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }' "$1"
}

run_build() { # cli threads mem run input output tag → one TSV line on stdout
  local cli=$1 threads=$2 mem=$3 run=$4 input=$5 output=$6 tag=$7
  local base=$BENCH_DIR/$tag-$cli-t$threads-$mem-$run load
  load=$(cut -d' ' -f1 /proc/loadavg)
  rm -f "$output"
  local prefix=()
  # With autogroup scheduling (Linux's default for desktops and many VMs) nice only ranks
  # processes within one session, so the build gets its own session whose group is reniced.
  [[ -z $NICE ]] || prefix=(setsid -w bash -c 'echo "$0" >/proc/self/autogroup 2>/dev/null || true; exec nice -n "$0" "$@"' "$NICE")
  if ! "${prefix[@]}" /usr/bin/time -v -o "$base.time" "$BENCH_DIR/$cli" build "$input" -o "$output" --mem "$mem" --threads "$threads" 2>"$base.err"; then
    echo "build.sh: $cli build failed (threads $threads, mem $mem, run $run):" >&2
    cat "$base.err" >&2
    exit 1
  fi
  local summary
  summary=$(grep '^built ' "$base.err" | tail -1)
  # built OUT: N quads (M parsed), T terms, G graphs, B bytes (… the input) in S s (Q quads/s)
  local quads parsed bytes cli_s
  quads=$(sed -E 's/.*: ([0-9]+) quads \(.*/\1/' <<<"$summary")
  parsed=$(sed -E 's/.*\(([0-9]+) parsed\).*/\1/' <<<"$summary")
  bytes=$(sed -E 's/.* ([0-9]+) bytes.*/\1/' <<<"$summary")
  cli_s=$(sed -E 's/.* in ([0-9.]+) s \(.*/\1/' <<<"$summary")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$cli" "$threads" "$mem" "$run" "$(wall_seconds "$base.time")" "$cli_s" \
    "$(awk -F': ' '/User time|System time/ { s += $2 } END { printf "%.2f", s }' "$base.time")" \
    "$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$base.time")" "$parsed" "$quads" "$bytes" \
    "$(sha256sum "$output" | cut -d' ' -f1)" "$load"
}

OUT_RETE=$BENCH_DIR/lubm-$UNIVERSITIES.rete
for threads in $THREADS; do
  for mem in $MEMS; do
    for ((run = 1; run <= RUNS; run++)); do
      for cli in "${CLIS[@]}"; do
        log "$cli build: $threads threads, --mem $mem, run $run/$RUNS"
        run_build "$cli" "$threads" "$mem" "$run" "$NT" "${OUT_RETE%.rete}-$cli.rete" lubm >>"$RUNS_TSV"
      done
    done
  done
done
log "rete verify"
VERIFY=ok
"$RETE" verify "${OUT_RETE%.rete}-rete.rete" >"$BENCH_DIR/verify.log" 2>&1 || VERIFY="FAILED (see $BENCH_DIR/verify.log)"

# ---------------------------------------------------------------------------------------------
# 5. The examples: one build each (2 threads, 1GiB), size against gzip -9.
EXAMPLES_TSV=$BENCH_DIR/examples.tsv
printf 'name\tfile\tbytes\tgzip9_bytes\tparsed\tquads\trete_bytes\twall_s\tmax_rss_kib\n' >"$EXAMPLES_TSV"
if ((EXAMPLES)); then
  for dir in examples/*/; do
    name=$(basename "$dir")
    data=$(find "$dir" -maxdepth 1 -type f \( -name '*.nt' -o -name '*.nq' -o -name '*.ttl' -o -name '*.trig' -o -name '*.rdf' -o -name '*.owl' -o -name '*.gz' \) | sort | head -1)
    [[ -n $data ]] || continue
    log "example $name"
    line=$(run_build rete 2 1GiB 1 "$data" "$BENCH_DIR/$name.rete" "example-$name")
    IFS=$'\t' read -r _ _ _ _ wall _ _ rss parsed quads rbytes _ _ <<<"$line"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$(basename "$data")" "$(stat -c %s "$data")" "$(gzip -9 -n -c "$data" | wc -c)" \
      "$parsed" "$quads" "$rbytes" "$wall" "$rss" >>"$EXAMPLES_TSV"
  done
fi

# ---------------------------------------------------------------------------------------------
# 6. The report.
REPORT=$BENCH_DIR/report.md
python3 - "$RUNS_TSV" "$EXAMPLES_TSV" "$RSS_SLACK_MIB" >"$REPORT" <<EOF
import csv, statistics, sys
runs = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
examples = list(csv.DictReader(open(sys.argv[2]), delimiter="\t"))
slack = int(sys.argv[3])
nt_bytes, gz_bytes, triples = $(stat -c %s "$NT"), $(stat -c %s "$NT.gz"), $TRIPLES
MIB = 1 << 20

def mem_bytes(text):
    units = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": MIB, "mb": MIB, "mib": MIB, "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30}
    number = text.rstrip("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    return float(number) * units[text[len(number):].lower()]

print("Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo) RAM; $(date -u '+%Y-%m-%d %H:%M UTC'); $(rustc --version).")
print(f"LUBM({$UNIVERSITIES}) seed 0: {triples:,} triples, N-Triples {nt_bytes:,} bytes, gzip -9 {gz_bytes:,} bytes "
      f"(gzip -9 took $GZIP_SECONDS s; generating took $GEN_SECONDS s).")
baseline = "$BASELINE_DESC"
print(f"rete: $SOURCE_DESC{' (rete build run under nice -n $NICE)' if '$NICE' else ''}. cargo build --release -p rete-publisher ($CARGO_KIND): $CARGO_SECONDS s wall, $CARGO_CPU s CPU (load average after: $CARGO_LOAD). rete verify: $VERIFY.")
if baseline:
    print(f"Baseline: {baseline}, run right after each run of the CLI under test, with the same options.")
configs = []
for row in runs:
    key = (row["threads"], row["mem"])
    if key not in configs:
        configs.append(key)

def table(cli):
    print()
    print(f"{'CLI under test' if cli == 'rete' else 'Baseline'}:")
    print()
    print("| threads | --mem | wall s (median of {}) | triples/s | CPU s (user+sys) | peak RSS MiB | RSS − --mem MiB | .rete bytes | .rete / N-Triples | .rete / gzip -9 | load avg at start |".format($RUNS))
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    results = {}
    for threads, mem in configs:
        rows = [r for r in runs if (r["cli"], r["threads"], r["mem"]) == (cli, threads, mem)]
        wall = statistics.median(float(r["wall_s"]) for r in rows)
        rss = statistics.median(int(r["max_rss_kib"]) for r in rows) / 1024
        cpu = statistics.median(float(r["cpu_s"]) for r in rows)
        parsed = int(rows[0]["parsed"])
        size = int(rows[0]["file_bytes"])
        over = rss - mem_bytes(mem) / MIB
        results[(threads, mem)] = (threads, mem, parsed / wall, rss, over, size, wall, cpu)
        loads = " ".join(r["loadavg"] for r in rows)
        print(f"| {threads} | {mem} | {wall:.2f} | {parsed / wall:,.0f} | {cpu:.2f} | {rss:,.0f} | {over:+,.0f} | {size:,} | {size / nt_bytes:.3f} | {size / gz_bytes:.2f} | {loads} |")
    print()
    print("Per run (wall s / CLI-reported s / CPU s / peak RSS MiB):")
    print()
    for threads, mem in configs:
        rows = [r for r in runs if (r["cli"], r["threads"], r["mem"]) == (cli, threads, mem)]
        cells = ", ".join(f"{float(r['wall_s']):.2f} / {float(r['cli_s']):.2f} / {float(r['cpu_s']):.2f} / {int(r['max_rss_kib']) / 1024:.0f}" for r in rows)
        print(f"- {threads} threads, --mem {mem}: {cells}")
    mine = [r for r in runs if r["cli"] == cli]
    hashes = {r["sha256"] for r in mine}
    quads = {r["quads"] for r in mine}
    print()
    print(f"Distinct quads: {', '.join(sorted(quads))} (parsed {mine[0]['parsed']}). Output identical across all {len(mine)} runs: {'yes' if len(hashes) == 1 else 'NO (' + str(len(hashes)) + ' different files)'}.")
    return results

measured = table("rete")
if baseline:
    before = table("rete-baseline")
    print()
    print("CLI under test against the baseline (medians; a speed-up above 1 means faster):")
    print()
    print("| threads | --mem | wall s before → after | speed-up | CPU s before → after | peak RSS MiB before → after |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    for key in configs:
        b, a = before[key], measured[key]
        print(f"| {key[0]} | {key[1]} | {b[6]:.2f} → {a[6]:.2f} | {b[6] / a[6]:.2f}× | {b[7]:.2f} → {a[7]:.2f} | {b[3]:,.0f} → {a[3]:,.0f} |")
results = list(measured.values())
print()
if examples:
    print("| example | input | input bytes | gzip -9 bytes | statements | .rete bytes | .rete / input | .rete / gzip -9 | wall s | peak RSS MiB |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for e in examples:
        b, g, r = int(e["bytes"]), int(e["gzip9_bytes"]), int(e["rete_bytes"])
        print(f"| {e['name']} | {e['file']} | {b:,} | {g:,} | {int(e['parsed']):,} | {r:,} | {r / b:.3f} | {r / g:.2f} | {float(e['wall_s']):.2f} | {int(e['max_rss_kib']) / 1024:.0f} |")
    print()
print("Targets:")
print()
two = [t for t in results if t[0] == "2"]
if two:
    best = max(t[2] for t in two)
    worst = min(t[2] for t in two)
    print(f"- ≥300,000 triples/s on 2 cores: {'PASS' if worst >= 300000 else 'FAIL'} ({worst:,.0f}–{best:,.0f} triples/s with 2 threads)")
worst_over = max(t[4] for t in results)
print(f"- peak RSS within --mem + {slack} MiB: {'PASS' if worst_over <= slack else 'FAIL'} (worst: {worst_over:+,.0f} MiB against --mem)")
ratios = [results[0][5] / gz_bytes] + [int(e["rete_bytes"]) / int(e["gzip9_bytes"]) for e in examples]
print(f"- file ≤ 2× gzip -9 (all six orders): {'PASS' if max(ratios) <= 2 else 'FAIL'} (LUBM {results[0][5] / gz_bytes:.2f}×"
      + "".join(f", {e['name']} {int(e['rete_bytes']) / int(e['gzip9_bytes']):.2f}×" for e in examples) + ")")
EOF
cat "$REPORT"
