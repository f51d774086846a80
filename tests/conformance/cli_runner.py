#!/usr/bin/env python3
"""The W3C SPARQL suites through rete's command-line contract, as an outside runner sees rete.

tests/conformance (the Rust harness) calls rete's library; this script only runs the `rete`
binary, the way an independent W3C runner does:

* evaluation tests: the test's data (qt:data in the default graph, qt:graphData and the
  query's own FROM / FROM NAMED files as named graphs named by their IRIs, TriG data as it
  stands) is written as one N-Quads file, `rete build data.nq -o data.rete`, then
  `rete query data.rete --file Q --base IRI --format json` (SELECT, ASK) or `--format nt`
  (CONSTRUCT, DESCRIBE);
* syntax tests: `rete query empty.rete --file Q --base IRI --format json`; exit code 0 means
  the query was accepted, any other code that it was rejected.

Answers are compared by the suite's rules with one relaxation an outside runner makes:
numeric literals (xsd:integer and its derived types, xsd:decimal, xsd:float, xsd:double)
compare by value within their datatype ("3.21E4"^^xsd:double equals "32100"^^xsd:double),
because the suite's expected lexical forms of computed numbers contradict each other. Every
other term compares exactly; blank nodes up to one bijection over the whole answer; graphs
by isomorphism; order only under a top-level ORDER BY.

Usage: cli_runner.py [--suite 1.1|1.2|all] [--rete PATH] [--jobs N] [--floor FILE] [FILTER]
Prints each failure, `suite: P passed, F failed` per suite, and a last line `N passed, N failed`.
With --floor FILE (lines `<suite> <count>`), exits 1 when a suite passes fewer tests than its floor,
and ends with `floors: P passed, F failed`, one check per suite (what `scripts/test.sh` counts:
the suite `conformance` runs `--floor tests/conformance/cli-floor.txt`).
Data parsing and result parsing use pyoxigraph (pip install pyoxigraph).
"""

import argparse
import csv
import io
import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal, InvalidOperation
from pathlib import Path

import pyoxigraph as ox

REPO = Path(__file__).resolve().parents[2]

MF = "http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#"
QT = "http://www.w3.org/2001/sw/DataAccess/tests/test-query#"
RS = "http://www.w3.org/2001/sw/DataAccess/tests/result-set#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
XSD = "http://www.w3.org/2001/XMLSchema#"

# Official IRI prefix of each part of the suites -> (environment variable, default root, folder).
PARTS = [
    ("http://www.w3.org/2001/sw/DataAccess/tests/data-r2/", "RETE_SPARQL_TESTS", "../shared/sparql-tests", "sparql/sparql10/"),
    ("http://www.w3.org/2009/sparql/docs/tests/data-sparql11/", "RETE_SPARQL_TESTS", "../shared/sparql-tests", "sparql/sparql11/"),
    ("https://w3c.github.io/rdf-tests/sparql/sparql12/", "RETE_SPARQL12_TESTS", "../shared/sparql12-tests", "sparql/sparql12/"),
]

SUITES = {
    "1.1": [
        "http://www.w3.org/2001/sw/DataAccess/tests/data-r2/manifest.ttl",
        "http://www.w3.org/2009/sparql/docs/tests/data-sparql11/manifest-sparql11-query.ttl",
        "http://www.w3.org/2009/sparql/docs/tests/data-sparql11/manifest-sparql11-results.ttl",
    ],
    "1.2": ["https://w3c.github.io/rdf-tests/sparql/sparql12/manifest.ttl"],
}

EVALUATION = {MF + "QueryEvaluationTest", MF + "CSVResultFormatTest"}
POSITIVE_SYNTAX = {MF + "PositiveSyntaxTest", MF + "PositiveSyntaxTest11"}
NEGATIVE_SYNTAX = {MF + "NegativeSyntaxTest", MF + "NegativeSyntaxTest11"}

NUMERIC = {XSD + t for t in (
    "integer decimal float double int long short byte nonNegativeInteger nonPositiveInteger "
    "positiveInteger negativeInteger unsignedLong unsignedInt unsignedShort unsignedByte").split()}


def local_path(iri):
    """The file of the local copy for a suite IRI (fragment dropped), or None."""
    iri = iri.split("#")[0]
    for prefix, variable, default, folder in PARTS:
        if iri.startswith(prefix):
            root = Path(os.environ.get(variable) or (REPO / default))
            return root / folder / iri[len(prefix):]
    return None


def short(iri):
    for prefix, _, _, folder in PARTS:
        if iri.startswith(prefix):
            return folder[len("sparql/"):] + iri[len(prefix):]
    return iri


# ------------------------------------------------------------------------------------------
# Manifests


class Test:
    def __init__(self, iri, kind, name, query=None, data=(), graph_data=(), result=None, lax=False):
        self.iri, self.kind, self.name = iri, kind, name
        self.query, self.data, self.graph_data, self.result, self.lax = query, list(data), list(graph_data), result, lax

    @property
    def id(self):
        return short(self.iri)


def rdf_list(store, head):
    items = []
    nil = ox.NamedNode(RDF + "nil")
    while head != nil:
        first = objects(store, head, RDF + "first")
        if not first:
            break
        items.append(first[0])
        rest = objects(store, head, RDF + "rest")
        head = rest[0] if rest else nil
    return items


def objects(store, subject, predicate):
    return [q.object for q in store.quads_for_pattern(subject, ox.NamedNode(predicate), None)]


def load_manifest(iri, seen=None):
    seen = set() if seen is None else seen
    if iri in seen:
        return []
    seen.add(iri)
    store = ox.Store()
    store.load(path=str(local_path(iri)), format=ox.RdfFormat.TURTLE, base_iri=iri)
    tests = []
    # Some manifests are blank nodes (`[] rdf:type mf:Manifest`).
    for manifest in [q.subject for q in store.quads_for_pattern(None, ox.NamedNode(RDF + "type"), ox.NamedNode(MF + "Manifest"))]:
        for include in objects(store, manifest, MF + "include"):
            for item in rdf_list(store, include):
                tests.extend(load_manifest(item.value, seen))
        for entries in objects(store, manifest, MF + "entries"):
            for entry in rdf_list(store, entries):
                test = read_test(store, entry)
                if test is not None:
                    tests.append(test)
    return tests


def read_test(store, entry):
    kinds = {t.value for t in objects(store, entry, RDF + "type")}
    name = next((o.value for o in objects(store, entry, MF + "name")), entry.value)
    lax = any(o.value == MF + "LaxCardinality" for o in objects(store, entry, MF + "resultCardinality"))
    action = objects(store, entry, MF + "action")
    if kinds & (POSITIVE_SYNTAX | NEGATIVE_SYNTAX):
        kind = "positive" if kinds & POSITIVE_SYNTAX else "negative"
        return Test(entry.value, kind, name, query=action[0].value if action else None)
    if kinds and not kinds & EVALUATION:
        return None  # update tests and others: not query tests (an untyped 1.0 entry is one)
    kind = "csv" if MF + "CSVResultFormatTest" in kinds else "evaluation"
    act = action[0] if action else None
    query = next((o.value for o in objects(store, act, QT + "query")), None) if act else None
    data = [o.value for o in objects(store, act, QT + "data")] if act else []
    graph_data = [o.value for o in objects(store, act, QT + "graphData")] if act else []
    result = next((o.value for o in objects(store, entry, MF + "result")), None)
    return Test(entry.value, kind, name, query, sorted(data), sorted(graph_data), result, lax)


# ------------------------------------------------------------------------------------------
# Data and running rete


def format_of(path):
    suffix = path.suffix.lower()
    return {".ttl": ox.RdfFormat.TURTLE, ".nt": ox.RdfFormat.N_TRIPLES, ".nq": ox.RdfFormat.N_QUADS,
            ".trig": ox.RdfFormat.TRIG, ".rdf": ox.RdfFormat.RDF_XML}.get(suffix)


def quads_of(iri, graph, index):
    """N-Quads lines for one data file; blank nodes are made distinct per file."""
    path = local_path(iri)
    quads = ox.parse(path=str(path), format=format_of(path), base_iri=iri)
    lines = []
    for quad in quads:
        name = quad.graph_name if graph is None else graph
        quad = ox.Quad(rename(quad.subject, index), quad.predicate, rename(quad.object, index), rename(name, index))
        lines.append(str(quad) + " .\n")
    return lines


def rename(term, index):
    if isinstance(term, ox.BlankNode):
        return ox.BlankNode(f"f{index}x{term.value}")
    if isinstance(term, ox.Triple):
        return ox.Triple(rename(term.subject, index), term.predicate, rename(term.object, index))
    return term


FROM = re.compile(r"\bFROM\s+(NAMED\s+)?<([^>]*)>", re.IGNORECASE)


def dataset_files(test, query_text):
    """(iri, graph) pairs: graph None keeps the file's own graphs (default graph for triples)."""
    files = [(iri, None) for iri in test.data]
    files += [(iri, ox.NamedNode(iri)) for iri in test.graph_data]
    named = {iri for iri in test.graph_data}
    for _, iri in FROM.findall(query_text):
        iri = resolve(test.query, iri)
        if iri not in named and local_path(iri) and local_path(iri).is_file():
            named.add(iri)
            files.append((iri, ox.NamedNode(iri)))
    return files


def resolve(base, relative):
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", relative):
        return relative
    return base.rsplit("/", 1)[0] + "/" + relative


def run(command, timeout=60):
    try:
        process = subprocess.run(command, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, b"", b"timeout"
    return process.returncode, process.stdout, process.stderr


def build(rete, nquads_lines, directory):
    data = Path(directory) / "data.nq"
    data.write_text("".join(nquads_lines), encoding="utf-8")
    output = Path(directory) / "data.rete"
    code, _, err = run([rete, "build", str(data), "-o", str(output), "--quiet"])
    if code != 0:
        raise Failure(f"rete build failed ({code}): {err.decode(errors='replace').strip()[:300]}")
    return output


class Failure(Exception):
    pass


# ------------------------------------------------------------------------------------------
# Expected and actual answers: ("boolean", bool) | ("solutions", vars, rows, ordered) | ("graph", set)
# A row is a dict variable -> term.


def read_expected(iri):
    path = local_path(iri)
    suffix = path.suffix.lower()
    if suffix in (".srx", ".srj", ".tsv"):
        fmt = {".srx": ox.QueryResultsFormat.XML, ".srj": ox.QueryResultsFormat.JSON, ".tsv": ox.QueryResultsFormat.TSV}[suffix]
        return from_results(ox.parse_query_results(path=str(path), format=fmt), ordered=True)
    if suffix == ".csv":
        with open(path, newline="", encoding="utf-8") as file:
            rows = list(csv.reader(file))
        return ("csv", rows[0], [dict(zip(rows[0], row)) for row in rows[1:]], True)
    quads = list(ox.parse(path=str(path), format=format_of(path), base_iri=iri))
    store = ox.Store()
    store.extend(quads)
    result_sets = [q.subject for q in store.quads_for_pattern(None, ox.NamedNode(RDF + "type"), ox.NamedNode(RS + "ResultSet"))]
    if not result_sets:
        return ("graph", {ox.Triple(q.subject, q.predicate, q.object) for q in quads})
    return result_set_graph(store, result_sets[0])


def result_set_graph(store, result_set):
    boolean = objects(store, result_set, RS + "boolean")
    if boolean:
        return ("boolean", boolean[0].value == "true")
    variables = [o.value for o in objects(store, result_set, RS + "resultVariable")]
    rows, indexed = [], []
    for solution in objects(store, result_set, RS + "solution"):
        row = {}
        for binding in objects(store, solution, RS + "binding"):
            variable = objects(store, binding, RS + "variable")[0].value
            row[variable] = objects(store, binding, RS + "value")[0]
        index = objects(store, solution, RS + "index")
        indexed.append(int(index[0].value) if index else None)
        rows.append(row)
    ordered = bool(rows) and all(i is not None for i in indexed)
    if ordered:
        rows = [row for _, row in sorted(zip(indexed, rows), key=lambda pair: pair[0])]
    return ("solutions", variables, rows, ordered)


def from_results(results, ordered):
    if isinstance(results, ox.QueryBoolean):
        return ("boolean", bool(results))
    variables = [v.value for v in results.variables]
    rows = []
    for solution in results:
        row = {}
        for variable in variables:
            value = solution[variable]
            if value is not None:
                row[variable] = value
        rows.append(row)
    return ("solutions", variables, rows, ordered)


def actual_answer(stdout, graph):
    if graph:
        return ("graph", {ox.Triple(q.subject, q.predicate, q.object) for q in ox.parse(stdout, format=ox.RdfFormat.N_TRIPLES)})
    return from_results(ox.parse_query_results(stdout, format=ox.QueryResultsFormat.JSON), ordered=False)


# ------------------------------------------------------------------------------------------
# Comparison


def numeric_value(literal):
    text = literal.value.strip()
    special = {"INF": "Infinity", "+INF": "Infinity", "-INF": "-Infinity", "NaN": "NaN"}
    try:
        return Decimal(special.get(text, text))
    except InvalidOperation:
        return None


def same_term(expected, actual, bnodes):
    """Term equality with numbers by value; blank nodes extend/obey the bijection `bnodes`
    (a pair of dicts, updated in place by the caller on success)."""
    if isinstance(expected, ox.BlankNode) or isinstance(actual, ox.BlankNode):
        if not (isinstance(expected, ox.BlankNode) and isinstance(actual, ox.BlankNode)):
            return False
        forward, backward = bnodes
        e, a = expected.value, actual.value
        if e in forward or a in backward:
            return forward.get(e) == a and backward.get(a) == e
        forward[e], backward[a] = a, e
        return True
    if isinstance(expected, ox.Triple) and isinstance(actual, ox.Triple):
        return (same_term(expected.subject, actual.subject, bnodes) and expected.predicate == actual.predicate
                and same_term(expected.object, actual.object, bnodes))
    if isinstance(expected, ox.Literal) and isinstance(actual, ox.Literal):
        if expected == actual:
            return True
        if expected.datatype == actual.datatype and expected.datatype.value in NUMERIC:
            e, a = numeric_value(expected), numeric_value(actual)
            if e is not None and a is not None:
                return (e.is_nan() and a.is_nan()) or e == a
        return False
    return expected == actual


def has_bnode(term):
    if isinstance(term, ox.BlankNode):
        return True
    return isinstance(term, ox.Triple) and (has_bnode(term.subject) or has_bnode(term.object))


def match_rows(expected, actual, same, ordered):
    """Pairs every expected row with one actual row under one blank node bijection."""
    if len(expected) != len(actual):
        return False
    bnodes = ({}, {})

    def row_fits(e_row, a_row, mapping):
        if set(e_row) != set(a_row):
            return None
        forward, backward = dict(mapping[0]), dict(mapping[1])
        for variable, value in e_row.items():
            if not same(value, a_row[variable], (forward, backward)):
                return None
        return forward, backward

    used = [False] * len(actual)

    def search(i, mapping, budget):
        if i == len(expected):
            return True
        if budget[0] <= 0:
            return False
        budget[0] -= 1
        candidates = [i] if ordered else range(len(actual))
        for j in candidates:
            if used[j]:
                continue
            fitted = row_fits(expected[i], actual[j], mapping)
            if fitted is None:
                continue
            used[j] = True
            if search(i + 1, fitted, budget):
                return True
            used[j] = False
        return False

    return search(0, bnodes, [200000])


def compare(expected, actual, test, query_text):
    kind = expected[0]
    if kind == "boolean":
        if actual[0] != "boolean":
            return f"expected a boolean, got {actual[0]}"
        return None if expected[1] == actual[1] else f"expected {expected[1]}, got {actual[1]}"
    if kind == "graph":
        if actual[0] != "graph":
            return f"expected a graph, got {actual[0]}"
        return None if isomorphic(expected[1], actual[1]) else f"graphs differ: expected {len(expected[1])} triples, got {len(actual[1])}"
    if actual[0] != "solutions":
        return f"expected solutions, got {actual[0]}"
    if kind == "csv":
        return compare_csv(expected, actual)
    _, variables, e_rows, e_ordered = expected
    _, _, a_rows, _ = actual
    if test.lax:
        e_rows, a_rows = unique(e_rows), unique(a_rows)
    ordered = e_ordered and not test.lax and top_level_order(query_text)
    if match_rows(e_rows, a_rows, same_term, False):
        if ordered and not in_order(e_rows, a_rows, ordered):
            return "rows are not in the expected order"
        return None
    return f"expected {len(e_rows)} rows, got {len(a_rows)}; {difference(e_rows, a_rows)}"


def unique(rows):
    seen, out = set(), []
    for row in rows:
        key = tuple(sorted((k, str(v)) for k, v in row.items()))
        if key not in seen:
            seen.add(key)
            out.append(row)
    return out


ORDER = re.compile(r"ORDER\s+BY\s+(.*)$", re.IGNORECASE | re.DOTALL)


def top_level_order(query_text):
    """The ORDER BY keys when the query's outermost pattern is ordered: a list of variable
    names, or True when some key is an expression (whole rows must then follow the order)."""
    text = re.sub(r"#[^\n]*", "", query_text)
    match = None
    for match in ORDER.finditer(text):
        pass
    if match is None or "}" in match.group(1):
        return False
    keys = re.sub(r"\b(LIMIT|OFFSET)\b.*$", "", match.group(1), flags=re.IGNORECASE | re.DOTALL).strip()
    names = re.fullmatch(r"((?:(?:ASC|DESC)\s*\(\s*[?$]\w+\s*\)|[?$]\w+)\s*)+", keys, re.IGNORECASE)
    if not names:
        return True
    return re.findall(r"[?$](\w+)", keys)


def in_order(e_rows, a_rows, keys):
    def key_of(row):
        selected = keys if isinstance(keys, list) else sorted(row)
        return [None if has_bnode(row.get(k)) else row.get(k) for k in selected]

    for e, a in zip(e_rows, a_rows):
        ek, ak = key_of(e), key_of(a)
        if len(ek) != len(ak) or not all(
                (x is None and y is None) or (x is not None and y is not None and same_term(x, y, ({}, {})))
                for x, y in zip(ek, ak)):
            return False
    return True


def difference(e_rows, a_rows):
    def show(row):
        return "{" + ", ".join(f"?{k}={v}" for k, v in sorted(row.items())) + "}"
    missing = [r for r in e_rows if not any(match_rows([r], [a], same_term, False) for a in a_rows)]
    extra = [r for r in a_rows if not any(match_rows([e], [r], same_term, False) for e in e_rows)]
    parts = []
    if missing:
        parts.append(f"missing {show(missing[0])}" + (f" (+{len(missing) - 1} more)" if len(missing) > 1 else ""))
    if extra:
        parts.append(f"unexpected {show(extra[0])}" + (f" (+{len(extra) - 1} more)" if len(extra) > 1 else ""))
    return "; ".join(parts) or "no single blank-node mapping relates the rows"


def compare_csv(expected, actual):
    _, variables, e_rows, _ = expected
    _, _, a_rows, _ = actual

    def cell(term):
        if term is None:
            return ""
        if isinstance(term, ox.BlankNode):
            return "_:" + term.value
        return term.value

    a_csv = [{v: cell(row.get(v)) for v in variables} for row in a_rows]

    def same(e, a, bnodes):
        if e.startswith("_:") and a.startswith("_:"):
            return same_term(ox.BlankNode(e[2:]), ox.BlankNode(a[2:]), bnodes)
        return e == a
    if match_rows(e_rows, a_csv, same, False):
        return None
    return f"CSV rows differ: expected {len(e_rows)}, got {len(a_csv)}"


def isomorphic(expected, actual):
    def canonical(triples):
        dataset = ox.Dataset(ox.Quad(t.subject, t.predicate, t.object) for t in triples)
        dataset.canonicalize(ox.CanonicalizationAlgorithm.UNSTABLE)
        return {str(q) for q in dataset}
    if len(expected) != len(actual):
        return False
    if all(not has_bnode(t.subject) and not has_bnode(t.object) for t in list(expected) + list(actual)):
        return all(any(same_term(e.object, a.object, ({}, {})) and e.subject == a.subject and e.predicate == a.predicate for a in actual) for e in expected)
    return canonical(expected) == canonical(actual)


# ------------------------------------------------------------------------------------------
# Running tests


def read_text(iri):
    path = local_path(iri)
    return path.read_bytes().decode("utf-8")


def run_test(rete, test, empty_rete):
    try:
        if test.kind in ("positive", "negative"):
            code, _, err = run([rete, "query", str(empty_rete), "--file", str(local_path(test.query)), "--base", test.query])
            if test.kind == "positive" and code != 0:
                return f"valid query rejected (exit {code}): {err.decode(errors='replace').strip()[:300]}"
            if test.kind == "negative" and code == 0:
                return "invalid query accepted"
            return None
        query_text = read_text(test.query)
        expected = read_expected(test.result)
        graph = expected[0] == "graph"
        with tempfile.TemporaryDirectory(prefix="rete-w3c-") as directory:
            lines = []
            for index, (iri, graph_name) in enumerate(dataset_files(test, query_text)):
                lines += quads_of(iri, graph_name, index)
            data = build(rete, lines, directory)
            code, out, err = run([rete, "query", str(data), "--file", str(local_path(test.query)), "--base", test.query, "--format", "nt" if graph else "json"])
        if code != 0:
            return f"rete query failed (exit {code}): {err.decode(errors='replace').strip()[:300]}"
        return compare(expected, actual_answer(out, graph), test, query_text)
    except Failure as failure:
        return str(failure)
    except Exception as error:  # a parse error of an answer, a missing file: this test fails
        return f"{type(error).__name__}: {error}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", choices=["1.1", "1.2", "all"], default="all")
    parser.add_argument("--rete", default=str(REPO / "target/release/rete"))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--floor", help="file of `<suite> <minimum passed>` lines")
    parser.add_argument("filter", nargs="?")
    args = parser.parse_args()

    suites = ["1.1", "1.2"] if args.suite == "all" else [args.suite]
    totals, failed_floor = [0, 0], []
    floors = read_floor(args.floor) if args.floor else {}
    with tempfile.TemporaryDirectory(prefix="rete-w3c-empty-") as directory:
        empty = build(args.rete, [], directory)
        for suite in suites:
            tests = [t for manifest in SUITES[suite] for t in load_manifest(manifest)]
            if args.filter:
                tests = [t for t in tests if args.filter in t.id]
            with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
                outcomes = list(pool.map(lambda t: run_test(args.rete, t, empty), tests))
            passed = 0
            for test, outcome in zip(tests, outcomes):
                if outcome is None:
                    passed += 1
                else:
                    print(f"FAIL {test.id} ({test.name}): {' '.join(outcome.split())[:400]}")
            print(f"SPARQL {suite}: {passed} passed, {len(tests) - passed} failed (of {len(tests)})")
            if not args.filter and suite in floors and passed < floors[suite]:
                print(f"below floor: SPARQL {suite} passed {passed}, floor is {floors[suite]}", file=sys.stderr)
                failed_floor.append(suite)
            totals[0] += passed
            totals[1] += len(tests) - passed
    print(f"{totals[0]} passed, {totals[1]} failed")
    if floors and not args.filter:
        held = [suite for suite in suites if suite in floors]
        # The summary scripts/test.sh counts: one check per suite held to its floor.
        print(f"floors: {len(held) - len(failed_floor)} passed, {len(failed_floor)} failed")
    return 1 if failed_floor else 0


def read_floor(path):
    floors = {}
    for line in Path(path).read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            suite, count = line.split()
            floors[suite] = int(count)
    return floors


if __name__ == "__main__":
    sys.exit(main())
