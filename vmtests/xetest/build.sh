#!/bin/bash
# Builds the gwxe test fixture against the newest installed 6.1 kernel headers, and its smoke
# test, into OUT_DIR; the source directory stays clean (the module is built in a scratch copy
# under OUT_DIR, with gpuwatch's user/uapi/xe_uapi.h next to it).
#
# usage: vmtests/xetest/build.sh OUT_DIR
#   env KDIR=/lib/modules/VER/build   headers to build against (default: newest 6.1)
#   env SMOKE_ONLY=1                  gwxe-smoke only (the module for another kernel comes
#                                     from vmtests/lanes/build-modules.sh)
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
[ "${SMOKE_ONLY:-0}" = 1 ] || kmod_headers
[ -r "$uapi" ] || fail "missing $uapi"

log=$out/gwxe-build.log
: >"$log"
if [ "${SMOKE_ONLY:-0}" != 1 ]; then
	scratch=$(kmod_scratch gwxe "$out") || exit 1
	kmod_sources gwxe "$scratch"	# with xe_uapi.h and a kshim/stddef.h
	kmod_build gwxe "$out" "$log" "$scratch"
fi

echo "== smoke" >>"$log"
if ! gcc -std=gnu11 -O2 -g -Wall -Wextra -Werror -I"$here/../../user/uapi" -I/usr/include/libdrm -o "$out/gwxe-smoke" \
	"$here/smoke.c" >>"$log" 2>&1; then
	fail "building gwxe-smoke failed: $(grep -m1 error "$log")"
fi
if [ "${SMOKE_ONLY:-0}" = 1 ]; then
	echo "built $out/gwxe-smoke"
else
	echo "built $out/gwxe.ko ($(modinfo -F vermagic "$out/gwxe.ko" | cut -d' ' -f1)) and $out/gwxe-smoke"
fi
