#!/usr/bin/env python3
"""Where the dumps of a VM bench run spend their time, stage by stage, from CRIU's own -v4
timestamps (run the bench with CRIU_VERBOSE=1; its criu-logs/ directory keeps the logs).

usage: vmtests/bench/criu_stages.py OUT_DIR/criu-logs [CELL]   (CELL: N-MiB, default 1-4)

Prints, for the gpu, control (floor) and anon dumps of the cell, the median of each stage in
ms over the pairs: from one CRIU line to the next of the list below. A stage a log lacks
(no action script: post-dump) counts 0."""
import glob
import os
import re
import statistics
import sys

STAGES = [  # (name, the CRIU line that ends it)
    ("pre-dump script + plugin load -> seized", r"Seized task"),
    ("seized -> dumping the task", r"Dumping task \("),
    ("the task's mappings (HANDLE_DEVICE_VMA) -> parasite", r"Set up parasite"),
    ("parasite -> files", r"Dumping opened files"),
    ("files (DUMP_EXT_FILE) -> pages", r"Dumping pages \("),
    ("pages -> post-dump script", r"Running post-dump scripts"),
    ("post-dump script -> unfreeze", r"Unfreezing tasks"),
    ("unfreeze -> end (plugin exit)", r"Dumping finished successfully"),
]
START = r"Running pre-dump scripts"
STAMP = re.compile(r"^\((\d+\.\d+)\)")


def stages(path):
    first = {}
    with open(path, errors="replace") as f:
        for line in f:
            m = STAMP.match(line)
            if not m:
                continue
            for pat in [START] + [p for _, p in STAGES]:
                if pat not in first and re.search(pat, line):
                    first[pat] = float(m.group(1)) * 1000
    if START not in first or STAGES[-1][1] not in first:
        return None
    out, prev = [], first[START]
    for _, pat in STAGES:
        t = first.get(pat, prev)
        out.append(t - prev)
        prev = t
    out.append(first[STAGES[-1][1]])
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    logs, cell = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "1-4"
    cols = {}
    for kind in ("gpu", "floor", "anon"):
        rows = [r for r in (stages(p) for p in sorted(glob.glob(os.path.join(logs, f"{kind}-{cell}-*-dump.log")))) if r]
        if rows:
            cols[kind] = (len(rows), [statistics.median(c) for c in zip(*rows)])
    if not cols:
        sys.exit(f"criu_stages.py: no complete dump log of cell {cell} in {logs} (was CRIU_VERBOSE=1 set?)")
    names = [n for n, _ in STAGES] + ["total"]
    head = "".join(f"{k if k != 'floor' else 'control':>10}" for k in cols)
    print(f"{'stage (median ms)':<55}{head}")
    for i, n in enumerate(names):
        print(f"{n:<55}" + "".join(f"{v[i]:>10.0f}" for _, v in cols.values()))
    print(f"{'pairs':<55}" + "".join(f"{c:>10}" for c, _ in cols.values()))


if __name__ == "__main__":
    main()
