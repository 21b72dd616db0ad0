"""Loading the workloads' ground truth (schema gpuwatch.truth/v1), shared by check_manifest.py
and verify_truth.py. Python 3 standard library only.

One truth file per process and phase (written by vmtests/workloads/wl_truth.c). Files are named
by labels ("<pid>.<n>"); a file shared by several processes appears in several truth files and
the record with the newest "changed_ns" wins (only one process changes a shared file's handles
after a fork). A process is expected in a manifest only if it holds a DRM fd, a dma-buf fd or a
mapping of a DRM file; a file only if an expected process refers to it.
"""

import json

TRUTH_SCHEMA = "gpuwatch.truth/v1"


class TruthError(Exception):
    """The truth files are unreadable or inconsistent: a broken test, not a gpuwatch bug."""


def load_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise TruthError(f"cannot read {path}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise TruthError(f"{path} is not valid JSON: {e}") from None


class Truth:
    """processes: pid -> record; files: label -> record (newest wins)."""

    def __init__(self):
        self.processes = {}
        self.files = {}

    def add(self, record, origin="<truth>"):
        if record.get("schema") != TRUTH_SCHEMA:
            raise TruthError(f"{origin}: schema is {record.get('schema')!r}, want {TRUTH_SCHEMA!r}")
        pid = record["pid"]
        if pid in self.processes:
            raise TruthError(f"{origin}: pid {pid} appears in two truth files of one phase")
        self.processes[pid] = record
        for f in record.get("files", []):
            old = self.files.get(f["label"])
            if old is None or f.get("changed_ns", 0) > old.get("changed_ns", 0):
                self.files[f["label"]] = f

    def expected_processes(self):
        return {pid: p for pid, p in self.processes.items() if p.get("fds") or p.get("mmaps")}

    def referenced_labels(self):
        labels = set()
        for p in self.expected_processes().values():
            for fd in p.get("fds", []):
                labels.add(fd["dmabuf"]["file"] if "dmabuf" in fd else fd["file"])
            for m in p.get("mmaps", []):
                labels.add(m["file"])
        missing = labels - set(self.files)
        if missing:
            raise TruthError(f"truth refers to files it does not describe: {sorted(missing)}")
        return labels

    def describe(self, label):
        """A human name for a truth file: its node and the first fd that refers to it."""
        f = self.files.get(label, {})
        for pid in sorted(self.processes):
            for fd in self.processes[pid].get("fds", []):
                if fd.get("file") == label:
                    return f"{f.get('path', '?')} opened as pid {pid} fd {fd['fd']} [label {label}]"
        return f"{f.get('path', '?')} [label {label}]"


def load_truths(paths):
    truth = Truth()
    for path in paths:
        truth.add(load_json(path), path)
    return truth
