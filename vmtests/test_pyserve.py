#!/usr/bin/env python3
"""Tests of pyserve.py through its real client, guest/common.sh's `py` (no VM, no root):
python3 test_pyserve.py. Each test runs bash with common.sh sourced and the server started."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
COMMON = os.path.join(HERE, "guest", "common.sh")

PRELUDE = f"""
WORK_ROOT=$T/w
. {COMMON} 3>&- 4>&- 5>&-
py_start || {{ echo "py_start failed" >&2; exit 99; }}
trap 'kill $PYSERVE_PID' EXIT
cd "$T"
"""


class PyServe(unittest.TestCase):
    def setUp(self):
        self.t = tempfile.mkdtemp(prefix="pyserve-test.")
        self.addCleanup(shutil.rmtree, self.t)

    def bash(self, body):
        r = subprocess.run(["bash", "-c", PRELUDE + body], env=dict(os.environ, T=self.t),
                           capture_output=True, text=True, timeout=60)
        if r.returncode == 99:
            self.fail(f"the server did not start: {r.stderr}")
        return r

    def test_served_by_the_resident_interpreter(self):
        # the script runs in the server's process, not in a new python3
        r = self.bash('py -c "import os; print(os.getpid())"; echo "server=$PYSERVE_PID"')
        lines = r.stdout.split()
        if lines and lines[0] != lines[-1].split("=")[1]:
            self.skipTest("pidfd_getfd is not allowed here (ptrace restrictions): the client falls back to python3")
        self.assertEqual(len(lines), 2, r.stdout + r.stderr)

    def test_exit_status_argv_and_cwd(self):
        with open(os.path.join(self.t, "s.py"), "w") as f:
            f.write("import os, sys\nprint(os.getcwd(), sys.argv)\nsys.exit(int(sys.argv[1]))\n")
        r = self.bash('py s.py 3 "two words"; echo "rc=$?"; mkdir d; cd d; py ../s.py 0; echo "rc=$?"')
        self.assertEqual(r.stdout.splitlines(), [
            f"{self.t} ['s.py', '3', 'two words']", "rc=3",
            f"{self.t}/d ['../s.py', '0']", "rc=0"], r.stderr)

    def test_output_shares_the_callers_offset(self):
        # an append-free file the shell goes on writing after the call: nothing overwritten
        r = self.bash('{ echo a; py -c "print(\'b\')"; echo c; } >f.txt; cat f.txt; x=$(py -c "print(7)"); echo "x=$x"')
        self.assertEqual(r.stdout.splitlines(), ["a", "b", "c", "x=7"], r.stderr)

    def test_stdin_script_and_stderr(self):
        r = self.bash("py - arg >out.txt 2>err.txt <<'PY'\nimport sys\nprint('in', sys.argv)\n"
                      "print('to err', file=sys.stderr)\nraise ValueError('boom')\nPY\n"
                      'echo "rc=$?"; cat out.txt; cat err.txt')
        out = r.stdout.splitlines()
        self.assertEqual(out[:3], ["rc=1", "in ['-', 'arg']", "to err"], r.stdout + r.stderr)
        self.assertIn("ValueError: boom", r.stdout)

    def test_missing_script_and_fallback(self):
        r = self.bash('py nothere.py; echo "rc=$?"; py -S -c "print(5)"; echo "rc=$?"')
        self.assertEqual(r.stdout.splitlines(), ["rc=2", "5", "rc=0"], r.stderr)
        self.assertIn("can't open file 'nothere.py'", r.stderr)

    def test_outlives_a_closed_pipe_and_a_crash(self):
        r = self.bash('py -c "import sys\nfor i in range(100000): print(i)" | head -n 1; '
                      'py -c "import os; os.kill(os.getpid(), 0); raise SystemExit(\'why\')"; echo "rc=$?"; '
                      'py -c "print(\'alive\')"')
        self.assertEqual(r.stdout.splitlines(), ["0", "rc=1", "alive"], r.stderr)
        self.assertIn("why", r.stderr)


if __name__ == "__main__":
    unittest.main()
