#!/usr/bin/env python3
"""Unit tests of check_i915_restore.py (no VM, no root): python3 test_check_i915_restore.py

The fixture in selftest/i915_restore/ was recorded from a criu_i915_selfcheck run (the
workload alone, wl_i915_criu: parent pid 268, child 273): the gwi915 debugfs state and both
processes' /proc/PID/maps. A restore is simulated from it by changing only what a restore
legitimately changes (client ids, client order, VM serials, fake offsets in the state and in
maps alike, a context not yet finalized); that must compare equal. Then each single change of
what a restore must keep, made to the simulated restore, must be reported.
"""

import io
import os
import re
import sys
import unittest
from contextlib import redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from check_i915_restore import Input, check, main, parse_state  # noqa: E402

FIX = os.path.join(HERE, "selftest", "i915_restore")
PARENT, CHILD = 268, 273
SHIFT = 0x200000  # the simulated restore's fake offsets are the originals + SHIFT


def read(name):
    with open(os.path.join(FIX, name)) as f:
        return f.read()


def sub(text, pattern, repl, count=1):
    """re.sub that must change exactly `count` places (a test that changes nothing proves nothing)"""
    out, n = re.subn(pattern, repl, text, flags=re.M)
    assert n == count, f"{pattern!r}: {n} matches, expected {count}"
    return out


def restored(state, maps):
    """what a faithful restore may look like: new client ids and order, VM serials, fake offsets"""
    blocks = re.split(r"(?m)^(?=client )", state)
    blocks = [b for b in blocks if b]
    blocks.reverse()
    state = "".join(blocks)
    state = re.sub(r"(?m)^client (\d+)", lambda m: f"client {int(m.group(1)) + 40}", state)
    state = re.sub(r"(?m)^(  ctx \d+ \w+ vm |  vmid \d+ vm )(\d+)", lambda m: f"{m.group(1)}{int(m.group(2)) + 100}", state)
    state = re.sub(r"(gtt|wc|wb|uc|fixed)=0x([0-9a-f]+)", lambda m: f"{m.group(1)}=0x{int(m.group(2), 16) + SHIFT:x}", state)
    # the parent's libdrm context (own VM) not yet used since the restore: a proto-context
    state = sub(state, r"^  ctx 1 final vm 107 (.*)$", r"  ctx 1 proto vm 0 \1")

    def shift_maps(text):
        return re.sub(r"^(\S+ \S+ )([0-9a-f]+)( .*anon_inode:i915\.gem)$",
                      lambda m: f"{m.group(1)}{int(m.group(2), 16) + SHIFT:08x}{m.group(3)}", text, flags=re.M)
    return state, {pid: shift_maps(t) for pid, t in maps.items()}


class CheckI915Restore(unittest.TestCase):
    def setUp(self):
        self.state = read("state.txt")
        self.maps = {PARENT: read(f"maps.{PARENT}"), CHILD: read(f"maps.{CHILD}")}
        self.after, self.amaps = restored(self.state, self.maps)

    def run_check(self, after=None, amaps=None, allow_added=False, pids=(PARENT, CHILD)):
        amaps = amaps or self.amaps
        maps = [(p, self.maps[p], amaps[p]) for p in pids]
        return check(self.state, after or self.after, list(pids), maps, allow_added)

    def assertReports(self, what, after=None, amaps=None, allow_added=False):
        diffs, _ = self.run_check(after, amaps, allow_added)
        self.assertTrue(any(what in d for d in diffs), f"expected a difference mentioning {what!r}, got {diffs}")

    def test_unchanged_and_faithful_restore_match(self):
        diffs, notes = check(self.state, self.state, [PARENT, CHILD], [(p, m, m) for p, m in self.maps.items()])
        self.assertEqual(diffs, [])
        self.assertEqual(self.run_check(), ([], []))

    def test_main(self):
        d = os.environ.get("TMPDIR", "/tmp")
        paths = {}
        for name, text in [("after", self.after)] + [(f"maps{p}", t) for p, t in self.amaps.items()]:
            paths[name] = os.path.join(d, f"check_i915_restore_{os.getpid()}_{name}")
            with open(paths[name], "w") as f:
                f.write(text)
        try:
            args = [os.path.join(FIX, "state.txt"), paths["after"], "--pids", str(PARENT), str(CHILD)]
            for p in (PARENT, CHILD):
                args += ["--maps", str(p), os.path.join(FIX, f"maps.{p}"), paths[f"maps{p}"]]
            with redirect_stdout(io.StringIO()) as out:
                self.assertEqual(main(args), 0, out.getvalue())
            with open(paths["after"], "w") as f:
                f.write(sub(self.after, r"prio -100", "prio -99"))
            with redirect_stdout(io.StringIO()) as out:
                self.assertEqual(main(args), 1)
            self.assertIn("priority: -100 before, -99 after", out.getvalue())
            with open(paths["after"], "w") as f:
                f.write(self.after + "  bogus line\n")
            with redirect_stdout(io.StringIO()) as out:
                self.assertEqual(main(args), 2)
        finally:
            for p in paths.values():
                os.unlink(p)

    def test_contexts(self):
        self.assertReports("priority: -100 before, -99 after", sub(self.after, r"prio -100", "prio -99"))
        self.assertReports("engines", sub(self.after, r"engines 2:0,0:0", "engines 0:0,2:0"))
        self.assertReports("engines", sub(self.after, r"engines 3:0", "engines default"))
        self.assertReports("single-timeline off", sub(self.after, r"flags brp-s-", "flags brp---"))
        self.assertReports("bannable off", sub(self.after, r"^(  ctx 5 final vm \d+ prio 10 flags )b", r"\1-"))
        self.assertReports("context 5: only before", sub(self.after, r"^  ctx 5 .*\n", ""))
        self.assertReports("context 4: only after",
                           sub(self.after, r"^(  ctx 5 .*\n)", r"  ctx 4 proto vm 0 prio 0 flags brp--- engines default\n\1"))

    def test_context_vms(self):
        # the parent's context 3 shares VM id 1 with context 2: on VM id 3's VM instead
        self.assertReports("context 3: vm: VM id(s) [1] before, VM id(s) [3] after",
                           sub(self.after, r"^  ctx 3 final vm 104 prio 0", "  ctx 3 final vm 106 prio 0"))
        # ... on a VM of its own (the plugin recreated the context without SETPARAM VM)
        self.assertReports("context 3: vm: VM id(s) [1] before, its own VM after",
                           sub(self.after, r"^  ctx 3 final vm 104 prio 0", "  ctx 3 final vm 999 prio 0"))
        self.assertReports("context 3: vm: VM id(s) [1] before, its own VM after",
                           sub(self.after, r"^  ctx 3 final vm 104 prio 0", "  ctx 3 proto vm 0 prio 0"))

    def test_vm_ids(self):
        self.assertReports("vm ids [1, 3] before, [1] after", sub(self.after, r"^  vmid 3 vm 106\n", ""))
        self.assertReports("vm ids [1, 3] before, [1, 2, 3] after",
                           sub(self.after, r"^(  vmid 3 vm 106\n)", r"  vmid 2 vm 150\n\1"))
        self.assertReports("VM sharing [] before, [[1, 3]] after", sub(self.after, r"^  vmid 3 vm 106", "  vmid 3 vm 104"))

    def test_handles(self):
        h6 = r"^(  handle 6 size )131072( tiling 0 stride 0 caching 1 madv 0 regions )1:0,0:0( pat )3"
        self.assertReports("handle 6: size", sub(self.after, h6, r"\g<1>135168\g<2>1:0,0:0\g<3>3"))
        self.assertReports("handle 6: regions: 1:0,0:0 before, 0:0,1:0 after", sub(self.after, h6, r"\g<1>131072\g<2>0:0,1:0\g<3>3"))
        self.assertReports("handle 6: regions", sub(self.after, h6, r"\g<1>131072\g<2>0:0\g<3>3"))
        self.assertReports("handle 6: pat: 3 before, 4 after", sub(self.after, h6, r"\g<1>131072\g<2>1:0,0:0\g<3>4"))
        self.assertReports("handle 6: pat", sub(self.after, r"^(  handle 6 .*) pat 3", r"\1"))
        self.assertReports("handle 8: tiling", sub(self.after, r"^  handle 8 size 16384 tiling 2", "  handle 8 size 16384 tiling 1"))
        self.assertReports("handle 8: stride", sub(self.after, r"tiling 2 stride 128", "tiling 2 stride 256"))
        self.assertReports("handle 7: caching", sub(self.after, r"^(  handle 7 .*) caching 0", r"\1 caching 1"))
        self.assertReports("handle 4: madv", sub(self.after, r"^(  handle 4 size 65536 .*) madv 0", r"\1 madv 1"))
        self.assertReports("handle 10: userptr", sub(self.after, r"userptr 0x55ad73ecf000", "userptr 0x55ad73ed0000"))
        self.assertReports("handle 10: userptr", sub(self.after, r"^(  handle 10 .*) userptr \S+ flags 0x0", r"\1"))
        self.assertReports("handle 6: mmap types: ['wb', 'wc'] before, ['wb'] after", sub(self.after, r" wc=0x1002e6000", ""))
        self.assertReports("handle 4: only before", sub(self.after, r"^  handle 4 size 65536 tiling 1 .*\n", ""))
        self.assertReports("handle 2: only after",
                           sub(self.after, r"^(  handle 3 size 65536 .*\n)", r"  handle 2 size 4096 tiling 0 stride 0 caching 1 madv 0 regions 0:0\n\1"))

    def test_added_offsets(self):
        after = sub(self.after, r"^(  handle 4 size 65536 tiling 1 stride 1024 caching 1 madv 0 regions 0:0)$", r"\1 wb=0x200000000")
        self.assertReports("handle 4: mmap types: [] before, ['wb'] after", after)
        diffs, notes = self.run_check(after, allow_added=True)
        self.assertEqual(diffs, [])
        self.assertTrue(any("handle 4" in n for n in notes), notes)
        # allowed only when added: a lost type is a difference all the same
        self.assertReports("mmap types", sub(self.after, r" wc=0x1002e6000", ""), allow_added=True)

    def test_files(self):
        parent = re.search(r"(?ms)^client \d+ pid 268 .*?(?=^client |\Z)", self.after).group(0)
        self.assertReports("pid 268: 1 open file(s) of minor 129 before, 0 after", self.after.replace(parent, ""))
        self.assertReports("pid 268: 1 open file(s) of minor 129 before, 2 after", self.after + parent)
        diffs, _ = check("client 0 pid 9 minor 129\n", self.after, [PARENT], [])
        self.assertTrue(any("no i915 file before the dump" in d for d in diffs), diffs)

    def test_mappings(self):
        def m(pid, pattern, repl):
            d = dict(self.amaps)
            d[pid] = sub(d[pid], pattern, repl)
            return d
        legacy = r"^(7f6f6c341000-7f6f6c351000 rw-s )00000000 00:01 11 +/i915 \(deleted\)$"
        self.assertReports("kind: legacy GEM_MMAP (/i915 (deleted)) before, anon_inode:i915.gem after",
                           amaps=m(PARENT, legacy, r"\g<1>100376000 00:0e 1048 anon_inode:i915.gem"))
        # an anonymous copy in its place (the same bytes, but no longer the buffer)
        self.assertReports("only before (after: rw-s '/dev/zero (deleted)' there)",
                           amaps=m(PARENT, legacy, r"\g<1>00000000 00:01 12 /dev/zero (deleted)"))
        self.assertReports("shmem offset", amaps=m(PARENT, legacy, r"\g<1>00001000 00:01 11 /i915 (deleted)"))
        self.assertReports("mapping at 0x7f6f6c2f1000 (anon_inode:i915.gem, 0x10000 bytes): only before",
                           amaps=m(PARENT, r"^7f6f6c2f1000-.*\n", ""))
        self.assertReports("length", amaps=m(CHILD, r"^7f6f6c361000-7f6f6c371000", "7f6f6c361000-7f6f6c370000"))
        self.assertReports("perms: rw-s before, r--s after", amaps=m(CHILD, r"^(7f6f6c361000-7f6f6c371000) rw-s", r"\1 r--s"))
        # the WB mapping of handle 6 now shows the WC offset of the same handle, then handle 7's
        self.assertReports("maps handle 6 (wb) before, handle 6 (wc) after",
                           amaps=m(PARENT, r"^(7f6f6c321000-7f6f6c341000 rw-s )1002c6000", r"\g<1>1002e6000"))
        self.assertReports("maps handle 6 (wb) before, handle 7 (wc) after",
                           amaps=m(PARENT, r"^(7f6f6c321000-7f6f6c341000 rw-s )1002c6000", r"\g<1>100316000"))
        self.assertReports("nothing of pid 273 after",
                           amaps=m(CHILD, r"^(7f6f6c361000-7f6f6c371000 rw-s )100220000", r"\g<1>900000000"))
        diffs, _ = check(self.state, self.after, [CHILD], [(CHILD, "", "")])
        self.assertTrue(any("no i915 mapping before the dump" in d for d in diffs), diffs)

    def test_parse_errors(self):
        for bad in ("  ctx 1 final vm 1\n", "client 1 pid 2 minor 3\n  handle x size 1\n",
                    "client 1 pid 2 minor 3\n  something else\n"):
            with self.assertRaises(Input):
                parse_state(bad)


if __name__ == "__main__":
    unittest.main()
