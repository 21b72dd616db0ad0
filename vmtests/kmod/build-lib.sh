# Sourced by vmtests/i915test/build.sh and vmtests/xetest/build.sh: what building an
# out-of-tree test fixture module for the VM's kernel takes. The caller defines skip() (exit 2,
# a missing prerequisite) and fail() (exit 1).

# kmod_headers: sets KDIR (default: the newest installed 6.1 headers) and CC_KMOD (the compiler
# the headers were made with, gcc-12 for Debian 12's 6.1; else gcc), or skips
kmod_headers() {
	if [ -z "${KDIR:-}" ]; then
		local d
		for d in $(ls -d /lib/modules/6.1.*/build 2>/dev/null | sort -V -r); do
			[ -e "$d/Makefile" ] && { KDIR=$d; break; }
		done
	fi
	[ -n "${KDIR:-}" ] && [ -e "$KDIR/Makefile" ] ||
		skip "no 6.1 kernel headers (/lib/modules/6.1.*/build): apt-get install linux-headers-amd64"
	command -v make >/dev/null || skip "make not found: apt-get install build-essential"
	CC_KMOD=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\?\(gcc-[0-9]*\).*/\1/p' "$KDIR/include/config/auto.conf" 2>/dev/null)
	CC_KMOD=${CC_KMOD:-gcc}
	command -v "$CC_KMOD" >/dev/null || command -v gcc >/dev/null ||
		skip "no C compiler ($CC_KMOD or gcc): apt-get install build-essential"
	command -v "$CC_KMOD" >/dev/null || CC_KMOD=gcc
}

# The module is built in a scratch copy, so the source tree stays clean: kmod_scratch makes it,
# the caller copies its Kbuild and sources in, kmod_build builds OUT/NAME.ko from it.
kmod_scratch() { # NAME OUT: creates and prints OUT/NAME-src, empty
	local scratch=$2/$1-src
	rm -rf "$scratch" && mkdir -p "$scratch" || fail "cannot create $scratch"
	echo "$scratch"
}
kmod_build() { # NAME OUT LOG SCRATCH
	local name=$1 out=$2 log=$3 scratch=$4
	echo "== module against $KDIR with $CC_KMOD" >>"$log"
	if ! make -C "$KDIR" M="$scratch" CC="$CC_KMOD" modules >>"$log" 2>&1 || [ ! -e "$scratch/$name.ko" ]; then
		fail "building $name.ko failed: $(grep -m1 -E 'error|Error' "$log")"
	fi
	cp "$scratch/$name.ko" "$out/$name.ko"
}
