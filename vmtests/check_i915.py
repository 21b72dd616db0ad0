#!/usr/bin/env python3
"""Compare a gpuwatch manifest with what the kernel says about i915 processes, exactly.

usage: check_i915.py MANIFEST STATE --pids PID [PID ...] [--preexisting] [-q]
       check_i915.py MANIFEST STATE --procdir DIR --pids PID ... (saved /proc copies, for tests)

The ground truth comes from the kernel, not from the workload nor from gpuwatch:
  STATE   the gwi915 test fixture's debugfs file (/sys/kernel/debug/dri/N/gwi915_state):
          per open file (client) its contexts (id, VM, priority, flags, engine map), its VM id
          table, and its GEM handles (size, tiling, stride, memory regions, PAT, userptr,
          fake offset per mmap type).
  /proc/PID/maps   the anon_inode:i915.gem mappings (fake offset in the offset column) and
                   the legacy GEM_MMAP mappings ("/i915 (deleted)").
  /proc/PID/fd     the DRM, sync_file and [i915_perf] fds.
Checked, per listed process: the same fds (i915 DRM file, sync_file, i915_perf); the same
i915 mappings (start, length, via, file, and the handle the fake offset belongs to); per i915
file: the same handles (size, tiling mode and stride, placements for GEM_CREATE_EXT buffers,
PAT, userptr address, fake offsets with their mmap types), the same contexts (VM by identity,
priority, engine map, single-timeline flag) and the same VM ids. Manifest files are matched
to fixture clients by minor, opener pid and handle set.

--preexisting: the files were opened before gpuwatch attached (its snapshot found them).
Then the manifest must say "handles_known": false and "complete": false for them; it may
list a subset of the kernel's handles, contexts and VM ids (those seen since), and mappings
whose fake offset was granted before attach may carry a null handle; a mapping the snapshot
could not tie to one file (the process holds several files of the device) may be missing if
the manifest's incomplete_reasons name its address. Everything else (fds, mappings with
their file, the entries it does list) must still be exact.

Exit status: 0 match, 1 mismatch (differences on stdout), 2 unreadable input.
"""

import argparse
import json
import os
import re
import sys

TILING = {0: "none", 1: "X", 2: "Y"}
REGION_CLASS = {"system": 0, "device": 1}


class Input(Exception):
    pass


def parse_state(text):
    """clients: list of dicts {id, pid, minor, contexts{id: ...}, vmids{id: serial}, handles{h: ...}}"""
    clients, cur = [], None
    for ln, line in enumerate(text.splitlines(), 1):
        w = line.split()
        if not w:
            continue
        if w[0] == "client":
            cur = {"id": int(w[1]), "pid": int(w[3]), "minor": int(w[5]), "contexts": {}, "vmids": {}, "handles": {}}
            clients.append(cur)
        elif cur is None:
            raise Input(f"state line {ln}: before any client")
        elif w[0] == "ctx":
            eng = None if w[w.index("engines") + 1:] == ["default"] else \
                [tuple(int(x) for x in e.split(":")) for e in " ".join(w[w.index("engines") + 1:]).split(",") if e]
            cur["contexts"][int(w[1])] = {"vm": int(w[4]), "prio": int(w[6]), "flags": w[8], "engines": eng}
        elif w[0] == "vmid":
            cur["vmids"][int(w[1])] = int(w[3])
        elif w[0] == "handle":
            h = {"size": int(w[3]), "tiling": int(w[5]), "stride": int(w[7]), "regions": [], "pat": None,
                 "userptr": None, "offsets": {}}
            i = w.index("regions") + 1
            if i < len(w) and re.fullmatch(r"\d+:\d+(,\d+:\d+)*", w[i]):
                h["regions"] = [int(r.split(":")[0]) for r in w[i].split(",")]
                i += 1
            while i < len(w):
                if w[i] == "pat":
                    h["pat"] = int(w[i + 1]); i += 2
                elif w[i] == "userptr":
                    h["userptr"] = int(w[i + 1].split("+")[0], 16); i += 4
                elif "=" in w[i]:
                    t, off = w[i].split("="); h["offsets"][int(off, 16)] = t; i += 1
                else:
                    i += 1
            cur["handles"][int(w[1])] = h
        else:
            raise Input(f"state line {ln}: unknown line {line!r}")
    return clients


def read_proc(procdir, pid):
    base = os.path.join(procdir, str(pid))
    try:
        with open(os.path.join(base, "maps")) as f:
            maps = f.read().splitlines()
        fds = {}
        for fd in os.listdir(os.path.join(base, "fd")):
            try:
                target = os.readlink(os.path.join(base, "fd", fd))
            except OSError:
                continue
            st = None
            try:
                st = os.stat(os.path.join(base, "fd", fd))
            except OSError:
                pass
            fds[int(fd)] = (target, st)
    except OSError as e:
        raise Input(f"cannot read {base}: {e}")
    return maps, fds


class Checker:
    def __init__(self, manifest, clients, procs, preexisting=False):
        self.m, self.clients, self.procs, self.diffs = manifest, clients, procs, []
        self.pre = preexisting

    def diff(self, msg):
        self.diffs.append(msg)

    def run(self):
        files = {f["id"]: f for f in self.m.get("files", [])}
        mprocs = {p["pid"]: p for p in self.m.get("processes", [])}
        opener = {}  # manifest file id -> lowest pid holding it by fd (the opener in these workloads)
        for pid in sorted(self.procs):
            mp = mprocs.get(pid)
            if mp is None:
                self.diff(f"process {pid}: absent from the manifest")
                continue
            for e in mp["fds"]:
                if "file" in e:
                    opener.setdefault(e["file"], pid)
        matched = {}
        for fid, pid in opener.items():
            f = files.get(fid)
            if f is None or f.get("driver") != "i915":
                continue
            matched[fid] = self.match_client(f, pid)
        for pid, (maps, fds) in sorted(self.procs.items()):
            if pid in mprocs:
                self.check_process(pid, mprocs[pid], maps, fds, files, matched)
        for fid, c in matched.items():
            if c is not None:
                self.check_file(files[fid], c)
        return self.diffs

    def match_client(self, f, pid):
        minor = int(f["rdev"].split(":")[1])
        cands = [c for c in self.clients if c["minor"] == minor and c["pid"] == pid]
        hs = {h["handle"] for h in f["handles"]}
        exact = [c for c in cands if set(c["handles"]) == hs]
        if len(exact) >= 1:
            self.clients.remove(exact[0])
            return exact[0]
        if not cands:
            self.diff(f"file {f['id']} ({f['path']}, opened by {pid}): no fixture client with minor {minor} and pid {pid}")
            return None
        self.clients.remove(cands[0])
        return cands[0]

    def handle_of_offset(self, client, off):
        """the handle whose fake offset range holds off"""
        for h, d in client["handles"].items():
            for o in d["offsets"]:
                if o <= off < o + d["size"]:
                    return h, o
        return None, None

    def check_process(self, pid, mp, maps, fds, files, matched):
        # fds
        want = {}
        for fd, (target, st) in fds.items():
            if target.startswith("/dev/dri/") and (st is None or os.major(st.st_rdev) == 226):
                want[fd] = "drm"
            elif target == "anon_inode:sync_file":
                want[fd] = "sync_file"
            elif target == "anon_inode:[i915_perf]":
                want[fd] = "i915_perf"
        got = {}
        for e in mp["fds"]:
            got[e["fd"]] = "sync_file" if "sync_file" in e else "i915_perf" if "i915_perf" in e else \
                "dmabuf" if "dmabuf" in e else "drm"
        for fd in sorted(set(want) | set(got)):
            if want.get(fd) != got.get(fd):
                self.diff(f"process {pid} fd {fd}: kernel says {want.get(fd, 'absent')}, manifest says {got.get(fd, 'absent')}")
        for e in mp["fds"]:
            o = (e.get("sync_file") or e.get("i915_perf") or {}).get("origin")
            if ("sync_file" in e or "i915_perf" in e) and not o:
                self.diff(f"process {pid} fd {e['fd']}: no origin recorded")
        # mappings
        kmaps = {}
        for line in maps:
            w = line.split(None, 5)
            name = w[5].strip() if len(w) > 5 else ""
            if name not in ("anon_inode:i915.gem", "/i915 (deleted)"):
                continue
            s, e = (int(x, 16) for x in w[0].split("-"))
            kmaps[s] = {"length": e - s, "offset": int(w[2], 16),
                        "via": "anon_inode:i915.gem" if name.startswith("anon") else "i915.gem_mmap"}
        mm = {m["start"]: m for m in mp["mmaps"] if files.get(m["file"], {}).get("driver") == "i915"}
        for s in sorted(set(kmaps) | set(mm)):
            k, g = kmaps.get(s), mm.get(s)
            where = f"process {pid} mapping at {s:#x}"
            if k is not None and g is None and self.pre and any(
                    f"{s:#x}" in r for r in self.m.get("incomplete_reasons", [])):
                continue  # named as unattributable (several candidate files): honest, allowed
            if k is None or g is None:
                self.diff(f"{where}: kernel {'has it' if k else 'does not have it'}, manifest "
                          f"{'has it' if g else 'does not'}")
                continue
            if g["length"] != k["length"] or g.get("via") != k["via"]:
                self.diff(f"{where}: length/via {g['length']:#x}/{g.get('via')} in the manifest, "
                          f"{k['length']:#x}/{k['via']} in the kernel")
            c = matched.get(g["file"])
            if k["via"] == "anon_inode:i915.gem":
                if g["offset"] != k["offset"]:
                    self.diff(f"{where}: offset {g['offset']:#x} in the manifest, {k['offset']:#x} in the kernel")
                if c is not None:
                    h, _ = self.handle_of_offset(c, k["offset"])
                    if g.get("handle") != h and not (self.pre and g.get("handle") is None):
                        self.diff(f"{where}: handle {g.get('handle')} in the manifest, the fake offset is handle {h}'s")
            elif (g.get("handle") is None and not self.pre) or \
                    (g.get("handle") is not None and c is not None and g["handle"] not in c["handles"]):
                self.diff(f"{where}: legacy mapping without a live handle in the manifest ({g.get('handle')})")

    def check_file(self, f, c):
        where = f"file {f['id']} ({f['path']})"
        if self.pre and f.get("handles_known") is not False:
            self.diff(f"{where}: opened before attach, but the manifest says its handles are known")
        mh = {h["handle"]: h for h in f["handles"]}
        for h in sorted(set(mh) | set(c["handles"])):
            g, k = mh.get(h), c["handles"].get(h)
            if g is None and k is not None and self.pre:
                continue
            if g is None or k is None:
                self.diff(f"{where} handle {h}: {'only in the kernel' if g is None else 'only in the manifest'}")
                continue
            w = f"{where} handle {h}"
            if g["size"] != k["size"]:
                self.diff(f"{w}: size {g['size']} in the manifest, {k['size']} in the kernel")
            t = g.get("tiling") or {"mode": "none", "stride": 0}
            if t["mode"] != TILING.get(k["tiling"]) or (k["tiling"] and t["stride"] != k["stride"]):
                self.diff(f"{w}: tiling {t} in the manifest, mode {k['tiling']} stride {k['stride']} in the kernel")
            p = g.get("params", {})
            if g["origin"] == "unknown":  # seen only through a later ioctl: no parameters known
                continue
            if g["origin"] == "i915.gem_create_ext":
                pl = [REGION_CLASS.get(r["class"], -1) for r in p.get("placements", [])] or [0]
                if pl != k["regions"]:
                    self.diff(f"{w}: placements {pl} in the manifest, {k['regions']} in the kernel")
            if p.get("pat_index") != k["pat"]:
                self.diff(f"{w}: PAT {p.get('pat_index')} in the manifest, {k['pat']} in the kernel")
            if (g["origin"] == "i915.userptr") != (k["userptr"] is not None) or \
                    (k["userptr"] is not None and p.get("user_ptr") != k["userptr"]):
                self.diff(f"{w}: userptr {p.get('user_ptr')} ({g['origin']}) in the manifest, {k['userptr']} in the kernel")
            types = {int(o): t for o, t in g.get("mmap_types", {}).items()}
            if set(g.get("mmap_offsets", [])) != set(k["offsets"]) or types != k["offsets"]:
                self.diff(f"{w}: mmap offsets {types or g.get('mmap_offsets')} in the manifest, "
                          f"{ {o: t for o, t in k['offsets'].items()} } in the kernel")
        # VM ids, then contexts with their VM by identity (the fixture's VM serial)
        mv = {v["id"] for v in f.get("vms", [])}
        if mv != set(c["vmids"]) and not (self.pre and mv <= set(c["vmids"])):
            self.diff(f"{where}: VM ids {sorted(mv)} in the manifest, {sorted(c['vmids'])} in the kernel")
        mc = {x["id"]: x for x in f.get("contexts", [])}
        serial_of = c["vmids"]
        for cid in sorted(set(mc) | set(c["contexts"])):
            g, k = mc.get(cid), c["contexts"].get(cid)
            w = f"{where} context {cid}"
            if g is None and k is not None and self.pre:
                continue
            if g is None or k is None:
                self.diff(f"{w}: {'only in the kernel' if g is None else 'only in the manifest'}")
                continue
            vm = g.get("vm")
            if vm is None:
                if k["vm"] in serial_of.values():
                    self.diff(f"{w}: own VM in the manifest, the kernel's context uses VM id(s) "
                              f"{[i for i, s in serial_of.items() if s == k['vm']]}")
            elif vm in serial_of:
                if serial_of[vm] != k["vm"]:
                    self.diff(f"{w}: VM {vm} in the manifest is not the context's VM in the kernel")
            elif not g.get("vm_destroyed"):
                self.diff(f"{w}: VM {vm} in the manifest names no VM id, and is not marked vm_destroyed")
            params = g.get("params", {})
            if int(params.get("priority", 0)) != k["prio"]:
                self.diff(f"{w}: priority {params.get('priority', 0)} in the manifest, {k['prio']} in the kernel")
            eng = params.get("engines")
            geng = None if eng is None else [(e["class"], e["instance"]) for e in eng.get("engines", [])]
            if geng != k["engines"]:
                self.diff(f"{w}: engines {geng} in the manifest, {k['engines']} in the kernel")
            if bool(g.get("flags", 0) & 2) != ("s" in k["flags"]):
                self.diff(f"{w}: single-timeline flag differs (manifest flags {g.get('flags')}, kernel {k['flags']})")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("manifest")
    ap.add_argument("state")
    ap.add_argument("--pids", nargs="+", type=int, required=True)
    ap.add_argument("--procdir", default="/proc")
    ap.add_argument("--preexisting", action="store_true", help="the files were opened before gpuwatch attached")
    ap.add_argument("-q", "--quiet", action="store_true")
    a = ap.parse_args(argv)
    try:
        with open(a.manifest) as f:
            manifest = json.load(f)
        with open(a.state) as f:
            clients = parse_state(f.read())
        procs = {pid: read_proc(a.procdir, pid) for pid in a.pids}
        diffs = Checker(manifest, clients, procs, a.preexisting).run()
        if a.preexisting and manifest.get("complete") is not False:
            diffs.insert(0, "files opened before attach, but the manifest says it is complete")
        elif not a.preexisting and manifest.get("complete") is not True:
            diffs.insert(0, f"manifest not complete: {manifest.get('incomplete_reasons')}")
    except (OSError, ValueError, Input) as e:
        print(f"check_i915: {e}")
        return 2
    except (KeyError, TypeError, AttributeError, IndexError) as e:
        print(f"check_i915: malformed manifest or state ({type(e).__name__}: {e})")
        return 2
    if diffs:
        print(f"manifest {a.manifest} does not match the kernel ({len(diffs)} difference(s)):")
        for d in diffs:
            print(f"  - {d}")
        return 1
    if not a.quiet:
        print(f"manifest matches the kernel: {len(a.pids)} process(es)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
