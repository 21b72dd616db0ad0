#!/usr/bin/env python3
"""Host side of the VM suite's screenshots: takes QEMU screendumps when the guest asks.

usage: screendump.py QMP_SOCKET DIR

vmtests/run.sh starts QEMU with a QMP socket and this next to it. A scenario in the guest asks
for a picture of one display device by writing DIR/NAME.req holding the device's QEMU id
(`gwvgpu`, `gwbochs`: run.sh names them); this answers with DIR/NAME.ppm (QMP `screendump`
of that device's console) and DIR/NAME.done, or DIR/NAME.err holding the reason. DIR is the
lane's results directory, which the guest has read-write (vmtests/lanes/lane.sh). Exits when
QEMU closes the socket, or after 60 s without one.
"""

import json
import os
import re
import socket
import sys
import time


def write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)


class Qmp:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.buf = b""
        self.read()  # greeting
        self.call("qmp_capabilities")

    def read(self):
        while b"\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("QEMU closed the QMP socket")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def call(self, cmd, **args):
        self.sock.sendall(json.dumps({"execute": cmd, "arguments": args}).encode() + b"\n")
        while True:
            msg = self.read()
            if "return" in msg:
                return msg["return"]
            if "error" in msg:
                raise RuntimeError(msg["error"].get("desc", str(msg["error"])))
            # events ({"event": ...}) are skipped


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: screendump.py QMP_SOCKET DIR")
    sock, out = sys.argv[1], sys.argv[2]
    deadline = time.monotonic() + 60
    while not os.path.exists(sock):
        if time.monotonic() > deadline:
            sys.exit(f"screendump.py: no QMP socket {sock} after 60 s")
        time.sleep(0.2)
    for _ in range(50):
        try:
            qmp = Qmp(sock)
            break
        except (ConnectionRefusedError, FileNotFoundError):
            time.sleep(0.2)
    else:
        sys.exit(f"screendump.py: cannot connect to {sock}")
    os.makedirs(out, exist_ok=True)
    try:
        while True:
            for name in sorted(os.listdir(out)):
                m = re.fullmatch(r"([A-Za-z0-9_.-]+)\.req", name)
                if not m:
                    continue
                base = os.path.join(out, m.group(1))
                with open(os.path.join(out, name)) as f:
                    device = f.read().strip()
                os.unlink(os.path.join(out, name))
                try:
                    qmp.call("screendump", filename=base + ".ppm", device=device)
                    write_atomic(base + ".done", device + "\n")
                except RuntimeError as e:
                    write_atomic(base + ".err", f"{e}\n")
            time.sleep(0.1)
            # QEMU gone: the socket's peer closed (a zero-byte poll would block; probe by ping)
            qmp.call("query-status")
    except (EOFError, OSError):
        return


if __name__ == "__main__":
    main()
