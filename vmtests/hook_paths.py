#!/usr/bin/env python3
"""Checks for the VM suite's hook-path variants (NAME@tracepoint, NAME@fexit).

usage: hook_paths.py check CHECK.json PATH    `gpuwatch check --json` put every group on PATH
       hook_paths.py hooks MANIFEST PATH      the manifest's "hooks" says PATH for every group
       hook_paths.py records LOG PATH         gpuwatch's stop line: fexit programs fed records
                                              (PATH fexit) or none did (PATH tracepoint)
       hook_paths.py same DIR_A DIR_B         every manifest a check accepted under DIR_A
                                              (**/check.*.manifest.json, and the i915
                                              checks' **/manifest.N.json) equals,
                                              normalised, the one at the same place under DIR_B

Normalised: "cgroup", "hooks" and "generation" dropped; pids replaced by their rank (a
process's "pid_ns" dropped, its "ns_pid" by whether it is its pid);
mappings sorted by address, their start replaced by their rank and their offset (a fake
offset the driver picks) dropped; handles' "mmap_offsets" replaced by their count, their
"mmap_types" (keyed by fake offset) by the sorted types, a userptr's "user_ptr" (a heap
address) dropped; in "incomplete_reasons", pids by their rank and hex numbers (addresses,
offsets) by 0x?; the manifest's own file and object ids (numbers it hands out as it meets
files and buffers, documented as carrying no meaning) replaced by their rank, in every place
that names one. Every other field (fds, cloexec, files, handles, sizes, origins, objects, which
file and object each fd, handle and mapping names, driver state, completeness) must be equal.

Exit status: 0 yes, 1 no (the reason on stdout), 2 unreadable input.
"""

import copy
import glob
import json
import os
import re
import sys

GROUPS = ("ioctl", "mmap", "cloexec", "syscalls")


class Unreadable(Exception):
    pass


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise Unreadable(f"{path}: {e}") from e


def check(path, want):
    j = load(path)
    bad = []
    for g in GROUPS:
        e = j.get("hooks", {}).get(g, {})
        if e.get("path") != want:
            bad.append(f"{g}: {e.get('path')} ({e.get('reason')})")
    if j.get("can_run") is not True:
        bad.insert(0, f"can_run is {j.get('can_run')!r}")
    if bad:
        print(f"gpuwatch check does not put every group on {want}: " + "; ".join(bad))
        return 1
    return 0


def hooks(path, want):
    h = load(path).get("hooks")
    if not isinstance(h, dict) or any(h.get(g) != want for g in GROUPS):
        print(f"manifest hooks are {json.dumps(h, sort_keys=True)}, expected {want} for {', '.join(GROUPS)}")
        return 1
    return 0


def records(path, want):
    try:
        with open(path, errors="replace") as f:
            text = f.read()
    except OSError as e:
        raise Unreadable(f"{path}: {e}") from e
    m = re.search(r"records by hook: tracepoint (\d+), fexit (\d+)", text)
    if not m:
        print("no 'records by hook' line in the log (not gpuwatch?): not checked")
        return 0
    fexit = int(m.group(2))
    if (want == "fexit") != (fexit > 0):
        print(f"{fexit} records came from fexit programs under {want}")
        return 1
    return 0


def renumber(node, key, rank):
    """Every integer under `key` in node (dicts and lists, recursively) replaced by rank[it]."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k == key and isinstance(v, int) and not isinstance(v, bool):
                node[k] = rank.get(v, f"unknown {key} {v}")
            else:
                renumber(v, key, rank)
    elif isinstance(node, list):
        for v in node:
            renumber(v, key, rank)


def normalise(m):
    m = copy.deepcopy(m)
    # file and object ids: by rank (both paths see the same files and buffers, maybe numbered
    # from another start when a record order differs)
    file_rank = {f.get("id"): i + 1 for i, f in enumerate(sorted(m.get("files", []), key=lambda f: f.get("id", 0)))}
    obj_ids = sorted({o.get("id") for o in m.get("objects", []) if isinstance(o.get("id"), int)} |
                     {h.get("object") for f in m.get("files", []) for h in f.get("handles", [])
                      if isinstance(h.get("object"), int)})
    obj_rank = {o: i + 1 for i, o in enumerate(obj_ids)}
    for f in m.get("files", []):
        if isinstance(f.get("id"), int):
            f["id"] = file_rank[f["id"]]
    for o in m.get("objects", []):
        if isinstance(o.get("id"), int):
            o["id"] = obj_rank.get(o["id"], o["id"])
    renumber(m.get("processes", []), "file", file_rank)
    renumber(m.get("files", []), "object", obj_rank)
    renumber(m.get("processes", []), "object", obj_rank)
    for k in ("cgroup", "hooks", "generation"):
        m.pop(k, None)
    procs = m.get("processes", [])
    rank = {pid: i for i, pid in enumerate(sorted(p.get("pid") for p in procs))}
    for p in procs:
        if "ns_pid" in p:  # a task's pid in its own namespace: its host pid, or not
            p["ns_pid"] = "pid" if p["ns_pid"] == p.get("pid") else "other"
        p.pop("pid_ns", None)
        p["pid"] = rank[p.get("pid")]
        maps = sorted(p.get("mmaps", []), key=lambda x: x.get("start", 0))
        for i, x in enumerate(maps):
            x["start"] = i
            x.pop("offset", None)
        p["mmaps"] = maps
    procs.sort(key=lambda p: p["pid"])
    m["incomplete_reasons"] = [
        re.sub(r"0x[0-9a-fA-F]+", "0x?", re.sub(r"process (\d+)", lambda g: f"process #{rank.get(int(g[1]), '?')}", r))
        for r in m.get("incomplete_reasons", [])]
    for f in m.get("files", []):
        for h in f.get("handles", []):
            if isinstance(h.get("mmap_offsets"), list):
                h["mmap_offsets"] = len(h["mmap_offsets"])
            if isinstance(h.get("mmap_types"), dict):
                h["mmap_types"] = sorted(map(str, h["mmap_types"].values()))
            if isinstance(h.get("params"), dict):
                h["params"].pop("user_ptr", None)
    return m


def first_difference(a, b, where=""):
    if type(a) is not type(b):
        return f"{where or '(top)'}: {json.dumps(a, sort_keys=True)} vs {json.dumps(b, sort_keys=True)}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{where}.{k}: only in {'the first' if k in a else 'the second'}"
            d = first_difference(a[k], b[k], f"{where}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{where}: {len(a)} entries vs {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{where}[{i}]")
            if d:
                return d
        return None
    return None if a == b else f"{where}: {json.dumps(a)} vs {json.dumps(b)}"


def same(dir_a, dir_b):
    def found(d):
        return {os.path.relpath(p, d) for pattern in ("check.*.manifest.json", "manifest.[0-9]*.json")
                for p in glob.glob(os.path.join(d, "**", pattern), recursive=True)}
    a, b = found(dir_a), found(dir_b)
    diffs = [f"{p}: only under {dir_a if p in a else dir_b}" for p in sorted(a ^ b)]
    for p in sorted(a & b):
        d = first_difference(normalise(load(os.path.join(dir_a, p))), normalise(load(os.path.join(dir_b, p))))
        if d:
            diffs.append(f"{p}: {d}")
    if diffs:
        print(f"{len(diffs)} of {len(a | b)} manifests differ")
        for d in diffs:
            print(f"  - {d}")
        return 1
    if not a:
        print("no manifests to compare")
        return 1
    print(f"{len(a)} manifests identical (normalised) to {os.path.basename(os.path.normpath(dir_a))}'s")
    return 0


def main(argv):
    cmds = {"check": check, "hooks": hooks, "records": records, "same": same}
    if len(argv) != 3 or argv[0] not in cmds:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        return cmds[argv[0]](argv[1], argv[2])
    except Unreadable as e:
        print(f"unreadable: {e}")
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
