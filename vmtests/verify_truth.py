#!/usr/bin/env python3
"""Check the workloads' ground truth against the kernel, without gpuwatch (root, in the VM).

usage: verify_truth.py TRUTH.json ...

For every process of the truth files (all alive, waiting in their phase): its DRM and dma-buf
fds are exactly those of /proc/PID/fd, with the same close-on-exec bit and access mode
(/proc/PID/fdinfo), node and rdev; two fds share a truth label iff kcmp(KCMP_FILE) says they
are one open file (across processes too); dma-buf fds have their handle's size and are one
file iff they export the same (file, handle); its mappings of DRM files are exactly those of
/proc/PID/maps (start, end, prot, shared, offset, node); its comm is /proc/PID/comm.
Handles themselves are checked inside the workload (WL_SELFCHECK=1). Exit: 0 ok, 1 wrong, 2 unreadable.
"""

import ctypes
import itertools
import os
import stat
import sys

from truthlib import TruthError, load_truths

SYS_KCMP = 312           # x86_64 (__NR_kcmp)
KCMP_FILE = 0
O_CLOEXEC = 0o2000000
O_ACCMODE = 0o3
ACC = {0: "O_RDONLY", 1: "O_WRONLY", 2: "O_RDWR"}
DRM_MAJOR = 226

_libc = ctypes.CDLL(None, use_errno=True)


def kcmp_same_file(pid1, fd1, pid2, fd2):
    r = _libc.syscall(SYS_KCMP, pid1, pid2, KCMP_FILE, fd1, fd2)
    if r < 0:
        raise OSError(ctypes.get_errno(), f"kcmp({pid1}:{fd1}, {pid2}:{fd2})")
    return r == 0


def fdinfo(pid, fd):
    info = {}
    with open(f"/proc/{pid}/fdinfo/{fd}") as f:
        for line in f:
            k, _, v = line.partition(":")
            info[k.strip()] = v.strip()
    return info


def proc_fds(pid):
    """fd -> ("drm", path, "maj:min") or ("dmabuf", size) for the DRM and dma-buf fds of pid."""
    out = {}
    for name in os.listdir(f"/proc/{pid}/fd"):
        fd = int(name)
        link = os.readlink(f"/proc/{pid}/fd/{fd}")
        if link.startswith("/dmabuf:") or link.startswith("anon_inode:dmabuf"):
            out[fd] = ("dmabuf", int(fdinfo(pid, fd).get("size", -1)))
            continue
        try:
            st = os.stat(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if stat.S_ISCHR(st.st_mode) and os.major(st.st_rdev) == DRM_MAJOR:
            out[fd] = ("drm", link, f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}")
    return out


def proc_maps(pid):
    """start -> (length, prot, shared, offset, path) for mappings of /dev/dri nodes."""
    out = {}
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split(maxsplit=5)
            if len(parts) < 6 or not parts[5].strip().startswith("/dev/dri/"):
                continue
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            perms = parts[1]
            out[lo] = (hi - lo, perms[:3].replace("-", ""), perms[3] == "s", int(parts[2], 16),
                       parts[5].strip())
    return out


def verify(truth):
    errs = []
    drm_fds = []      # (pid, fd, label)
    dmabuf_fds = []   # (pid, fd, (label, handle))
    for pid, p in sorted(truth.processes.items()):
        try:
            with open(f"/proc/{pid}/comm") as f:
                comm = f.read().strip()
            real = proc_fds(pid)
            maps = proc_maps(pid)
        except OSError as e:
            errs.append(f"pid {pid}: cannot read /proc ({e.strerror}): is it alive?")
            continue
        if comm != p["comm"]:
            errs.append(f"pid {pid}: comm {comm!r} in /proc, {p['comm']!r} in the truth")
        want = {e["fd"]: e for e in p.get("fds", [])}
        for fd in sorted(set(real) - set(want)):
            errs.append(f"pid {pid} fd {fd}: {real[fd]} in /proc, not in the truth")
        for fd in sorted(set(want) - set(real)):
            errs.append(f"pid {pid} fd {fd}: in the truth, not a DRM/dma-buf fd in /proc")
        for fd in sorted(set(want) & set(real)):
            e, r = want[fd], real[fd]
            flags = int(fdinfo(pid, fd)["flags"], 8)
            if bool(flags & O_CLOEXEC) != e["cloexec"]:
                errs.append(f"pid {pid} fd {fd}: cloexec {bool(flags & O_CLOEXEC)} in fdinfo, {e['cloexec']} in the truth")
            if "dmabuf" in e:
                label, handle = e["dmabuf"]["file"], e["dmabuf"]["handle"]
                sizes = {h["handle"]: h["size"] for h in truth.files[label]["handles"]}
                if r[0] != "dmabuf" or r[1] != sizes.get(handle):
                    errs.append(f"pid {pid} fd {fd}: {r} in /proc, dma-buf of {label} handle {handle} "
                                f"(size {sizes.get(handle)}) in the truth")
                dmabuf_fds.append((pid, fd, (label, handle)))
                continue
            f = truth.files[e["file"]]
            if r[0] != "drm" or r[1] != f["path"] or r[2] != f["rdev"]:
                errs.append(f"pid {pid} fd {fd}: {r} in /proc, {f['path']} {f['rdev']} in the truth")
            if ACC[flags & O_ACCMODE] != f["flags"].split("|")[0]:
                errs.append(f"pid {pid} fd {fd}: access {ACC[flags & O_ACCMODE]} in fdinfo, {f['flags']} in the truth")
            drm_fds.append((pid, fd, e["file"]))
        wmaps = {m["start"]: m for m in p.get("mmaps", [])}
        for s in sorted(set(maps) ^ set(wmaps)):
            where = "/proc maps" if s in maps else "the truth"
            errs.append(f"pid {pid} mapping {s:#x}: only in {where}: {maps.get(s) or wmaps.get(s)}")
        for s in sorted(set(maps) & set(wmaps)):
            m = wmaps[s]
            w = (m["length"], m["prot"], m["shared"], m["offset"], truth.files[m["file"]]["path"])
            if maps[s] != w:
                errs.append(f"pid {pid} mapping {s:#x}: /proc says {maps[s]}, the truth {w}")
    for group, what in ((drm_fds, "DRM"), (dmabuf_fds, "dma-buf")):
        for (p1, f1, l1), (p2, f2, l2) in itertools.combinations(group, 2):
            same = kcmp_same_file(p1, f1, p2, f2)
            if same != (l1 == l2):
                errs.append(f"{what} fds {p1}:{f1} and {p2}:{f2}: kcmp says {'one' if same else 'two'} "
                            f"open file(s), the truth says {l1} and {l2}")
    return errs


def main(argv):
    if not argv:
        print(__doc__)
        return 2
    try:
        errs = verify(load_truths(argv))
    except (TruthError, OSError, KeyError) as e:
        print(f"verify_truth: {e}")
        return 2
    for e in errs:
        print(f"  - truth is wrong: {e}")
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
