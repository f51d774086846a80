#!/usr/bin/env bash
# Card and summary benchmark (docs/BENCHMARK.md, section "Card and summary").
#
# For LUBM at three sizes (1, 8 and 68 universities: about 141k, 1.19M and 11M triples), builds
# the .rete with --threads 2 with the summary's community levels and with --no-pyramid, RUNS
# times each, under /usr/bin/time. The two configurations are interleaved at each size, and
# their order alternates from one repetition to the next (with, without, without, with, ...),
# so that load drift on a shared machine hits both alike. Reports, for each, the median wall
# time, CPU time (user + system: less moved by other load) and peak RSS over the runs, with
# their range, and the with/without ratios of those medians (for wall time, also the range of
# the ratios within one repetition). The load average is printed before and after.
#
# Every run of a configuration must write the same bytes (checked), so file and section sizes,
# and the cost of serving the card and the summary, are measured once. That cost follows the
# section table as the reader (core/src/read) fetches it: the first read is bytes [0, 16384);
# a section wholly inside it costs nothing more, otherwise one more read of exactly the section.
#
# Usage: bench/card-summary.sh [--sizes "1 8 68"] [--runs 3] [--dir DIR]
#        (default dir build/bench-card; generated LUBM files there are reused)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$(pwd)
SIZES="1 8 68"
RUNS=3
DIR=build/bench-card
while (($#)); do
  case $1 in
    --sizes) SIZES=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || { echo "--runs needs a positive integer, got '$RUNS'" >&2; exit 2; }
mkdir -p "$DIR"
cargo build --release --quiet -p rete-publisher
RETE=$ROOT/target/release/rete
export SOURCE_DATE_EPOCH=1700000000

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
RESULTS=$DIR/runs.tsv # one line per build: universities, mode, wall seconds, peak RSS KiB, CPU seconds
: >"$RESULTS"
for u in $SIZES; do
  data=$DIR/lubm-$u.nt.gz
  [[ -f $data ]] || python3 bench/lubm.py --universities "$u" --seed 0 -o "$data" >/dev/null 2>&1
  for ((run = 1; run <= RUNS; run++)); do
    order="pyramid flat"
    ((run % 2 == 0)) && order="flat pyramid"
    for mode in $order; do
      out=$DIR/lubm-$u-$mode.rete
      flags=(--threads 2 -q)
      [[ $mode == flat ]] && flags+=(--no-pyramid)
      /usr/bin/time -f "%e %M %U %S" -o "$DIR/time" "$RETE" build "$data" -o "$out" "${flags[@]}"
      digest=$(sha256sum "$out" | cut -d' ' -f1)
      if ((run == 1)); then
        echo "$digest" >"$out.sha256"
      elif [[ $digest != $(cat "$out.sha256") ]]; then
        echo "run $run of LUBM($u) $mode wrote different bytes than run 1" >&2
        exit 1
      fi
      read -r seconds rss user sys <"$DIR/time"
      cpu=$(awk "BEGIN { printf \"%.2f\", $user + $sys }")
      printf '%s\t%s\t%s\t%s\t%s\n' "$u" "$mode" "$seconds" "$rss" "$cpu" >>"$RESULTS"
    done
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

python3 - "$RESULTS" "$DIR" "$RETE" "$RUNS" <<'PY'
import json, statistics, subprocess, sys
results, directory, rete, runs = sys.argv[1:]
runs_by = {}
for line in open(results):
    u, mode, seconds, rss, cpu = line.split("\t")
    runs_by.setdefault((u, mode), []).append((float(seconds), int(rss) / 1024, float(cpu)))
FIRST = 16384

def spread(values, fmt):
    med = statistics.median(values)
    return med, f"{med:{fmt}} ({min(values):{fmt}}–{max(values):{fmt}})"

print(f"| universities | triples | levels | build s, median of {runs} (range) | CPU s, median (range) | peak RSS MiB, median (range) "
      "| file bytes | SUMMARY bytes | MEMBERS bytes | card: reads / bytes | summary: reads / bytes |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
ratios = []
for u in dict.fromkeys(u for u, _ in runs_by):
    medians = {}
    for mode in ("pyramid", "flat"):
        info = json.loads(subprocess.check_output([rete, "inspect", "--json", f"{directory}/lubm-{u}-{mode}.rete"]))
        sections = {s["kind"]: s for s in info["sections"]}
        def cost(kind):
            s = sections.get(kind)
            if s is None:
                return "-"
            if s["offset"] + s["length"] <= FIRST:
                return f"1 / {FIRST:,}"
            return f"2 / {FIRST + s['length']:,}"
        levels = len(info["summary"]["levels"]) if info.get("summary") else 0
        time_med, time_text = spread([s for s, _, _ in runs_by[(u, mode)]], ".2f")
        rss_med, rss_text = spread([r for _, r, _ in runs_by[(u, mode)]], ".0f")
        cpu_med, cpu_text = spread([c for _, _, c in runs_by[(u, mode)]], ".2f")
        medians[mode] = (time_med, rss_med, cpu_med, info["quads"])
        print(f"| {u}{'' if mode == 'pyramid' else ', `--no-pyramid`'} | {info['quads']:,} | {levels} | {time_text} | {cpu_text} | {rss_text} "
              f"| {info['file_bytes']:,} | {sections.get('SUMMARY', {}).get('length', 0):,} "
              f"| {sections.get('MEMBERS', {}).get('length', 0):,} | {cost('CARD')} | {cost('SUMMARY')} |")
    (tw, rw, cw, quads), (tf, rf, cf, _) = medians["pyramid"], medians["flat"]
    # The two builds of one repetition ran next to each other: their ratio shows how far load
    # moved the ratio of the medians.
    paired = [w / f for (w, _, _), (f, _, _) in zip(runs_by[(u, "pyramid")], runs_by[(u, "flat")])]
    ratios.append(f"| {u} | {quads:,} | {tw / tf:.2f}× ({tw:.2f} s / {tf:.2f} s) | {min(paired):.2f}–{max(paired):.2f}× "
                  f"| {cw / cf:.2f}× ({cw:.2f} s / {cf:.2f} s) | {rw / rf:.2f}× ({rw:.0f} / {rf:.0f} MiB) |")
print()
print("| universities | triples | build time, with / without levels (medians) | same, per repetition (range) "
      "| CPU time, with / without (medians) | peak RSS, with / without (medians) |")
print("|---|---|---|---|---|---|")
print("\n".join(ratios))
PY
