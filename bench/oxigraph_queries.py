"""Times the same SPARQL queries on pyoxigraph's in-memory store (Oxigraph):
load once, then each query --runs times; one JSON line per query (median wall and
thread CPU time), like
publisher/examples/bench_queries.rs. With --points FILE (the nodes and
triples bench_queries sampled, one N-Triples line or `<iri> .` each), also
times the out-links of each node and ASK of each triple, warm, as p50/p95.
Used by bench/query.py."""
import argparse, json, time
import pyoxigraph as ox

parser = argparse.ArgumentParser()
parser.add_argument("data")
parser.add_argument("queries", nargs="*")
parser.add_argument("--runs", type=int, default=5)
parser.add_argument("--points")
args = parser.parse_args()

started = time.perf_counter()
store = ox.Store()
fmt = ox.RdfFormat.from_extension(args.data.removesuffix(".gz").rsplit(".", 1)[-1])
store.bulk_load(path=args.data, format=fmt)
print(json.dumps({"load_ms": (time.perf_counter() - started) * 1000, "triples": len(store)}))
for path in args.queries:
    text = open(path).read()
    times, cpu_times, rows = [], [], 0
    for _ in range(args.runs):
        started, cpu_started = time.perf_counter(), time.thread_time()
        result = store.query(text)
        if isinstance(result, (bool, ox.QueryBoolean)):
            rows = 1
        else:
            rows = sum(1 for _ in result)
        times.append((time.perf_counter() - started) * 1000)
        cpu_times.append((time.thread_time() - cpu_started) * 1000)
    times.sort()
    cpu_times.sort()
    print(json.dumps({"query": path, "rows": rows, "median_ms": times[len(times) // 2], "median_cpu_ms": cpu_times[len(cpu_times) // 2], "runs_ms": times}))


def percentiles(items, op):
    """p50/p95 in ns of op over items, after one untimed warming pass (as bench_queries)."""
    for item in items:
        op(item)
    times = []
    for _ in range(3):
        for item in items:
            started = time.perf_counter_ns()
            op(item)
            times.append(time.perf_counter_ns() - started)
    times.sort()
    return {"p50_ns": times[len(times) // 2], "p95_ns": times[len(times) * 95 // 100]}


if args.points:
    nodes, triples = [], []
    with open(args.points) as lines:
        for line in lines:
            parts = list(ox.parse(line.encode(), format=ox.RdfFormat.N_TRIPLES)) if line.count(" ") > 1 else []
            if parts:
                nodes.append(parts[0].subject)
                triples.append(ox.Quad(parts[0].subject, parts[0].predicate, parts[0].object, ox.DefaultGraph()))
            else:
                nodes.append(ox.NamedNode(line.strip().removesuffix(" .").strip("<>")))

    def ask(quad):
        assert next(store.quads_for_pattern(quad.subject, quad.predicate, quad.object), None) is not None, quad

    report = {
        "out_links_terms": percentiles(nodes, lambda node: list(store.quads_for_pattern(node, None, None))),
        "ask_triple": percentiles(triples, ask),
    }
    print(json.dumps({"points": report, "nodes": len(nodes), "triples": len(triples)}))
