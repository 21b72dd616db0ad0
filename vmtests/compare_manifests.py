#!/usr/bin/env python3
"""compare_manifests.py BEFORE AFTER: the daemon's manifest after `criu restore` shows the
same processes with the same fds, the same handles (numbers and sizes) per file and the same
mappings (start, length) as before the dump -- so no filler handle survived the restore.
Prints the differences; exit 1 when there are any.
--any-pids: processes are matched by what they hold, not by pid (a container restored into a
new pid namespace has the same pids inside it, new ones on the host, where the daemon runs)."""
import json
import sys


def view(path):
    m = json.load(open(path))
    files = {f["id"]: f for f in m["files"]}
    out = {}
    for p in m["processes"]:
        fds = {}
        for e in p["fds"]:
            if "dmabuf" in e:
                d = e["dmabuf"]
                f = files.get(d.get("file"))
                fds[e["fd"]] = ("dmabuf", f["path"] if f else None, d.get("handle"))
            else:
                f = files[e["file"]]
                fds[e["fd"]] = ("drm", f["path"], f["handles_known"],
                                tuple((h["handle"], h["size"]) for h in f["handles"]))
        maps = sorted((x["start"], x["length"]) for x in p["mmaps"])
        out[p["pid"]] = {"fds": fds, "mmaps": maps}
    return out


def main():
    args = [a for a in sys.argv[1:] if a != "--any-pids"]
    before, after = view(args[0]), view(args[1])
    if len(args) < len(sys.argv) - 1:  # --any-pids: number the processes by what they hold
        def renumber(v):
            return {i: p for i, p in enumerate(sorted(v.values(), key=repr))}
        before, after = renumber(before), renumber(after)
    diffs = []
    for pid in sorted(set(before) | set(after)):
        b, a = before.get(pid), after.get(pid)
        if b is None or a is None:
            diffs.append(f"pid {pid}: {'only after' if b is None else 'missing after the restore'}")
            continue
        for fd in sorted(set(b["fds"]) | set(a["fds"])):
            if b["fds"].get(fd) != a["fds"].get(fd):
                diffs.append(f"pid {pid} fd {fd}: before {b['fds'].get(fd)}, after {a['fds'].get(fd)}")
        if b["mmaps"] != a["mmaps"]:
            diffs.append(f"pid {pid} mappings: before {b['mmaps']}, after {a['mmaps']}")
    for d in diffs:
        print(d)
    print("manifests agree" if not diffs else f"{len(diffs)} difference(s)")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
