#!/usr/bin/env python3
"""CLDR as RDF: a real multilingual dataset of ~2.5 M triples in ~750 language tags, for the
query benchmark (docs/BENCHMARK.md, "Query"). Not committed: this script fetches the Unicode
CLDR JSON packages from npm (`npm pack`, pinned versions) into a cache folder and writes Turtle.

What it holds (namespace https://cldr.unicode.org/rdf/, a mapping of ours):
- `cldr:annotations`: every character CLDR annotates (emoji, symbols), a `skos:Concept` with its
  text as `skos:notation`, its name per locale as `skos:prefLabel` and its keywords as
  `skos:altLabel` (cldr-annotations-full, ~170 locales).
- `cldr:languages`, `cldr:territories`, `cldr:scripts`, `cldr:variants`: each code a
  `skos:Concept` named in every locale that names it (cldr-localenames-full, ~750 locales).
- territories: `skos:broader` to the regions that contain them (world → continents → regions
  → countries, cldr-core territoryContainment), population, GDP (xsd:integer) and literacy
  (xsd:decimal) from territoryInfo, and the languages spoken there as `cldr:language` links.

Language tags are CLDR's locale ids with `_` as `-` (all BCP 47); `root` is left out.

Usage: python3 bench/cldr.py -o build/query-bench/cldr.ttl [--cache DIR]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VERSION = "48.2.0"
PACKAGES = ["cldr-annotations-full", "cldr-localenames-full", "cldr-core"]
LANGUAGE_TAG = re.compile(r"^[a-zA-Z]{1,8}(-[a-zA-Z0-9]{1,8})*$")
SECTIONS = {"languages": "language", "territories": "territory", "scripts": "script", "variants": "variant"}


def fetch(cache: Path) -> dict[str, Path]:
    """Unpacks each pinned package into cache/NAME (npm pack, once)."""
    cache.mkdir(parents=True, exist_ok=True)
    unpacked = {}
    for name in PACKAGES:
        target = cache / name
        if not target.exists():
            subprocess.run(["npm", "pack", f"{name}@{VERSION}", "--silent"], cwd=cache, check=True, capture_output=True)
            tarball = cache / f"{name}-{VERSION}.tgz"
            with tarfile.open(tarball) as archive:
                archive.extractall(cache / f"{name}.tmp", filter="data")
            (cache / f"{name}.tmp" / "package").rename(target)
            (cache / f"{name}.tmp").rmdir()
            tarball.unlink()
        unpacked[name] = target
    return unpacked


def literal(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{escaped}"'


def tag(locale: str) -> str | None:
    tag = locale.replace("_", "-")
    return tag if tag != "root" and LANGUAGE_TAG.match(tag) else None


def code_point_name(text: str) -> str:
    return "_".join(f"U{ord(c):04X}" for c in text)


def write(packages: dict[str, Path], out) -> int:
    count = 0

    def triple(s: str, p: str, o: str) -> None:
        nonlocal count
        out.write(f"{s} {p} {o} .\n")
        count += 1

    out.write(
        "@prefix cldr: <https://cldr.unicode.org/rdf/> .\n"
        + "".join(f"@prefix {kind}: <https://cldr.unicode.org/rdf/{kind}/> .\n" for kind in ["char", *SECTIONS.values()])
        + "@prefix skos: <http://www.w3.org/2004/02/skos/core#> .\n"
        "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n"
        "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n\n"
    )
    for scheme in ["annotations", *SECTIONS]:
        triple(f"cldr:{scheme}", "a", "skos:ConceptScheme")
        triple(f"cldr:{scheme}", "rdfs:label", literal(f"CLDR {VERSION} {scheme}") + "@en")

    # Characters and their names and keywords per locale.
    seen: set[str] = set()
    for path in sorted((packages["cldr-annotations-full"] / "annotations").glob("*/annotations.json")):
        language = tag(path.parent.name)
        if language is None:
            continue
        for text, names in json.loads(path.read_text())["annotations"].get("annotations", {}).items():
            node = f"char:{code_point_name(text)}"
            if node not in seen:
                seen.add(node)
                triple(node, "a", "skos:Concept")
                triple(node, "skos:inScheme", "cldr:annotations")
                triple(node, "skos:notation", literal(text))
            names_tts = names.get("tts", [])
            for name in names_tts:
                triple(node, "skos:prefLabel", literal(name) + f"@{language}")
            for keyword in names.get("default", []):
                if keyword not in names_tts:
                    triple(node, "skos:altLabel", literal(keyword) + f"@{language}")

    # Languages, territories, scripts, variants named in every locale.
    seen.clear()
    for path in sorted((packages["cldr-localenames-full"] / "main").glob("*")):
        language = tag(path.name)
        if language is None:
            continue
        for section, kind in SECTIONS.items():
            file = path / f"{section}.json"
            if not file.exists():
                continue
            names = json.loads(file.read_text())["main"][path.name]["localeDisplayNames"][section]
            for code, name in names.items():
                if "-alt-" in code:
                    continue
                node = f"{kind}:{code}"
                if node not in seen:
                    seen.add(node)
                    triple(node, "a", "skos:Concept")
                    triple(node, "skos:inScheme", f"cldr:{section}")
                    triple(node, "skos:notation", literal(code))
                triple(node, "skos:prefLabel", literal(name) + f"@{language}")

    # Territory containment and figures.
    supplemental = packages["cldr-core"] / "supplemental"
    containment = json.loads((supplemental / "territoryContainment.json").read_text())["supplemental"]["territoryContainment"]
    for region, members in sorted(containment.items()):
        if "-status-" in region:
            continue
        for member in members.get("_contains", []):
            triple(f"territory:{member}", "skos:broader", f"territory:{region}")
    info = json.loads((supplemental / "territoryInfo.json").read_text())["supplemental"]["territoryInfo"]
    for territory, figures in sorted(info.items()):
        node = f"territory:{territory}"
        for key, predicate, datatype in [("_population", "population", "integer"), ("_gdp", "gdp", "integer"), ("_literacyPercent", "literacyPercent", "decimal")]:
            if key in figures:
                value = figures[key]
                if datatype == "decimal" and "." not in value:
                    value += ".0"
                triple(node, f"cldr:{predicate}", f"{literal(value)}^^xsd:{datatype}")
        for spoken in sorted(figures.get("languagePopulation", {})):
            triple(node, "cldr:language", f"language:{spoken}")
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--out", type=Path, required=True)
    parser.add_argument("--cache", type=Path, default=ROOT / "build" / "cldr-npm")
    args = parser.parse_args()
    packages = fetch(args.cache)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    partial = args.out.with_suffix(args.out.suffix + ".partial")
    with open(partial, "w", encoding="utf-8") as out:
        count = write(packages, out)
    partial.rename(args.out)
    print(f"{args.out}: {count} triples")


if __name__ == "__main__":
    main()
