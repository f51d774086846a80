"""Times the same SPARQL queries on pyoxigraph's in-memory store (Oxigraph):
load once, then each query --runs times; one JSON line per query, like
publisher/examples/bench_queries.rs. Used by bench/query.sh."""
import argparse, json, time
import pyoxigraph as ox

parser = argparse.ArgumentParser()
parser.add_argument("data")
parser.add_argument("queries", nargs="+")
parser.add_argument("--runs", type=int, default=5)
args = parser.parse_args()

started = time.perf_counter()
store = ox.Store()
fmt = ox.RdfFormat.from_extension(args.data.removesuffix(".gz").rsplit(".", 1)[-1])
store.bulk_load(path=args.data, format=fmt)
print(json.dumps({"load_ms": (time.perf_counter() - started) * 1000, "triples": len(store)}))
for path in args.queries:
    text = open(path).read()
    times, rows = [], 0
    for _ in range(args.runs):
        started = time.perf_counter()
        result = store.query(text)
        if isinstance(result, (bool, ox.QueryBoolean)):
            rows = 1
        else:
            rows = sum(1 for _ in result)
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    print(json.dumps({"query": path, "rows": rows, "median_ms": times[len(times) // 2], "runs_ms": times}))
