#!/usr/bin/env python3
"""Compare the kernel's i915 state of processes before a checkpoint and after the restore.

usage: check_i915_restore.py BEFORE AFTER --pids PID [PID ...]
                             [--maps PID MAPS_BEFORE MAPS_AFTER]... [--allow-added-offsets] [-q]

BEFORE and AFTER are copies of the gwi915 fixture's debugfs file
(/sys/kernel/debug/dri/N/gwi915_state: per open file its contexts, VM ids and GEM handles).
Only the files opened by the listed pids are compared (CRIU restores a task with its pid;
the plugin reopens the device from inside it, so the opener pid is kept).

What legitimately changes, and is normalised away: client ids; VM serials (a VM's identity:
compared as "which VM ids of the file name the same VM", and per context "which VM ids name
its VM", or "its own VM" when none does, a proto-context without a VM included); fake mmap
offsets (compared as the set of mmap types handed out per handle); whether a context is
still a proto-context (CONTEXT_GETPARAM and EXECBUFFER2 finalize it: a side effect of use).
Everything else must be equal, per file: the context ids with priority, flags (bannable,
recoverable, persistent, no-error-capture, single-timeline, protected) and engine map; the VM
ids and which of them share a VM; the handles with size, tiling mode and stride, caching,
madvise, memory regions in order, protected, PAT index, userptr address/size/flags, imported,
and mmap types. --allow-added-offsets: mmap types present only after are notes, not
differences (a dump may ask for offsets to read buffers; harmless to the process).

--maps PID MAPS_BEFORE MAPS_AFTER (copies of /proc/PID/maps): the same i915 mappings
(anon_inode:i915.gem and the legacy GEM_MMAP shmem "/i915 (deleted)") at the same addresses
with the same length, permissions and kind; a legacy mapping at the same file offset; and a
GEM mapping's fake offset must belong, after as before, to the same handle and mmap type of
the process's file (the offsets themselves differ).

Exit status: 0 same, 1 differences (listed on stdout), 2 unreadable input.
"""

import argparse
import re
import sys

FLAG_NAMES = "bannable recoverable persistent no-error-capture single-timeline protected".split()


class Input(Exception):
    pass


def parse_state(text):
    """[{id, pid, minor, contexts{id: {...}}, vmids{id: serial}, handles{h: {...}}}]"""
    clients, cur = [], None
    for ln, line in enumerate(text.splitlines(), 1):
        w = line.split()
        if not w:
            continue
        try:
            if w[0] == "client":
                cur = {"id": int(w[1]), "pid": int(w[3]), "minor": int(w[5]),
                       "contexts": {}, "vmids": {}, "handles": {}}
                clients.append(cur)
            elif cur is None:
                raise Input(f"line {ln}: before any client")
            elif w[0] == "ctx":
                e = w.index("engines")
                eng = " ".join(w[e + 1:])
                cur["contexts"][int(w[1])] = {
                    "final": w[2] == "final", "vm": int(w[w.index("vm") + 1]),
                    "prio": int(w[w.index("prio") + 1]), "flags": w[w.index("flags") + 1],
                    "engines": None if eng == "default" else eng}
            elif w[0] == "vmid":
                cur["vmids"][int(w[1])] = int(w[3])
            elif w[0] == "handle":
                h = {"size": int(w[3]), "tiling": int(w[5]), "stride": int(w[7]), "caching": int(w[9]),
                     "madv": int(w[11]), "regions": "", "protected": False, "pat": None, "userptr": None,
                     "imported": False, "offsets": {}}
                i = 13
                if i < len(w) and re.fullmatch(r"\d+:\d+(,\d+:\d+)*", w[i]):
                    h["regions"] = w[i]
                    i += 1
                while i < len(w):
                    if w[i] == "pat":
                        h["pat"] = int(w[i + 1])
                        i += 2
                    elif w[i] == "userptr":
                        addr, size = w[i + 1].split("+")
                        h["userptr"] = f"{addr}+{size} flags {w[i + 3]}"
                        i += 4
                    elif w[i] in ("protected", "imported"):
                        h[w[i]] = True
                        i += 1
                    elif "=" in w[i]:
                        t, off = w[i].split("=")
                        h["offsets"][t] = int(off, 16)
                        i += 1
                    else:
                        raise Input(f"line {ln}: unknown word {w[i]!r}")
                cur["handles"][int(w[1])] = h
            else:
                raise Input(f"line {ln}: unknown line {line!r}")
        except (IndexError, ValueError) as e:
            raise Input(f"line {ln}: malformed ({e}): {line!r}")
    return clients


def normalise(c):
    """what must survive a checkpoint/restore of one file, ids kept and serials/offsets dropped"""
    by_serial = {}
    for vid, serial in c["vmids"].items():
        by_serial.setdefault(serial, set()).add(vid)
    ctxs = {}
    for cid, x in c["contexts"].items():
        ids = by_serial.get(x["vm"]) if x["vm"] else None
        ctxs[cid] = {"vm": f"VM id(s) {sorted(ids)}" if ids else "its own VM", "priority": x["prio"],
                     "flags": x["flags"], "engines": x["engines"] or "default"}
    handles = {}
    for h, d in c["handles"].items():
        n = {k: v for k, v in d.items() if k != "offsets"}
        n["mmap types"] = sorted(d["offsets"])
        handles[h] = n
    return {"contexts": ctxs, "vm ids": sorted(c["vmids"]),
            "VM sharing": sorted(sorted(s) for s in by_serial.values() if len(s) > 1),
            "handles": handles}


def flag_diff(a, b):
    return ", ".join(f"{n} {'on' if y != '-' else 'off'}" for n, x, y in zip(FLAG_NAMES, a, b) if x != y) or f"{a} -> {b}"


def compare_file(where, b, a, allow_added, diffs, notes):
    nb, na = normalise(b), normalise(a)
    for k in ("vm ids", "VM sharing"):
        if nb[k] != na[k]:
            diffs.append(f"{where}: {k} {nb[k]} before, {na[k]} after")
    for cid in sorted(set(nb["contexts"]) | set(na["contexts"])):
        x, y = nb["contexts"].get(cid), na["contexts"].get(cid)
        if x is None or y is None:
            diffs.append(f"{where} context {cid}: only {'after' if x is None else 'before'} the restore")
            continue
        for k in x:
            if x[k] != y[k]:
                v = flag_diff(x[k], y[k]) if k == "flags" else f"{x[k]} before, {y[k]} after"
                diffs.append(f"{where} context {cid}: {k}: {v}")
    for h in sorted(set(nb["handles"]) | set(na["handles"])):
        x, y = nb["handles"].get(h), na["handles"].get(h)
        if x is None or y is None:
            diffs.append(f"{where} handle {h}: only {'after' if x is None else 'before'} the restore"
                         + (f" (size {y['size']}: a filler left behind?)" if x is None else ""))
            continue
        for k in x:
            if x[k] == y[k]:
                continue
            if k == "mmap types" and allow_added and set(x[k]) <= set(y[k]):
                notes.append(f"{where} handle {h}: mmap types {x[k]} before, {y[k]} after (allowed)")
                continue
            diffs.append(f"{where} handle {h}: {k}: {x[k]} before, {y[k]} after")


def pair_files(pid, before, after, diffs):
    """pairs of (client before, client after) of one opener pid, by minor then handle set"""
    pairs = []
    for minor in sorted({c["minor"] for c in before + after}):
        bs = [c for c in before if c["minor"] == minor]
        as_ = [c for c in after if c["minor"] == minor]
        if len(bs) != len(as_):
            diffs.append(f"pid {pid}: {len(bs)} open file(s) of minor {minor} before, {len(as_)} after")
        rest = list(as_)
        left = []
        for c in bs:
            m = next((x for x in rest if set(x["handles"]) == set(c["handles"])), None)
            if m is None:
                left.append(c)
            else:
                rest.remove(m)
                pairs.append((c, m))
        pairs.extend(zip(left, rest))
    return pairs


def read_maps(text, others=None):
    """{start: {end, perms, offset, kind}} of the i915 mappings; others: {start: name} of the rest"""
    out = {}
    for line in text.splitlines():
        w = line.split(None, 5)
        if len(w) < 5:
            continue
        name = w[5].strip() if len(w) > 5 else ""
        kind = "anon_inode:i915.gem" if name == "anon_inode:i915.gem" else \
            "legacy GEM_MMAP (/i915 (deleted))" if name == "/i915 (deleted)" else None
        s, e = (int(x, 16) for x in w[0].split("-"))
        if kind is None:
            if others is not None:
                others[s] = f"{w[1]} '{name or '[anonymous]'}'"
            continue
        out[s] = {"end": e, "perms": w[1], "offset": int(w[2], 16), "kind": kind}
    return out


def owner_of_offset(clients, off):
    """(handle, mmap type) whose fake offset range holds off, among the pid's files"""
    for c in clients:
        for h, d in c["handles"].items():
            for t, o in d["offsets"].items():
                if o <= off < o + d["size"]:
                    return h, t
    return None


def compare_maps(pid, mb, ma, cb, ca, diffs, others=None):
    others = others or {}
    if not mb:
        diffs.append(f"pid {pid}: no i915 mapping before the dump: nothing to compare (test bug?)")
    for s in sorted(set(mb) | set(ma)):
        x, y = mb.get(s), ma.get(s)
        where = f"pid {pid} mapping at {s:#x}"
        if x is None or y is None:
            d = x or y
            instead = f" (after: {others[s]} there)" if y is None and s in others else ""
            diffs.append(f"{where} ({d['kind']}, {d['end'] - s:#x} bytes): only {'after' if x is None else 'before'}{instead}")
            continue
        for k in ("end", "perms", "kind"):
            if x[k] != y[k]:
                v = f"{x[k] - s:#x} bytes before, {y[k] - s:#x} after" if k == "end" else f"{x[k]} before, {y[k]} after"
                diffs.append(f"{where}: {'length' if k == 'end' else k}: {v}")
        if x["kind"] != y["kind"]:
            continue
        if x["kind"].startswith("legacy"):
            if x["offset"] != y["offset"]:
                diffs.append(f"{where}: shmem offset {x['offset']:#x} before, {y['offset']:#x} after")
            continue
        ob, oa = owner_of_offset(cb, x["offset"]), owner_of_offset(ca, y["offset"])
        if ob is None:  # its handle was closed while the mapping stays: nothing to tie it to
            continue
        if ob != oa:
            diffs.append(f"{where}: maps handle {ob[0]} ({ob[1]}) before, "
                         f"{'nothing of pid ' + str(pid) if oa is None else f'handle {oa[0]} ({oa[1]})'} after "
                         f"(fake offset {y['offset']:#x})")


def check(before, after, pids, maps=(), allow_added=False):
    """(diffs, notes); before/after: state texts; maps: [(pid, before text, after text)]"""
    cb, ca = parse_state(before), parse_state(after)
    diffs, notes = [], []
    for pid in pids:
        b = [c for c in cb if c["pid"] == pid]
        a = [c for c in ca if c["pid"] == pid]
        if not b:
            diffs.append(f"pid {pid}: no i915 file before the dump: nothing to compare (test bug?)")
        for x, y in pair_files(pid, b, a, diffs):
            compare_file(f"pid {pid} file (minor {x['minor']}, client {x['id']} -> {y['id']})", x, y,
                         allow_added, diffs, notes)
    for pid, tb, ta in maps:
        others = {}
        compare_maps(pid, read_maps(tb), read_maps(ta, others), [c for c in cb if c["pid"] == pid],
                     [c for c in ca if c["pid"] == pid], diffs, others)
    return diffs, notes


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--pids", nargs="+", type=int, required=True)
    ap.add_argument("--maps", nargs=3, action="append", default=[], metavar=("PID", "BEFORE", "AFTER"))
    ap.add_argument("--allow-added-offsets", action="store_true")
    ap.add_argument("-q", "--quiet", action="store_true")
    a = ap.parse_args(argv)
    try:
        texts = []
        for p in (a.before, a.after):
            with open(p) as f:
                texts.append(f.read())
        maps = []
        for pid, pb, pa in a.maps:
            with open(pb) as f, open(pa) as g:
                maps.append((int(pid), f.read(), g.read()))
        diffs, notes = check(texts[0], texts[1], a.pids, maps, a.allow_added_offsets)
    except (OSError, ValueError, Input) as e:
        print(f"check_i915_restore: {e}")
        return 2
    for n in notes:
        print(f"note: {n}")
    if diffs:
        print(f"the i915 state after differs from before ({len(diffs)} difference(s)):")
        for d in diffs:
            print(f"  - {d}")
        return 1
    if not a.quiet:
        print(f"i915 state and mappings the same before and after: pids {' '.join(map(str, a.pids))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
