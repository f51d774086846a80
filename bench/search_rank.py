#!/usr/bin/env python3
"""Does a change to the label search index keep every answer the same (docs/BENCHMARK.md "Label search")?

Runs a fixed set of searches (words and prefixes in several languages and scripts, several words,
--lang filters) with `rete search FILE QUERY --json --limit 20` on each FILE, and either saves the
answers or compares them with answers saved before: the top 20 (IRI, label, language, score, in
order) and "cut" must be identical. Prints the rounds, requests and bytes of each search, before
and after, so the cost of a layout or block-size change is read side by side.

Usage: bench/search_rank.py --save BEFORE.json FILE.rete...
       bench/search_rank.py --compare BEFORE.json FILE.rete...   (exit 1 when an answer differs)
Files are matched by their base name, so a rebuilt file can live elsewhere.
"""
import argparse, json, os, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RETE = os.path.join(ROOT, "target", "release", "rete")

# (query, --lang or None): prefixes and whole words, English, German, French, Dutch, Greek,
# Japanese, Spanish; LUBM's names; two-word queries; language filters. Words that a file lacks answer nothing,
# which is compared too.
QUERIES = [
    ("per", None), ("person", None), ("linc", None), ("plac", None), ("city", None), ("a", None),
    ("birth place", None), ("geburt", "de"), ("stadt", "de"), ("ville", "fr"), ("nom", "fr"),
    ("stad", "nl"), ("πόλη", None), ("人", None), ("ciudad", "es"), ("per", "en"),
    ("metre", None), ("kelvin", None), ("unit per", None), ("event", None), ("pers", None),
    ("fullprof", None), ("course12", None), ("university3", None), ("publication7", None), ("name", ""),
    ("assist", None), ("graduatestudent1", None), ("lect", None), ("date", None), ("creat", None), ("ser", None),
    ("associ", None), ("department1", None), ("research", None),
]


def search(path, query, lang):
    args = [RETE, "search", path, query, "--json", "--limit", "20"] + (["--lang", lang] if lang is not None else [])
    answer = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
    return {"results": answer["results"], "cut": answer["cut"], "rounds": answer["rounds"], "requests": answer["requests"], "bytes": answer["bytes"]}


def run(paths):
    return {os.path.basename(path): {f"{query}|{lang}": search(path, query, lang) for query, lang in QUERIES} for path in paths}


def main():
    parser = argparse.ArgumentParser()
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--save")
    mode.add_argument("--compare")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    answers = run(args.files)
    if args.save:
        with open(args.save, "w") as f:
            json.dump(answers, f, ensure_ascii=False, indent=1)
        for name, searches in answers.items():
            hits = sum(len(s["results"]) for s in searches.values())
            print(f"{name}: {len(searches)} searches, {hits} hits saved to {args.save}")
        return 0
    with open(args.compare) as f:
        before = json.load(f)
    differ = 0
    print("| file | query | lang | hits | same top 20 | rounds before / after | requests before / after | bytes before / after |")
    print("|---|---|---|---|---|---|---|---|")
    for name, searches in answers.items():
        for key, after in searches.items():
            old = before.get(name, {}).get(key)
            query, lang = key.split("|")
            same = old is not None and old["results"] == after["results"] and old["cut"] == after["cut"]
            differ += not same
            if old is None:
                print(f"| {name} | {query} | {lang} | {len(after['results'])} | no answer saved | – / {after['rounds']} | – / {after['requests']} | – / {after['bytes']:,} |")
                continue
            print(f"| {name} | {query} | {lang} | {len(after['results'])} | {'yes' if same else '**NO**'} | {old['rounds']} / {after['rounds']} | {old['requests']} / {after['requests']} | {old['bytes']:,} / {after['bytes']:,} |")
    total = sum(len(s) for s in answers.values())
    print(f"\n{total - differ} of {total} searches answer the same top 20")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
