#!/usr/bin/env python3
"""What each LUBM query reads from a .rete file where it sits: rounds,
requests, bytes and their share of the file, per file (docs/BENCHMARK.md,
"Range reads").

For every file given and every query of bench/lubm-queries/, it runs

    rete cost FILE --file QUERY

which opens the file and evaluates the query exactly as a remote host does
(docs/READ-PATH.md): in rounds, each one batch of range requests for every
block the previous run found missing; the open (first 16 KiB) is a round.
A local file gives the same rounds, requests and bytes as the same file
over HTTP (publisher/tests/http.rs checks it), without network noise.

Usage:
    python3 bench/rounds.py [--rete target/release/rete] FILE.rete [FILE.rete ...]

Prints one Markdown table per file, then a summary table, to stdout.
"""

from __future__ import annotations

import argparse
import pathlib
import re
import subprocess
import sys
import time

QUERIES = sorted((pathlib.Path(__file__).parent / "lubm-queries").glob("q*.rq"))


def cost(rete: str, file: str, query: pathlib.Path) -> dict:
    started = time.monotonic()
    out = subprocess.run([rete, "cost", file, "--file", str(query)], capture_output=True, text=True)
    seconds = time.monotonic() - started
    if out.returncode != 0:
        return {"error": out.stderr.strip().removeprefix("rete: "), "seconds": seconds}
    text = out.stdout
    number = lambda name: int(re.search(rf"^{name}\s+(\d+)", text, re.M).group(1))
    return {
        "rounds": number("rounds"),
        "open_rounds": int(re.search(r"\((\d+) to open", text).group(1)),
        "requests": number("requests"),
        "bytes": number("bytes"),
        "file_bytes": int(re.search(r"of the file's (\d+)\)", text).group(1)),
        "rows": number("rows"),
        "memory": number("memory"),
        "seconds": seconds,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rete", default="target/release/rete", help="the rete binary (default: target/release/rete)")
    parser.add_argument("files", nargs="+", help=".rete files, smallest first")
    args = parser.parse_args()

    summary = []
    for file in args.files:
        results = [(query.stem, cost(args.rete, file, query)) for query in QUERIES]
        size = next((r["file_bytes"] for _, r in results if "file_bytes" in r), pathlib.Path(file).stat().st_size)
        print(f"\n### `{file}` ({size:,} bytes)\n")
        print("| query | rows | rounds (open) | requests | bytes | % of file | decoded MB | seconds |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for name, r in results:
            if "error" in r:
                print(f"| {name} | error: {r['error']} | | | | | | {r['seconds']:.1f} |")
                continue
            share = 100 * r["bytes"] / r["file_bytes"]
            print(f"| {name} | {r['rows']:,} | {r['rounds']} ({r['open_rounds']}) | {r['requests']} | {r['bytes']:,} | {share:.3f} | {r['memory'] / 1e6:.1f} | {r['seconds']:.1f} |")
        summary.append((file, size, results))

    print("\n### Summary: rounds / bytes read as % of the file\n")
    print("| query | " + " | ".join(f"{pathlib.Path(f).name} ({s / 1e6:.0f} MB)" for f, s, _ in summary) + " |")
    print("| --- | " + " | ".join("---:" for _ in summary) + " |")
    for i, query in enumerate(QUERIES):
        cells = []
        for _, _, results in summary:
            r = results[i][1]
            cells.append("error" if "error" in r else f"{r['rounds']} / {100 * r['bytes'] / r['file_bytes']:.3f}%")
        print(f"| {query.stem} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
