#!/usr/bin/env python3
"""Deterministic RDF 1.2 data with many triple terms, for the triple-term range-read benchmark
(docs/BENCHMARK.md, "Triple terms with free parts").

Writes N-Triples 1.2: N reifiers `<r{i}> rdf:reifies <<( <s{i % S}> <p{i % 7}> "…" )>>`, each with
a label; the object is a 16-hex-digit hash of i, so it compresses like real values rather than a
counter. With S = N / 40 each subject has 40 statements spread over the 7 predicates.

Usage: python3 bench/triple_terms.py [-n 200000] [-o FILE]   (default: stdout)
"""

import argparse
import hashlib
import sys

EX = "http://example.org/"
REIFIES = "http://www.w3.org/1999/02/22-rdf-syntax-ns#reifies"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=200_000, help="number of reifiers")
    parser.add_argument("-o", default="-", help="output file (default: stdout)")
    args = parser.parse_args()
    subjects = max(1, args.n // 40)
    out = sys.stdout if args.o == "-" else open(args.o, "w", encoding="utf-8")
    with out:
        for i in range(args.n):
            value = hashlib.blake2b(i.to_bytes(8, "little"), digest_size=8).hexdigest()
            out.write(f'<{EX}r{i}> <{REIFIES}> <<( <{EX}s{i % subjects}> <{EX}p{i % 7}> "{value}" )>> .\n')
            out.write(f'<{EX}r{i}> <{EX}label> "statement {i}" .\n')


if __name__ == "__main__":
    main()
