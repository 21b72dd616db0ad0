#!/bin/bash
# The VM benchmarks, host side: boots Debian's kernel once under virtme-ng (TCG) and runs
# every measurement in that boot (guest.sh), then prints the tables and writes
# OUT_DIR/vm-bench.json (report.py). Benchmarks print numbers: they never fail on speed.
#
# usage: vmtests/bench/run.sh BUILD_DIR [OUT_DIR]       (as root; OUT_DIR: BUILD_DIR/vm-bench)
#   BUILD_DIR: where gpuwatch, the CRIU plugin and BUILD_DIR/vmtests/bench_* were built
#   env KERNEL=PATH      kernel image (default: the newest /boot/vmlinuz-*-amd64)
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
command -v vng >/dev/null || die "vng not found: pip install virtme-ng (see setup.sh)"
kernel=${KERNEL:-$(ls /boot/vmlinuz-*-amd64 2>/dev/null | sort -V | tail -n1)}
[ -n "$kernel" ] && [ -r "$kernel" ] || die "no /boot/vmlinuz-*-amd64: apt-get install linux-image-amd64"
gpuwatch=
for c in "$build/gpuwatch" "$build/user/gpuwatch" "$build/bin/gpuwatch"; do
	[ -x "$c" ] && { gpuwatch=$c; break; }
done
[ -n "$gpuwatch" ] || die "no gpuwatch in $build: cmake --build $build"
for b in bench_ioctl bench_syscall bench_hold bench_floor; do
	[ -x "$build/vmtests/$b" ] || die "$build/vmtests/$b missing: cmake --build $build"
done

out=${2:-$build/vm-bench}
if [ -d "$out" ] && [ -n "$(ls -A "$out")" ] && [ ! -e "$out/.vm-bench" ]; then
	die "$out exists and is not a previous vm-bench directory: refusing to empty it"
fi
rm -rf "$out" && mkdir -p "$out" && touch "$out/.vm-bench" || die "cannot create $out"
out=$(cd "$out" && pwd)
case $out in
/run/* | /var/tmp/* | /var/log/* | /var/cache/* | /dev/shm/*) die "$out is under a directory the guest mounts a tmpfs on" ;;
esac

guest_cmd=$(printf '%s GPUWATCH=%q WL_DIR=%q OUT=%q bash %q >%q 2>&1' \
	"${GUEST_ENV:-}" "$gpuwatch" "$build/vmtests" "$out" "$here/guest.sh" "$out/guest.log")
echo "vm-bench: kernel $kernel, results in $out"
start=$(date +%s)
timeout -k 10 "${VM_TIMEOUT:-2400}" vng --run "$kernel" --disable-kvm --force-9p --memory "${VM_MEMORY:-3G}" \
	--cpus 2 --rwdir "$out" -- "$guest_cmd" </dev/null >"$out/console.log" 2>&1 &
vng_pid=$!
touch "$out/guest.log"
tail -n +1 -F --pid="$vng_pid" "$out/guest.log" 2>/dev/null
wait "$vng_pid"
rc=$?
echo "vm-bench: boot + benchmarks took $(($(date +%s) - start)) s (vng exit status $rc)"
if [ ! -s "$out/raw.tsv" ]; then
	echo "vm-bench: no measurements from the VM; last lines of $out/console.log:"
	tail -n 20 "$out/console.log" | sed 's/^/    /'
	exit 1
fi
[ -e "$out/guest-done" ] || echo "vm-bench: WARNING: the guest did not finish (partial results below)"
machine="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1), $(nproc) cores, host $(uname -r)"
echo
python3 "$here/report.py" "$out/raw.tsv" --json "$out/vm-bench.json" \
	--meta "date=$(date -u +%Y-%m-%d)" --meta "machine=$machine" --meta "vm=vng TCG --cpus 2 --memory ${VM_MEMORY:-3G}" ||
	exit 1
echo
echo "vm-bench: JSON in $out/vm-bench.json"
[ -e "$out/guest-done" ] || exit 1
exit 0
