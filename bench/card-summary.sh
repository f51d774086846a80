#!/usr/bin/env bash
# Card and summary benchmark (docs/BENCHMARK.md, section "Card and summary").
#
# For LUBM at three sizes (1, 8 and 68 universities: about 141k, 1.19M and 10M triples), builds
# the .rete twice with --threads 2 (with the summary's community levels, and with --no-pyramid)
# under /usr/bin/time -v, and reports wall time, peak RSS, file size and the SUMMARY and MEMBERS
# section sizes. Then the cost of serving the card and the summary, from the section table as
# the reader (core/src/read) fetches them: the first read is bytes [0, 16384); a section wholly
# inside it costs nothing more, otherwise one more read of exactly the section.
#
# Usage: bench/card-summary.sh [--sizes "1 8 68"] [--dir DIR]   (default dir build/bench-card)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$(pwd)
SIZES="1 8 68"
DIR=build/bench-card
while (($#)); do
  case $1 in
    --sizes) SIZES=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$DIR"
cargo build --release --quiet -p rete-publisher
RETE=$ROOT/target/release/rete
export SOURCE_DATE_EPOCH=1700000000

echo "| universities | triples | levels | build s | peak RSS MiB | file bytes | SUMMARY bytes | MEMBERS bytes | card: reads / bytes | summary: reads / bytes |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for u in $SIZES; do
  data=$DIR/lubm-$u.nt.gz
  [[ -f $data ]] || python3 bench/lubm.py --universities "$u" --seed 0 -o "$data" >/dev/null 2>&1
  for mode in pyramid flat; do
    out=$DIR/lubm-$u-$mode.rete
    flags=(--threads 2 -q)
    [[ $mode == flat ]] && flags+=(--no-pyramid)
    /usr/bin/time -v "$RETE" build "$data" -o "$out" "${flags[@]}" 2>"$DIR/lubm-$u-$mode.time"
    python3 - "$out" "$DIR/lubm-$u-$mode.time" "$RETE" "$u" "$mode" <<'PY'
import json, subprocess, sys, re
out, timing, rete, u, mode = sys.argv[1:]
info = json.loads(subprocess.check_output([rete, "inspect", "--json", out]))
text = open(timing).read()
wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", text).group(1)
seconds = sum(float(x) * 60 ** i for i, x in enumerate(reversed(wall.split(":"))))
rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1)) // 1024
sections = {s["kind"]: s for s in info["sections"]}
FIRST = 16384
def cost(kind):
    s = sections.get(kind)
    if s is None:
        return "-"
    if s["offset"] + s["length"] <= FIRST:
        return f"1 / {FIRST}"
    return f"2 / {FIRST + s['length']}"
levels = len(info["summary"]["levels"]) if info.get("summary") else 0
print(f"| {u} | {info['quads']:,} | {levels} | {seconds:.1f} | {rss} | {info['file_bytes']:,} | {sections.get('SUMMARY', {}).get('length', 0):,} | {sections.get('MEMBERS', {}).get('length', 0):,} | {cost('CARD')} | {cost('SUMMARY')} |")
PY
  done
done
