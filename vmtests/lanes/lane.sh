# Sourced by every VM suite's host side: which stack a suite runs on (a "lane"), and the one
# way this project boots a VM. Nothing here runs on import.
#
# Lanes (env LANE, or lane_init's argument; default debian12):
#   debian12  Debian 12's kernel (linux-image-amd64, 6.1) over this host's own root, read-only
#             over 9p: CRIU 3.17.1, podman 4.3, runc 1.1.5 (setup.sh installs them here).
#   debian13  Debian 13's root (vmtests/lanes/mkroot-debian13.sh, made by setup.sh), booted with
#             its own kernel (6.12): CRIU 4.1, podman 5.4, runc 1.1.15, crun 1.21. This source
#             tree and the build directory are mapped read-only at the same paths; gpuwatch
#             built on Debian 12 runs there unchanged.
#
# lane_init [LANE]                     sets LANE, LANE_KERNEL, LANE_KVER, LANE_ROOT ("" for the
#                                      host's root), LANE_DESC; on a missing prerequisite prints
#                                      one line on stderr and returns 2
# lane_map HOST_DIR                    a directory the guest also needs (the build directory,
#                                      when it is not under the source tree), read-only
# lane_out HOST_DIR                    the suite's results directory: writable in the guest;
#                                      sets LANE_GUEST_OUT to its path there
# lane_results DIR                     the suite's results directory, emptied (only when it is a
#                                      previous one: it holds .gpuwatch-results) and made
#                                      writable in the guest (lane_out); sets LANE_RESULTS
# lane_run SUITE TIMEOUT MEMORY CMD [vng options...]
#                                      THE way a suite runs: boots the lane (lane_boot, console
#                                      in LANE_RESULTS/console.log) and runs CMD, a guest script
#                                      that sources vmtests/guest/common.sh, with its output in
#                                      LANE_RESULTS/guest.log, shown here live; the guest writes
#                                      LANE_RESULTS/summary ("N passed, N failed, N skipped") and
#                                      LANE_RESULTS/status. Prints the time taken and that line
#                                      last; without it (the VM hung, was killed at TIMEOUT or
#                                      crashed), the kernel's first report and the console's last
#                                      lines, and counts the unfinished suite as one failure.
#                                      Returns 0 (all passed or skipped) or 1.
# lane_boot TIMEOUT MEMORY CONSOLE CMD [vng options...]
#                                      boots the lane's kernel and runs CMD (a shell command
#                                      line) as root; the guest kernel's console goes to
#                                      CONSOLE; returns vng's exit status (124: TIMEOUT)
# lane_modules BUILD_DIR               prints the directory holding the test modules (gwi915.ko,
#                                      gwxe.ko, gwdummy.ko) built for the lane's kernel, building
#                                      them first for a lane whose kernel is not the host's 6.1
#                                      headers' (lanes/build-modules.sh, which keeps them while
#                                      sources and kernel are unchanged); a module that could not
#                                      be built for want of something has NAME.skip there instead
#                                      (one line why); returns 1 and prints nothing when a build
#                                      failed (the first compiler error is on stderr)

LANE_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
LANE_ROOTS=${GPUWATCH_VM_ROOTS:-/var/lib/gpuwatch/vm-roots}

lane_init() {
	LANE=${1:-${LANE:-debian12}}
	LANE_RW=() LANE_RO=()
	command -v vng >/dev/null || { echo "lane $LANE: vng not found: pip install virtme-ng (setup.sh)" >&2; return 2; }
	command -v qemu-system-x86_64 >/dev/null ||
		{ echo "lane $LANE: qemu-system-x86_64 not found: apt-get install qemu-system-x86 (setup.sh)" >&2; return 2; }
	case $LANE in
	debian12)
		LANE_ROOT=
		LANE_KERNEL=${KERNEL:-$(ls /boot/vmlinuz-6.1.*-amd64 2>/dev/null | sort -V | tail -n1)}
		[ -n "$LANE_KERNEL" ] && [ -r "$LANE_KERNEL" ] ||
			{ echo "lane debian12: no /boot/vmlinuz-6.1.*-amd64: apt-get install linux-image-amd64 (setup.sh)" >&2; return 2; }
		;;
	debian13)
		LANE_ROOT=$LANE_ROOTS/debian13
		[ -f "$LANE_ROOT/.gpuwatch-root" ] ||
			{ echo "lane debian13: no Debian 13 root at $LANE_ROOT: run setup.sh (vmtests/lanes/mkroot-debian13.sh)" >&2; return 2; }
		LANE_KERNEL=$(ls "$LANE_ROOT"/boot/vmlinuz-6.12.*-amd64 2>/dev/null | sort -V | tail -n1)
		[ -n "$LANE_KERNEL" ] || { echo "lane debian13: no 6.12 kernel in $LANE_ROOT/boot" >&2; return 2; }
		# this tree (scripts, checkers, the default build directory) at the same path
		LANE_RO+=("$LANE_SRC")
		;;
	*)
		echo "lane $LANE: unknown (debian12 or debian13)" >&2
		return 2
		;;
	esac
	LANE_KVER=${LANE_KERNEL##*/vmlinuz-}
	LANE_DESC="$LANE (kernel $LANE_KVER, $(lane_criu_version))"
}

# the CRIU the lane's guest runs
lane_criu_version() {
	local c
	if [ -n "$LANE_ROOT" ]; then
		c=$(chroot "$LANE_ROOT" criu --version 2>/dev/null | sed -n 's/^Version: //p')
	else
		c=$(criu --version 2>/dev/null | sed -n 's/^Version: //p')
	fi
	echo "CRIU ${c:-missing}"
}

lane_under() { # PATH DIR: PATH is DIR or below it
	case $1/ in "$2"/*) return 0 ;; esac
	return 1
}

lane_map() {
	local d
	d=$(cd "$1" && pwd) || return 1
	[ -z "$LANE_ROOT" ] && return 0
	local r
	for r in "${LANE_RO[@]}"; do lane_under "$d" "$r" && return 0; done
	LANE_RO+=("$d")
}

lane_out() {
	local d
	d=$(cd "$1" && pwd) || return 1
	case $d/ in
	/run/* | /var/tmp/* | /var/log/* | /var/cache/* | /dev/shm/*)
		# the guest mounts its own tmpfs there (debian12 lane); keep one rule for both lanes
		echo "lane: $d is under a directory the guest mounts its own tmpfs on: use another location" >&2
		return 2
		;;
	esac
	if [ -z "$LANE_ROOT" ]; then
		LANE_GUEST_OUT=$d
	else
		# virtme mounts every read-write directory before the read-only ones: a results
		# directory inside the mapped source tree would be hidden by it, so it gets a path of
		# its own in the guest
		LANE_GUEST_OUT=/gw-out${#LANE_RW[@]}
	fi
	LANE_RW+=("$LANE_GUEST_OUT=$d")
}

lane_boot() {
	local timeout=$1 memory=$2 console=$3 cmd=$4
	shift 4
	local args=(--disable-kvm --force-9p --memory "$memory" --cpus 2 --verbose
		"--qemu-opts=-accel tcg,thread=${LANE_TCG_THREAD:-single}"
		--append "no_timer_check rcupdate.rcu_task_stall_timeout=15000")
	# no_timer_check: on a loaded host a TCG boot can panic at 0.05 s ("IO-APIC + timer doesn't
	# work!"). thread=single: one host thread runs both vCPUs. With QEMU 7.2's multi-threaded
	# TCG the guest now and then locked up for good, both vCPUs spinning on the jump-label site
	# in syscall_trace_enter that a tracepoint attach was patching (vmtests/README.md, Hangs).
	local m g
	for m in "${LANE_RW[@]}"; do args+=(--rwdir "$m"); done
	for m in "${LANE_RO[@]}"; do args+=(--rodir "$m=$m"); done
	if [ -n "$LANE_ROOT" ]; then
		# mount points must exist in the root (it is ours: made by mkroot-debian13.sh)
		for m in "${LANE_RW[@]}" "${LANE_RO[@]/%/=}"; do
			g=${m%%=*}
			mkdir -p "$LANE_ROOT$g" || return 2
		done
		args+=(--root "$LANE_ROOT")
	fi
	timeout -k 10 "$timeout" vng --run "$LANE_KERNEL" "${args[@]}" "$@" -- "$cmd" </dev/null >"$console" 2>&1
}

lane_modules() {
	local build=$1
	if [ -z "$LANE_ROOT" ]; then
		echo "$build/vmtests"   # CMake builds them for the host's 6.1 headers
		return 0
	fi
	local dir=$build/lanes/$LANE
	"$LANE_SRC/vmtests/lanes/build-modules.sh" "$LANE_ROOT" "$dir" >&2 || return 1
	echo "$dir"
}

lane_results() {
	local d=$1
	# a previous results directory: its marker, an earlier version's, or the guest log they all had
	if [ -d "$d" ] && [ -n "$(ls -A "$d")" ] && [ ! -e "$d/.gpuwatch-results" ] && [ ! -e "$d/.vmtests-results" ] &&
		[ ! -e "$d/.vm-bench" ] && [ ! -e "$d/guest.log" ]; then
		echo "lane: $d exists and is not a previous results directory: refusing to empty it" >&2
		return 2
	fi
	# one run per results directory: a second run of the same suite and lane would empty the
	# first's directory under it (the lock is held until this shell exits)
	mkdir -p "$(dirname "$d")" && exec {LANE_LOCK_FD}>"$d.lock" || { echo "lane: cannot create $d.lock" >&2; return 2; }
	flock -n "$LANE_LOCK_FD" || { echo "lane: another run is using $d (lock $d.lock): wait for it" >&2; return 2; }
	rm -rf "$d" && mkdir -p "$d" && touch "$d/.gpuwatch-results" || { echo "lane: cannot create $d" >&2; return 2; }
	LANE_RESULTS=$(cd "$d" && pwd)
	lane_out "$LANE_RESULTS"
}

lane_run() {
	local suite=$1 timeout=$2 memory=$3 cmd=$4 out=$LANE_RESULTS
	shift 4
	local start pid rc ms first p f s
	start=$(date +%s%N)
	: >"$out/guest.log"
	rm -f "$out/summary" "$out/status"
	lane_boot "$timeout" "$memory" "$out/console.log" \
		"$cmd >$(printf %q "$LANE_GUEST_OUT/guest.log") 2>&1" "$@" &
	pid=$!
	tail -n +1 -F --pid="$pid" "$out/guest.log" 2>/dev/null
	wait "$pid"
	rc=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	printf '%s: lane %s: boot + suite took %d.%d s (guest uptime when the suite started: %s s)\n' "$suite" "$LANE" \
		$((ms / 1000)) $((ms % 1000 / 100)) "$(cat "$out/uptime-at-start" 2>/dev/null || echo '?')"
	if [ -s "$out/summary" ] && [ -s "$out/status" ]; then
		cat "$out/summary"
		[ "$(cat "$out/status")" = 0 ]
		return
	fi
	[ "$rc" = 124 ] && echo "$suite: the VM was killed after ${timeout}s"
	first=$(grep -nE 'INFO: task .* blocked|soft lockup|hard LOCKUP|rcu_tasks.*(stall|grace period)|BUG:|WARNING:|Oops' \
		"$out/console.log" | head -n 1 | cut -d: -f1)
	if [ -n "$first" ]; then
		echo "$suite: the guest kernel reported (from line $first of $out/console.log):"
		tail -n +"$first" "$out/console.log" | head -n 80 | sed 's/^/    /'
	fi
	echo "$suite: last lines of the VM console ($out/console.log):"
	tail -n 20 "$out/console.log" | sed 's/^/    /'
	echo "FAIL $suite: the VM reported no result (vng exit status $rc)"
	# what the guest finished before it went silent counts; the unfinished suite is one failure
	p=$(grep -c '^PASS ' "$out/guest.log") f=$(grep -c '^FAIL ' "$out/guest.log") s=$(grep -c '^SKIP ' "$out/guest.log")
	echo "$p passed, $((f + 1)) failed, $s skipped (the suite did not finish: its last line is above)"
	return 1
}
