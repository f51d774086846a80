#!/usr/bin/env python3
"""Where a query's factor goes: the same query's self time per group of functions natively and in
the Worker, side by side (issue 14, docs/BENCHMARK.md "Session 22: the joins in wasm").

Native: a `perf record` of bench_queries; Worker: the V8 profile factor.measure.ts writes with
RETE_CPU_PROFILE=1 (names from the build's index_bg.names.wasm appended to a copy of its wasm).
LTO inlines differently in the two builds (the wasm is one codegen unit: `placed_keys` sits inside
`QuadIter::next`, memcpy inside the functions that move values), so functions are compared by
group, not one by one. Each group's ms is its share of the samples times the query's CPU median,
given from a run without a profiler (a profile's own overhead is not the query's).

  perf record -F 4999 -o q02.perf.data -- target/release/examples/bench_queries \
    build/query-bench/lubm-10.rete bench/lubm-queries/q02.rq --runs 60 --write
  python3 bench/worker/profile_groups.py q02.perf.data NATIVE_CPU_MS \
    build/worker-bench/factor-lubm-10_before_q02.rq.cpuprofile WORKER_CPU_MS [--top N]
"""
import json
import re
import subprocess
import sys
from collections import Counter

# The first group whose pattern a function's name matches; the rest is "other".
GROUPS = [
    ("allocation", r"malloc|free\b|_int_free|_int_malloc|cfree|dlmalloc|__rdl_|__rust_alloc|__rust_dealloc|unlink_chunk|finish_grow|do_reserve|insert_large_chunk|insert_small_chunk|tmalloc"),
    ("memcpy, memcmp", r"memmove|memcpy|memcmp|memset|bcmp"),
    ("hashing", r"hashbrown|Hasher|::hash::|FxHash|RawTable|HashMap|HashSet|InternalTupleSet<"),
    ("block seek", r"seek_from|placed_keys|varint|PermutationKeys::decode|RowCursor|blocks_for_prefix"),
    ("scan", r"QuadIter<S> as core::iter|Permutation::quad|dataset::Scan<S> as|Bound::ids|Bound::of"),
    ("pattern lookup set-up", r"internal_quads_for_pattern|QuadIter<S>::new|QuadRanges::planned|Permutation::for_ranges|PatternQuads|drop_in_place<.*(Scan|PatternQuads|EvalDataset)|Meter::"),
    ("tuple combine", r"put_pattern_value|get_pattern_value|get_pattern_bound|InternalTuple<T>::|Vec<T,A> as core::clone::Clone|Vec<T,A>::resize|InternalTerm as core::cmp|drop_in_place<\[core::option::Option<rete_core::sparql::dataset::InternalTerm|drop_in_place<spareval::eval::TupleSelector|combine"),
    ("closures, iterator adapters", r"build_graph_pattern_evaluator|adapters::(flatten|filter_map|map|filter)|drop_in_place<core::iter::adapters"),
    ("dictionary, zstd", r"DictionaryTerms|terms::|ZSTD|zstd|decode_placed"),
    ("writing the answer", r"json|write_answer|serialize|Writer"),
]


def group(name: str) -> str:
    return next((g for g, pattern in GROUPS if re.search(pattern, name)), "other")


def v8_samples(path: str) -> Counter:
    """Busy samples per function of a V8 .cpuprofile (idle left out, as workerd.ts counts)."""
    profile = json.load(open(path))
    idle = {n["id"] for n in profile["nodes"] if n["callFrame"]["functionName"] == "(idle)"}
    names = {n["id"]: n["callFrame"]["functionName"] or "(anonymous)" for n in profile["nodes"]}
    return Counter(names[node] for node in profile["samples"][:-1] if node not in idle)


def perf_samples(path: str) -> Counter:
    """Self-time percent per symbol of a perf.data file."""
    out = subprocess.run(["perf", "report", "-i", path, "--no-children", "--sort", "symbol", "--stdio", "-q", "--percent-limit", "0"],
                         capture_output=True, text=True, check=True).stdout
    found = (re.match(r"\s*([\d.]+)%\s+\[[.k]\]\s+(.*\S)", line) for line in out.splitlines())
    return Counter({m.group(2): float(m.group(1)) for m in found if m})


def shares(samples: Counter) -> Counter:
    total = sum(samples.values()) or 1
    out = Counter()
    for name, n in samples.items():
        out[group(name)] += n / total
    return out


def main() -> None:
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    native, native_ms, worker, worker_ms = sys.argv[1], float(sys.argv[2]), sys.argv[3], float(sys.argv[4])
    n, w = perf_samples(native), v8_samples(worker)
    ns, ws = shares(n), shares(w)
    print("| group | native % | native ms | Worker % | Worker ms | Worker ÷ native |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for g in [g for g, _ in GROUPS] + ["other"]:
        a, b = ns[g] * native_ms, ws[g] * worker_ms
        ratio = f"{b / a:.2f}×" if a >= 0.05 else "—"
        print(f"| {g} | {100 * ns[g]:.1f} | {a:.2f} | {100 * ws[g]:.1f} | {b:.2f} | {ratio} |")
    print(f"| all | 100 | {native_ms:.2f} | 100 | {worker_ms:.2f} | {worker_ms / native_ms:.2f}× |")
    if "--top" in sys.argv:
        k = int(sys.argv[sys.argv.index("--top") + 1])
        for label, samples in (("native", n), ("Worker", w)):
            total = sum(samples.values()) or 1
            print(f"\n{label}")
            for name, x in samples.most_common(k):
                print(f"  {100 * x / total:5.1f}  {group(name):28} {name[:140]}")


if __name__ == "__main__":
    main()
