#!/bin/bash
# Builds gwdummy.ko, a featureless DRM device that only takes a minor (see gwdummy.c), against
# the newest installed 6.1 kernel headers into OUT_DIR; the source directory stays clean (the
# module is built in a scratch copy under OUT_DIR). For a lane root's kernel:
# vmtests/lanes/build-modules.sh.
#
# usage: vmtests/kmod/gwdummy/build.sh OUT_DIR
#   env KDIR=/lib/modules/VER/build   headers to build against (default: newest 6.1)
# Leaves OUT_DIR/gwdummy.ko, OUT_DIR/gwdummy-build.log.
# Exit: 0 built; 1 the build failed (see gwdummy-build.log); 2 missing prerequisite (one line why).
set -u

skip() { echo "gwdummy/build.sh: $*" >&2; exit 2; }
fail() { echo "gwdummy/build.sh: $*" >&2; exit 1; }

[ $# = 1 ] || skip "usage: $0 OUT_DIR"
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$1" || fail "cannot create $1"
out=$(cd "$1" && pwd)
. "$here/../build-lib.sh"
kmod_headers

log=$out/gwdummy-build.log
: >"$log"
scratch=$(kmod_scratch gwdummy "$out") || exit 1
kmod_sources gwdummy "$scratch"
kmod_build gwdummy "$out" "$log" "$scratch"
echo "built $out/gwdummy.ko ($(modinfo -F vermagic "$out/gwdummy.ko" | cut -d' ' -f1))"
