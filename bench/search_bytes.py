#!/usr/bin/env python3
"""Where the bytes of a file's label search index go (FORMAT.md §12; docs/BENCHMARK.md "Label search").

Reads the SEARCH root and every posting block of FILE (zstd through the `zstd` command), and splits
the decompressed bytes of the blocks into their fields: word keys (front-coded), prefix-list keys,
the counts, and the four posting columns (label id deltas, subject ids or codes, weights, lengths). Then
says how well each column compresses alone (with the `zstd` command at the format's level 9, and
at 19), to tell what a later layout could shrink: the sealed size is what the file pays.
Reads the three layouts of the posting blocks (1: by key, 2: by column, 3: by column without a
block's repeats, keys' numbers apart from their text).

Usage: bench/search_bytes.py FILE.rete
"""
import json, os, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RETE = os.path.join(ROOT, "target", "release", "rete")


def varint(data, pos):
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def put_varint(out, value):
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)


def zstd(data, level, decompress=False):
    args = ["zstd", "-q", "-c"] + (["-d"] if decompress else [f"-{level}", "--ultra" if level > 19 else "-q"])
    return subprocess.run(args, input=bytes(data), capture_output=True, check=True).stdout


def key_characters(key):
    """FORMAT.md §12.3: a key's bytes other than UTF-8 continuation bytes, a prefix list's 00 not counted."""
    return sum(1 for b in key.removesuffix(b"\x00") if b & 0xC0 != 0x80)


def split_layout_3(raw, columns, postings):
    """split_block for layout 3: keys' shared lengths, suffix lengths, suffixes; counts; label id deltas;
    subject codes (increases after the same key and label; else 0 for the label's latest subject, or
    subject + 1); a weight per new subject; a length per new label."""
    p = 0
    count, p = varint(raw, p)
    shared, lengths = [], []
    for target in (shared, lengths):
        for _ in range(count):
            value, p = varint(raw, p)
            target.append(value)
    keys, previous = [], b""
    for n_shared, n in zip(shared, lengths):
        previous = previous[:n_shared] + raw[p:p + n]
        p += n
        keys.append(previous)
    lists = sum(1 for k in keys if k.endswith(b"\x00"))
    key_bytes = len(raw[:p])
    # Key bytes split between word keys and prefix-list keys by their share of the keys.
    columns["prefix-list keys"].extend(raw[:key_bytes * lists // max(1, count)])
    columns["word keys"].extend(raw[key_bytes * lists // max(1, count):p])
    stored = []
    for key in keys:
        start = p
        stored2, p = varint(raw, p)
        if stored2 & 1:
            _total, p = varint(raw, p)
        columns["counts"].extend(raw[start:p])
        postings["prefix list" if key.endswith(b"\x00") else "word"] += stored2 >> 1
        stored.append(stored2 >> 1)
    labels = []
    start = p
    for k, n in enumerate(stored):
        label = 0
        for _ in range(n):
            delta, p = varint(raw, p)
            label += delta
            labels.append((k, label))
    columns["label id deltas"].extend(raw[start:p])
    start = p
    latest, new_subjects, new_labels = {}, 0, 0
    weighed = set()
    previous = (None, None, None)
    for k, label in labels:
        code, p = varint(raw, p)
        if previous[:2] == (k, label):
            subject = previous[2] + code
        else:
            subject = latest[label] if code == 0 else code - 1
        previous = (k, label, subject)
        new_labels += label not in latest
        latest[label] = subject
        if subject not in weighed:
            weighed.add(subject)
            new_subjects += 1
    columns["subject ids"].extend(raw[start:p])
    for name, n in (("weights", new_subjects), ("lengths", new_labels)):
        start = p
        for _ in range(n):
            _, p = varint(raw, p)
        columns[name].extend(raw[start:p])
    assert p == len(raw), "layout 3 block not read to its end"


def split_block(raw, layout, columns, postings):
    """Adds the bytes of each field of a decompressed posting block (FORMAT.md §12.3, layout 1, 2 or 3) to `columns`."""
    if layout == 3:
        return split_layout_3(raw, columns, postings)
    p = 0
    keys, p = varint(raw, p)
    names = ["label id deltas", "subject ids", "weights", "lengths"]

    def key(p):
        start = p
        _shared, p = varint(raw, p)
        n, p = varint(raw, p)
        is_list = raw[p:p + n].endswith(b"\x00")
        p += n
        columns["prefix-list keys" if is_list else "word keys"].extend(raw[start:p])
        return p, is_list

    def count(p, is_list):
        start = p
        stored2, p = varint(raw, p)
        if stored2 & 1:
            _total, p = varint(raw, p)
        columns["counts"].extend(raw[start:p])
        postings["prefix list" if is_list else "word"] += stored2 >> 1
        return p, stored2 >> 1

    def column(p, name, stored):
        start = p
        for _ in range(stored):
            _, p = varint(raw, p)
        columns[name].extend(raw[start:p])
        return p

    if layout == 1:
        for _ in range(keys):
            p, is_list = key(p)
            p, stored = count(p, is_list)
            for name in names:
                p = column(p, name, stored)
        return
    lists = []
    for _ in range(keys):
        p, is_list = key(p)
        lists.append(is_list)
    stored = 0
    for is_list in lists:
        p, n = count(p, is_list)
        stored += n
    for name in names:
        p = column(p, name, stored)


def main():
    path = sys.argv[1]
    info = json.loads(subprocess.run([RETE, "inspect", path, "--json"], capture_output=True, check=True, text=True).stdout)
    sections = {s["kind"]: s for s in info["sections"]}
    data = open(path, "rb").read()
    root_section, blocks_section = sections["SEARCH"], sections["SEARCH BLOCKS"]
    root = zstd(data[root_section["offset"]:root_section["offset"] + root_section["length"]], 0, decompress=True)
    pos = 0
    layout, pos = varint(root, pos)
    entry_count, pos = varint(root, pos)
    word_count, pos = varint(root, pos)
    posting_count, pos = varint(root, pos)
    _prefix_list_length, pos = varint(root, pos)
    predicates, pos = varint(root, pos)
    for _ in range(predicates):
        _, pos = varint(root, pos)
    languages, pos = varint(root, pos)
    for _ in range(languages):
        n, pos = varint(root, pos)
        pos += n
        _, pos = varint(root, pos)
        _, pos = varint(root, pos)
    _depth, pos = varint(root, pos)
    count, pos = varint(root, pos)
    first, pos = varint(root, pos)
    lengths = []
    for _ in range(count):
        length, pos = varint(root, pos)
        _keys, pos = varint(root, pos)
        _shared, pos = varint(root, pos)
        n, pos = varint(root, pos)
        pos += n
        lengths.append(length)

    columns = {name: bytearray() for name in ["word keys", "prefix-list keys", "counts", "label id deltas", "subject ids", "weights", "lengths"]}
    postings = {"word": 0, "prefix list": 0}
    offset = blocks_section["offset"] + first
    raw_total = 0
    for length in lengths:
        sealed = data[offset:offset + length]
        offset += length
        raw = zstd(sealed[:-4], 0, decompress=True)
        raw_total += len(raw)
        split_block(raw, layout, columns, postings)
    sealed_total = blocks_section["length"]
    print(f"{path}: {info['file_bytes']:,} bytes; SEARCH {root_section['length']:,} + SEARCH BLOCKS {sealed_total:,} "
          f"({(root_section['length'] + sealed_total) / info['file_bytes']:.1%} of the file)")
    print(f"  {entry_count:,} entries, {word_count:,} words, {posting_count:,} postings under words; stored: "
          f"{postings['word']:,} under words, {postings['prefix list']:,} in prefix lists; {len(lengths)} blocks, "
          f"{raw_total:,} bytes decompressed, {sealed_total:,} sealed (layout {layout})")
    print(f"  {'field':<18} {'raw':>9} {'share':>6} {'alone, zstd 9':>14} {'alone, zstd 19':>15}")
    for name, column in columns.items():
        if not column:
            continue
        print(f"  {name:<18} {len(column):>9,} {len(column) / raw_total:>6.1%} {len(zstd(column, 9)):>14,} {len(zstd(column, 19)):>15,}")
    whole = {9: 0, 19: 0}
    offset = blocks_section["offset"] + first
    for length in lengths:
        raw = zstd(data[offset:offset + length - 4], 0, decompress=True)
        for level in whole:
            whole[level] += len(zstd(raw, level)) + 4
        offset += length
    print(f"  the same blocks recompressed: {whole[9]:,} bytes at zstd 9, {whole[19]:,} at zstd 19 ({sealed_total:,} as written)")


if __name__ == "__main__":
    main()
