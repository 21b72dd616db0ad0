#!/usr/bin/env python3
"""Unit tests of check_xe_restore.py (no VM, no root): python3 test_check_xe_restore.py

The fixture in selftest/xe/ was recorded from a passing criu_xe run: the gwxe debugfs state
before the dump and after the restore, and the manifest gpuwatch wrote before the dump. The
unchanged fixture must pass; every single mutation of either side must be reported.
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
from check_xe_restore import check_manifest, compare, main, parse  # noqa: E402

FIX = os.path.join(HERE, "selftest", "xe")
PID = 306


def read(name):
    with open(os.path.join(FIX, name)) as f:
        return f.read()


def xe_file(m):
    return next(f for f in m["files"] if f["driver"] == "xe")


class Compare(unittest.TestCase):
    def setUp(self):
        self.before, self.after = read("state.before.txt"), read("state.after.txt")

    def diffs(self, after=None, before=None):
        return compare(parse(before or self.before), parse(after or self.after), PID)

    def test_unchanged_passes(self):
        self.assertEqual(self.diffs(), [])
        with redirect_stdout(io.StringIO()):
            self.assertEqual(main(["compare", os.path.join(FIX, "state.before.txt"),
                                   os.path.join(FIX, "state.after.txt"), "--pid", str(PID)]), 0)

    def test_each_mutation_is_caught(self):
        a = self.after
        mutations = {
            "binding lost": a.replace("    bind 0x400000+0x10000 null pat 0 flags 0x4\n", ""),
            "binding range": a.replace("bind 0x108000+0x8000", "bind 0x108000+0x9000"),
            "binding offset": a.replace("handle 1 offset 0x8000", "handle 1 offset 0x0"),
            "binding handle": a.replace("bind 0x200000+0x4000 handle 2", "bind 0x200000+0x4000 handle 6"),
            "binding pat": a.replace("handle 5 offset 0x0 pat 3", "handle 5 offset 0x0 pat 0"),
            "binding flags": a.replace("pat 3 flags 0x8", "pat 3 flags 0x0"),
            "userptr address": a.replace("userptr 0x7efd97b0b000", "userptr 0x7efd97b0c000"),
            "binding moved to another VM": a.replace(
                "  vm 5 flags 0x1\n    bind 0x1000000+0x2000 handle 3 offset 0x0 pat 0 flags 0x0\n",
                "  vm 5 flags 0x1\n").replace(
                "  vm 3 flags 0x2\n", "  vm 3 flags 0x2\n    bind 0x1000000+0x2000 handle 3 offset 0x0 pat 0 flags 0x0\n"),
            "vm id": a.replace("  vm 5 flags 0x1", "  vm 4 flags 0x1"),
            "vm flags": a.replace("  vm 3 flags 0x2", "  vm 3 flags 0x0"),
            "filler vm left": a.replace("  vm 3 flags 0x2", "  vm 2 flags 0x0\n  vm 3 flags 0x2"),
            "queue id": a.replace("  queue 5 vm 5", "  queue 4 vm 5"),
            "queue vm": a.replace("  queue 1 vm 1", "  queue 1 vm 3"),
            "queue priority": a.replace("priority 2 timeslice 500", "priority 1 timeslice 500"),
            "queue timeslice": a.replace("priority 1 timeslice 2000", "priority 1 timeslice 1000"),
            "queue engines": a.replace("instances 2:0:0,2:1:0", "instances 2:0:0"),
            "filler queue left": a.replace("  queue 3 vm 3", "  queue 2 vm 1 width 1 placements 1 instances 0:0:0 "
                                           "priority 1 timeslice 1000\n  queue 3 vm 3"),
            "handle placement": a.replace("handle 2 size 16384 placement 0x3", "handle 2 size 16384 placement 0x1"),
            "handle flags": a.replace("placement 0x2 flags 0x4", "placement 0x2 flags 0x0"),
            "handle no longer private": a.replace("size 8192 placement 0x1 flags 0x0 vm 5", "size 8192 placement 0x1 flags 0x0 vm 0"),
            "handle caching": a.replace("flags 0x2 vm 0 caching 2", "flags 0x2 vm 0 caching 1"),
            "handle size": a.replace("handle 1 size 65536", "handle 1 size 69632"),
            "filler handle left": a + "  handle 4 size 4096 placement 0x1 flags 0x0 vm 0 caching 1\n",
            "other node": a.replace("minor 129", "minor 130"),
            "other pid": a.replace("pid 306", "pid 307"),
            "two files": a + a.replace("client 8", "client 9"),
        }
        for what, text in mutations.items():
            self.assertNotEqual(text, a, what + ": the mutation changed nothing")
            self.assertNotEqual(self.diffs(after=text), [], what + ": not reported")

    def test_vacuous_before_is_refused(self):
        b = "\n".join(l for l in self.before.splitlines() if "queue" not in l) + "\n"
        self.assertTrue(any("no queue line" in d for d in compare(parse(b), parse(b), PID)))


class Manifest(unittest.TestCase):
    def setUp(self):
        self.m = json.loads(read("manifest.json"))
        self.state = parse(read("state.before.txt"))

    def test_unchanged_passes(self):
        self.assertEqual(check_manifest(self.m, self.state, PID), [])

    def test_each_mutation_is_caught(self):
        def vm(m, i):
            return next(v for v in xe_file(m)["vms"] if v["id"] == i)

        def queue(m, i):
            return next(q for q in xe_file(m)["exec_queues"] if q["id"] == i)

        def handle(m, i):
            return next(h for h in xe_file(m)["handles"] if h["handle"] == i)

        mutations = {
            "vm lost": lambda m: xe_file(m)["vms"].pop(),
            "vm flags": lambda m: vm(m, 3).update(flags=0),
            "binding lost": lambda m: vm(m, 1)["bindings"].pop(0),
            "binding addr": lambda m: vm(m, 5)["bindings"][0].update(addr=0x1001000),
            "binding handle": lambda m: vm(m, 3)["bindings"][0].update(handle=1),
            "binding userptr": lambda m: next(b for b in vm(m, 1)["bindings"] if "userptr" in b).update(userptr=4096),
            "binding pat": lambda m: vm(m, 1)["bindings"][0].update(pat_index=2),
            "queue lost": lambda m: xe_file(m)["exec_queues"].pop(0),
            "queue priority": lambda m: queue(m, 5)["params"].update(property_0=1),
            "queue timeslice": lambda m: queue(m, 3)["params"].pop("property_1"),
            "queue engine": lambda m: queue(m, 1)["instances"][0].update(instance=1),
            "handle placement": lambda m: handle(m, 2)["params"].update(placement=1),
            "handle vm": lambda m: handle(m, 3)["params"].update(vm_id=0),
            "handle lost": lambda m: xe_file(m)["handles"].pop(),
        }
        for what, mutate in mutations.items():
            m = copy.deepcopy(self.m)
            mutate(m)
            self.assertNotEqual(check_manifest(m, self.state, PID), [], what + ": not reported")


if __name__ == "__main__":
    unittest.main()
