#!/usr/bin/env python3
"""Checks every dataset under examples/ against pyoxigraph, the reference engine.

For each examples/<name>/: the data files parse, the triple count is the one its
README.md states, and every queries/*.rq parses and returns a non-empty result
(ASK: true). One line per check, then the plain summary line `N passed, N failed`.

Usage: python3 scripts/check-examples.py [examples/<name> ...]
"""

import gzip
import re
import sys
import tomllib
from pathlib import Path

import pyoxigraph as ox

ROOT = Path(__file__).resolve().parent.parent
RDF_SUFFIXES = {".nt", ".nq", ".ttl", ".trig", ".rdf", ".owl"}


def data_files(folder: Path) -> list[Path]:
    """Files whose extension (before an optional .gz) names an RDF syntax."""
    found = []
    for path in sorted(folder.iterdir()):
        inner = path.with_suffix("") if path.suffix == ".gz" else path
        if path.is_file() and inner.suffix in RDF_SUFFIXES:
            found.append(path)
    return found


def load(store: ox.Store, path: Path) -> None:
    if path.suffix == ".gz":
        fmt = ox.RdfFormat.from_extension(path.with_suffix("").suffix.lstrip("."))
        with gzip.open(path, "rb") as data:
            store.bulk_load(data, format=fmt)
    else:
        store.bulk_load(path=str(path))


def result_size(result) -> int:
    if isinstance(result, ox.QueryBoolean):
        return int(bool(result))
    return sum(1 for _ in result)


def main(args: list[str]) -> int:
    folders = [Path(a).resolve() for a in args] or sorted(p for p in (ROOT / "examples").iterdir() if p.is_dir())
    passed = failed = 0

    def report(ok: bool, what: str) -> None:
        nonlocal passed, failed
        passed += ok
        failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {what}")

    for folder in folders:
        name = folder.name
        files = data_files(folder)
        store = ox.Store()
        try:
            if not files:
                raise ValueError("no data file")
            for path in files:
                load(store, path)
        except (OSError, SyntaxError, ValueError) as err:
            report(False, f"{name}: load: {err}")
            continue
        count = len(store)
        graphs = sum(1 for _ in store.named_graphs())
        report(True, f"{name}: {count} triples in {graphs} named graph(s) from {', '.join(p.name for p in files)}")

        readme = folder / "README.md"
        text = readme.read_text(encoding="utf-8") if readme.exists() else ""
        stated = re.search(rf"(?<![\d,.]){count:,}(?![\d,])|(?<![\d,.]){count}(?![\d,])", text)
        report(stated is not None, f"{name}: README.md states the triple count {count:,}")

        # rete build --default-graph union, asked for in card.toml (pyoxigraph's union would
        # override a query's FROM; the example queries use none).
        card = folder / "card.toml"
        union = card.exists() and tomllib.loads(card.read_text(encoding="utf-8")).get("default_graph") == "union"
        queries = sorted((folder / "queries").glob("*.rq"))
        report(len(queries) >= 5, f"{name}: {len(queries)} example queries")
        for query in queries:
            text = query.read_text(encoding="utf-8")
            label = f"{name}/{query.name}"
            if not text.startswith("# "):
                report(False, f"{label}: first line is not a '# ' comment")
                continue
            try:
                size = result_size(store.query(text, use_default_graph_as_union=union))
            except (SyntaxError, OSError, ValueError) as err:
                report(False, f"{label}: {err}")
                continue
            report(size > 0, f"{label}: {size} result(s)")

    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
