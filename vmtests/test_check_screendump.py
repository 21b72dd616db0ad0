#!/usr/bin/env python3
"""Unit tests of check_screendump.py (no VM, no QEMU): python3 test_check_screendump.py

Pictures are made here: wl_kms's pattern as QEMU would dump it, and damaged copies. The same
picture twice passes; one changed pixel, another size, another picture than the client's, and
a blank picture, a truncated or non-PPM file each fail.
"""

import io
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stdout, redirect_stderr

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check_screendump  # noqa: E402

W, H = 64, 40


class CheckScreendump(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.rgb = check_screendump.pattern_rgb(W, H)

    def tearDown(self):
        self.dir.cleanup()

    def ppm(self, name, rgb, w=W, h=H, header=None):
        path = os.path.join(self.dir.name, name)
        with open(path, "wb") as f:
            f.write(header if header is not None else b"P6\n# QEMU\n%d %d\n255\n" % (w, h))
            f.write(rgb)
        return path

    def run_main(self, *args):
        out, err = io.StringIO(), io.StringIO()
        sys.argv = ["check_screendump.py", *args]
        with redirect_stdout(out), redirect_stderr(err):
            rc = check_screendump.main()
        return rc, out.getvalue() + err.getvalue()

    def test_pattern_matches_the_workloads_bytes(self):
        def byte(i):  # wl_kms.c fill()
            return (i * 7 + (i >> 12)) & 0xFF
        i = 4 * 5000  # pixel 5000: B at byte i, G at i + 1, R at i + 2
        want = bytes([byte(i + 2), byte(i + 1), byte(i)])
        self.assertEqual(check_screendump.pattern_rgb(100, 100)[5000 * 3:5000 * 3 + 3], want)

    def test_same_picture_passes(self):
        a = self.ppm("a.ppm", self.rgb)
        rc, out = self.run_main(a, self.ppm("b.ppm", self.rgb), "--pattern")
        self.assertEqual(rc, 0, out)
        self.assertIn("the same 64x40 picture", out)

    def test_one_pixel_differs(self):
        bad = bytearray(self.rgb)
        bad[3 * (W * 7 + 3) + 1] ^= 0x10
        rc, out = self.run_main(self.ppm("a.ppm", self.rgb), self.ppm("b.ppm", bytes(bad)))
        self.assertEqual(rc, 1)
        self.assertIn("1 of 2560 pixels differ", out)
        self.assertIn("first (3, 7)", out)

    def test_size_changed(self):
        rc, out = self.run_main(self.ppm("a.ppm", self.rgb),
                                self.ppm("b.ppm", self.rgb[:W * (H - 1) * 3], h=H - 1))
        self.assertEqual(rc, 1)
        self.assertIn("is 64x39 after", out)

    def test_not_the_clients_picture(self):
        other = bytes(reversed(self.rgb))
        rc, out = self.run_main(self.ppm("a.ppm", other), self.ppm("b.ppm", other), "--pattern")
        self.assertEqual(rc, 1)
        self.assertIn("is not the client's picture", out)
        rc, _ = self.run_main(self.ppm("a.ppm", other), self.ppm("b.ppm", other))
        self.assertEqual(rc, 0)  # without --pattern any two equal pictures
        black = bytes(W * H * 3)
        rc, out = self.run_main(self.ppm("a.ppm", black), self.ppm("b.ppm", black))
        self.assertEqual(rc, 1)  # without --pattern too: a blank display is no client's picture
        self.assertIn("is one colour (#000000)", out)

    def test_unreadable(self):
        good = self.ppm("a.ppm", self.rgb)
        rc, out = self.run_main(good, self.ppm("t.ppm", self.rgb[:-1]))
        self.assertEqual(rc, 2)
        self.assertIn("bytes of pixels", out)
        rc, out = self.run_main(good, self.ppm("p3.ppm", self.rgb, header=b"P3\n64 40\n255\n"))
        self.assertEqual(rc, 2)
        rc, out = self.run_main(good, os.path.join(self.dir.name, "missing.ppm"))
        self.assertEqual(rc, 2)


if __name__ == "__main__":
    unittest.main()
