#!/bin/bash
# The VM benchmarks, host side: boots Debian's kernel once under virtme-ng (TCG) and runs
# every measurement in that boot (guest.sh), then prints the tables and writes
# OUT_DIR/vm-bench.json (report.py). Benchmarks print numbers: they never fail on speed.
#
# usage: vmtests/bench/run.sh BUILD_DIR [OUT_DIR]       (as root; OUT_DIR: BUILD_DIR/vm-bench)
#   BUILD_DIR: where gpuwatch, the CRIU plugin and BUILD_DIR/vmtests/bench_* were built
#   env LANE=debian12|debian13   the stack (vmtests/lanes/lane.sh; default debian12)
#   env KERNEL=PATH      debian12 lane: kernel image (default: the newest /boot/vmlinuz-6.1.*-amd64)
#   env VM_MEMORY=3G     guest RAM (the 256 MiB cells hold the workload and its image in it)
#   env VM_TIMEOUT=S     bound on boot + benchmarks (default 2400)
#   env GUEST_ENV="K=V ..."  guest.sh's knobs, e.g. "SECTIONS=criu CELLS='1:4 1000:4'"
#                        (PAIRS, CRIU_PAIRS, HOOK_PATHS, IOCTL_MODES, SYSCALL_MODES, RUN_MS,
#                        BURST_IOCTLS, SMALL_RING, IMAGES=tmpfs|9p: see guest.sh)
# Exit: 0 when the VM produced results (whatever the figures), 1 when it did not, 2 bad setup.
set -u

die() { echo "vmtests/bench/run.sh: $*" >&2; exit 2; }

here=$(cd "$(dirname "$0")" && pwd)
build=${1:-}
[ -n "$build" ] && [ -d "$build" ] || die "usage: $0 BUILD_DIR [OUT_DIR]"
build=$(cd "$build" && pwd)
[ "$(id -u)" = 0 ] || die "must run as root"
. "$here/../lanes/lane.sh"
lane_init || exit 2
gpuwatch=
for c in "$build/gpuwatch" "$build/user/gpuwatch" "$build/bin/gpuwatch"; do
	[ -x "$c" ] && { gpuwatch=$c; break; }
done
[ -n "$gpuwatch" ] || die "no gpuwatch in $build: cmake --build $build"
for b in bench_ioctl bench_syscall bench_hold bench_floor bench_fault bench_action; do
	[ -x "$build/vmtests/$b" ] || die "$build/vmtests/$b missing: cmake --build $build"
done

lane_results "${2:-$build/vm-bench}" && lane_map "$build" || exit 2
out=$LANE_RESULTS
guest_cmd=$(printf '%s GPUWATCH=%q WL_DIR=%q OUT=%q bash %q' \
	"${GUEST_ENV:-}" "$gpuwatch" "$build/vmtests" "$LANE_GUEST_OUT" "$here/guest.sh")
echo "vm-bench: lane $LANE_DESC, results in $out"
# multi-threaded TCG, unlike the test suites: the figures stay comparable with earlier runs.
# One line per section ("PASS section_criu (N s)": it ran to its end) and a summary.
LANE_TCG_THREAD=multi lane_run vm-bench "${VM_TIMEOUT:-2400}" "${VM_MEMORY:-3G}" "$guest_cmd"
vm_rc=$? # 0: every section ran to its end
[ -s "$out/raw.tsv" ] || { echo "vm-bench: no measurements from the VM"; exit 1; }
[ $vm_rc = 0 ] || echo "vm-bench: WARNING: a section failed or the guest did not finish (partial results below)"
machine="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1), $(nproc) cores, host $(uname -r)"
echo
python3 "$here/report.py" "$out/raw.tsv" --json "$out/vm-bench.json" \
	--meta "date=$(date -u +%Y-%m-%d)" --meta "machine=$machine" --meta "vm=vng TCG --cpus 2 --memory ${VM_MEMORY:-3G}" --meta "lane=$LANE_DESC" ||
	exit 1
echo
echo "vm-bench: JSON in $out/vm-bench.json"
exit $((vm_rc != 0))
