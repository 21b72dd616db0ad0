#!/bin/bash
# The VM suite, host side: boots one lane's kernel once under virtme-ng (TCG) and runs every
# scenario of guest/scenarios.sh in it.
#
# usage: vmtests/run.sh [BUILD_DIR]          (as root)
#   BUILD_DIR (or env GPUWATCH_BUILD): where gpuwatch and the workloads were built. Looked up:
#     gpuwatch in BUILD_DIR/{,user/,bin/}gpuwatch; workloads (wl_*) in BUILD_DIR/{vmtests/,}
#     Override with env GPUWATCH=/path/gpuwatch and WL_DIR=/dir/of/wl_binaries.
#   env LANE=debian12|debian13  the stack to run on (lanes/lane.sh; default debian12)
#   env RESULTS=DIR     results (default BUILD_DIR/vmtests-results, BUILD_DIR/vmtests-results-LANE
#                       for a lane other than debian12; emptied first)
#   env ONLY="a b"      only these scenarios
#   env HOOK_PATHS="tracepoint fexit"  the hook paths the per-path scenarios run under (default:
#                       both on debian12, where their manifests are compared; tracepoint on
#                       debian13, whose CRIU scenarios run gpuwatch's own choice, fexit)
#   env VM_TIMEOUT=S    bound on boot + suite (default 3600)
#   env KERNEL=PATH     debian12 lane: kernel image (default: the newest /boot/vmlinuz-6.1.*-amd64)
#   env NO_TEST_MODULES=1  the guest needs no test kernel module (the demo)
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
. "$here/lanes/lane.sh"
lane_init || exit 2

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
[ -n "${WL_DIR:-}" ] && [ -d "$WL_DIR" ] ||
	die "workloads not found in $build/vmtests or $build: cmake --build $build"
[ -x "$GPUWATCH" ] || echo "vmtests/run.sh: note: $GPUWATCH is missing: scenarios will SKIP" >&2

suffix=
[ "$LANE" = debian12 ] || suffix=-$LANE
lane_results "${RESULTS:-$build/vmtests-results$suffix}" || exit 2
# The guest sees the host's root (or the lane's) read-only over 9p, but these are its own tmpfs mounts.
for p in "$GPUWATCH" "$WL_DIR" "$here"; do
	case $p in
	/run/* | /var/tmp/* | /var/log/* | /var/cache/* | /dev/shm/*)
		die "$p is under a directory the guest mounts its own tmpfs on: use another location" ;;
	esac
	[ -e "$p" ] && { lane_map "$(dirname "$p")" || die "cannot map $p into the guest"; }
done
[ "${NO_TEST_MODULES:-0}" = 1 ] || KO_DIR=$(lane_modules "$build") || echo "vmtests/run.sh: note: no test modules for $LANE: the i915 and xe scenarios will SKIP" >&2

hook_paths=${HOOK_PATHS:-tracepoint fexit}
[ "$LANE" = debian12 ] || hook_paths=${HOOK_PATHS:-tracepoint}
guest_cmd=$(printf '%s LANE=%q GPUWATCH=%q WL_DIR=%q KO_DIR=%q RESULTS=%q ONLY=%q HOOK_PATHS=%q bash %q' \
	"${GUEST_ENV:-}" "$LANE" "$GPUWATCH" "$WL_DIR" "${KO_DIR:-$WL_DIR}" "$LANE_GUEST_OUT" "${ONLY:-}" "$hook_paths" \
	"${GUEST_SCRIPT:-$here/guest/run-scenarios.sh}")
echo "vmtests: lane $LANE_DESC, results in $LANE_RESULTS"
# A bochs display device, its driver blacklisted for udev: the criu_scratch_device scenario
# loads it (PCI 1234:1111 takes card0 when loaded before vgem). A virtio-gpu device, its driver
# blacklisted too, and qxl and cirrus-vga: the criu_kms_* scenarios load them (guest/kms.sh). Their pictures:
# a QMP socket, and screendump.py taking screendumps when a scenario asks (results/screendump).
qmp_dir=$(mktemp -d /tmp/gw-qmp.XXXXXX) || die "cannot make a directory for the QMP socket"
mkdir -p "$LANE_RESULTS/screendump" && python3 "$here/screendump.py" "$qmp_dir/qmp.sock" "$LANE_RESULTS/screendump" 2>"$LANE_RESULTS/screendump.log" &
shot_pid=$!
rc=0
lane_run vmtests "${VM_TIMEOUT:-3600}" 1G "$guest_cmd" \
	--qemu-opts="-device bochs-display,id=gwbochs -device virtio-gpu-pci,id=gwvgpu -device qxl,id=gwqxl -device cirrus-vga,id=gwcirrus -qmp unix:$qmp_dir/qmp.sock,server=on,wait=off" \
	--append modprobe.blacklist=bochs,virtio_gpu,qxl,cirrus || rc=$?
kill "$shot_pid" 2>/dev/null
wait "$shot_pid" 2>/dev/null
rm -rf "$qmp_dir"
exit "$rc"
