#!/usr/bin/env python3
"""Unit tests of criu_stages.py on hand-made CRIU logs (no VM): python3 test_criu_stages.py"""
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import criu_stages  # noqa: E402

LINES = ["Running pre-dump scripts", "Seized task 5, state 1", "Dumping task (pid: 5)", "Set up parasite blob using memfd",
         "Dumping opened files (pid: 5)", "Dumping pages (type: 59 pid: 5)", "Running post-dump scripts",
         "Unfreezing tasks into 2", "Dumping finished successfully"]


def log(times, lines=LINES):
    return "".join(f"({t / 1000:09.6f}) {line}\n" for t, line in zip(times, lines))


class Stages(unittest.TestCase):
    def test_stages_and_medians(self):
        with tempfile.TemporaryDirectory() as d:
            for i, base in enumerate((0, 10, 20), 1):
                with open(os.path.join(d, f"gpu-1-4-{i}-dump.log"), "w") as f:
                    f.write("(00.000100) Running on virtme-ng\n" + log([10, 20, 40, 50 + base, 60 + base, 80 + base,
                                                                          90 + base, 95 + base, 100 + base]))
            # plain CRIU without an action script still prints both "Running ... scripts" lines
            with open(os.path.join(d, "anon-1-4-1-dump.log"), "w") as f:
                f.write(log([5, 7, 9, 11, 13, 15, 17, 17, 20]))
            self.assertEqual(criu_stages.stages(os.path.join(d, "gpu-1-4-2-dump.log")),
                             [10, 20, 20, 10, 20, 10, 5, 5, 110])
            out = subprocess.run([sys.executable, criu_stages.__file__, d], capture_output=True, text=True, check=True).stdout
            total = [line for line in out.splitlines() if line.startswith("total")][0].split()
            self.assertEqual(total[1:], ["110", "20"])  # gpu median of 100/110/120; anon
            self.assertNotIn("control", out.splitlines()[0])  # no floor logs: no column

    def test_restore_stages_and_the_stateless_column(self):
        restore = ["Running on virtme-ng", "Running pre-restore scripts", "Forking task with 5 pid", "5: Restoring resources",
                   "Running post-restore scripts", "Run late stage hook from criu master for external devices",
                   "Running pre-resume scripts", "Restore finished successfully. Tasks resumed.",
                   "Running post-resume scripts"]
        with tempfile.TemporaryDirectory() as d:
            for kind, late in (("gpu", 40), ("stateless", 5)):
                with open(os.path.join(d, f"{kind}-1-4-1-dump.log"), "w") as f:
                    f.write(log([10, 20, 40, 50, 60, 80, 90, 95, 100]))
                with open(os.path.join(d, f"{kind}-1-4-1-restore.log"), "w") as f:
                    f.write(log([1, 21, 23, 33, 63, 73, 73 + late, 80 + late, 81 + late], restore))
            self.assertEqual(criu_stages.stages(os.path.join(d, "gpu-1-4-1-restore.log"), criu_stages.RESTORE_START,
                                                criu_stages.RESTORE_STAGES), [20, 2, 10, 30, 10, 40, 7, 1, 120])
            out = subprocess.run([sys.executable, criu_stages.__file__, d], capture_output=True, text=True, check=True).stdout
            lines = out.splitlines()
            self.assertEqual(lines[0].split()[-2:], ["gpu", "stateless"])
            late = [line for line in lines if line.startswith("late stage")][0].split()
            self.assertEqual(late[-2:], ["40", "5"])
            self.assertEqual([line.split()[-2:] for line in lines if line.startswith("total")], [["100", "100"], ["120", "85"]])

    def test_incomplete_log_is_left_out(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "gpu-1-4-1-dump.log"), "w") as f:
                f.write(log([1, 2, 3], LINES[:3]))  # a dump that failed
            self.assertIsNone(criu_stages.stages(os.path.join(d, "gpu-1-4-1-dump.log")))
            r = subprocess.run([sys.executable, criu_stages.__file__, d], capture_output=True, text=True)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("no complete dump log", r.stderr)


if __name__ == "__main__":
    unittest.main()
