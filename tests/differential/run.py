#!/usr/bin/env python3
"""Differential tests: rete against pyoxigraph, the reference engine, on the examples/ datasets.

For each dataset examples/<name>/ (its RDF files, as in scripts/check-examples.py):

* builds it once with the release `rete` binary into build/differential/<name>.rete (again only
  when the data or the binary is newer than the file), and loads the same files into an
  in-memory pyoxigraph Store with the base IRI rete uses, `file://<absolute path>`. The store
  lives in a child process, so that a crash of the reference (pyoxigraph aborts the process
  on some panics) or a hang fails that one check, and the process is started again;
* checks the data itself: `rete dump` against the reference store's quads (check `<name>/dump`);
* runs every query of examples/<name>/queries/*.rq (named `<name>/examples/<file>`) and of
  tests/differential/queries/<name>/*.rq (named `<name>/<file>`) through both engines
  (and the same for the datasets of tests/differential/datasets/<name>/, which are not
  examples: data that the examples lack, such as RDF 1.2 triple terms; their queries are
  tests/differential/datasets/<name>/queries/*.rq, named `<name>/<file>`):
  `rete query FILE --file Q.rq --format json` for SELECT and ASK, `--format nt` for CONSTRUCT
  and DESCRIBE, and compares the answers.

How answers are compared (see README.md next to this file for the reasons):

* SELECT: same variables, then the rows as multisets (sets for REDUCED). With a top-level
  ORDER BY, the sequence of sort keys must also be the same: the keys are the leading ORDER BY
  conditions that are plain projected variables, or expressions the SELECT clause also
  projects as `(expression AS ?v)` with the same text (then ?v is the key), so rows tied on
  the keys may come in any order (conditions from the first other expression on are not
  checked; a note says so).
* ASK: the same boolean. CONSTRUCT/DESCRIBE: the same graph, up to blank node renaming.
  A DESCRIBE whose reference answer has blank nodes is compared on its blank-node-free
  triples plus the count of the others (engines may describe blank nodes differently).
* GROUP_CONCAT: SPARQL leaves the order of the parts unspecified, so a projected variable bound
  by `(GROUP_CONCAT(... ; SEPARATOR="s") AS ?v)` anywhere in the query (the default separator
  is one space) is compared as the multiset of its parts split on the separator, with its
  datatype and language (with SEPARATOR="" it is compared as is); the PASS line says so, and
  how many rows were equal only that way.
* Blank nodes match up to one consistent bijection over the whole answer.
* Literals: pyoxigraph's store keeps numbers, booleans and dateTimes as values, so it gives
  back "360"^^xsd:decimal for the data's "360.0"^^xsd:decimal, "100"^^xsd:float for "100.00",
  "…54.85Z" for "…54.850+00:00", and "4"^^xsd:integer for "4"^^xsd:int (derived integer types
  become xsd:integer). Such literals are compared by value; every answer where that mattered
  gets a note on its PASS line. Language tags are compared case-insensitively.

Output: one line per check, `PASS|FAIL <name> (<reason>)` (a failure is followed by a few
indented lines showing the difference), a summary line and, last, `N passed, N failed`.
Exits 1 if any check failed.

Usage: python3 tests/differential/run.py [-v] [--no-build] [--random SEED:COUNT] [FILTER...]
  FILTER      run only the checks whose name contains one of these strings
  -v          show more of each difference
  --no-build  use target/release/rete as it is (by default `cargo build --release -p
              rete-publisher` brings it up to date first)
  --random SEED:COUNT
              then run random.py (next to this file) with this seed and COUNT queries per
              dataset, and count its queries in the totals (its skipped queries are neither):
              the fixed-seed run of random queries that `npm test` includes
"""

from __future__ import annotations

import json
import tomllib
import multiprocessing
import os
import re
import struct
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from datetime import datetime, timedelta
from decimal import Decimal, InvalidOperation
from pathlib import Path

import pyoxigraph as ox

ROOT = Path(__file__).resolve().parent.parent.parent
RETE = ROOT / "target" / "release" / "rete"
# Extra `rete build` flags, e.g. RETE_DIFFERENTIAL_BUILD_FLAGS="--block-quads 64 --node-entries 8"
# runs every check over files with a directory of nodes (FORMAT.md §4.3, issue 17); those files
# go to a folder of their own.
BUILD_FLAGS = os.environ.get("RETE_DIFFERENTIAL_BUILD_FLAGS", "").split()
OUT = ROOT / "build" / "-".join(["differential", *(flag.lstrip("-") for flag in BUILD_FLAGS)])
QUERIES = Path(__file__).resolve().parent / "queries"
DATASETS = Path(__file__).resolve().parent / "datasets"
RDF_SUFFIXES = {".nt", ".nq", ".ttl", ".trig", ".rdf", ".owl"}
QUERY_TIMEOUT = 300  # seconds, per rete process

XSD = "http://www.w3.org/2001/XMLSchema#"
RDF_LANG_STRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"
RDF_DIR_LANG_STRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#dirLangString"
XSD_STRING = XSD + "string"
INTEGER_TYPES = {
    XSD + t
    for t in (
        "integer", "long", "int", "short", "byte", "nonNegativeInteger", "positiveInteger",
        "nonPositiveInteger", "negativeInteger", "unsignedLong", "unsignedInt", "unsignedShort",
        "unsignedByte",
    )
}

VERBOSE = False
# Whether literals of the datatypes pyoxigraph stores as values are compared by value (see
# "Literals" above). random.py clears it for its term-keeping reference, which gives back every
# literal as written: then a term must equal its reference term exactly (only the case of a
# language tag is free), and only the ORDER BY sequence still compares such literals by value.
BY_VALUE = True
# The most rows (or triples) the reference reads of an answer before it gives up with an error
# (None: no limit). random.py sets it before starting the reference's process.
MAX_ANSWER = None

# ---------------------------------------------------------------------------------------------
# Terms. Every term is a plain tuple so answers can be hashed and counted:
#   ("I", iri)   ("B", label)   ("L", lexical, datatype, language or None)   ("T", s, p, o)
# An unbound variable is None.


def from_ox(term):
    if term is None or isinstance(term, ox.DefaultGraph):
        return None
    if isinstance(term, ox.NamedNode):
        return ("I", term.value)
    if isinstance(term, ox.BlankNode):
        return ("B", term.value)
    if isinstance(term, ox.Literal):
        # RDF 1.2 base direction, as N-Triples 1.2 writes it after the tag ("x"@en--ltr).
        direction = getattr(term, "direction", None)
        language = f"{term.language}--{direction.value}" if term.language and direction else term.language
        return ("L", term.value, term.datatype.value, language)
    if isinstance(term, ox.Triple):
        return ("T", from_ox(term.subject), from_ox(term.predicate), from_ox(term.object))
    raise TypeError(f"unexpected term {term!r}")


def from_json(binding: dict):
    """A term of SPARQL 1.1 Query Results JSON."""
    kind = binding.get("type")
    if kind == "uri":
        return ("I", binding["value"])
    if kind == "bnode":
        return ("B", binding["value"])
    if kind in ("literal", "typed-literal"):
        lang = binding.get("xml:lang")
        if lang is not None:
            if binding.get("its:dir"):
                return ("L", binding["value"], RDF_DIR_LANG_STRING, f"{lang}--{binding['its:dir']}")
            return ("L", binding["value"], RDF_LANG_STRING, lang)
        return ("L", binding["value"], binding.get("datatype", XSD_STRING), None)
    if kind == "triple":
        v = binding["value"]
        return ("T", from_json(v["subject"]), from_json(v["predicate"]), from_json(v["object"]))
    raise ValueError(f"unknown binding type {kind!r} in {binding!r}")


def show(term) -> str:
    """A term in SPARQL/Turtle-like syntax, for messages."""
    if term is None:
        return "UNDEF"
    kind = term[0]
    if kind == "I":
        return f"<{term[1]}>"
    if kind == "B":
        return f"_:{term[1]}"
    if kind == "L":
        text = json.dumps(term[1], ensure_ascii=False)
        if term[3] is not None:
            return f"{text}@{term[3]}"
        if term[2] == XSD_STRING:
            return text
        dt = term[2].replace(XSD, "xsd:")
        return f"{text}^^{dt if dt.startswith('xsd:') else '<' + dt + '>'}"
    if kind == "T":
        return "<< " + " ".join(show(t) for t in term[1:]) + " >>"
    return repr(term)


def show_item(item) -> str:
    return "(" + ", ".join(show(t) for t in item) + ")"


def _f32(text: str) -> float:
    return struct.unpack("<f", struct.pack("<f", float(text)))[0]


def _float_value(text: str):
    value = float(text.strip())  # accepts INF, -INF, NaN like xsd:double
    return "NaN" if value != value else value


_DATETIME = re.compile(r"^(-?\d{4,})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)?$")


def _datetime_value(text: str):
    m = _DATETIME.match(text.strip())
    if not m:
        raise ValueError(text)
    y, mo, d, h, mi, s = (int(g) for g in m.groups()[:6])
    fraction = Decimal(m.group(7) or "0").normalize()
    zone = m.group(8)
    moment = datetime(y, mo, d, h, mi, s)
    if zone and zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        moment -= sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
    return (moment.isoformat(), fraction, zone is not None)


def value_key(term):
    """The term as compared: literals of the datatypes pyoxigraph stores as values become
    (datatype family, value) when BY_VALUE is set (else they stay as written); language tags
    are lowercased; everything else is itself."""
    if term is None or term[0] != "L":
        return term
    _, lexical, datatype, lang = term
    if lang is not None:
        return ("L", lexical, datatype, lang.lower())
    return by_value(term) if BY_VALUE else term


def by_value(term):
    """A literal of a datatype pyoxigraph stores as a value as (datatype family, value)."""
    if term is None or term[0] != "L" or term[3] is not None:
        return value_key(term)
    _, lexical, datatype, _ = term
    try:
        if datatype in INTEGER_TYPES:
            return ("V", "integer", Decimal(lexical.strip()))
        if datatype == XSD + "decimal":
            return ("V", "decimal", Decimal(lexical.strip()))
        if datatype == XSD + "double":
            return ("V", "double", _float_value(lexical))
        if datatype == XSD + "float":
            return ("V", "float", _f32(lexical))
        if datatype == XSD + "boolean" and lexical.strip() in ("true", "false", "1", "0"):
            return ("V", "boolean", lexical.strip() in ("true", "1"))
        if datatype == XSD + "dateTime":
            return ("V", "dateTime", _datetime_value(lexical))
    except (ValueError, InvalidOperation, OverflowError):
        pass
    return term


def key_item(item):
    return tuple(value_key(t) for t in item)


# ---------------------------------------------------------------------------------------------
# Multisets of tuples of terms (rows, triples, quads) equal up to one blank node bijection.


def _bnodes(item):
    for t in item:
        if t is not None:
            if t[0] == "B":
                yield t
            elif t[0] == "T":
                yield from _bnodes(t[1:])


def _has_bnode(item) -> bool:
    return next(_bnodes(item), None) is not None


def _relabel(term, mapping):
    if term is None:
        return None
    if term[0] == "B":
        return mapping.get(term, term)
    if term[0] == "T":
        return ("T",) + tuple(_relabel(t, mapping) for t in term[1:])
    return term


def _signature(term, colour, me):
    if term is None:
        return None
    if term[0] == "B":
        return ("SELF",) if term == me else ("B", colour[term])
    if term[0] == "T":
        return ("T",) + tuple(_signature(t, colour, me) for t in term[1:])
    return term


def _refine(items, colour):
    """One round of colour refinement: a blank node's new colour is its old colour plus the
    multiset of the items it occurs in, seen from it."""
    seen = defaultdict(list)
    for item in items:
        for b in set(_bnodes(item)):
            seen[b].append(hash(tuple(_signature(t, colour, b) for t in item)))
    return {b: hash((colour[b], tuple(sorted(seen[b])))) for b in colour}


def _classes(colour):
    groups = defaultdict(list)
    for b, c in colour.items():
        groups[c].append(b)
    return groups


def _stable(items_a, items_b, ca, cb):
    while True:
        n = len(set(ca.values()) | set(cb.values()))
        na, nb = _refine(items_a, ca), _refine(items_b, cb)
        if len(set(na.values()) | set(nb.values())) == n:
            return ca, cb
        ca, cb = na, nb


def match_multisets(items_a, items_b, budget=20000):
    """Whether two lists of tuples are equal as multisets up to a bijection of blank nodes.
    Returns (True, mapping from a's blank nodes to b's) or (False, None)."""
    ground_a = Counter(i for i in items_a if not _has_bnode(i))
    ground_b = Counter(i for i in items_b if not _has_bnode(i))
    if ground_a != ground_b:
        return False, None
    blank_a = [i for i in items_a if _has_bnode(i)]
    blank_b = [i for i in items_b if _has_bnode(i)]
    if len(blank_a) != len(blank_b):
        return False, None
    if not blank_a:
        return True, {}
    ca = {b: 0 for i in blank_a for b in _bnodes(i)}
    cb = {b: 0 for i in blank_b for b in _bnodes(i)}
    if len(ca) != len(cb):
        return False, None
    target = Counter(blank_b)
    steps = [budget]

    def search(ca, cb):
        ca, cb = _stable(blank_a, blank_b, ca, cb)
        ga, gb = _classes(ca), _classes(cb)
        if {c: len(v) for c, v in ga.items()} != {c: len(v) for c, v in gb.items()}:
            return None
        ambiguous = [c for c, v in ga.items() if len(v) > 1]
        if not ambiguous:
            mapping = {ga[c][0]: gb[c][0] for c in ga}
            relabelled = Counter(tuple(_relabel(t, mapping) for t in i) for i in blank_a)
            return mapping if relabelled == target else None
        c = min(ambiguous, key=lambda c: len(ga[c]))
        a = ga[c][0]
        for b in gb[c]:
            steps[0] -= 1
            if steps[0] < 0:
                return None
            fresh = hash(("pick", c, len(ca)))
            found = search({**ca, a: fresh}, {**cb, b: fresh})
            if found is not None:
                return found
        return None

    mapping = search(ca, cb)
    return mapping is not None, mapping


def describe_difference(items_rete, items_ref, what="rows") -> list[str]:
    """Lines showing what each side has that the other has not (blank nodes ignored)."""
    a = Counter(key_item(_blank_free(i)) for i in items_rete)
    b = Counter(key_item(_blank_free(i)) for i in items_ref)
    only_a, only_b = a - b, b - a
    lines = [f"{len(items_rete)} {what} from rete, {len(items_ref)} from the reference; "
             f"{sum(only_a.values())} only in rete, {sum(only_b.values())} only in the reference"
             + (" (blank nodes masked)" if any(_has_bnode(i) for i in items_rete + items_ref) else "")]
    limit = 20 if VERBOSE else 4
    raw_a = {key_item(_blank_free(i)): i for i in items_rete}
    raw_b = {key_item(_blank_free(i)): i for i in items_ref}
    for label, only, raw in (("rete only", only_a, raw_a), ("reference only", only_b, raw_b)):
        for k in list(only)[:limit]:
            lines.append(f"{label}: {show_item(raw[k])}" + (f" x{only[k]}" if only[k] > 1 else ""))
    return lines


def _blank_free(item):
    return tuple(("B", "_") if t is not None and t[0] == "B" else t for t in item)


def lexical_notes(items_rete, items_ref) -> list[str]:
    """Literals that are equal by value but not lexically between the two answers."""
    terms_a = {t for i in items_rete for t in i if t is not None and t[0] == "L"}
    terms_b = {t for i in items_ref for t in i if t is not None and t[0] == "L"}
    by_key = {}
    for t in terms_b - terms_a:
        by_key.setdefault(value_key(t), t)
    pairs = []
    for t in sorted(terms_a - terms_b):
        other = by_key.get(value_key(t))
        if other is not None:
            pairs.append((t, other))
    if not pairs:
        return []
    sample = "; ".join(f"rete {show(a)} = reference {show(b)}" for a, b in pairs[:2])
    return [f"{len(pairs)} literal(s) equal by value only, reference canonicalised: {sample}"
            + (" ..." if len(pairs) > 2 else "")]


# ---------------------------------------------------------------------------------------------
# The query text: only what the comparison needs (top-level ORDER BY, REDUCED, SELECT *).

_TOKEN = re.compile(
    r'''(?P<ws>\s+)
      | (?P<comment>\#[^\n]*)
      | (?P<str>"""(?:[^"\\]|\\.|"(?!""))*"""|\'\'\'(?:[^'\\]|\\.|'(?!''))*\'\'\'
               |"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
      | (?P<iri><[^<>"{}|^`\\\x00-\x20]*>)
      | (?P<var>[?$][^\s(){}\[\],;.=<>!|&+*/^"'#]+)
      | (?P<word>[^\s(){}\[\],;"'#<>=!|&+*/?$^]+)
      | (?P<punct>.)''',
    re.X | re.S,
)


def tokens(query: str) -> list[tuple[str, str]]:
    out = []
    for m in _TOKEN.finditer(query):
        kind = m.lastgroup
        if kind not in ("ws", "comment"):
            out.append((kind, m.group()))
    return out


def _closing(toks, i: int) -> int:
    """The index of the parenthesis closing the one at toks[i]."""
    level = 0
    for j in range(i, len(toks)):
        if toks[j] == ("punct", "("):
            level += 1
        elif toks[j] == ("punct", ")"):
            level -= 1
            if level == 0:
                return j
    return len(toks)


def _expression_key(toks) -> tuple:
    """Tokens of an expression, as compared (words case-insensitively, outer parentheses off)."""
    while len(toks) >= 2 and toks[0] == ("punct", "(") and _closing(toks, 0) == len(toks) - 1:
        toks = toks[1:-1]
    return tuple((k, v.upper() if k == "word" else v) for k, v in toks)


def select_aliases(toks, upper) -> dict[tuple, str]:
    """{expression key: variable} for each `(expression AS ?v)` of the top-level SELECT clause."""
    if "SELECT" not in upper:
        return {}
    i = upper.index("SELECT") + 1
    aliases = {}
    while i < len(toks) and toks[i] != ("punct", "{") and upper[i] not in ("WHERE", "FROM"):
        if toks[i] == ("punct", "("):
            j = _closing(toks, i)
            inner = toks[i + 1:j]
            if len(inner) >= 3 and inner[-2][0] == "word" and inner[-2][1].upper() == "AS" and inner[-1][0] == "var":
                aliases[_expression_key(inner[:-2])] = inner[-1][1][1:]
            i = j
        i += 1
    return aliases


def query_shape(query: str):
    """(ORDER BY keys, REDUCED, SELECT *): the keys are a list with, per top-level ORDER BY
    condition, the variable name when the condition is a plain variable or an expression the
    SELECT clause also projects as `(expression AS ?v)` (then ?v), else None."""
    toks = tokens(query)
    upper = [v.upper() if k == "word" else v for k, v in toks]
    reduced = "REDUCED" in upper
    star = any(upper[i] == "SELECT" and (upper[i + 1] == "*" or upper[i + 1] in ("DISTINCT", "REDUCED") and upper[i + 2] == "*")
               for i in range(len(upper) - 2))
    depth = 0
    start = None
    for i, (kind, value) in enumerate(toks):
        if kind == "punct" and value == "{":
            depth += 1
        elif kind == "punct" and value == "}":
            depth -= 1
        elif depth == 0 and upper[i] == "ORDER" and i + 1 < len(toks) and upper[i + 1] == "BY":
            start = i + 2
    if start is None:
        return None, reduced, star
    aliases = select_aliases(toks, upper)
    keys = []
    i = start
    while i < len(toks) and upper[i] not in ("LIMIT", "OFFSET", "VALUES"):
        kind, value = toks[i]
        if kind == "var":
            keys.append(value[1:])
            i += 1
            continue
        first = i
        direction = kind == "word" and upper[i] in ("ASC", "DESC")
        if kind in ("word", "iri"):
            i += 1
        if i < len(toks) and toks[i] == ("punct", "("):
            j = _closing(toks, i)
            expression = toks[i + 1:j] if direction else toks[first:j + 1]
            if len(expression) == 1 and expression[0][0] == "var":
                keys.append(expression[0][1][1:])
            else:
                keys.append(aliases.get(_expression_key(expression)))
            i = j + 1
        else:
            keys.append(None)
            if kind not in ("word", "iri"):
                i += 1
    return keys, reduced, star


_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "b": "\b", "f": "\f", '"': '"', "'": "'", "\\": "\\"}


def _string_value(token: str) -> str:
    """The value of a SPARQL string token (single or triple quotes, escapes decoded)."""
    quote = 3 if token[:3] in ('"' * 3, "'" * 3) else 1
    return re.sub(r"\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)",
                  lambda m: chr(int(m.group(1)[1:], 16)) if len(m.group(1)) > 1 else _ESCAPES.get(m.group(1), m.group(0)),
                  token[quote:-quote])


def group_concat_separators(query: str) -> dict[str, str]:
    """{variable: separator} for each `GROUP_CONCAT(...) AS ?v` of the query, at any level
    (SEPARATOR defaults to one space)."""
    toks = tokens(query)
    found = {}
    for i, (kind, value) in enumerate(toks):
        if kind != "word" or value.upper() != "GROUP_CONCAT" or i + 1 >= len(toks) or toks[i + 1] != ("punct", "("):
            continue
        level, j, separator = 0, i + 1, " "
        while j < len(toks):
            if toks[j] == ("punct", "("):
                level += 1
            elif toks[j] == ("punct", ")"):
                level -= 1
                if level == 0:
                    break
            elif (level == 1 and toks[j] == ("punct", ";") and j + 3 < len(toks) and toks[j + 1][0] == "word"
                  and toks[j + 1][1].upper() == "SEPARATOR" and toks[j + 2] == ("punct", "=") and toks[j + 3][0] == "str"):
                separator = _string_value(toks[j + 3][1])
            j += 1
        if j + 2 < len(toks) and toks[j + 1][0] == "word" and toks[j + 1][1].upper() == "AS" and toks[j + 2][0] == "var":
            found[toks[j + 2][1][1:]] = separator
    return found


def min_max_variables(query: str) -> set[str]:
    """The variables bound by `(MIN(...) AS ?v)` or `(MAX(...) AS ?v)` anywhere in the query."""
    toks = tokens(query)
    found = set()
    for i, (kind, value) in enumerate(toks):
        if kind == "word" and value.upper() in ("MIN", "MAX") and i + 1 < len(toks) and toks[i + 1] == ("punct", "("):
            j = _closing(toks, i + 1)
            if j + 2 < len(toks) and toks[j + 1][0] == "word" and toks[j + 1][1].upper() == "AS" and toks[j + 2][0] == "var":
                found.add(toks[j + 2][1][1:])
    return found


def group_concat_key(term, separator: str):
    """A GROUP_CONCAT result as compared: its parts, sorted (SPARQL leaves their order
    unspecified), with its datatype and language."""
    if term is None or term[0] != "L" or separator == "":
        return value_key(term)
    return ("GC", tuple(sorted(term[1].split(separator))), term[2], term[3].lower() if term[3] else None)


# ---------------------------------------------------------------------------------------------
# The engines.


class Skip(Exception):
    pass


def run_rete(args: list[str], timeout: int = QUERY_TIMEOUT) -> tuple[bytes, float]:
    started = time.monotonic()
    try:
        proc = subprocess.run([str(RETE), *args], capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"rete {args[0]} took more than {timeout}s")
    elapsed = time.monotonic() - started
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RuntimeError(f"rete {args[0]} exited with {proc.returncode}: {' / '.join(err[-3:]) or '(no message)'}")
    return proc.stdout, elapsed


def parse_rete_json(data: bytes):
    doc = json.loads(data.decode("utf-8"))
    if "boolean" in doc:
        if not isinstance(doc["boolean"], bool):
            raise ValueError(f"'boolean' is not a JSON boolean: {doc['boolean']!r}")
        return doc["boolean"]
    variables = doc["head"]["vars"]
    rows = []
    for binding in doc["results"]["bindings"]:
        unknown = set(binding) - set(variables)
        if unknown:
            raise ValueError(f"binding of undeclared variable(s) {sorted(unknown)}")
        rows.append(tuple(from_json(binding[v]) if v in binding else None for v in variables))
    return variables, rows


def parse_rete_nt(data: bytes):
    out = []
    for quad in ox.parse(data, format=ox.RdfFormat.N_TRIPLES):
        out.append((from_ox(quad.subject), from_ox(quad.predicate), from_ox(quad.object)))
    return out


# ---------------------------------------------------------------------------------------------
# Comparing answers. Each returns (ok, reason, detail lines).


def order_key(row, checked: list[int]) -> tuple:
    """A row's ORDER BY keys as compared (row as compared, `checked` the key columns): literals
    by value. Blank nodes are ordered before IRIs, but among themselves in an order of the
    engine's choice (SPARQL 1.1 §15.1), so the keys after a blank node (or a triple term holding
    one) are free."""
    key = []
    for i in checked:
        key.append(("B",) if row[i] is not None and _has_bnode((row[i],)) else _sort_value(by_value(row[i])))
        if key[-1] == ("B",):
            break
    return tuple(key)


def _sort_value(key):
    """A key of `by_value` as ORDER BY sees it: numbers of every datatype on one line (`<`
    compares them across datatypes, so "3"^^xsd:integer and "3.0"^^xsd:decimal are tied), NaN
    equal to itself, a dateTime without a time zone at that time in UTC (its order against zoned
    values is otherwise indeterminate, XSD 1.1 §3.3.7.3)."""
    if key is None or key[0] != "V":
        return key
    family, value = key[1], key[2]
    if family in ("integer", "decimal", "double", "float"):
        return ("N", "NaN") if value == "NaN" or value != value else ("N", float(value))
    if family == "dateTime":
        return ("V", "dateTime", value[:2])
    return key


def literal_kind(term):
    """Which literals `<` orders against each other (SPARQL 1.1 §17.3): numbers, booleans,
    strings with or without a language tag, each date/time type, durations; None for what is
    not a literal. The order between kinds is the engine's (§15.1)."""
    if term is None or term[0] != "L":
        return None
    value = by_value(term)
    if value[0] == "V":
        return "number" if value[1] in ("integer", "decimal", "double", "float") and value[2] != "NaN" and value[2] == value[2] else value[1]
    datatype = term[2]
    if datatype in (XSD_STRING, RDF_LANG_STRING, RDF_DIR_LANG_STRING):
        return "text"
    if datatype in INTEGER_TYPES or datatype in (XSD + "decimal", XSD + "double", XSD + "float"):
        try:
            return "number" if Decimal(term[1].strip()).is_finite() else "NaN"
        except InvalidOperation:
            return datatype + " (ill-typed)"
    return datatype


def sliced(query: str) -> bool:
    """Whether the query has a top-level LIMIT or OFFSET."""
    depth = 0
    for kind, value in tokens(query):
        if kind == "punct" and value in "{}":
            depth += 1 if value == "{" else -1
        elif depth == 0 and kind == "word" and value.upper() in ("LIMIT", "OFFSET"):
            return True
    return False


def ties_at_slice(keys, variables, a, b) -> bool:
    """Whether rows `a` and `b` (as compared) of a sliced ORDER BY query differ only among rows
    tied on the ORDER BY keys with the first or last row: SPARQL leaves the order of tied
    solutions open (§15.1), so LIMIT / OFFSET may keep any of them. Every other group of tied
    rows must be the same multiset."""
    checked = []
    for k in keys or []:
        if k is None or k not in variables:
            break
        checked.append(variables.index(k))
    if not checked or len(a) != len(b):
        return False
    ka, kb = [order_key(r, checked) for r in a], [order_key(r, checked) for r in b]
    if ka != kb or not ka:
        return False
    inner = lambda rows, ks: [r for r, k in zip(rows, ks) if k not in (ks[0], ks[-1])]  # noqa: E731
    return match_multisets(inner(a, ka), inner(b, kb))[0]


def compare_select(query: str, ref_vars, ref_rows, rete_vars, rete_rows):
    keys, reduced, star = query_shape(query)
    if star and sorted(rete_vars) == sorted(ref_vars) and rete_vars != ref_vars:
        rete_rows = [tuple(r[rete_vars.index(v)] for v in ref_vars) for r in rete_rows]
        rete_vars = ref_vars
    if rete_vars != ref_vars:
        return False, f"variables differ: rete {rete_vars}, reference {ref_vars}", []
    notes = []
    concat = {ref_vars.index(v): sep for v, sep in group_concat_separators(query).items() if v in ref_vars}

    # MIN and MAX pick one of the group's values that are equal under ORDER BY (SPARQL 1.1
    # §18.5.1.4-5), and engines meet the group's rows in different orders: "0"^^xsd:integer and
    # "-0.0E0"^^xsd:double may both be the minimum. Such variables are compared as ORDER BY sees them.
    extremes = {ref_vars.index(v) for v in min_max_variables(query) if v in ref_vars}

    def row_key(row):
        return tuple(group_concat_key(t, concat[i]) if i in concat else _sort_value(by_value(t)) if i in extremes else value_key(t)
                     for i, t in enumerate(row))

    a = [row_key(r) for r in rete_rows]
    b = [row_key(r) for r in ref_rows]
    if reduced:
        a, b = list(dict.fromkeys(a)), list(dict.fromkeys(b))
        notes.append("REDUCED: duplicates ignored")
    ok, _ = match_multisets(a, b)
    if not ok and sliced(query) and ties_at_slice(keys, ref_vars, a, b):
        ok = True
        notes.append("rows tied on the ORDER BY keys at the LIMIT/OFFSET boundary differ (either may be kept)")
    if not ok:
        return False, "rows differ", describe_difference(rete_rows, ref_rows)
    if concat:
        reordered = ""
        if Counter(a) == Counter(b):  # no blank nodes: count the rows equal only up to part order
            n = sum((Counter(key_item(r) for r in rete_rows) - Counter(key_item(r) for r in ref_rows)).values())
            reordered = f", {n} row(s) equal only so" if n else ""
        notes.append("GROUP_CONCAT " + " ".join("?" + ref_vars[i] for i in sorted(concat))
                     + " compared as multisets of parts" + reordered)
    order = ""
    if keys is not None:
        checked = []
        for k in keys:
            if k is None or k not in ref_vars:
                break
            checked.append(ref_vars.index(k))
        mixed = next((n for n, i in enumerate(checked) if len({literal_kind(r[i]) for r in rete_rows + ref_rows} - {None}) > 1), None)
        if len(checked) < len(keys) or mixed is not None:
            why = "other ORDER BY conditions are expressions or not projected"
            if mixed is not None:
                why = f"?{ref_vars[checked[mixed]]} holds literals of kinds SPARQL does not order against each other (§15.1)"
                checked = checked[:mixed]
            notes.append("order checked on " + (" ".join("?" + ref_vars[i] for i in checked) if checked else "nothing") + f" ({why})")
        if checked:
            def seq(rows):
                return [order_key(row_key(r), checked) for r in rows]
            sa, sb = seq(rete_rows), seq(ref_rows)
            if sa != sb:
                at = next(i for i, (x, y) in enumerate(zip(sa, sb)) if x != y)
                return False, "same rows, different order", [
                    f"first difference at row {at + 1} on " + " ".join("?" + ref_vars[i] for i in checked),
                    f"rete:      {show_item(rete_rows[at])}",
                    f"reference: {show_item(ref_rows[at])}",
                ]
            order = ", ordered by " + " ".join("?" + ref_vars[i] for i in checked)
    notes += lexical_notes(rete_rows, ref_rows)
    return True, f"{len(rete_rows)} rows{order}" + "".join("; " + n for n in notes), []


def compare_graph(query: str, ref_triples, rete_triples, describe: bool):
    ref_set = list(dict.fromkeys(ref_triples))
    rete_set = list(dict.fromkeys(rete_triples))
    notes = []
    if len(rete_set) != len(rete_triples):
        notes.append(f"rete wrote {len(rete_triples) - len(rete_set)} duplicate triple(s)")
    a = [key_item(t) for t in rete_set]
    b = [key_item(t) for t in ref_set]
    if describe and any(_has_bnode(t) for t in ref_set):
        # Engines may legitimately describe blank nodes differently: compare the triples
        # without blank nodes exactly, and only count the others.
        ga = [t for t in a if not _has_bnode(t)]
        gb = [t for t in b if not _has_bnode(t)]
        ok = Counter(ga) == Counter(gb)
        notes.append(f"DESCRIBE with blank nodes: {len(b) - len(gb)} triple(s) with blank nodes only counted")
        if not ok:
            return False, "triples without blank nodes differ", describe_difference(
                [t for t in rete_set if not _has_bnode(t)], [t for t in ref_set if not _has_bnode(t)], "triples")
        if len(a) - len(ga) != len(b) - len(gb):
            return False, f"{len(a) - len(ga)} triples with blank nodes from rete, {len(b) - len(gb)} from the reference", []
    else:
        ok, _ = match_multisets(a, b)
        if not ok:
            return False, "graphs are not isomorphic", describe_difference(rete_set, ref_set, "triples")
    bnodes = len({x for t in rete_set for x in _bnodes(t)})
    notes += lexical_notes(rete_set, ref_set)
    return True, f"{len(rete_set)} triples" + (f", {bnodes} blank nodes" if bnodes else "") + "".join("; " + n for n in notes), []


# ---------------------------------------------------------------------------------------------
# Datasets and checks.


def data_files(folder: Path) -> list[Path]:
    found = []
    for path in sorted(folder.iterdir()):
        inner = path.with_suffix("") if path.suffix == ".gz" else path
        if path.is_file() and inner.suffix in RDF_SUFFIXES:
            found.append(path)
    return found


def base_iri(path: Path) -> str:
    return "file://" + str(path.resolve())


def load_reference(files: list[Path]) -> ox.Store:
    store = ox.Store()
    for path in files:
        if path.suffix == ".gz":
            import gzip

            fmt = ox.RdfFormat.from_extension(path.with_suffix("").suffix.lstrip("."))
            with gzip.open(path, "rb") as data:
                store.bulk_load(data, format=fmt, base_iri=base_iri(path))
        else:
            store.bulk_load(path=str(path), base_iri=base_iri(path))
    return store


def newest_mtime(paths) -> float:
    return max((p.stat().st_mtime for p in paths), default=0.0)


def ensure_binary(build: bool = True) -> str | None:
    """Has cargo bring target/release/rete up to date (a no-op when it is: cargo, not file
    times, knows every source, the vendored crates included). Returns an error message, or
    None. With build=False, only checks that the binary is there."""
    if not build:
        if not RETE.exists():
            return "target/release/rete is missing (and --no-build was given)"
    else:
        proc = subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "rete-publisher"], cwd=ROOT, stdout=sys.stderr, stderr=sys.stderr)
        if proc.returncode != 0:
            return f"cargo build --release -p rete-publisher failed with status {proc.returncode}"
        if not RETE.exists():
            return "cargo build succeeded but target/release/rete does not exist"
    help_ = subprocess.run([str(RETE), "query", "--help"], capture_output=True)
    if help_.returncode != 0:
        return "this rete has no working `query` subcommand (`rete query --help` failed)"
    return None


def build_rete(name: str, files: list[Path]) -> Path:
    OUT.mkdir(parents=True, exist_ok=True)
    target = OUT / f"{name}.rete"
    if not target.exists() or target.stat().st_mtime < max(newest_mtime(files), RETE.stat().st_mtime):
        run_rete(["build", *map(str, files), "-o", str(target), "--quiet", *BUILD_FLAGS], timeout=600)
    return target


def query_files(name: str, folder: Path) -> list[tuple[str, Path]]:
    if folder.parent == DATASETS:
        return [(f"{name}/{p.name}", p) for p in sorted((folder / "queries").glob("*.rq"))]
    found = [(f"{name}/examples/{p.name}", p) for p in sorted((folder / "queries").glob("*.rq"))]
    found += [(f"{name}/{p.name}", p) for p in sorted((QUERIES / name).glob("*.rq"))]
    return found


def check_dump(rete_file: Path, reference: "Reference"):
    data, _ = run_rete(["dump", str(rete_file)])
    rete_quads = [(from_ox(q.subject), from_ox(q.predicate), from_ox(q.object), from_ox(q.graph_name))
                  for q in ox.parse(data, format=ox.RdfFormat.N_QUADS)]
    status, ref_quads = reference.ask("quads")
    if status != "ok":
        return False, f"the reference engine failed: {ref_quads}", []
    ok, _ = match_multisets([key_item(q) for q in rete_quads], [key_item(q) for q in ref_quads])
    if not ok:
        return False, "rete dump and the reference store hold different quads", describe_difference(rete_quads, ref_quads, "quads")
    graphs = len({q[3] for q in rete_quads if q[3] is not None})
    notes = lexical_notes(rete_quads, ref_quads)
    return True, f"{len(rete_quads)} quads in {graphs} named graph(s)" + "".join("; " + n for n in notes), []


def union_default_graph(files: list[Path]) -> bool:
    """Whether the example's card.toml asks rete build for `default_graph = "union"`."""
    card = files[0].parent / "card.toml" if files else None
    if card is None or not card.exists():
        return False
    return tomllib.loads(card.read_text(encoding="utf-8")).get("default_graph") == "union"


def reference_answer(store: ox.Store, query: str, union: bool = False):
    """The reference's answer, read in full: a bool, ("graph", triples) or ("select", variables, rows).
    With `union`, a query without FROM sees every graph, as rete's file built with
    `--default-graph union` (the examples hold no triple in two graphs, where pyoxigraph would
    repeat it and rete not). pyoxigraph's union would override the query's own FROM, which
    rete's does not: it is asked for only when the query has no FROM clause."""
    has_from = re.search(r"^[^#]*\bFROM\b", query, re.IGNORECASE | re.MULTILINE) is not None
    ref = store.query(query, use_default_graph_as_union=union and not has_from)
    if isinstance(ref, ox.QueryBoolean):
        return bool(ref)
    if isinstance(ref, ox.QueryTriples):
        triples = []
        for t in ref:
            if len(triples) == MAX_ANSWER:
                raise ValueError(f"more than {MAX_ANSWER} triples")
            triples.append((from_ox(t.subject), from_ox(t.predicate), from_ox(t.object)))
        return ("graph", triples)
    variables = [v.value for v in ref.variables]
    rows = []
    for solution in ref:
        if len(rows) == MAX_ANSWER:
            raise ValueError(f"more than {MAX_ANSWER} rows")
        rows.append(tuple(from_ox(solution[i]) for i in range(len(variables))))
    return ("select", variables, rows)


def _reference_worker(conn, files: list[Path], stderr_path: str) -> None:
    """The reference engine's process: loads the dataset, then answers requests until told to
    stop. Its stderr goes to a file, so that a Rust panic (which aborts the process: pyoxigraph
    panics on some sorts) can be reported in one line."""
    fd = os.open(stderr_path, os.O_WRONLY | os.O_APPEND)
    os.dup2(fd, 2)
    try:
        store = load_reference(files)
        union = union_default_graph(files)
    except Exception as err:  # noqa: BLE001 - reported to the parent
        conn.send(("failed", f"{type(err).__name__}: {err}"))
        return
    conn.send(("ok", None))
    while True:
        try:
            request = conn.recv()
        except EOFError:
            return
        if request is None:
            return
        kind, query = request
        try:
            if kind == "quads":
                answer = [(from_ox(q.subject), from_ox(q.predicate), from_ox(q.object), from_ox(q.graph_name)) for q in store]
            else:
                answer = reference_answer(store, query, union)
            conn.send(("ok", answer))
        except (SyntaxError, OSError, ValueError) as err:
            conn.send(("rejected", str(err)))
        except BaseException as err:  # a Rust panic that unwinds is a pyo3 PanicException (a BaseException)
            if isinstance(err, (KeyboardInterrupt, SystemExit)):
                raise
            conn.send(("failed", f"{type(err).__name__}: {str(err).strip().splitlines()[0] if str(err).strip() else ''}"))


class Reference:
    """pyoxigraph holding one dataset, in a child process so that a crash or a hang of the
    reference engine fails one check instead of the whole run (the process is then restarted)."""

    def __init__(self, files: list[Path]):
        self.files = files
        self.proc = None
        self.stderr = tempfile.NamedTemporaryFile(prefix="differential-reference-", suffix=".log", delete=False)
        self.stderr.close()
        status, message = self._start()
        if status != "ok":
            self.close()
            raise RuntimeError(f"the reference could not load the data: {message}")

    def _start(self):
        context = multiprocessing.get_context("fork")
        self.conn, child = context.Pipe()
        self.proc = context.Process(target=_reference_worker, args=(child, self.files, self.stderr.name), daemon=True)
        self.proc.start()
        child.close()
        return self._receive(600)

    def _receive(self, timeout: float):
        try:
            if not self.conn.poll(timeout):
                self._stop()
                return "failed", f"no answer in {timeout}s (the reference process was stopped)"
            return self.conn.recv()
        except (EOFError, OSError):
            self.proc.join(5)
            code = self.proc.exitcode
            self.proc = None
            return "failed", f"the reference process died ({'signal ' + str(-code) if code and code < 0 else 'status ' + str(code)}){self._last_error()}"

    def _last_error(self) -> str:
        try:
            lines = [line.strip() for line in Path(self.stderr.name).read_text(errors="replace").splitlines() if line.strip()]
        except OSError:
            return ""
        for i, line in enumerate(lines):
            if "panicked at" in line and i + 1 < len(lines):
                return f": panic: {lines[i + 1]}"
        return f": {lines[-1]}" if lines else ""

    def ask(self, kind: str, query: str | None = None):
        """("ok", answer), ("rejected", message) or ("failed", message)."""
        if self.proc is None:
            Path(self.stderr.name).write_text("")
            status, message = self._start()
            if status != "ok":
                return status, f"restarting the reference: {message}"
        self.conn.send((kind, query))
        return self._receive(QUERY_TIMEOUT)

    def _stop(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.join(5)
            self.proc = None

    def close(self):
        if self.proc is not None:
            try:
                self.conn.send(None)
            except OSError:
                pass
            self.proc.join(5)
            self._stop()
        try:
            os.unlink(self.stderr.name)
        except OSError:
            pass


def check_query(rete_file: Path, reference: Reference, path: Path):
    query = path.read_text(encoding="utf-8")
    status, ref = reference.ask("query", query)
    if status == "rejected":
        return False, f"the reference rejects the query: {ref}", []
    if status != "ok":
        return False, f"the reference engine failed: {ref}", []
    return check_answer(rete_file, path, query, ref)


def check_answer(rete_file: Path, path: Path, query: str, ref):
    """rete's answer to the query of `path` (text `query`) against the reference's answer `ref`
    (as Reference.ask gives it): (ok, reason, detail lines)."""
    if isinstance(ref, tuple) and ref[0] == "graph":
        data, elapsed = run_rete(["query", str(rete_file), "--file", str(path), "--format", "nt"])
        describe = any(k == "word" and v.upper() == "DESCRIBE" for k, v in tokens(query))
        ok, reason, detail = compare_graph(query, ref[1], parse_rete_nt(data), describe)
    else:
        data, elapsed = run_rete(["query", str(rete_file), "--file", str(path), "--format", "json"])
        answer = parse_rete_json(data)
        if isinstance(ref, bool):
            if not isinstance(answer, bool):
                return False, "rete answered solutions to an ASK query", []
            ok = answer == ref
            reason, detail = (f"ASK {str(answer).lower()}" if ok else f"rete says {str(answer).lower()}, the reference {str(ref).lower()}"), []
        else:
            if isinstance(answer, bool):
                return False, "rete answered a boolean to a SELECT query", []
            ok, reason, detail = compare_select(query, ref[1], ref[2], *answer)
    return ok, f"{reason}; rete {elapsed:.2f}s", detail


def run_random(seed: str, count: str, build: bool):
    """random.py's fixed-seed run (its output passed through): (passed, failed), or None when
    it printed no totals."""
    command = [sys.executable, str(Path(__file__).resolve().parent / "random.py"), "--seed", seed, "--count", count]
    command += [] if build else ["--no-build"]
    print(f"differential: {' '.join(command[1:])}", flush=True)
    proc = subprocess.run(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    totals = None
    for line in proc.stdout.splitlines():
        m = re.fullmatch(r"(\d+) passed, (\d+) failed, (\d+) skipped", line)
        if m:
            totals = (int(m.group(1)), int(m.group(2)))
            line = f"random: {line}"
        print(line, flush=True)
    return totals


def main(argv: list[str]) -> int:
    global VERBOSE
    filters = []
    build = True
    randomised = None
    argv = list(argv)
    while argv:
        arg = argv.pop(0)
        if arg == "--random":
            seed, _, count = (argv.pop(0) if argv else "").partition(":")
            if not seed or not count.isdigit():
                print("differential: --random takes SEED:COUNT, e.g. --random 14:30")
                print("0 passed, 1 failed")
                return 1
            randomised = (seed, count)
        elif arg in ("-v", "--verbose"):
            VERBOSE = True
        elif arg == "--no-build":
            build = False
        elif arg in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            filters.append(arg)

    def wanted(name: str) -> bool:
        return not filters or any(f in name for f in filters)

    passed = failed = 0

    def report(ok: bool, name: str, reason: str, detail=()):
        nonlocal passed, failed
        passed += ok
        failed += not ok
        print(f"{'PASS' if ok else 'FAIL'} {name} ({reason})", flush=True)
        for line in list(detail)[: 40 if VERBOSE else 9]:
            print(f"    {line}", flush=True)

    datasets = []
    folders = sorted(p for p in (ROOT / "examples").iterdir() if p.is_dir())
    folders += sorted(p for p in DATASETS.iterdir() if p.is_dir())
    for folder in folders:
        files = data_files(folder)
        if files:
            checks = [f"{folder.name}/dump"] + [n for n, _ in query_files(folder.name, folder)]
            if any(wanted(c) for c in checks):
                datasets.append((folder, files))
    if not datasets:
        print(f"differential: no check matches {filters}")
        print("0 passed, 1 failed")
        return 1

    error = ensure_binary(build)
    if error:
        report(False, "rete", error)
        for folder, _ in datasets:
            for name, _ in query_files(folder.name, folder):
                if wanted(name):
                    report(False, name, "not run: " + error)
        print(f"{passed} passed, {failed} failed")
        return 1

    per_dataset = []
    notes = 0
    started = time.monotonic()
    for folder, files in datasets:
        name = folder.name
        try:
            rete_file = build_rete(name, files)
            reference = Reference(files)
        except (RuntimeError, OSError, SyntaxError, ValueError) as err:
            report(False, f"{name}/build", str(err))
            continue
        before = passed + failed
        checks = [(f"{name}/dump", None)] + query_files(name, folder)
        for check, path in checks:
            if not wanted(check):
                continue
            try:
                if path is None:
                    ok, reason, detail = check_dump(rete_file, reference)
                else:
                    ok, reason, detail = check_query(rete_file, reference, path)
            except (RuntimeError, ValueError, KeyError, SyntaxError, UnicodeDecodeError) as err:
                ok, reason, detail = False, f"{type(err).__name__}: {err}", []
            notes += "equal by value only" in reason
            report(ok, check, reason, detail)
        reference.close()
        per_dataset.append(f"{name} {passed + failed - before}")

    print(f"differential: {passed + failed} checks ({', '.join(per_dataset)}) in {time.monotonic() - started:.1f}s; "
          f"{notes} passed only with literals compared by value (see the notes)")
    if randomised:
        more = run_random(*randomised, build)
        if more is None:
            report(False, "random", "random.py ended without its `N passed, N failed, N skipped` line")
        else:
            passed, failed = passed + more[0], failed + more[1]
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
