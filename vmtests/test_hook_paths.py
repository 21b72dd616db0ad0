#!/usr/bin/env python3
"""Unit tests of hook_paths.py on hand-made JSON (no VM, no root): python3 test_hook_paths.py"""

import copy
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stdout
from io import StringIO

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hook_paths  # noqa: E402


def manifest(base_pid, base_addr, fake, hooks):
    """Two processes (parent, forked child) sharing a card0 file with a mapped handle."""
    proc = lambda pid, comm: {  # noqa: E731
        "pid": pid, "comm": comm,
        "fds": [{"fd": 6, "file": 1, "cloexec": True}],
        "mmaps": [{"start": base_addr + 0x4000, "length": 4096, "prot": "rw", "shared": True, "file": 1,
                   "offset": fake + 4096, "handle": 2, "object": 2},
                  {"start": base_addr, "length": 16384, "prot": "rw", "shared": True, "file": 1,
                   "offset": fake, "handle": 1, "object": 1}]}
    return {"schema": "gpuwatch.manifest/v1", "cgroup": f"/sys/fs/cgroup/gwt-x@{hooks}", "complete": True,
            "lost_events": 0, "generation": base_pid, "hooks": {"ioctl": hooks, "mmap": hooks, "cloexec": hooks, "syscalls": hooks},
            "processes": [proc(base_pid + 7, "wl_child"), proc(base_pid, "wl_x")],
            "files": [{"id": 1, "path": "/dev/dri/card0", "rdev": "226:0", "driver": "vgem", "flags": "O_RDWR",
                       "handles_known": True,
                       "handles": [{"handle": 1, "size": 16384, "origin": "dumb", "object": 1,
                                    "mmap_offsets": [fake]},
                                   {"handle": 2, "size": 4096, "origin": "dumb", "object": 2,
                                    "mmap_offsets": [fake + 4096]}]}]}


class Tmp:
    def __init__(self):
        self.t = tempfile.TemporaryDirectory()
        self.dir = self.t.name

    def write(self, rel, obj):
        p = os.path.join(self.dir, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(obj if isinstance(obj, str) else json.dumps(obj))
        return p


def run(*argv):
    out = StringIO()
    with redirect_stdout(out):
        rc = hook_paths.main(list(argv))
    return rc, out.getvalue()


class Case(unittest.TestCase):
    def tmp(self):
        t = Tmp()
        self.addCleanup(t.t.cleanup)
        return t


class SameTest(Case):
    def setUp(self):
        self.a, self.b = self.tmp(), self.tmp()

    def test_equal_once_pids_addresses_and_fake_offsets_are_normalised(self):
        for rel in ("check.1.manifest.json", "wl/check.final.manifest.json"):
            self.a.write(rel, manifest(100, 0x7f0000000000, 1 << 32, "tracepoint"))
            self.b.write(rel, manifest(230, 0x7e1234500000, 5 << 32, "fexit"))
        rc, out = run("same", self.a.dir, self.b.dir)
        self.assertEqual(rc, 0, out)
        self.assertIn("2 manifests identical", out)

    def test_file_and_object_ids_are_compared_by_rank(self):
        self.a.write("check.1.manifest.json", manifest(100, 0x7f0000000000, 1 << 32, "tracepoint"))
        m = manifest(230, 0x7e1234500000, 5 << 32, "fexit")
        # the same files and buffers, numbered from another start
        m["files"][0]["id"] = 3
        for h in m["files"][0]["handles"]:
            h["object"] += 4
        for p in m["processes"]:
            for x in p["fds"] + p["mmaps"]:
                x["file"] = 3
            for x in p["mmaps"]:
                x["object"] += 4
        self.b.write("check.1.manifest.json", m)
        rc, out = run("same", self.a.dir, self.b.dir)
        self.assertEqual(rc, 0, out)
        # but a mapping naming the other buffer is a difference
        m["processes"][0]["mmaps"][1]["object"] = 6  # was 5, the other buffer
        self.b.write("check.1.manifest.json", m)
        rc, out = run("same", self.a.dir, self.b.dir)
        self.assertEqual(rc, 1)
        self.assertIn("object", out)

    def test_a_cloexec_bit_differs(self):
        self.a.write("check.1.manifest.json", manifest(100, 0x7f0000000000, 1 << 32, "tracepoint"))
        m = manifest(230, 0x7e1234500000, 5 << 32, "fexit")
        m["processes"][1]["fds"][0]["cloexec"] = False
        self.b.write("check.1.manifest.json", m)
        rc, out = run("same", self.a.dir, self.b.dir)
        self.assertEqual(rc, 1)
        self.assertIn(".processes[0].fds[0].cloexec: true vs false", out)

    def test_a_mapping_binding_differs(self):
        self.a.write("check.1.manifest.json", manifest(100, 0x7f0000000000, 1 << 32, "tracepoint"))
        m = manifest(230, 0x7e1234500000, 5 << 32, "fexit")
        m["processes"][0]["mmaps"][1]["handle"] = None
        self.b.write("check.1.manifest.json", m)
        rc, out = run("same", self.a.dir, self.b.dir)
        self.assertEqual(rc, 1)
        self.assertIn("mmaps[0].handle", out)

    def test_a_manifest_missing_on_one_side(self):
        self.a.write("check.1.manifest.json", manifest(100, 0, 1 << 32, "tracepoint"))
        self.a.write("check.2.manifest.json", manifest(100, 0, 1 << 32, "tracepoint"))
        self.b.write("check.1.manifest.json", manifest(100, 0, 1 << 32, "fexit"))
        rc, out = run("same", self.a.dir, self.b.dir)
        self.assertEqual(rc, 1)
        self.assertIn("check.2.manifest.json: only under", out)

    def test_nothing_to_compare_is_not_a_pass(self):
        self.assertEqual(run("same", self.a.dir, self.b.dir)[0], 1)

    def test_i915_phase_copies_and_their_run_dependent_fields(self):
        a = manifest(100, 0x7f0000000000, 1 << 32, "tracepoint")
        b = manifest(230, 0x7e1234500000, 5 << 32, "fexit")
        for m, fake, heap in ((a, 1 << 32, 0x55d000001000), (b, 5 << 32, 0x5601230000)):
            m["files"][0]["handles"][0]["mmap_types"] = {str(fake): "gtt"}
            m["files"][0]["handles"][1]["params"] = {"flags": 0, "user_ptr": heap}
        self.a.write("wl/manifest.1.json", a)
        self.b.write("wl/manifest.1.json", b)
        rc, out = run("same", self.a.dir, self.b.dir)
        self.assertEqual(rc, 0, out)
        a["incomplete_reasons"] = ["process 100: the i915 mapping at 0x7f0000004000 (offset 0x100000000) ..."]
        b["incomplete_reasons"] = ["process 230: the i915 mapping at 0x7e1234504000 (offset 0x500000000) ..."]
        self.a.write("wl/manifest.1.json", a)
        self.b.write("wl/manifest.1.json", b)
        rc, out = run("same", self.a.dir, self.b.dir)
        self.assertEqual(rc, 0, out)
        b["incomplete_reasons"] = ["process 237: the i915 mapping at 0x7e1234504000 (offset 0x500000000) ..."]
        self.b.write("wl/manifest.1.json", b)
        self.assertEqual(run("same", self.a.dir, self.b.dir)[0], 1)  # another process (the child)
        b["incomplete_reasons"] = a["incomplete_reasons"]
        b["files"][0]["handles"][0]["mmap_types"] = {str(5 << 32): "wc"}
        self.b.write("wl/manifest.1.json", b)
        rc, out = run("same", self.a.dir, self.b.dir)
        self.assertEqual(rc, 1)
        self.assertIn("mmap_types", out)

    def test_normalise_leaves_the_input_alone(self):
        m = manifest(100, 0x7f0000000000, 1 << 32, "fexit")
        before = copy.deepcopy(m)
        hook_paths.normalise(m)
        self.assertEqual(m, before)


class HooksTest(Case):
    def test_manifest_hooks(self):
        t = self.tmp()
        p = t.write("m.json", manifest(1, 0, 0, "fexit"))
        self.assertEqual(run("hooks", p, "fexit")[0], 0)
        rc, out = run("hooks", p, "tracepoint")
        self.assertEqual(rc, 1)
        self.assertIn("expected tracepoint", out)
        m = manifest(1, 0, 0, "fexit")
        del m["hooks"]
        self.assertEqual(run("hooks", t.write("n.json", m), "fexit")[0], 1)
        self.assertEqual(run("hooks", t.write("bad.json", "{"), "fexit")[0], 2)

    def test_check_json(self):
        t = self.tmp()
        j = {"can_run": True, "path": "mixed: ...",
             "hooks": {"ioctl": {"path": "fexit", "reason": "ok"}, "mmap": {"path": "fexit", "reason": "ok"},
                       "cloexec": {"path": "tracepoint", "reason": "fexit set_close_on_exec: loading refused"},
                       "syscalls": {"path": "fexit", "reason": "ok"}}}
        rc, out = run("check", t.write("c.json", j), "fexit")
        self.assertEqual(rc, 1)
        self.assertIn("cloexec: tracepoint (fexit set_close_on_exec: loading refused)", out)
        j["hooks"]["cloexec"]["path"] = "fexit"
        self.assertEqual(run("check", t.write("c.json", j), "fexit")[0], 0)

    def test_record_counts(self):
        t = self.tmp()
        log = t.write("g.log", "gpuwatch: stopped; records by hook: tracepoint 40, fexit 12; final manifest ...\n")
        self.assertEqual(run("records", log, "fexit")[0], 0)
        self.assertEqual(run("records", log, "tracepoint")[0], 1)
        log = t.write("g.log", "gpuwatch: stopped; records by hook: tracepoint 40, fexit 0; final ...\n")
        self.assertEqual(run("records", log, "tracepoint")[0], 0)
        self.assertEqual(run("records", log, "fexit")[0], 1)
        self.assertEqual(run("records", t.write("o.log", ""), "fexit")[0], 0)  # not gpuwatch: not checked


if __name__ == "__main__":
    unittest.main()
