# shellcheck shell=bash
# Sourced by vmtests/i915test/build.sh, vmtests/xetest/build.sh, vmtests/kmod/gwdummy/build.sh
# and vmtests/lanes/build-modules.sh: what building an out-of-tree test module (gwi915, gwxe,
# gwdummy) for a VM's kernel takes. The caller defines skip() (exit 2, a missing prerequisite)
# and fail() (exit 1).
#
# Two modes:
#   host    (KMOD_ROOT unset) against headers installed on this machine: by default the newest
#           6.1 ones, Debian 12's kernel that the debian12 lane boots
#   chroot  (KMOD_ROOT=DIR, a lane's root filesystem) against the newest
#           DIR/usr/src/linux-headers-*-amd64, with DIR's own make and compiler, run by
#           chroot; the scratch copy lives in DIR/var/tmp/gwkmod/ (nowhere else in DIR is
#           written)
# The kernel's own flags are used as they are (no extra -W options).

KMOD_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KMOD_VMTESTS=$(cd "$KMOD_LIB_DIR/.." && pwd)

# kmod_headers: sets KDIR (a path inside KMOD_ROOT in chroot mode; env KDIR overrides),
# KMOD_KVER (the kernel release the headers are for) and CC_KMOD (the compiler the headers were
# made with, e.g. gcc-12 for Debian 12's 6.1, x86_64-linux-gnu-gcc-14 for Debian 13's 6.12;
# else gcc), or skips
kmod_headers() {
	local r=${KMOD_ROOT:-} d
	if [ -n "$r" ]; then
		[ -d "$r" ] || skip "no lane root at $r"
		if [ -z "${KDIR:-}" ]; then
			d=$(ls -d "$r"/usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -n1)
			KDIR=${d#"$r"}
		fi
		[ -n "${KDIR:-}" ] && [ -e "$r$KDIR/Makefile" ] ||
			skip "no kernel headers in $r (/usr/src/linux-headers-*-amd64): install linux-headers-amd64 in that root (vmtests/lanes/mkroot-*.sh)"
		[ -x "$r/usr/bin/make" ] || skip "no make in $r: install make in that root (vmtests/lanes/mkroot-*.sh)"
	else
		if [ -z "${KDIR:-}" ]; then
			for d in $(ls -d /lib/modules/6.1.*/build 2>/dev/null | sort -V -r); do
				[ -e "$d/Makefile" ] && { KDIR=$d; break; }
			done
		fi
		[ -n "${KDIR:-}" ] && [ -e "$KDIR/Makefile" ] ||
			skip "no 6.1 kernel headers (/lib/modules/6.1.*/build): apt-get install linux-headers-amd64"
		command -v make >/dev/null || skip "make not found: apt-get install build-essential"
	fi
	# what modules built there carry as vermagic (Debian's include/config/kernel.release says
	# 6.1.192 where uname -r says 6.1.0-57-amd64)
	KMOD_KVER=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' "$r$KDIR/include/generated/utsrelease.h" 2>/dev/null)
	[ -n "$KMOD_KVER" ] || skip "$r$KDIR is not a prepared kernel header tree (no include/generated/utsrelease.h)"
	CC_KMOD=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\?\([^ "]*gcc[^ "]*\).*/\1/p' "$r$KDIR/include/config/auto.conf" 2>/dev/null)
	CC_KMOD=${CC_KMOD:-gcc}
	if [ -n "$r" ]; then
		[ -x "$r/usr/bin/$CC_KMOD" ] || CC_KMOD=gcc
		[ -x "$r/usr/bin/$CC_KMOD" ] || skip "no C compiler in $r: install gcc in that root (vmtests/lanes/mkroot-*.sh)"
	else
		command -v "$CC_KMOD" >/dev/null || command -v gcc >/dev/null ||
			skip "no C compiler ($CC_KMOD or gcc): apt-get install build-essential"
		command -v "$CC_KMOD" >/dev/null || CC_KMOD=gcc
	fi
}

# kmod_source_files NAME: the files a module is built from, one a line (what build-modules.sh
# hashes to know whether a module is up to date)
kmod_source_files() {
	case $1 in
	gwi915) ls "$KMOD_VMTESTS"/i915test/Kbuild "$KMOD_VMTESTS"/i915test/gwi915.h "$KMOD_VMTESTS"/i915test/gwi915_*.c ;;
	gwxe) ls "$KMOD_VMTESTS"/xetest/Kbuild "$KMOD_VMTESTS"/xetest/gwxe.h "$KMOD_VMTESTS"/xetest/gwxe_*.c \
		"$KMOD_VMTESTS"/../user/uapi/xe_uapi.h ;;
	gwdummy) ls "$KMOD_VMTESTS"/kmod/gwdummy/Kbuild "$KMOD_VMTESTS"/kmod/gwdummy/gwdummy.c ;;
	*) fail "unknown test module $1" ;;
	esac
}

# The module is built in a scratch copy, so the source tree stays clean: kmod_scratch makes it,
# kmod_sources fills it, kmod_build builds OUT/NAME.ko from it.
kmod_scratch() { # NAME OUT: creates and prints the (host) path of an empty scratch directory
	local scratch
	if [ -n "${KMOD_ROOT:-}" ]; then
		# one directory per output directory, so two lanes' builds never share one
		scratch=$KMOD_ROOT/var/tmp/gwkmod/$(echo "$2" | cksum | cut -d' ' -f1)/$1-src
	else
		scratch=$2/$1-src
	fi
	rm -rf "$scratch" && mkdir -p "$scratch" || fail "cannot create $scratch"
	echo "$scratch"
}
kmod_sources() { # NAME SCRATCH: copies the module's Kbuild and sources into SCRATCH
	local f
	for f in $(kmod_source_files "$1"); do
		[ -r "$f" ] || fail "missing $f"
		cp "$f" "$2"/ || fail "cannot copy $f to $2"
	done
	if [ "$1" = gwxe ]; then
		# xe_uapi.h includes <stddef.h> (for offsetof); a kernel build has none: point it
		# at the kernel's (gwxe's Kbuild adds -I kshim)
		mkdir -p "$2/kshim" && echo '#include <linux/stddef.h>' >"$2/kshim/stddef.h"
	fi
}
# kmod_first_error LOG SCRATCH: the first compiler/modpost error of a build log, one line,
# with the scratch directory's path taken off the file names
kmod_first_error() {
	local e
	e=$(grep -m1 -E '(^|[ :])(fatal error|error|ERROR):' "$1")
	[ -n "$e" ] || e=$(grep -m1 -E 'error|Error' "$1")
	e=${e//"$2"\//}
	[ -n "${KMOD_ROOT:-}" ] && e=${e//"${2#"$KMOD_ROOT"}"\//}
	echo "$e"
}
kmod_build() { # NAME OUT LOG SCRATCH
	local name=$1 out=$2 log=$3 scratch=$4 rc
	if [ -n "${KMOD_ROOT:-}" ]; then
		echo "== $name.ko against $KDIR ($KMOD_KVER) with $CC_KMOD, in chroot $KMOD_ROOT" >>"$log"
		chroot "$KMOD_ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/ LANG=C.UTF-8 \
			make -C "$KDIR" M="${scratch#"$KMOD_ROOT"}" CC="$CC_KMOD" modules >>"$log" 2>&1
		rc=$?
	else
		echo "== $name.ko against $KDIR ($KMOD_KVER) with $CC_KMOD" >>"$log"
		make -C "$KDIR" M="$scratch" CC="$CC_KMOD" modules >>"$log" 2>&1
		rc=$?
	fi
	if [ $rc != 0 ] || [ ! -e "$scratch/$name.ko" ]; then
		fail "building $name.ko for $KMOD_KVER failed: $(kmod_first_error "$log" "$scratch")"
	fi
	cp "$scratch/$name.ko" "$out/$name.ko" || fail "cannot copy $name.ko to $out"
}
