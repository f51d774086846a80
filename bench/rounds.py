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

It then runs the queries of the issue's round bounds (BOUNDS below: one
triple pattern, an ASK of one triple, a DESCRIBE of one IRI, on LUBM IRIs)
and prints their rounds cold (the open included) and after the open (what a
host that keeps header and INDEX pays).

Usage:
    python3 bench/rounds.py [--rete target/release/rete] FILE.rete [FILE.rete ...]

Prints one Markdown table per file, then summary tables, to stdout.
"""

from __future__ import annotations

import argparse
import pathlib
import re
import subprocess
import sys
import time

QUERIES = sorted((pathlib.Path(__file__).parent / "lubm-queries").glob("q*.rq"))

UB = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#"
STUDENT = "<http://www.Department0.University0.edu/GraduateStudent12>"
# The round bounds of docs/READ-PATH.md: name, bound cold (open included), query.
BOUNDS = [
    ("pattern s ? ?", 3, f"SELECT ?p ?o WHERE {{ {STUDENT} ?p ?o }}"),
    ("pattern ? p o", 3, f"SELECT ?s WHERE {{ ?s <{UB}memberOf> <http://www.Department3.University7.edu> }}"),
    ("pattern ? ? o", 3, "SELECT ?s ?p WHERE { ?s ?p <http://www.Department0.University0.edu/FullProfessor3> }"),
    ("ASK (true)", 3, f"ASK {{ {STUDENT} <{UB}memberOf> <http://www.Department0.University0.edu> }}"),
    ("ASK (false)", 3, f"ASK {{ {STUDENT} <{UB}memberOf> <http://www.Department1.University0.edu> }}"),
    ("DESCRIBE", 3, "DESCRIBE <http://www.Department0.University0.edu/FullProfessor3>"),
]


def cost(rete: str, file: str, query: pathlib.Path | str) -> dict:
    started = time.monotonic()
    source = ["--file", str(query)] if isinstance(query, pathlib.Path) else [query]
    out = subprocess.run([rete, "cost", file, *source], capture_output=True, text=True)
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

    print("\n### Round bounds: rounds cold (after the open) / requests / bytes\n")
    print("| query | bound cold | " + " | ".join(pathlib.Path(f).name for f, _, _ in summary) + " |")
    print("| --- | ---: | " + " | ".join("---:" for _ in summary) + " |")
    for name, bound, text in BOUNDS:
        cells = []
        for file, _, _ in summary:
            r = cost(args.rete, file, text)
            if "error" in r:
                cells.append(f"error: {r['error']}")
                continue
            cold = r["rounds"]
            mark = "" if cold <= bound else " **over**"
            cells.append(f"{cold} ({cold - r['open_rounds']}) / {r['requests']} / {r['bytes']:,}{mark}")
        print(f"| {name} | {bound} ({bound - 1}) | " + " | ".join(cells) + " |")
    print("\n" + "\n".join(f"- {name}: `{text}`" for name, _, text in BOUNDS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
