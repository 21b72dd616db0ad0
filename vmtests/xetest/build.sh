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
. "$here/../kmod/build-lib.sh"
kmod_headers
[ -r "$uapi" ] || fail "missing $uapi"

log=$out/gwxe-build.log
: >"$log"
scratch=$(kmod_scratch gwxe "$out") || exit 1
cp "$here"/Kbuild "$here"/gwxe.h "$here"/gwxe_*.c "$uapi" "$scratch"/
# xe_uapi.h includes <stddef.h> (for offsetof); a kernel build has none: point it at the kernel's
mkdir -p "$scratch/kshim" && echo '#include <linux/stddef.h>' >"$scratch/kshim/stddef.h"
kmod_build gwxe "$out" "$log" "$scratch"

echo "== smoke" >>"$log"
if ! gcc -std=gnu11 -O2 -g -Wall -Wextra -Werror -I"$here/../../user/uapi" -I/usr/include/libdrm -o "$out/gwxe-smoke" \
	"$here/smoke.c" >>"$log" 2>&1; then
	fail "building gwxe-smoke failed: $(grep -m1 error "$log")"
fi
echo "built $out/gwxe.ko ($(modinfo -F vermagic "$out/gwxe.ko" | cut -d' ' -f1)) and $out/gwxe-smoke"
