#!/usr/bin/env python3
"""Where the dumps and restores of a VM bench run spend their time, stage by stage, from CRIU's
own -v4 timestamps (run the bench with CRIU_VERBOSE=1; its criu-logs/ directory keeps the logs).

usage: vmtests/bench/criu_stages.py OUT_DIR/criu-logs [CELL]   (CELL: N-MiB, default 1-4)

Prints, for the gpu, stateless, control (floor) and anon dumps of the cell, then their
restores, the median of each stage in ms over the pairs: from one CRIU line to the next of the
lists below. A stage a log lacks (no action script: post-dump) counts 0."""
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
RESTORE_STAGES = [  # from CRIU's first line (its start; the plugin's init comes before forking)
    ("start, plugin init -> pre-restore script", r"Running pre-restore scripts"),
    ("pre-restore script -> forking", r"Forking task"),
    ("forking -> restoring resources", r"Restoring resources"),
    ("files (RESTORE_EXT_FILE), mappings -> post-restore", r"Running post-restore scripts"),
    ("post-restore script -> late stage", r"Run late stage hook"),
    ("late stage (RESUME_DEVICES_LATE) -> pre-resume", r"Running pre-resume scripts"),
    ("pre-resume script -> resumed", r"Restore finished successfully"),
    ("resumed -> post-resume script", r"Running post-resume scripts"),
]
RESTORE_START = r"Running on"
STAMP = re.compile(r"^\((\d+\.\d+)\)")


def stages(path, start=START, stage_list=STAGES):
    first = {}
    with open(path, errors="replace") as f:
        for line in f:
            m = STAMP.match(line)
            if not m:
                continue
            for pat in [start] + [p for _, p in stage_list]:
                if pat not in first and re.search(pat, line):
                    first[pat] = float(m.group(1)) * 1000
    if start not in first or stage_list[-1][1] not in first:
        return None
    out, prev = [], first[start]
    for _, pat in stage_list:
        t = first.get(pat, prev)
        out.append(t - prev)
        prev = t
    out.append(first[stage_list[-1][1]] - first[start] if start == RESTORE_START else first[stage_list[-1][1]])
    return out


def table(logs, cell, what, start, stage_list):
    cols = {}
    for kind in ("gpu", "stateless", "floor", "anon"):
        paths = sorted(glob.glob(os.path.join(logs, f"{kind}-{cell}-*-{what}.log")))
        rows = [r for r in (stages(p, start, stage_list) for p in paths) if r]
        if rows:
            cols[kind] = (len(rows), [statistics.median(c) for c in zip(*rows)])
    if not cols:
        return False
    names = [n for n, _ in stage_list] + ["total"]
    head = "".join(f"{k if k != 'floor' else 'control':>10}" for k in cols)
    print(f"{what + ' stage (median ms)':<55}{head}")
    for i, n in enumerate(names):
        print(f"{n:<55}" + "".join(f"{v[i]:>10.0f}" for _, v in cols.values()))
    print(f"{'pairs':<55}" + "".join(f"{c:>10}" for c, _ in cols.values()))
    return True


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    logs, cell = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "1-4"
    if not table(logs, cell, "dump", START, STAGES):
        sys.exit(f"criu_stages.py: no complete dump log of cell {cell} in {logs} (was CRIU_VERBOSE=1 set?)")
    print()
    if not table(logs, cell, "restore", RESTORE_START, RESTORE_STAGES):
        print(f"no complete restore log of cell {cell} in {logs}")


if __name__ == "__main__":
    main()
