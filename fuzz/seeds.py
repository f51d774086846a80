#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets into build/fuzz/seeds/<target>/.

- read_file: .rete files built by `target/release/rete build` from the W3C SPARQL test suite's
  data files (`$RETE_SPARQL_TESTS`, default <repo>/../shared/sparql-tests) and from the first
  statements of each example, each flat and with a directory of small nodes (`--block-quads 8
  --node-entries 4`), each at most 64 KiB (the target's -max_len).
- build_input: the same documents as N-Triples, N-Quads, Turtle and TriG (pyoxigraph writes the
  other syntaxes), each prefixed with the target's option byte (fuzz/src/build.rs).
- query_damaged: short byte strings (the input is a structured `Damage`, read with `arbitrary`).
- request: the requests of fuzz/requests.txt (every route, from tests/worker's specs), and each W3C
  suite query (`*.rq`) asked of the fuzz bucket's dataset by GET and by POST (fuzz/src/request.rs).
Committed inputs that once failed (fuzz/regressions/<target>/) are added to each corpus too.
Usage: python3 fuzz/seeds.py [--quick]   (--quick: a tenth of the W3C files, for the smoke run)
"""

import hashlib
import os
import random
import subprocess
import sys
import tempfile
import urllib.parse
from pathlib import Path

import pyoxigraph

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "build" / "fuzz" / "seeds"
RETE = REPO / "target" / "release" / "rete"
MAX_FILE_BYTES = 64 << 10
MAX_DOCUMENT_BYTES = 16 << 10
EXAMPLE_STATEMENTS = 150
# Option byte of build_input: the syntax in the low two bits (fuzz/src/build.rs FORMATS).
SYNTAXES = [(0, pyoxigraph.RdfFormat.N_TRIPLES), (1, pyoxigraph.RdfFormat.N_QUADS), (2, pyoxigraph.RdfFormat.TURTLE), (3, pyoxigraph.RdfFormat.TRIG)]


def sparql_tests() -> Path:
    return Path(os.environ.get("RETE_SPARQL_TESTS", REPO.parent / "shared" / "sparql-tests")) / "sparql"


def save(target: str, data: bytes) -> None:
    folder = OUT / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / hashlib.sha1(data).hexdigest()).write_bytes(data)


def documents(quick: bool) -> list[tuple[str, list]]:
    """(name, quads) of each W3C data file and of the head of each example."""
    found = []
    tests = sorted(p for p in sparql_tests().rglob("*.ttl") if not p.name.startswith("manifest") and p.stat().st_size <= MAX_DOCUMENT_BYTES)
    if quick:
        tests = tests[::10]
    for path in tests:
        try:
            found.append((str(path), list(pyoxigraph.parse(path=str(path), format=pyoxigraph.RdfFormat.TURTLE, base_iri="http://example.org/"))))
        except (SyntaxError, ValueError, OSError):
            continue  # a few W3C data files are deliberately invalid
    for data in sorted((REPO / "examples").glob("*/*.*")):
        format = pyoxigraph.RdfFormat.from_extension(data.suffix[1:]) if data.suffix in (".nt", ".ttl", ".trig") else None
        if format is None:
            continue
        quads = []
        for quad in pyoxigraph.parse(path=str(data), format=format):
            quads.append(quad)
            if len(quads) >= EXAMPLE_STATEMENTS:
                break
        found.append((str(data), quads))
    return found


def serialize(quads: list, format) -> bytes:
    if format in (pyoxigraph.RdfFormat.N_TRIPLES, pyoxigraph.RdfFormat.TURTLE):
        quads = [pyoxigraph.Triple(q.subject, q.predicate, q.object) for q in quads]
    return pyoxigraph.serialize(quads, format=format) or b""


def main() -> None:
    quick = "--quick" in sys.argv
    if not RETE.exists():
        sys.exit(f"seeds.py: {RETE} is missing; run `cargo build --release -p rete-publisher` first")
    with tempfile.TemporaryDirectory() as temp:
        for name, quads in documents(quick):
            for option, format in SYNTAXES:
                text = serialize(quads, format)
                if len(text) <= MAX_DOCUMENT_BYTES:
                    save("build_input", bytes([option]) + text)
            nquads = Path(temp) / "seed.nq"
            nquads.write_bytes(serialize(quads, pyoxigraph.RdfFormat.N_QUADS))
            output = Path(temp) / "seed.rete"
            # Flat, and with a directory of small nodes (FORMAT.md §4.3; hidden flags of `rete build`).
            for flags in ([], ["--block-quads", "8", "--node-entries", "4"]):
                run = subprocess.run([str(RETE), "build", str(nquads), "-o", str(output), "--quiet", *flags], capture_output=True)
                if run.returncode == 0 and output.stat().st_size <= MAX_FILE_BYTES:
                    save("read_file", output.read_bytes())
    rng = random.Random(18)
    for size in [0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]:
        for _ in range(4):
            save("query_damaged", bytes(rng.randrange(256) for _ in range(size)))
    for seed in (REPO / "fuzz" / "requests.txt").read_text().split("\n=====\n"):
        save("request", seed.encode())
    queries = sorted(p for p in sparql_tests().rglob("*.rq") if p.stat().st_size <= 4096)
    for query in queries[::10] if quick else queries:
        text = query.read_bytes()
        accept = rng.choice(["application/sparql-results+json", "text/csv", "text/turtle", "text/html", "*/*"])
        save("request", b"GET /data/sparql?query=" + urllib.parse.quote(text, safe="").encode() + b"\naccept: " + accept.encode() + b"\n")
        save("request", b"POST /data/sparql\ncontent-type: application/sparql-query\n\n" + text)
    for folder in sorted((REPO / "fuzz" / "regressions").glob("*")):
        for path in sorted(folder.iterdir()):
            save(folder.name, path.read_bytes())
    counts = {target.name: sum(1 for _ in target.iterdir()) for target in sorted(OUT.iterdir())}
    print("seeds:", ", ".join(f"{name} {count}" for name, count in counts.items()))


if __name__ == "__main__":
    main()
