#!/bin/bash
# Builds the gwi915 test fixture against the newest installed 6.1 kernel headers, and the
# smoke test against libdrm_intel, into OUT_DIR; the source directory stays clean (the
# module is built in a scratch copy under OUT_DIR).
#
# usage: vmtests/i915test/build.sh OUT_DIR
#   env KDIR=/lib/modules/VER/build   headers to build against (default: newest 6.1)
#   env SMOKE_ONLY=1                  the smoke program only (the module for another kernel
#                                     comes from vmtests/lanes/build-modules.sh)
# Leaves OUT_DIR/gwi915.ko, OUT_DIR/smoke, OUT_DIR/build.log.
# Exit: 0 built; 1 a build failed (see build.log); 2 missing prerequisite (one line why).
set -u

skip() { echo "i915test/build.sh: $*" >&2; exit 2; }
fail() { echo "i915test/build.sh: $*" >&2; exit 1; }

[ $# = 1 ] || skip "usage: $0 OUT_DIR"
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$1" || fail "cannot create $1"
out=$(cd "$1" && pwd)
. "$here/../kmod/build-lib.sh"
[ "${SMOKE_ONLY:-0}" = 1 ] || kmod_headers
pkg-config --exists libdrm_intel libdrm 2>/dev/null || skip "libdrm_intel not found by pkg-config: apt-get install libdrm-dev"

log=$out/build.log
: >"$log"
if [ "${SMOKE_ONLY:-0}" != 1 ]; then
	scratch=$(kmod_scratch gwi915 "$out") || exit 1
	kmod_sources gwi915 "$scratch"
	kmod_build gwi915 "$out" "$log" "$scratch"
fi

echo "== smoke" >>"$log"
# shellcheck disable=SC2046
if ! gcc -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wno-format-truncation -o "$out/smoke" "$here/smoke.c" \
	$(pkg-config --cflags --libs libdrm_intel libdrm) >>"$log" 2>&1; then
	fail "building smoke failed: $(grep -m1 error "$log")"
fi
if [ "${SMOKE_ONLY:-0}" = 1 ]; then
	echo "built $out/smoke"
else
	echo "built $out/gwi915.ko ($(modinfo -F vermagic "$out/gwi915.ko" | cut -d' ' -f1)) and $out/smoke"
fi
