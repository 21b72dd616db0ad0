#!/bin/bash
# Builds the gwxe test fixture against the newest installed 6.1 kernel headers, and its smoke
# test, into OUT_DIR; the source directory stays clean (the module is built in a scratch copy
# under OUT_DIR, with gpuwatch's user/uapi/xe_uapi.h next to it).
#
# usage: vmtests/xetest/build.sh OUT_DIR
#   env KDIR=/lib/modules/VER/build   headers to build against (default: newest 6.1)
# Leaves OUT_DIR/gwxe.ko, OUT_DIR/gwxe-smoke, OUT_DIR/gwxe-build.log.
# Exit: 0 built; 1 a build failed (see gwxe-build.log); 2 missing prerequisite (one line why).
set -u

skip() { echo "xetest/build.sh: $*" >&2; exit 2; }
fail() { echo "xetest/build.sh: $*" >&2; exit 1; }

[ $# = 1 ] || skip "usage: $0 OUT_DIR"
here=$(cd "$(dirname "$0")" && pwd)
uapi=$here/../../user/uapi/xe_uapi.h
mkdir -p "$1" || fail "cannot create $1"
out=$(cd "$1" && pwd)

if [ -z "${KDIR:-}" ]; then
	for d in $(ls -d /lib/modules/6.1.*/build 2>/dev/null | sort -V -r); do
		[ -e "$d/Makefile" ] && { KDIR=$d; break; }
	done
fi
[ -n "${KDIR:-}" ] && [ -e "$KDIR/Makefile" ] ||
	skip "no 6.1 kernel headers (/lib/modules/6.1.*/build): apt-get install linux-headers-amd64"
command -v make >/dev/null || skip "make not found: apt-get install build-essential"
cc=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\?\(gcc-[0-9]*\).*/\1/p' "$KDIR/include/config/auto.conf" 2>/dev/null)
cc=${cc:-gcc}
command -v "$cc" >/dev/null || command -v gcc >/dev/null || skip "no C compiler ($cc or gcc): apt-get install build-essential"
command -v "$cc" >/dev/null || cc=gcc
[ -r "$uapi" ] || fail "missing $uapi"

log=$out/gwxe-build.log
: >"$log"
scratch=$out/gwxe-src
rm -rf "$scratch" && mkdir -p "$scratch" || fail "cannot create $scratch"
cp "$here"/Kbuild "$here"/gwxe.h "$here"/gwxe_*.c "$uapi" "$scratch"/
# xe_uapi.h includes <stddef.h> (for offsetof); a kernel build has none: point it at the kernel's
mkdir -p "$scratch/kshim" && echo '#include <linux/stddef.h>' >"$scratch/kshim/stddef.h"
echo "== module against $KDIR with $cc" >>"$log"
if ! make -C "$KDIR" M="$scratch" CC="$cc" modules >>"$log" 2>&1 || [ ! -e "$scratch/gwxe.ko" ]; then
	fail "building gwxe.ko failed: $(grep -m1 -E 'error|Error' "$log")"
fi
cp "$scratch/gwxe.ko" "$out/gwxe.ko"

echo "== smoke" >>"$log"
if ! gcc -std=gnu11 -O2 -g -Wall -Wextra -Werror -I"$here/../../user/uapi" -I/usr/include/libdrm -o "$out/gwxe-smoke" \
	"$here/smoke.c" >>"$log" 2>&1; then
	fail "building gwxe-smoke failed: $(grep -m1 error "$log")"
fi
echo "built $out/gwxe.ko ($(modinfo -F vermagic "$out/gwxe.ko" | cut -d' ' -f1)) and $out/gwxe-smoke"
