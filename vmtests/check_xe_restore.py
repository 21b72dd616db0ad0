#!/usr/bin/env python3
"""The kernel's view of an xe client before and after a CRIU checkpoint/restore (criu_xe).

Reads snapshots of the gwxe fixture's debugfs file (/sys/kernel/debug/dri/N/gwxe_state):

    client 3 pid 245 minor 129
      vm 1 flags 0x0
        bind 0x100000+0x4000 handle 1 offset 0x0 pat 0 flags 0x0
        bind 0x300000+0x3000 userptr 0x7f0000000000 pat 0 flags 0x0
      queue 1 vm 1 width 1 placements 1 instances 0:0:0 priority 0 timeslice 1000
      handle 1 size 65536 placement 0x1 flags 0x0 vm 0 caching 1

  check_xe_restore.py compare BEFORE AFTER --pid PID
      The files PID holds must come back identical: same VM ids and flags, same bindings
      (address, range, handle number or user address, offset, PAT, flags), same exec queues
      (id, VM, engines, priority, timeslice), same handles (size, placement, flags, VM, CPU
      caching), on the same minor, and no other (no leftover filler). Only the client id,
      which the kernel numbers per open, may differ.
  check_xe_restore.py manifest MANIFEST STATE --pid PID
      gpuwatch's manifest says what the kernel says about PID's xe files (the decoder check).

Prints one line per difference (first line: the count) and exits 1 when there is any.
"""
import argparse
import json
import re
import sys

CLIENT = re.compile(r"^client (\d+) pid (\d+) minor (\d+)$")


def parse(text):
    """[(pid, minor, [lines])] per client, lines stripped of their indentation."""
    clients = []
    for raw in text.splitlines():
        if not raw.strip():
            continue
        m = CLIENT.match(raw)
        if m:
            clients.append((int(m.group(2)), int(m.group(3)), []))
        elif raw.startswith("  ") and clients:
            clients[-1][2].append(raw.strip())
        else:
            raise ValueError("unexpected line in gwxe_state: %r" % raw)
    return clients


def blocks_of(clients, pid):
    return sorted((minor, lines) for p, minor, lines in clients if p == pid)


def compare(before, after, pid):
    diffs = []
    b, a = blocks_of(before, pid), blocks_of(after, pid)
    if not b:
        return ["pid %d holds no gwxe file before the dump" % pid]
    for minor, lines in b:
        kinds = {l.split()[0] for l in lines}
        for k in ("vm", "bind", "queue", "handle"):
            if k not in kinds:
                diffs.append("before: pid %d's file on minor %d has no %s line (nothing to compare)" % (pid, minor, k))
    if len(a) != len(b):
        diffs.append("pid %d holds %d gwxe files after the restore, %d before" % (pid, len(a), len(b)))
    for i, (minor, lines) in enumerate(b):
        if i >= len(a):
            break
        aminor, alines = a[i]
        if aminor != minor:
            diffs.append("file %d: on minor %d after the restore, %d before" % (i, aminor, minor))
        bs, as_ = set(lines), set(alines)
        for l in lines:
            if l not in as_:
                diffs.append("file %d: lost: %s" % (i, l))
        for l in alines:
            if l not in bs:
                diffs.append("file %d: new: %s" % (i, l))
        if not diffs and lines != alines:
            diffs.append("file %d: same lines in another order (a binding moved to another VM?)" % i)
    return diffs


def manifest_lines(m, pid):
    """What the kernel should print for each xe file of pid, from the manifest (sorted per file)."""
    files = {f["id"]: f for f in m.get("files", [])}
    out = []
    for p in m.get("processes", []):
        if p.get("pid") != pid:
            continue
        for fid in sorted({e["file"] for e in p.get("fds", []) if "file" in e}):
            f = files.get(fid)
            if not f or f.get("driver") != "xe":
                continue
            lines = []
            for vm in f.get("vms", []):
                lines.append("vm %d flags %#x" % (vm["id"], vm["flags"]))
                for bd in vm.get("bindings", []):
                    if "userptr" in bd:
                        what = "userptr %#x" % bd["userptr"]
                    elif bd.get("object") is None:
                        what = "null"
                    else:
                        what = "handle %s offset %#x" % (bd["handle"] if bd.get("handle") is not None else 0, bd["offset"])
                    lines.append("bind %#x+%#x %s pat %d flags %#x" % (bd["addr"], bd["range"], what, bd["pat_index"], bd["flags"]))
            for q in f.get("exec_queues", []):
                inst = ",".join("%d:%d:%d" % (e["class"], e["instance"], e["gt"]) for e in q["instances"])
                params = q.get("params", {})
                lines.append("queue %d vm %d width %d placements %d instances %s priority %d timeslice %d" % (
                    q["id"], q["vm"], q["width"], q["num_placements"], inst, params.get("property_0", 1),
                    params.get("property_1", 1000)))
            for h in f.get("handles", []):
                pr = h.get("params", {})
                if h.get("origin") == "xe.gem_create":
                    lines.append("handle %d size %d placement %#x flags %#x vm %d caching %d" % (
                        h["handle"], h["size"], pr["placement"], pr["flags"], pr["vm_id"], pr["cpu_caching"]))
                else:
                    lines.append("handle %d size %d (%s)" % (h["handle"], h["size"], h.get("origin")))
            out.append(sorted(lines))
    return out


def check_manifest(m, state, pid):
    want = sorted(sorted(lines) for _, lines in blocks_of(state, pid))
    got = sorted(manifest_lines(m, pid))
    if not want:
        return ["pid %d holds no gwxe file in the kernel's state" % pid]
    diffs = []
    if len(want) != len(got):
        diffs.append("the manifest lists %d xe files for pid %d, the kernel %d" % (len(got), pid, len(want)))

    def key(l):  # a handle not made by xe GEM_CREATE is compared on number and size only
        if l.endswith(")") and l.startswith("handle "):
            return " ".join(l.split()[:4])
        return l

    for i, (w, g) in enumerate(zip(want, got)):
        gkeys = {key(l) for l in g}
        loose = {key(l) for l in g if l.endswith(")")}
        wkeys = set()
        for l in w:
            k = " ".join(l.split()[:4]) if l.startswith("handle ") and " ".join(l.split()[:4]) in loose else l
            wkeys.add(k)
            if k not in gkeys:
                diffs.append("file %d: the kernel has, the manifest not: %s" % (i, l))
        for l in g:
            if key(l) not in wkeys:
                diffs.append("file %d: the manifest has, the kernel not: %s" % (i, l))
    return diffs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compare")
    c.add_argument("before")
    c.add_argument("after")
    c.add_argument("--pid", type=int, required=True)
    mm = sub.add_parser("manifest")
    mm.add_argument("manifest")
    mm.add_argument("state")
    mm.add_argument("--pid", type=int, required=True)
    a = ap.parse_args(argv)
    try:
        if a.cmd == "compare":
            with open(a.before) as f1, open(a.after) as f2:
                diffs = compare(parse(f1.read()), parse(f2.read()), a.pid)
        else:
            with open(a.manifest) as f1, open(a.state) as f2:
                diffs = check_manifest(json.load(f1), parse(f2.read()), a.pid)
    except (OSError, ValueError, KeyError) as e:
        print("1 difference\ncannot read the inputs: %s" % e)
        return 1
    if diffs:
        print("%d difference%s" % (len(diffs), "" if len(diffs) == 1 else "s"))
        for d in diffs:
            print(d)
        return 1
    print("identical")
    return 0


if __name__ == "__main__":
    sys.exit(main())
