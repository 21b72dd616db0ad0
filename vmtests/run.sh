#!/bin/bash
# The VM suite, host side: boots Debian's kernel once under virtme-ng (TCG) and runs every
# scenario of guest/scenarios.sh in it.
#
# usage: vmtests/run.sh [BUILD_DIR]          (as root)
#   BUILD_DIR (or env GPUWATCH_BUILD): where gpuwatch and the workloads were built. Looked up:
#     gpuwatch in BUILD_DIR/{,user/,bin/}gpuwatch; workloads (wl_*) in BUILD_DIR/{vmtests/,}
#     Override with env GPUWATCH=/path/gpuwatch and WL_DIR=/dir/of/wl_binaries.
#   env RESULTS=DIR     results (default BUILD_DIR/vmtests-results, emptied first)
#   env ONLY="a b"      only these scenarios
#   env VM_TIMEOUT=S    bound on boot + suite (default 1800)
#   env KERNEL=PATH     kernel image (default: the newest /boot/vmlinuz-*-amd64)
#   env GUEST_ENV="K=V ..."  extra environment for the guest side (e.g. SETTLE_TIMEOUT=20)
#   env GUEST_SCRIPT=PATH    guest-side script (default guest/run-scenarios.sh; the demo
#                            uses guest/demo.sh); it writes RESULTS/summary and RESULTS/status
# Prints the guest's output live, the time taken, then the guest's summary line
# ("N passed, N failed, N skipped") last. Exit: 0 all passed/skipped, 1 failures or no result
# from the VM, 2 bad setup.
set -u

die() { echo "vmtests/run.sh: $*" >&2; exit 2; }

here=$(cd "$(dirname "$0")" && pwd)
build=${1:-${GPUWATCH_BUILD:-}}
[ -n "$build" ] || die "usage: $0 BUILD_DIR (where gpuwatch and the vmtests workloads were built)"
[ -d "$build" ] || die "build directory $build does not exist"
build=$(cd "$build" && pwd)
[ "$(id -u)" = 0 ] || die "must run as root (the guest runs as the invoking user and needs root)"
command -v vng >/dev/null || die "vng not found: pip install virtme-ng (see setup script)"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 not found: apt-get install qemu-system-x86"

kernel=${KERNEL:-$(ls /boot/vmlinuz-*-amd64 2>/dev/null | sort -V | tail -n1)}
[ -n "$kernel" ] && [ -r "$kernel" ] || die "no /boot/vmlinuz-*-amd64: apt-get install linux-image-amd64"

if [ -z "${GPUWATCH:-}" ]; then
	GPUWATCH=$build/gpuwatch
	for c in "$build/gpuwatch" "$build/user/gpuwatch" "$build/bin/gpuwatch"; do
		[ -x "$c" ] && { GPUWATCH=$c; break; }
	done
fi
if [ -z "${WL_DIR:-}" ]; then
	for c in "$build/vmtests" "$build"; do
		[ -x "$c/wl_hold" ] && { WL_DIR=$c; break; }
	done
fi
[ -n "${WL_DIR:-}" ] && [ -x "$WL_DIR/wl_hold" ] ||
	die "workloads not found in $build/vmtests or $build: cmake --build $build"
[ -x "$GPUWATCH" ] || echo "vmtests/run.sh: note: $GPUWATCH is missing: scenarios will SKIP" >&2

RESULTS=${RESULTS:-$build/vmtests-results}
if [ -d "$RESULTS" ] && [ -n "$(ls -A "$RESULTS")" ] && [ ! -e "$RESULTS/.vmtests-results" ]; then
	die "$RESULTS exists and is not a previous results directory: refusing to empty it"
fi
rm -rf "$RESULTS" && mkdir -p "$RESULTS" && touch "$RESULTS/.vmtests-results" || die "cannot create $RESULTS"
RESULTS=$(cd "$RESULTS" && pwd)
# The guest sees the host's root read-only over 9p, but these are its own tmpfs mounts.
for p in "$GPUWATCH" "$WL_DIR" "$here" "$RESULTS"; do
	case $p in
	/run/* | /var/tmp/* | /var/log/* | /var/cache/* | /dev/shm/*)
		die "$p is under a directory the guest mounts its own tmpfs on: use another location" ;;
	esac
done

guest_cmd=$(printf '%s GPUWATCH=%q WL_DIR=%q RESULTS=%q ONLY=%q bash %q >%q 2>&1' \
	"${GUEST_ENV:-}" "$GPUWATCH" "$WL_DIR" "$RESULTS" "${ONLY:-}" "${GUEST_SCRIPT:-$here/guest/run-scenarios.sh}" "$RESULTS/guest.log")
echo "vmtests: kernel $kernel, results in $RESULTS"
start=$(date +%s%N)
# --verbose: the guest kernel's console goes to console.log, so that a wedged guest leaves its
# hung-task, soft-lockup and RCU-stall reports there (rcu_tasks stalls after 60 s, not 10 min).
# thread=single: one host thread runs both vCPUs. With QEMU 7.2's default multi-threaded TCG the
# guest now and then locked up for good with both vCPUs spinning on the same jump-label site in
# syscall_trace_enter while a tracepoint was being attached (soft lockups in console.log): code
# patched by one vCPU while the other executes it. Costs 5-15% (main suite 795 -> 835 s).
timeout -k 10 "${VM_TIMEOUT:-1800}" vng --run "$kernel" --disable-kvm --force-9p --memory 1G --cpus 2 \
	--verbose --append "rcupdate.rcu_task_stall_timeout=15000" "--qemu-opts=-accel tcg,thread=single" \
	--rwdir "$RESULTS" -- "$guest_cmd" </dev/null >"$RESULTS/console.log" 2>&1 &
vng_pid=$!
touch "$RESULTS/guest.log"
tail -n +1 -F --pid="$vng_pid" "$RESULTS/guest.log" 2>/dev/null
wait "$vng_pid"
vng_rc=$?
end=$(date +%s%N)

boot=$(cat "$RESULTS/uptime-at-start" 2>/dev/null || echo "?")
ms=$(((end - start) / 1000000))
printf 'vmtests: boot + suite took %d.%d s (guest uptime when the suite started: %s s)\n' \
	$((ms / 1000)) $((ms % 1000 / 100)) "$boot"
if [ ! -s "$RESULTS/summary" ] || [ ! -s "$RESULTS/status" ]; then
	[ $vng_rc = 124 ] && echo "vmtests: the VM was killed after ${VM_TIMEOUT:-1800}s"
	first=$(grep -nE 'INFO: task .* blocked|soft lockup|hard LOCKUP|rcu_tasks.*(stall|grace period)|BUG:|WARNING:|Oops' \
		"$RESULTS/console.log" | head -n 1 | cut -d: -f1)
	if [ -n "$first" ]; then
		echo "vmtests: the guest kernel reported (from line $first of $RESULTS/console.log):"
		tail -n +"$first" "$RESULTS/console.log" | head -n 80 | sed 's/^/    /'
	fi
	echo "vmtests: last lines of the VM console ($RESULTS/console.log):"
	tail -n 20 "$RESULTS/console.log" | sed 's/^/    /'
	echo "FAIL: the VM reported no result (vng exit status $vng_rc)"
	# what the guest finished before it went silent counts; the unfinished suite is one failure
	p=$(grep -c '^PASS ' "$RESULTS/guest.log") f=$(grep -c '^FAIL ' "$RESULTS/guest.log")
	s=$(grep -c '^SKIP ' "$RESULTS/guest.log")
	echo "$p passed, $((f + 1)) failed, $s skipped (the suite did not finish: last scenario line above)"
	exit 1
fi
cat "$RESULTS/summary"
exit "$(cat "$RESULTS/status")"
