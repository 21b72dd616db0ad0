#!/usr/bin/env python3
"""One resident Python interpreter for the guest scripts of the VM suites.

Under TCG a `python3` start costs 1.5-3 s (measured in the debian12 lane: `python3 -c pass`
1.2 s, check_manifest.py --help 2.8 s), and a scenario runs its checkers ten times or more,
some in polling loops: most of the suite's time went into starting interpreters. This server
runs those scripts in one interpreter instead. guest/common.sh starts it (py_start) and its
`py` function is the client: `py SCRIPT ARGS...`, `py - ARGS... <<EOF`, `py -c CODE ARGS...`
behave as `python3` would, with the caller's working directory, stdin (for `-`), stdout and
stderr (its own open files, taken with pidfd_getfd: offsets are shared as a child's would be),
and exit status.

usage: pyserve.py DIR
  Makes the FIFOs DIR/req and DIR/resp, then serves until killed. A request is the client's
  pid, its working directory and its python3 arguments, each ended by a NUL, written to req in
  one write; the answer is the exit status and a newline on resp. Status 255 with
  nothing run means "run it yourself" (its streams could not be taken, or an interpreter option
  other than -c). One client at a
  time: the guest scripts call it in the foreground only.
"""

import ctypes
import io
import os
import sys
import traceback

_code_cache = {}


def _compile_file(path):
    st = os.stat(path)
    key = (path, st.st_mtime_ns, st.st_size)
    code = _code_cache.get(key)
    if code is None:
        with open(path, "rb") as f:
            code = compile(f.read(), path, "exec")
        _code_cache[key] = code
    return code


_libc = ctypes.CDLL(None, use_errno=True)
_SYS_PIDFD_GETFD = 438  # x86_64


def _open_stream(pidfd, fd, mode):
    """The client's fd FD itself (its open file, offset shared: pidfd_getfd), as a stream."""
    got = _libc.syscall(_SYS_PIDFD_GETFD, pidfd, fd, 0)
    if got < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return open(got, mode, encoding="utf-8", errors="surrogateescape" if mode == "r" else "backslashreplace")


def _exit_status(e):
    code = e.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _load(argv, cwd, stdin):
    """(code, sys.argv, sys.path[0], __file__) for python3's ARGS; None: the client runs it."""
    if argv[0] == "-c":
        if len(argv) < 2:
            return None
        return compile(argv[1], "<string>", "exec"), ["-c"] + argv[2:], cwd, None
    if argv[0] == "-":
        return compile(stdin.read(), "<stdin>", "exec"), ["-"] + argv[1:], cwd, None
    if argv[0].startswith("-"):
        return None  # an interpreter option: only python3 itself knows them all
    script = os.path.join(cwd, argv[0])
    return _compile_file(script), argv, os.path.dirname(os.path.abspath(script)), script


def _execute(loaded, cwd, stdin, out, err):
    code, argv, path0, file_ = loaded
    saved = (sys.argv, sys.stdin, sys.stdout, sys.stderr, list(sys.path), os.getcwd())
    status = 0
    try:
        os.chdir(cwd)
        sys.argv = argv
        sys.path[0] = path0
        sys.stdin = stdin if stdin is not None else io.StringIO("")
        sys.stdout, sys.stderr = out, err
        env = {"__name__": "__main__", "__builtins__": __builtins__}
        if file_:
            env["__file__"] = file_
        exec(code, env)
    except SystemExit as e:
        status = _exit_status(e)
    except BaseException:  # a checker's crash is its exit status 1, as python3 would give
        traceback.print_exc(file=sys.stderr)
        status = 1
    finally:
        for f in (sys.stdout, sys.stderr):
            try:
                f.flush()
            except OSError:
                pass
        sys.argv, sys.stdin, sys.stdout, sys.stderr, sys.path[:], cwd0 = saved
        os.chdir(cwd0)
    return status


def run(pid, cwd, argv):
    """Runs one request; returns its exit status (255: not run, the client runs it)."""
    if not argv:
        return 255
    streams = []
    pidfd = None
    try:
        try:
            pidfd = os.pidfd_open(pid)
            out = _open_stream(pidfd, 1, "w")
            streams.append(out)
            err = out
            if os.readlink(f"/proc/{pid}/fd/1") != os.readlink(f"/proc/{pid}/fd/2"):
                err = _open_stream(pidfd, 2, "w")
                streams.append(err)
            stdin = None
            if argv[0] == "-":
                stdin = _open_stream(pidfd, 0, "r")
                streams.append(stdin)
        except OSError:
            return 255
        try:
            loaded = _load(argv, cwd, stdin)
        except OSError as e:
            print(f"python3: can't open file {argv[0]!r}: {e}", file=err)
            return 2
        except SyntaxError:
            traceback.print_exc(file=err)
            return 1
        if loaded is None:
            return 255
        return _execute(loaded, cwd, stdin, out, err)
    finally:
        for f in streams:
            try:
                f.close()
            except OSError:
                pass
        if pidfd is not None:
            os.close(pidfd)


def main():
    if len(sys.argv) != 2:
        print("usage: pyserve.py DIR", file=sys.stderr)
        return 2
    d = sys.argv[1]
    req, resp = os.path.join(d, "req"), os.path.join(d, "resp")
    for p in (req, resp):
        if not os.path.exists(p):
            os.mkfifo(p, 0o600)
    # the checkers' imports, done once
    import json  # noqa: F401
    import re  # noqa: F401

    while True:
        with open(req, "rb") as f:
            data = f.read()
        fields = data.split(b"\0")
        if len(fields) < 3 or fields[-1] != b"":
            continue  # not a request (a reader probing the FIFO): nobody waits for an answer
        pid, cwd, argv = fields[0], fields[1], [os.fsdecode(a) for a in fields[2:-1]]
        try:
            status = run(int(pid), os.fsdecode(cwd), argv)
        except Exception:  # the server itself must outlive any request
            traceback.print_exc()
            status = 255
        with open(resp, "w") as f:
            f.write(f"{status}\n")


if __name__ == "__main__":
    sys.exit(main())
