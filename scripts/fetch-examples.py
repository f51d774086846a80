#!/usr/bin/env python3
"""Rebuild the data files under examples/ from the npm package they come from.

The example datasets are real vocabularies redistributed as N-Quads inside the npm
package @zazuko/rdf-vocabularies. This script fetches that package with `npm pack`
(the ordinary npm client, no other host), re-serialises the chosen files with
pyoxigraph into N-Triples, compact Turtle or TriG (sorted, so reruns give identical bytes) and
prints the triple counts that examples/*/README.md quote.

Usage: python3 scripts/fetch-examples.py        (needs npm and pyoxigraph)
"""

import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import pyoxigraph as ox

PACKAGE = "@zazuko/rdf-vocabularies@2023.1.19"
ROOT = Path(__file__).resolve().parent.parent

COMMON_PREFIXES = {
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "owl": "http://www.w3.org/2002/07/owl#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "dcterms": "http://purl.org/dc/terms/",
    "prov": "http://www.w3.org/ns/prov#",
}

# name -> (output file, files from the package's ontologies/ folder, extra prefixes)
DATASETS = {
    "dbpedia-ontology": (
        "dbpedia-ontology.ttl",
        ["dbo.nq"],
        {
            "dbo": "http://dbpedia.org/ontology/",
            "dbt": "http://dbpedia.org/datatype/",
            "ov": "http://open.vocab.org/terms/",
            "mapping": "http://mappings.dbpedia.org/index.php/",
            "dul": "http://www.ontologydesignpatterns.org/ont/dul/DUL.owl#",
            "wd": "http://www.wikidata.org/entity/",
            "schema": "http://schema.org/",
        },
    ),
    "schema-org": (
        "schema-org.nt",
        ["schema.nq"],
        {},
    ),
    "qudt": (
        "qudt.trig",
        ["qudt.nq", "unit.nq", "quantitykind.nq", "qkdv.nq", "constant.nq", "sou.nq", "prefix.nq"],
        {
            "qudt": "http://qudt.org/schema/qudt/",
            "unit": "http://qudt.org/vocab/unit/",
            "quantitykind": "http://qudt.org/vocab/quantitykind/",
            "qkdv": "http://qudt.org/vocab/dimensionvector/",
            "constant": "http://qudt.org/vocab/constant/",
            "sou": "http://qudt.org/vocab/sou/",
            "prefix": "http://qudt.org/vocab/prefix/",
            "vaem": "http://www.linkedmodel.org/schema/vaem#",
            "sh": "http://www.w3.org/ns/shacl#",
        },
    ),
}


def fetch_package(tmp: Path) -> Path:
    """Runs `npm pack` in tmp and returns the unpacked ontologies/ folder."""
    out = subprocess.run(
        ["npm", "pack", PACKAGE, "--silent"], cwd=tmp, check=True, capture_output=True, text=True
    ).stdout.strip().splitlines()[-1]
    with tarfile.open(tmp / out) as tar:
        tar.extractall(tmp, filter="data")
    return tmp / "package" / "ontologies"


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp_name:
        ontologies = fetch_package(Path(tmp_name))
        for name, (out_name, sources, prefixes) in DATASETS.items():
            quads = set()
            for source in sources:
                quads.update(ox.parse(path=str(ontologies / source), format=ox.RdfFormat.N_QUADS))
            ordered = sorted(quads, key=lambda q: (str(q.graph_name), str(q.subject), str(q.predicate), str(q.object)))
            target = ROOT / "examples" / name / out_name
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.suffix in (".ttl", ".nt"):
                # A triples-only syntax: drop the graph name (each source is one graph).
                ordered = [q.triple for q in ordered]
            ox.serialize(ordered, str(target), prefixes={**COMMON_PREFIXES, **prefixes})
            graphs = len({q.graph_name for q in quads})
            print(f"{name}: {len(ordered)} triples in {graphs} graph(s) -> {target.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
