#!/usr/bin/env python3
"""Deterministic events with many dates, dateTimes and numbers, for the range-filter and top-k
benchmark (docs/BENCHMARK.md, "Range filters and top-k").

Writes N-Triples: N events `<e{i}>`, each a `:Event` with a `:date` (xsd:date, 1700–2024), a
`:start` (xsd:dateTime, a third of them without timezone), an `:attendance` (xsd:integer up to
10^7, some as xsd:decimal) and a `:name`. Values come from a hash of i, so their order in the
file has nothing to do with their order by value.

Usage: python3 bench/events.py [-n 300000] [-o FILE]   (default: stdout)
"""

import argparse
import datetime
import hashlib
import sys

EX = "http://example.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"
TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
FIRST_DAY = datetime.date(1700, 1, 1).toordinal()
DAYS = datetime.date(2024, 12, 31).toordinal() - FIRST_DAY


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=300_000, help="number of events")
    parser.add_argument("-o", default="-", help="output file (default: stdout)")
    args = parser.parse_args()
    out = sys.stdout if args.o == "-" else open(args.o, "w", encoding="utf-8")
    with out:
        for i in range(args.n):
            h = int.from_bytes(hashlib.blake2b(i.to_bytes(8, "little"), digest_size=16).digest(), "little")
            day = datetime.date.fromordinal(FIRST_DAY + h % DAYS)
            seconds = (h >> 32) % 86400
            zone = ("Z", "+02:00", "")[(h >> 48) % 3]
            start = f"{day.isoformat()}T{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}{zone}"
            attendance = (h >> 64) % 10_000_000
            e = f"<{EX}e{i}>"
            out.write(f"{e} <{TYPE}> <{EX}Event> .\n")
            out.write(f'{e} <{EX}date> "{day.isoformat()}"^^<{XSD}date> .\n')
            out.write(f'{e} <{EX}start> "{start}"^^<{XSD}dateTime> .\n')
            if (h >> 96) % 10 == 0:
                out.write(f'{e} <{EX}attendance> "{attendance}.5"^^<{XSD}decimal> .\n')
            else:
                out.write(f'{e} <{EX}attendance> "{attendance}"^^<{XSD}integer> .\n')
            out.write(f'{e} <{EX}name> "event {i}" .\n')


if __name__ == "__main__":
    main()
