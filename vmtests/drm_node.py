#!/usr/bin/env python3
"""Prints the card node and the render node of a DRM driver, found by DRM_IOCTL_VERSION:
numbering changes between boots and with the order drivers load, and the sysfs driver link
of a virtio card names the bus driver, not virtio_gpu.

usage: drm_node.py DRIVER        (e.g. virtio_gpu, bochs-drm; the name the kernel reports)
Prints "CARD RENDER PRIME" (RENDER "-" when the driver has no render node; PRIME "prime" when
the card's GET_CAP(PRIME) gives import and export, else "noprime": bochs-drm on 6.1); exit 1
when no node of DRIVER exists.
"""

import ctypes
import fcntl
import os
import struct
import sys

DRM_IOCTL_VERSION = 0xC0406400  # _IOWR('d', 0x00, struct drm_version), 64 bytes on x86-64
DRM_IOCTL_GET_CAP = 0xC010640C  # _IOWR('d', 0x0c, struct drm_get_cap), 16 bytes
DRM_CAP_PRIME, PRIME_IMPORT_EXPORT = 5, 0x3


def driver_of(path, what="name"):
    """The driver's name, or (what="prime") whether the node has PRIME import and export."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if what == "prime":
            cap = bytearray(struct.pack("QQ", DRM_CAP_PRIME, 0))
            fcntl.ioctl(fd, DRM_IOCTL_GET_CAP, cap, True)
            return struct.unpack_from("Q", cap, 8)[0] & PRIME_IMPORT_EXPORT == PRIME_IMPORT_EXPORT
        name = ctypes.create_string_buffer(64)
        ver = ctypes.create_string_buffer(64)
        struct.pack_into("QQ", ver, 16, len(name) - 1, ctypes.addressof(name))  # name_len, name
        fcntl.ioctl(fd, DRM_IOCTL_VERSION, ver, True)
        return name.value.decode(errors="replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: drm_node.py DRIVER")
    found = {"card": None, "renderD": None}
    nodes = sorted(os.listdir("/dev/dri")) if os.path.isdir("/dev/dri") else []
    for n in nodes:
        for kind in found:
            if n.startswith(kind) and n[len(kind):].isdigit() and found[kind] is None:
                if driver_of("/dev/dri/" + n) == sys.argv[1]:
                    found[kind] = "/dev/dri/" + n
    if not found["card"]:
        print(f"drm_node: no card node of driver {sys.argv[1]} in /dev/dri", file=sys.stderr)
        return 1
    prime = "prime" if driver_of(found["card"], "prime") else "noprime"
    print(found["card"], found["renderD"] or "-", prime)
    return 0


if __name__ == "__main__":
    sys.exit(main())
