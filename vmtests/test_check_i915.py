#!/usr/bin/env python3
"""Unit tests of check_i915.py (no VM, no root): python3 test_check_i915.py

The fixture in selftest/i915/ was recorded from a passing i915_va scenario run (phase 2):
the gwi915 debugfs state, the manifest gpuwatch wrote, and /proc/PID/{maps,fd} of the two
workload processes (reduced to what the checker reads). The unchanged fixture must match;
every single mutation of the manifest or of the kernel's side must be reported.
"""

import copy
import io
import json
import os
import sys
import unittest
from contextlib import redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from check_i915 import Checker, main, parse_state, read_proc  # noqa: E402

FIX = os.path.join(HERE, "selftest", "i915")
PIDS = sorted(int(p) for p in os.listdir(os.path.join(FIX, "proc")))


def load():
    with open(os.path.join(FIX, "manifest.json")) as f:
        m = json.load(f)
    with open(os.path.join(FIX, "state.txt")) as f:
        state = f.read()
    procs = {pid: read_proc(os.path.join(FIX, "proc"), pid) for pid in PIDS}
    return m, state, procs


def run(m, state, procs):
    return Checker(m, parse_state(state), procs).run()


def file_of(m, fid):
    return next(f for f in m["files"] if f["id"] == fid)


class CheckI915(unittest.TestCase):
    def setUp(self):
        self.m, self.state, self.procs = load()

    def assertReports(self, what, m=None, state=None, procs=None):
        diffs = run(m or self.m, state or self.state, procs or self.procs)
        self.assertTrue(any(what in d for d in diffs), f"expected a difference mentioning {what!r}, got {diffs}")

    def test_fixture_matches(self):
        self.assertEqual(run(self.m, self.state, self.procs), [])
        out = io.StringIO()
        with redirect_stdout(out):
            rc = main([os.path.join(FIX, "manifest.json"), os.path.join(FIX, "state.txt"),
                       "--procdir", os.path.join(FIX, "proc"), "--pids"] + [str(p) for p in PIDS])
        self.assertEqual(rc, 0, out.getvalue())

    def test_handle_size_tiling_userptr(self):
        m = copy.deepcopy(self.m)
        file_of(m, 1)["handles"][0]["size"] += 4096
        self.assertReports("size", m)
        m = copy.deepcopy(self.m)
        file_of(m, 1)["handles"][0]["tiling"]["mode"] = "Y"
        self.assertReports("tiling", m)
        m = copy.deepcopy(self.m)
        del file_of(m, 1)["handles"][0]["tiling"]
        self.assertReports("tiling", m)
        m = copy.deepcopy(self.m)
        file_of(m, 1)["handles"][-1]["params"]["user_ptr"] += 4096
        self.assertReports("userptr", m)

    def test_missing_and_extra_handles(self):
        m = copy.deepcopy(self.m)
        file_of(m, 1)["handles"].pop(2)
        self.assertReports("only in the kernel", m)
        self.assertReports("only in the manifest", state=self.state.replace("  handle 4 ", "  handle 44 "))

    def test_placements_and_pat(self):
        m = copy.deepcopy(self.m)
        pl = file_of(m, 2)["handles"][0]["params"]["placements"]
        pl.reverse()
        self.assertReports("placements", m)
        m = copy.deepcopy(self.m)
        file_of(m, 2)["handles"][0]["params"]["pat_index"] = 4
        self.assertReports("PAT", m)

    def test_mmap_offsets_and_types(self):
        m = copy.deepcopy(self.m)
        h = file_of(m, 1)["handles"][0]
        h["mmap_types"] = {k: "wc" for k in h["mmap_types"]}
        self.assertReports("mmap offsets", m)

    def test_contexts(self):
        m = copy.deepcopy(self.m)
        file_of(m, 1)["contexts"].pop()
        self.assertReports("only in the kernel", m)
        m = copy.deepcopy(self.m)
        ctx = next(c for c in file_of(m, 1)["contexts"] if c["params"].get("priority") == -100)
        ctx["params"]["priority"] = -99
        self.assertReports("priority", m)
        m = copy.deepcopy(self.m)
        ctx = next(c for c in file_of(m, 1)["contexts"] if "engines" in c["params"])
        ctx["params"]["engines"]["engines"].reverse()
        self.assertReports("engines", m)
        m = copy.deepcopy(self.m)
        ctx = next(c for c in file_of(m, 1)["contexts"] if c["params"].get("priority") == -100)
        ctx["flags"] = 0
        self.assertReports("single-timeline", m)
        m = copy.deepcopy(self.m)
        ctx = next(c for c in file_of(m, 1)["contexts"] if c.get("vm") == 1)
        ctx["vm"] = None
        self.assertReports("own VM", m)

    def test_vm_ids_and_destroyed_vm(self):
        m = copy.deepcopy(self.m)
        file_of(m, 1)["vms"] = []
        self.assertReports("VM ids", m)
        m = copy.deepcopy(self.m)
        ctx = next(c for c in file_of(m, 1)["contexts"] if c.get("vm_destroyed"))
        del ctx["vm_destroyed"]
        self.assertReports("vm_destroyed", m)

    def test_mappings(self):
        pid = str(PIDS[0])
        m = copy.deepcopy(self.m)
        p = next(p for p in m["processes"] if p["pid"] == PIDS[0])
        mp = next(x for x in p["mmaps"] if x["via"] == "anon_inode:i915.gem" and x["handle"] is not None)
        mp["handle"] += 1
        self.assertReports("handle", m)
        m = copy.deepcopy(self.m)
        p = next(p for p in m["processes"] if p["pid"] == PIDS[0])
        p["mmaps"][0]["length"] -= 4096
        self.assertReports("length", m)
        m = copy.deepcopy(self.m)
        p = next(p for p in m["processes"] if p["pid"] == PIDS[0])
        p["mmaps"].pop()
        self.assertReports("manifest does not", m)
        m = copy.deepcopy(self.m)
        p = next(p for p in m["processes"] if p["pid"] == PIDS[0])
        legacy = next(x for x in p["mmaps"] if x["via"] == "i915.gem_mmap")
        legacy["via"] = "anon_inode:i915.gem"
        self.assertReports("via", m)
        self.assertTrue(pid)

    def test_fds(self):
        m = copy.deepcopy(self.m)
        p = next(p for p in m["processes"] if p["pid"] == PIDS[0])
        p["fds"] = [e for e in p["fds"] if "sync_file" not in e]
        self.assertReports("sync_file", m)
        m = copy.deepcopy(self.m)
        p = next(p for p in m["processes"] if p["pid"] == PIDS[0])
        e = next(e for e in p["fds"] if "i915_perf" in e)
        e["i915_perf"]["origin"] = None
        self.assertReports("no origin", m)
        m = copy.deepcopy(self.m)
        m["processes"] = [p for p in m["processes"] if p["pid"] != PIDS[1]]
        self.assertReports("absent from the manifest", m)

    def test_incomplete_manifest_fails(self):
        m = copy.deepcopy(self.m)
        m["complete"] = False
        path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"check_i915_test_{os.getpid()}.json")
        with open(path, "w") as f:
            json.dump(m, f)
        try:
            with redirect_stdout(io.StringIO()):
                rc = main([path, os.path.join(FIX, "state.txt"), "--procdir", os.path.join(FIX, "proc"),
                           "--pids"] + [str(p) for p in PIDS])
        finally:
            os.unlink(path)
        self.assertEqual(rc, 1)


if __name__ == "__main__":
    unittest.main()
