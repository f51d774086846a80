#!/usr/bin/env python3
"""Label search benchmark (docs/BENCHMARK.md, section "Label search").

1. Index cost. Each input is built with the label search index and with --no-search, RUNS times
   each, interleaved in alternating order (with, without, without, with, ...) so load drift hits
   both alike; reports the median wall and CPU (user + system of the build) times, their ratio,
   the file sizes and the index's share (SEARCH + SEARCH BLOCKS over the file without them).
2. Search against SPARQL. On each file, for each query word: `rete search FILE WORD --json` and
   `rete cost FILE` of the equivalent label scan,
       SELECT ?s ?label WHERE { { ?s <p> ?label } UNION { GRAPH ?g { ?s <p> ?label } } FILTER(CONTAINS(LCASE(STR(?label)), "word")) }
   interleaved, RUNS times each: median wall time of the whole command (open included; the file
   is read in rounds as a remote host would), rounds, requests and bytes.

Usage: bench/search.py [--runs 5] [--lubm 8] [--dir build/bench-search] [--only NAME,NAME]
LUBM's labels are ub:name (not a default label predicate: it is passed with --label-predicate).
"""
import argparse, json, os, resource, statistics, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RETE = os.path.join(ROOT, "target", "release", "rete")
UB_NAME = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#name"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"


def timed(args):
    """Runs a command; returns (wall seconds, child CPU seconds, stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(args, check=True, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def sections(path):
    inspect = json.loads(subprocess.run([RETE, "inspect", path, "--json"], check=True, capture_output=True, text=True).stdout)
    return {s["kind"]: s["length"] for s in inspect["sections"]}, inspect["file_bytes"]


def build_cost(name, source, flags, out_dir, runs):
    outputs = {"with": os.path.join(out_dir, f"{name}.rete"), "without": os.path.join(out_dir, f"{name}-nosearch.rete")}
    configs = {"with": flags, "without": ["--no-search"]}
    times = {"with": [], "without": []}
    for run in range(runs):
        order = ["with", "without"] if run % 2 == 0 else ["without", "with"]
        for config in order:
            wall, cpu, _ = timed([RETE, "build", *source, *configs[config], "--quiet", "--threads", "2", "-o", outputs[config]])
            times[config].append((wall, cpu))
    med = {c: (statistics.median(t[0] for t in times[c]), statistics.median(t[1] for t in times[c])) for c in times}
    kinds, with_bytes = sections(outputs["with"])
    _, without_bytes = sections(outputs["without"])
    index = kinds.get("SEARCH", 0) + kinds.get("SEARCH BLOCKS", 0)
    return {
        "name": name,
        "file": outputs["with"],
        "with_bytes": with_bytes,
        "without_bytes": without_bytes,
        "index_bytes": index,
        "share": index / without_bytes,
        "wall": med,
        "wall_ratio": med["with"][0] / med["without"][0],
        "cpu_ratio": med["with"][1] / med["without"][1],
    }


def label_scan(projection, predicate, word):
    """The SPARQL a user writes without the index: every label, in any graph (as the index has them), filtered."""
    labels = f"{{ ?s <{predicate}> ?label }} UNION {{ GRAPH ?g {{ ?s <{predicate}> ?label }} }}"
    return f'SELECT {projection} WHERE {{ {labels} FILTER(CONTAINS(LCASE(STR(?label)), "{word}")) }}'


def search_cost(path, predicate, word, runs):
    sparql = label_scan("?s ?label", predicate, word)
    walls = {"search": [], "sparql": []}
    last = {}
    for run in range(runs):
        order = ["search", "sparql"] if run % 2 == 0 else ["sparql", "search"]
        for kind in order:
            if kind == "search":
                wall, _, out = timed([RETE, "search", path, word, "--json"])
            else:
                wall, _, out = timed([RETE, "cost", path, sparql, "--json"])
            walls[kind].append(wall)
            last[kind] = json.loads(out)
    return {k: (statistics.median(walls[k]), last[k]) for k in walls}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--lubm", type=int, default=8)
    parser.add_argument("--dir", default=os.path.join(ROOT, "build", "bench-search"))
    parser.add_argument("--only", help="comma-separated inputs to run (lubm-8, dbpedia-ontology, schema-org, qudt); default all")
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "rete-publisher"], check=True, cwd=ROOT)
    lubm = os.path.join(args.dir, f"lubm-{args.lubm}.nt")
    if not os.path.exists(lubm) and (not args.only or f"lubm-{args.lubm}" in args.only.split(",")):
        subprocess.run([sys.executable, os.path.join(ROOT, "bench", "lubm.py"), "-u", str(args.lubm), "--seed", "0", "-o", lubm], check=True)
    inputs = [(f"lubm-{args.lubm}", [lubm], ["--label-predicate", UB_NAME], UB_NAME, ["fullprof", "course12", "university3", "publication7"])]
    for example, label_words in [("dbpedia-ontology", ["plac", "person", "city"]), ("schema-org", ["pers", "event"]), ("qudt", ["metre", "kelvin"])]:
        folder = os.path.join(ROOT, "examples", example)
        data = [os.path.join(folder, f) for f in sorted(os.listdir(folder)) if f.endswith((".ttl", ".nt", ".trig"))]
        inputs.append((example, data, [], RDFS_LABEL, label_words))
    if args.only:
        inputs = [i for i in inputs if i[0] in args.only.split(",")]
    os.environ["SOURCE_DATE_EPOCH"] = "1700000000"
    print(f"load average before: {loadavg()}")
    print("\n| file | quads | without index | with index | index | share | build wall with / without (median of %d) | wall ratio | CPU ratio |" % args.runs)
    print("|---|---|---|---|---|---|---|---|---|")
    built = []
    for name, source, flags, predicate, words in inputs:
        cost = build_cost(name, source, flags, args.dir, args.runs)
        quads = json.loads(subprocess.run([RETE, "inspect", cost["file"], "--json"], check=True, capture_output=True, text=True).stdout)["quads"]
        (w_with, _), (w_without, _) = cost["wall"]["with"], cost["wall"]["without"]
        print(f"| {name} | {quads:,} | {cost['without_bytes']:,} | {cost['with_bytes']:,} | {cost['index_bytes']:,} | {100 * cost['share']:.1f} % | {w_with:.2f} s / {w_without:.2f} s | {cost['wall_ratio']:.3f} | {cost['cpu_ratio']:.3f} |")
        built.append((name, cost["file"], predicate, words, quads))
    print(f"\n| file | word | search: ms, rounds, requests, bytes, hits | FILTER(CONTAINS(LCASE)): ms, rounds, requests, bytes, rows | time ratio | bytes ratio |")
    print("|---|---|---|---|---|---|")
    for name, path, predicate, words, quads in built:
        for word in words:
            costs = search_cost(path, predicate, word, args.runs)
            (s_wall, s), (q_wall, q) = costs["search"], costs["sparql"]
            rows = subprocess.run([RETE, "query", path, label_scan("(COUNT(*) AS ?n)", predicate, word), "-f", "csv"], check=True, capture_output=True, text=True).stdout.split()[-1]
            print(f"| {name} | {word} | {1000 * s_wall:.0f} ms, {s['rounds']}, {s['requests']}, {s['bytes']:,}, {len(s['results'])}{' (cut)' if s['cut'] else ''} | {1000 * q_wall:.0f} ms, {q['rounds']}, {q['requests']}, {q['bytes']:,}, {rows} | {q_wall / s_wall:.1f}× | {q['bytes'] / max(1, s['bytes']):.0f}× |")
    print(f"\nload average after: {loadavg()}")


if __name__ == "__main__":
    main()
