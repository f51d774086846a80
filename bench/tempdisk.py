#!/usr/bin/env python3
"""Peak temporary disk of a command (issue 17): runs it and samples, every
--interval seconds, the sizes of the files under --dir that the command's
processes hold open. `rete build` unlinks its temporary files as it creates
them, so `du` sees nothing; the open descriptors still name them
("/path (deleted)") and `os.stat` of /proc/PID/fd/N gives their size. A file
open on two descriptors counts once (by device and inode).

Also reports the peak of the partial output (`.rete-*.partial` beside the
output, --output-dir) on its own, since the output is not temporary.

Usage: python3 bench/tempdisk.py --dir TMP [--output-dir DIR] [--trace out.tsv] -- COMMAND...
(COMMAND runs under `bash -c` when it is one string, so pipes work.)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time


def descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # The command name may hold spaces and parentheses: the fields follow the last ')'.
        fields = stat[stat.rfind(b")") + 2 :].split()
        children.setdefault(int(fields[1]), []).append(int(name))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, []))
    return out


def open_files(pids: list[int], prefixes: list[str]) -> dict[str, dict[tuple[int, int], int]]:
    """Sizes of open files under each prefix, by (device, inode)."""
    seen: dict[str, dict[tuple[int, int], int]] = {prefix: {} for prefix in prefixes}
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            path = f"/proc/{pid}/fd/{fd}"
            try:
                target = os.readlink(path)
                st = os.stat(path)
            except OSError:
                continue
            for prefix in prefixes:
                if target.startswith(prefix):
                    seen[prefix][(st.st_dev, st.st_ino)] = st.st_size
    return seen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", required=True, help="the build's --temp-dir")
    parser.add_argument("--output-dir", help="where the output is written (its .partial file is reported apart)")
    parser.add_argument("--interval", type=float, default=0.5)
    parser.add_argument("--trace", help="write 'seconds temporary_bytes partial_bytes' per sample here")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command")
    temp = os.path.realpath(args.dir) + "/"
    output = os.path.realpath(args.output_dir) + "/.rete-" if args.output_dir else None
    prefixes = [temp] + ([output] if output else [])
    process = subprocess.Popen(["bash", "-c", command[0]] if len(command) == 1 else command)
    started = time.monotonic()
    peak_temp = peak_partial = peak_both = 0
    trace = open(args.trace, "w") if args.trace else None
    while process.poll() is None:
        files = open_files(descendants(process.pid), prefixes)
        temp_bytes = sum(files[temp].values())
        partial_bytes = sum(files[output].values()) if output else 0
        peak_temp = max(peak_temp, temp_bytes)
        peak_partial = max(peak_partial, partial_bytes)
        peak_both = max(peak_both, temp_bytes + partial_bytes)
        if trace:
            trace.write(f"{time.monotonic() - started:.1f}\t{temp_bytes}\t{partial_bytes}\n")
        time.sleep(args.interval)
    if trace:
        trace.close()
    print(f"tempdisk: peak temporary {peak_temp} B; peak partial output {peak_partial} B; peak of both at once {peak_both} B; exit {process.returncode}", file=sys.stderr)
    return process.returncode


if __name__ == "__main__":
    sys.exit(main())
