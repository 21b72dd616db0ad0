#!/bin/bash
# Builds the VM suites' test modules (gwi915.ko, gwxe.ko, gwdummy.ko) for the kernel of a lane's
# root filesystem: against the newest ROOT/usr/src/linux-headers-*-amd64, with the root's own
# make and compiler, in a chroot (vmtests/kmod/build-lib.sh's chroot mode; the scratch copies
# live in ROOT/var/tmp/gwkmod/). Called by lane.sh's lane_modules; as root.
#
# usage: vmtests/lanes/build-modules.sh ROOT OUT_DIR
# Leaves in OUT_DIR, per module NAME:
#   NAME.ko          built for that kernel (its vermagic checked)
#   NAME.stamp       hash of its sources, vmtests/kmod/build-lib.sh, the kernel release, the
#                    compiler and the headers' Module.symvers: while it matches, NAME.ko is not
#                    rebuilt
#   NAME.skip        instead of NAME.ko: one line, the missing prerequisite (no headers, make or
#                    compiler in the root; not root)
#   NAME-build.log   the build's output
# Prints one line per module (built in N s / up to date / skipped: why / on stderr, building
# NAME.ko failed: the first compiler error). Exit: 0 every module built, up to date or skipped; 1 a module failed to
# build (the others are still built); 2 usage.
set -u

[ $# = 2 ] || { echo "usage: $0 ROOT OUT_DIR" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$1" 2>/dev/null && pwd) || { echo "build-modules: no directory $1" >&2; exit 2; }
mkdir -p "$2" || { echo "build-modules: cannot create $2" >&2; exit 2; }
out=$(cd "$2" && pwd)
modules=(gwi915 gwxe gwdummy)

# build-lib.sh's contract: skip() is a missing prerequisite (exit 2), fail() a failure (exit 1);
# each module is built in a subshell, so these end that subshell only
# shellcheck disable=SC2317 # called by build-lib.sh
skip() { echo "$*" >&2; exit 2; }
# shellcheck disable=SC2317
fail() { echo "$*" >&2; exit 1; }
# shellcheck disable=SC2034 # build-lib.sh's chroot mode
KMOD_ROOT=$root
. "$here/../kmod/build-lib.sh"

# one build per output directory at a time (two suites may ask for the same lane's modules)
exec 9>"$out/.lock"
flock 9

skip_all() { # REASON
	local m
	for m in "${modules[@]}"; do
		rm -f "$out/$m.ko" "$out/$m.stamp"
		echo "$1" >"$out/$m.skip"
		echo "build-modules: $m.ko skipped: $1"
	done
	exit 0
}
[ "$(id -u)" = 0 ] || skip_all "building modules in a lane root needs root (chroot)"
if ! why=$( (kmod_headers) 2>&1); then
	skip_all "$why"
fi
kmod_headers # sets KDIR, KMOD_KVER, CC_KMOD

module_hash() { # NAME
	{
		for f in $(kmod_source_files "$1"); do
			echo "== $(basename "$f")"
			cat "$f"
		done
		echo "== build-lib.sh"
		cat "$KMOD_LIB_DIR/build-lib.sh"
		echo "== kernel $KMOD_KVER $KDIR cc $CC_KMOD"
		sed -n 's/^CONFIG_CC_VERSION_TEXT=//p' "$root$KDIR/include/config/auto.conf"
		sha256sum <"$root$KDIR/Module.symvers"
	} | sha256sum | cut -d' ' -f1
}

failed=0
for m in "${modules[@]}"; do
	hash=$(module_hash "$m")
	if [ -e "$out/$m.ko" ] && [ "$(cat "$out/$m.stamp" 2>/dev/null)" = "$hash" ]; then
		echo "build-modules: $m.ko for $KMOD_KVER up to date"
		continue
	fi
	rm -f "$out/$m.ko" "$out/$m.stamp" "$out/$m.skip" "$out/$m.err"
	t0=$(date +%s%N)
	(
		log=$out/$m-build.log
		: >"$log"
		scratch=$(kmod_scratch "$m" "$out") || exit 1
		kmod_sources "$m" "$scratch"
		kmod_build "$m" "$out" "$log" "$scratch"
		rm -rf "$scratch"   # kept only when the build failed
		rmdir "$(dirname "$scratch")" 2>/dev/null
	) 2>"$out/$m.err"
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	if [ $rc = 0 ]; then
		vm=$(modinfo -F vermagic "$out/$m.ko" 2>/dev/null | cut -d' ' -f1)
		if [ "$vm" != "$KMOD_KVER" ]; then
			rm -f "$out/$m.ko"
			echo "build-modules: $m.ko FAILED: built with vermagic '$vm', not $KMOD_KVER" >&2
			failed=1
			continue
		fi
		echo "$hash" >"$out/$m.stamp"
		rm -f "$out/$m.err"
		printf 'build-modules: %s.ko for %s built in %d.%d s\n' "$m" "$KMOD_KVER" $((ms / 1000)) $((ms % 1000 / 100))
	elif [ $rc = 2 ]; then
		mv "$out/$m.err" "$out/$m.skip"
		echo "build-modules: $m.ko skipped: $(head -n1 "$out/$m.skip")"
	else
		echo "build-modules: $(head -n1 "$out/$m.err") (log: $out/$m-build.log)" >&2
		rm -f "$out/$m.err"
		failed=1
	fi
done
exit $failed
