#!/usr/bin/env python3
"""Compare a gpuwatch manifest with the workloads' ground truth, exactly.

usage: check_manifest.py MANIFEST [TRUTH.json ...] [--absent TRUTH.json ...] [--cgroup DIR]
                         [--complete auto|true|false|any] [-q]

Checked: schema and lost_events; "complete" (auto: false iff a truth file has unknown handles
or ran ioctls gpuwatch does not decode); the undecoded ioctls of each file, by name; its
framebuffers (id, size, the handles they were made from); the CRTCs it set (its "display":
CRTC, framebuffer shown, the mode's size, the number of connectors);
the same processes (pid, comm); per process the same fds (DRM file or dma-buf, cloexec) and
mappings (start, length, prot, shared, file, offset, handle); the same files (path, rdev,
driver, flags, handles with size and origin). Manifest file ids are arbitrary: a bijection
between truth labels and manifest ids is built from the fds and mappings, and any fd or mapping
that breaks it is reported. Processes of --absent truth files must not appear. For a file whose
handles are unknown to gpuwatch (opened before attach), the manifest must say
"handles_known": false and may list a subset of its handles, and mappings / dma-buf fds of it
may carry null handles.

Exit status: 0 match, 1 mismatch (differences on stdout), 2 unreadable input.
"""

import argparse
import json
import sys

from truthlib import TruthError, load_json, load_truths

MANIFEST_SCHEMA = "gpuwatch.manifest/v1"


def norm_prot(p):
    return "".join(c for c in str(p) if c in "rwx")


def norm_flags(f):
    return set(t.strip() for t in str(f).split("|") if t.strip())


def norm_cgroup(path):
    path = str(path).rstrip("/")
    return path[len("/sys/fs/cgroup"):] or "/" if path.startswith("/sys/fs/cgroup") else path


class Checker:
    def __init__(self, manifest, truth, absent_pids=(), cgroup=None, complete="auto"):
        self.m = manifest
        self.t = truth
        self.absent = set(absent_pids)
        self.cgroup = cgroup
        self.complete = complete
        self.diffs = []
        self.l2m = {}   # truth label -> manifest file id
        self.m2l = {}   # manifest file id -> truth label

    def diff(self, msg):
        self.diffs.append(msg)

    # -- file identity ----------------------------------------------------------------
    def bind(self, label, mid, where):
        """Record that truth file `label` is manifest file `mid`; report contradictions."""
        if mid is None:
            return
        if label in self.l2m and self.l2m[label] != mid:
            self.diff(f"{where}: manifest file {mid}, but {self.t.describe(label)} is manifest "
                      f"file {self.l2m[label]} elsewhere (one open file split in two?)")
            return
        if mid in self.m2l and self.m2l[mid] != label:
            self.diff(f"{where}: manifest file {mid} stands for {self.t.describe(label)} and for "
                      f"{self.t.describe(self.m2l[mid])} (two open files merged into one?)")
            return
        self.l2m[label] = mid
        self.m2l[mid] = label

    def known(self, label):
        return self.t.files[label].get("handles_known", True)

    # -- top level ----------------------------------------------------------------------
    def run(self):
        m = self.m
        if m.get("schema") != MANIFEST_SCHEMA:
            self.diff(f"schema is {m.get('schema')!r}, expected {MANIFEST_SCHEMA!r}")
        if m.get("lost_events") != 0:
            self.diff(f"lost_events is {m.get('lost_events')!r}, expected 0")
        if self.cgroup is not None and norm_cgroup(m.get("cgroup", "")) != norm_cgroup(self.cgroup):
            self.diff(f"cgroup is {m.get('cgroup')!r}, expected {self.cgroup!r}")
        labels = self.t.referenced_labels()
        if self.complete != "any":
            want = (all(self.known(l) and not self.t.files[l].get("undecoded_ioctls") for l in labels)
                    if self.complete == "auto" else self.complete == "true")
            if m.get("complete") is not want:
                self.diff(f"complete is {m.get('complete')!r}, expected {want}")
        self.check_processes()
        self.check_files(labels)
        return self.diffs

    def check_processes(self):
        want = self.t.expected_processes()
        got = {}
        for p in self.m.get("processes", []):
            if p.get("pid") in got:
                self.diff(f"process {p.get('pid')} is listed twice")
            got[p.get("pid")] = p
        for pid in sorted(set(want) - set(got)):
            self.diff(f"process {pid} ({want[pid].get('comm')}) is missing")
        for pid in sorted(set(got) - set(want), key=str):
            why = "it runs outside the cgroup" if pid in self.absent else "not expected"
            self.diff(f"process {pid} ({got[pid].get('comm')}) is listed: {why}; "
                      f"manifest entry: {json.dumps(got[pid], sort_keys=True)}")
        for pid in sorted(set(want) & set(got)):
            self.check_process(pid, want[pid], got[pid])

    def check_process(self, pid, want, got):
        if got.get("comm") != want.get("comm"):
            self.diff(f"process {pid}: comm {got.get('comm')!r}, expected {want.get('comm')!r}")
        self.check_fds(pid, want.get("fds", []), got.get("fds", []))
        self.check_mmaps(pid, want.get("mmaps", []), got.get("mmaps", []))

    def check_fds(self, pid, want, got):
        w = {e["fd"]: e for e in want}
        g = {}
        for e in got:
            if e.get("fd") in g:
                self.diff(f"process {pid}: fd {e.get('fd')} is listed twice")
            g[e.get("fd")] = e
        for fd in sorted(set(w) - set(g)):
            self.diff(f"process {pid} fd {fd}: missing (expected {json.dumps(w[fd], sort_keys=True)})")
        for fd in sorted(set(g) - set(w), key=str):
            self.diff(f"process {pid} fd {fd}: not expected (manifest {json.dumps(g[fd], sort_keys=True)})")
        for fd in sorted(set(w) & set(g)):
            self.check_fd(f"process {pid} fd {fd}", w[fd], g[fd])

    def check_fd(self, where, w, g):
        if g.get("cloexec") is not w["cloexec"]:
            self.diff(f"{where}: cloexec {g.get('cloexec')!r}, expected {w['cloexec']}")
        if "dmabuf" in w:
            gd = g.get("dmabuf")
            if not isinstance(gd, dict):
                self.diff(f"{where}: expected a dma-buf fd of {self.t.describe(w['dmabuf']['file'])} "
                          f"handle {w['dmabuf']['handle']}, manifest has {json.dumps(g, sort_keys=True)}")
                return
            label, tolerant = w["dmabuf"]["file"], not self.known(w["dmabuf"]["file"])
            if gd.get("file") is None and tolerant:
                return
            self.bind(label, gd.get("file"), f"{where} (dma-buf exporter)")
            if gd.get("handle") != w["dmabuf"]["handle"] and not (tolerant and gd.get("handle") is None):
                self.diff(f"{where}: dma-buf of handle {gd.get('handle')!r}, expected {w['dmabuf']['handle']}")
        else:
            if "dmabuf" in g or g.get("file") is None:
                self.diff(f"{where}: expected a DRM fd of {self.t.describe(w['file'])}, "
                          f"manifest has {json.dumps(g, sort_keys=True)}")
                return
            self.bind(w["file"], g["file"], where)

    def check_mmaps(self, pid, want, got):
        w = {m["start"]: m for m in want}
        g = {m.get("start"): m for m in got}
        for s in sorted(set(w) - set(g)):
            self.diff(f"process {pid} mapping {s:#x}+{w[s]['length']:#x}: missing "
                      f"(expected {json.dumps(w[s], sort_keys=True)})")
        for s in sorted(set(g) - set(w), key=str):
            start = f"{s:#x}" if isinstance(s, int) else repr(s)
            self.diff(f"process {pid} mapping {start}: not expected (manifest {json.dumps(g[s], sort_keys=True)})")
        for s in sorted(set(w) & set(g)):
            where = f"process {pid} mapping {s:#x}"
            wm, gm = w[s], g[s]
            for key in ("length", "offset"):
                if gm.get(key) != wm[key]:
                    gv = gm.get(key)
                    self.diff(f"{where}: {key} {gv:#x}, expected {wm[key]:#x}" if isinstance(gv, int)
                              else f"{where}: {key} {gv!r}, expected {wm[key]:#x}")
            if norm_prot(gm.get("prot", "")) != norm_prot(wm["prot"]):
                self.diff(f"{where}: prot {gm.get('prot')!r}, expected {wm['prot']!r}")
            if gm.get("shared") is not wm["shared"]:
                self.diff(f"{where}: shared {gm.get('shared')!r}, expected {wm['shared']}")
            self.bind(wm["file"], gm.get("file"), where)
            if gm.get("file") is None:
                self.diff(f"{where}: no file, expected {self.t.describe(wm['file'])}")
            tolerant = not self.known(wm["file"])
            if "handle" not in gm:
                self.diff(f"{where}: no \"handle\" key (null when unknown), expected {wm['handle']!r}")
            elif gm["handle"] != wm["handle"] and not (tolerant and gm["handle"] is None):
                self.diff(f"{where}: handle {gm['handle']!r}, expected {wm['handle']!r}")

    # -- files ---------------------------------------------------------------------------
    def check_files(self, labels):
        got = {}
        for f in self.m.get("files", []):
            if f.get("id") in got:
                self.diff(f"file id {f.get('id')} is listed twice")
            got[f.get("id")] = f
        for label in sorted(labels):
            mid = self.l2m.get(label)
            if mid is None:
                self.diff(f"no manifest file found for {self.t.describe(label)}")
            elif mid not in got:
                self.diff(f"manifest file {mid} ({self.t.describe(label)}) is referenced but not in \"files\"")
            else:
                self.check_file(label, self.t.files[label], got[mid])
        for mid in sorted(set(got) - set(self.m2l), key=str):
            self.diff(f"file {mid} is not expected: {json.dumps(got[mid], sort_keys=True)}")

    def check_file(self, label, w, g):
        where = f"file {g.get('id')} ({self.t.describe(label)})"
        for key in ("path", "rdev", "driver"):
            if g.get(key) != w[key]:
                self.diff(f"{where}: {key} {g.get(key)!r}, expected {w[key]!r}")
        if norm_flags(g.get("flags", "")) != norm_flags(w["flags"]):
            self.diff(f"{where}: flags {g.get('flags')!r}, expected {w['flags']!r}")
        wu, gu = sorted(w.get("undecoded_ioctls", [])), sorted(g.get("undecoded_ioctls", []))
        if wu != gu:
            self.diff(f"{where}: undecoded_ioctls {gu!r}, expected {wu!r}")
        wf = {b["id"]: (b["width"], b["height"], b["handles"]) for b in w.get("framebuffers", [])}
        gf = {b.get("id"): (b.get("width"), b.get("height"), [p.get("handle") for p in b.get("planes", [])])
              for b in g.get("framebuffers", [])}
        if wf != gf:
            self.diff(f"{where}: framebuffers (id: width, height, handles) {gf!r}, expected {wf!r}")
        wc = {c["crtc"]: (c["fb"], c["hdisplay"], c["vdisplay"], c["connectors"]) for c in w.get("crtcs", [])}
        gc = {c.get("crtc"): (c.get("fb"), (c.get("mode") or {}).get("hdisplay"), (c.get("mode") or {}).get("vdisplay"),
                              c.get("connectors"))
              for c in (g.get("display") or {}).get("crtcs", [])}
        if wc != gc:
            self.diff(f"{where}: display CRTCs (crtc: fb, hdisplay, vdisplay, connectors) {gc!r}, expected {wc!r}")
        known = w.get("handles_known", True)
        if g.get("handles_known", True) is not known:
            self.diff(f"{where}: handles_known {g.get('handles_known', True)!r}, expected {known}")
        wh = {h["handle"]: h for h in w.get("handles", [])}
        gh = {}
        for h in g.get("handles", []):
            if h.get("handle") in gh:
                self.diff(f"{where}: handle {h.get('handle')} is listed twice")
            gh[h.get("handle")] = h
        if known:
            for n in sorted(set(wh) - set(gh)):
                self.diff(f"{where}: handle {n} missing (expected size {wh[n]['size']}, origin {wh[n]['origin']})")
        for n in sorted(set(gh) - set(wh), key=str):
            self.diff(f"{where}: handle {n} not expected (manifest {json.dumps(gh[n], sort_keys=True)})")
        for n in sorted(set(wh) & set(gh)):
            for key in ("size", "origin"):
                if key == "origin" and not known and gh[n].get(key) == "unknown":
                    continue
                if gh[n].get(key) != wh[n][key]:
                    self.diff(f"{where}: handle {n}: {key} {gh[n].get(key)!r}, expected {wh[n][key]!r}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("manifest")
    ap.add_argument("truth", nargs="*", help="truth files of the processes in the cgroup")
    ap.add_argument("--absent", nargs="*", default=[], help="truth files of processes that must be absent")
    ap.add_argument("--cgroup", help="expected value of the manifest's \"cgroup\"")
    ap.add_argument("--complete", choices=("auto", "true", "false", "any"), default="auto")
    ap.add_argument("-q", "--quiet", action="store_true", help="print nothing on a match")
    a = ap.parse_args(argv)
    try:
        manifest = load_json(a.manifest)
        truth = load_truths(a.truth)
        absent = load_truths(a.absent).processes.keys()
        if not isinstance(manifest, dict):
            raise TruthError(f"{a.manifest}: not a JSON object")
        diffs = Checker(manifest, truth, absent, a.cgroup, a.complete).run()
    except TruthError as e:
        print(f"check_manifest: {e}")
        return 2
    except (KeyError, TypeError, AttributeError) as e:
        print(f"check_manifest: malformed manifest or truth ({type(e).__name__}: {e})")
        return 2
    if diffs:
        print(f"manifest {a.manifest} does not match the truth ({len(diffs)} difference(s)):")
        for d in diffs:
            print(f"  - {d}")
        return 1
    if not a.quiet:
        print(f"manifest matches: {len(truth.expected_processes())} process(es), "
              f"{len(truth.referenced_labels())} file(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
