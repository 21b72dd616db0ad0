#!/usr/bin/env python3
"""Compares two QEMU screendumps (binary PPM, P6) of one display taken before a checkpoint and
after the restore: exit 0 when they are the same picture, 1 (with the first difference) when
not, 2 on unreadable input.

usage: check_screendump.py BEFORE.ppm AFTER.ppm [--pattern]

BEFORE must not be one colour (a blank display is no client's picture).

--pattern: BEFORE must also show wl_kms's buffer (vmtests/workloads/wl_kms.c): an XRGB8888
framebuffer as wide as the picture, pitch 4 bytes a pixel, byte i holding (i * 7 + (i >> 12))
mod 256; so a picture of something else (the console) does not pass for the client's.
"""

import sys


def read_ppm(path):
    with open(path, "rb") as f:
        data = f.read()
    fields, pos = [], 0
    while len(fields) < 4:
        while pos < len(data) and data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b"#":
            pos = data.index(b"\n", pos) + 1
            continue
        end = pos
        while end < len(data) and not data[end:end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    if fields[0] != b"P6" or fields[3] != b"255":
        raise ValueError(f"{path}: not a binary 8-bit PPM (header {fields})")
    w, h = int(fields[1]), int(fields[2])
    pixels = data[pos + 1:]
    if len(pixels) != w * h * 3:
        raise ValueError(f"{path}: {len(pixels)} bytes of pixels, want {w * h * 3} for {w}x{h}")
    return w, h, pixels


def pattern_rgb(w, h):
    # (i * 7) mod 256 repeats every 4096 bytes (4096 * 7 is 0 mod 256): block k is block 0 + k
    base = bytes((j * 7) & 0xFF for j in range(4096))
    n = w * h * 4
    buf = b"".join(base.translate(bytes((v + k) & 0xFF for v in range(256)))
                   for k in range((n + 4095) // 4096))[:n]
    rgb = bytearray(w * h * 3)
    rgb[0::3], rgb[1::3], rgb[2::3] = buf[2::4], buf[1::4], buf[0::4]  # XRGB8888: B, G, R, X
    return bytes(rgb)


def first_diff(a, b, w):
    if a == b:
        return None
    for k in range(0, len(a), 3):
        if a[k:k + 3] != b[k:k + 3]:
            p = k // 3
            return p % w, p // w, a[k:k + 3].hex(), b[k:k + 3].hex()
    return None


def main():
    args = [a for a in sys.argv[1:] if a != "--pattern"]
    if len(args) != 2:
        print("usage: check_screendump.py BEFORE.ppm AFTER.ppm [--pattern]", file=sys.stderr)
        return 2
    try:
        bw, bh, before = read_ppm(args[0])
        aw, ah, after = read_ppm(args[1])
    except (OSError, ValueError) as e:
        print(f"check_screendump: {e}", file=sys.stderr)
        return 2
    if before == before[:3] * (bw * bh):
        print(f"before: the {bw}x{bh} picture is one colour (#{before[:3].hex()}): no client's")
        return 1
    if "--pattern" in sys.argv[1:]:
        want = pattern_rgb(bw, bh)
        d = first_diff(before, want, bw)
        if d:
            print(f"before: {bw}x{bh} is not the client's picture: pixel ({d[0]}, {d[1]}) is #{d[2]}, "
                  f"its buffer holds #{d[3]}")
            return 1
    if (bw, bh) != (aw, ah):
        print(f"the picture was {bw}x{bh} and is {aw}x{ah} after the restore")
        return 1
    d = first_diff(before, after, bw)
    if d:
        n = sum(1 for k in range(0, len(before), 3) if before[k:k + 3] != after[k:k + 3])
        print(f"{n} of {bw * bh} pixels differ after the restore; first ({d[0]}, {d[1]}): "
              f"#{d[2]} before, #{d[3]} after")
        return 1
    print(f"the same {bw}x{bh} picture before the dump and after the restore"
          + (" (the client's buffer)" if "--pattern" in sys.argv[1:] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
