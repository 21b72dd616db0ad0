#!/usr/bin/env python3
"""Unit tests of check_manifest.py on hand-made JSON (no VM, no root): python3 test_check_manifest.py"""

import copy
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_manifest import Checker  # noqa: E402
from truthlib import Truth  # noqa: E402

CARD = {"path": "/dev/dri/card0", "rdev": "226:0", "driver": "vgem", "flags": "O_RDWR"}


def tfile(label, handles, known=True, changed=1, **kw):
    return dict(CARD, label=label, handles_known=known, changed_ns=changed,
                handles=[{"handle": h, "size": s, "origin": o} for h, s, o in handles], **kw)


def parent_truth():
    """pid 10: A (fds 3, 4 dup, 20 cloexec dup), B (fd 5), a dma-buf of A's h2, A's h1 mapped."""
    return {"schema": "gpuwatch.truth/v1", "phase": 1, "pid": 10, "comm": "wl_x",
            "fds": [{"fd": 3, "file": "10.0", "cloexec": False},
                    {"fd": 4, "file": "10.0", "cloexec": False},
                    {"fd": 5, "file": "10.1", "cloexec": True},
                    {"fd": 6, "dmabuf": {"file": "10.0", "handle": 2}, "cloexec": True},
                    {"fd": 20, "file": "10.0", "cloexec": True}],
            "mmaps": [{"start": 0x7f0000000000, "length": 16384, "prot": "rw", "shared": True,
                       "file": "10.0", "offset": 1 << 32, "handle": 1}],
            "files": [tfile("10.0", [(1, 16384, "dumb"), (2, 4096, "dumb")]),
                      tfile("10.1", [(1, 4096, "dumb"), (3, 8192, "prime")])]}


def child_truth():
    """pid 11, forked: fd 3 of A only; A's handles changed later by the child (newest record)."""
    return {"schema": "gpuwatch.truth/v1", "phase": 1, "pid": 11, "comm": "wl_x",
            "fds": [{"fd": 3, "file": "10.0", "cloexec": False}], "mmaps": [],
            "files": [tfile("10.0", [(1, 16384, "dumb"), (2, 4096, "dumb"), (3, 4096, "dumb")],
                            changed=5)]}


def good_manifest():
    """What gpuwatch should write for parent+child, with its own arbitrary file ids."""
    return {"schema": "gpuwatch.manifest/v1", "cgroup": "/sys/fs/cgroup/gw-x", "complete": True,
            "lost_events": 0,
            "processes": [
                {"pid": 11, "comm": "wl_x", "fds": [{"fd": 3, "file": 77, "cloexec": False}], "mmaps": []},
                {"pid": 10, "comm": "wl_x",
                 "fds": [{"fd": 3, "file": 77, "cloexec": False}, {"fd": 4, "file": 77, "cloexec": False},
                         {"fd": 5, "file": 12, "cloexec": True},
                         {"fd": 6, "dmabuf": {"file": 77, "handle": 2}, "cloexec": True},
                         {"fd": 20, "file": 77, "cloexec": True}],
                 "mmaps": [{"start": 0x7f0000000000, "length": 16384, "prot": "rw", "shared": True,
                            "file": 77, "offset": 1 << 32, "handle": 1}]}],
            "files": [
                dict(CARD, id=12, handles=[{"handle": 1, "size": 4096, "origin": "dumb"},
                                           {"handle": 3, "size": 8192, "origin": "prime"}]),
                dict(CARD, id=77, handles=[{"handle": 1, "size": 16384, "origin": "dumb"},
                                           {"handle": 2, "size": 4096, "origin": "dumb"},
                                           {"handle": 3, "size": 4096, "origin": "dumb"}])]}


def run(manifest, truths=(parent_truth, child_truth), absent=(), **kw):
    t = Truth()
    for f in truths:
        t.add(f())
    a = Truth()
    for f in absent:
        a.add(f())
    return Checker(manifest, t, a.processes.keys(), **kw).run()


class CheckerTest(unittest.TestCase):
    def assertDiff(self, diffs, *fragments):
        self.assertTrue(diffs, "expected a mismatch")
        text = "\n".join(diffs)
        for frag in fragments:
            self.assertIn(frag, text)

    def test_match(self):
        self.assertEqual(run(good_manifest(), cgroup="/sys/fs/cgroup/gw-x"), [])

    def test_cgroup_relative_form_accepted(self):
        m = good_manifest()
        m["cgroup"] = "/gw-x"
        self.assertEqual(run(m, cgroup="/sys/fs/cgroup/gw-x/"), [])

    def test_two_opens_merged(self):
        m = good_manifest()
        m["processes"][1]["fds"][2]["file"] = 77
        self.assertDiff(run(m), "fd 5", "merged")

    def test_dup_split(self):
        m = good_manifest()
        m["processes"][1]["fds"][1]["file"] = 12
        self.assertDiff(run(m), "fd 4")

    def test_stale_handle_and_wrong_size(self):
        m = good_manifest()
        m["files"][1]["handles"][2]["size"] = 8192
        m["files"][0]["handles"].append({"handle": 2, "size": 4096, "origin": "dumb"})
        self.assertDiff(run(m), "handle 3: size 8192, expected 4096", "handle 2 not expected")

    def test_missing_handle_and_origin(self):
        m = good_manifest()
        del m["files"][1]["handles"][2]
        m["files"][0]["handles"][1]["origin"] = "dumb"
        self.assertDiff(run(m), "handle 3 missing", "origin 'dumb', expected 'prime'")

    def test_cloexec_and_missing_fd(self):
        m = good_manifest()
        m["processes"][1]["fds"][4]["cloexec"] = False
        del m["processes"][0]["fds"][0]
        self.assertDiff(run(m), "fd 20: cloexec False", "process 11 fd 3: missing")

    def test_dmabuf(self):
        m = good_manifest()
        m["processes"][1]["fds"][3] = {"fd": 6, "dmabuf": {"file": 77, "handle": 1}, "cloexec": True}
        self.assertDiff(run(m), "fd 6: dma-buf of handle 1, expected 2")
        m["processes"][1]["fds"][3] = {"fd": 6, "file": 77, "cloexec": True}
        self.assertDiff(run(m), "fd 6: expected a dma-buf fd")

    def test_mapping(self):
        m = good_manifest()
        mm = m["processes"][1]["mmaps"][0]
        mm.update(offset=(1 << 32) + 4096, handle=None, prot="r-")
        self.assertDiff(run(m), "offset 0x100001000, expected 0x100000000", "handle None, expected 1",
                        "prot 'r-'")
        m["processes"][1]["mmaps"].append(dict(mm, start=0x7f0000100000))
        self.assertDiff(run(m), "mapping 0x7f0000100000: not expected")

    def test_outside_process_listed(self):
        m = good_manifest()
        outside = copy.deepcopy(m["processes"][0])
        outside["pid"] = 99
        m["processes"].append(outside)

        def out():
            return dict(child_truth(), pid=99)
        self.assertDiff(run(m, absent=(out,)), "process 99 (wl_x) is listed: it runs outside the cgroup")

    def test_extra_file_and_flags(self):
        m = good_manifest()
        m["files"].append(dict(CARD, id=5, handles=[]))
        m["files"][0]["flags"] = "O_RDONLY"
        self.assertDiff(run(m), "file 5 is not expected", "flags 'O_RDONLY'")

    def test_lost_events_and_complete(self):
        m = good_manifest()
        m["lost_events"] = 3
        m["complete"] = False
        self.assertDiff(run(m), "lost_events is 3", "complete is False, expected True")

    def test_unknown_handles_tolerated(self):
        def pre():
            t = parent_truth()
            for f in t["files"]:
                f["handles_known"] = False
            return t
        m = good_manifest()
        del m["processes"][0]
        m["complete"] = False
        m["processes"][0]["mmaps"][0]["handle"] = None
        m["processes"][0]["fds"][3]["dmabuf"] = {"file": None, "handle": None}
        for f in m["files"]:
            f["handles_known"] = False
            f["handles"] = f["handles"][:1]
        m["files"][1]["handles"][0]["origin"] = "unknown"
        self.assertEqual(run(m, truths=(pre,)), [])
        m["files"][1]["handles"].append({"handle": 9, "size": 4096, "origin": "unknown"})
        m["files"][0]["handles_known"] = True
        self.assertDiff(run(m, truths=(pre,)), "handle 9 not expected", "handles_known True, expected False")

    def test_undecoded_ioctls(self):
        def fenced():
            t = parent_truth()
            t["files"][1]["undecoded_ioctls"] = ["vgem ioctl 0x01", "vgem ioctl 0x02"]
            return t
        m = good_manifest()
        # the truth ran an undecoded ioctl the manifest does not name, and says complete
        self.assertDiff(run(m, truths=(fenced, child_truth)), "undecoded_ioctls [], expected",
                        "complete is True, expected False")
        m["complete"] = False
        m["files"][0]["undecoded_ioctls"] = ["vgem ioctl 0x02", "vgem ioctl 0x01"]
        self.assertEqual(run(m, truths=(fenced, child_truth)), [])
        m["files"][1]["undecoded_ioctls"] = ["MODE_ADDFB"]  # named where the truth ran none
        self.assertDiff(run(m, truths=(fenced, child_truth)), "undecoded_ioctls ['MODE_ADDFB'], expected []")

    def test_framebuffers(self):
        def with_fb():
            t = parent_truth()
            t["files"][1]["framebuffers"] = [{"id": 40, "width": 64, "height": 64, "handles": [1]}]
            return t
        m = good_manifest()
        self.assertDiff(run(m, truths=(with_fb, child_truth)), "framebuffers")
        m["files"][0]["framebuffers"] = [{"id": 40, "width": 64, "height": 64,
                                          "planes": [{"handle": 1, "object": 1, "pitch": 256}]}]
        self.assertEqual(run(m, truths=(with_fb, child_truth)), [])
        m["files"][0]["framebuffers"][0]["planes"][0]["handle"] = None
        self.assertDiff(run(m, truths=(with_fb, child_truth)), "expected {40: (64, 64, [1])}")

    def test_empty(self):
        m = dict(good_manifest(), processes=[], files=[])
        self.assertEqual(run(m, truths=()), [])
        self.assertDiff(run(good_manifest(), truths=()), "process 10 (wl_x) is listed: not expected",
                        "file 77 is not expected")


class CommandLineTest(unittest.TestCase):
    def test_exit_codes(self):
        here = os.path.dirname(os.path.abspath(__file__))
        with tempfile.TemporaryDirectory() as d:
            paths = {}
            for name, obj in (("m", good_manifest()), ("p", parent_truth()), ("c", child_truth())):
                paths[name] = os.path.join(d, name + ".json")
                with open(paths[name], "w") as f:
                    json.dump(obj, f)
            cmd = [sys.executable, os.path.join(here, "check_manifest.py")]
            ok = subprocess.run(cmd + [paths["m"], paths["p"], paths["c"]], capture_output=True, text=True)
            self.assertEqual(ok.returncode, 0, ok.stdout + ok.stderr)
            bad = subprocess.run(cmd + [paths["m"], paths["p"]], capture_output=True, text=True)
            self.assertEqual(bad.returncode, 1)
            self.assertIn("process 11 (wl_x) is listed: not expected", bad.stdout)
            with open(paths["m"], "w") as f:
                f.write("{ truncated")
            broken = subprocess.run(cmd + [paths["m"], paths["p"]], capture_output=True, text=True)
            self.assertEqual(broken.returncode, 2)
            self.assertIn("not valid JSON", broken.stdout)


if __name__ == "__main__":
    unittest.main()
