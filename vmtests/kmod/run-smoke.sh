#!/bin/bash
# Host side of a test fixture module's smoke test (vmtests/i915test, vmtests/xetest): builds
# the module and its smoke program with the fixture's build.sh into RESULTS_DIR, boots
# Debian's 6.1 kernel once under virtme-ng (TCG), loads the module (after vgem, as the
# gpuwatch suite has it, so it is not minor 0), checks its sysfs nodes, runs the smoke
# program, unloads the module and checks the kernel log. Run as root.
#
# usage: vmtests/kmod/run-smoke.sh MODULE DRIVER SMOKE BUILD_SH RESULTS_DIR
#   (MODULE gwi915, DRIVER i915: the DRM driver name it registers, SMOKE: the program
#    BUILD_SH leaves in RESULTS_DIR); the fixtures' own run-smoke.sh fill these in
#   env KERNEL=PATH       kernel image (default: the newest /boot/vmlinuz-6.1.*-amd64)
#   env VM_TIMEOUT=S      bound on boot + test (default 300)
# Prints the guest's PASS/FAIL lines, the time taken and a summary. Exit: 0 all passed,
# 1 a failure or no result from the VM, 2 missing prerequisite.
set -u

die() { echo "run-smoke.sh: $*" >&2; exit 2; }

[ $# = 5 ] || die "usage: $0 MODULE DRIVER SMOKE BUILD_SH RESULTS_DIR"
module=$1 driver=$2 smoke=$3 build_sh=$4 results=$5
[ "$(id -u)" = 0 ] || die "must run as root (the guest loads a module)"
command -v vng >/dev/null || die "vng not found: pip install virtme-ng"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 not found: apt-get install qemu-system-x86"
kernel=${KERNEL:-$(ls /boot/vmlinuz-6.1.*-amd64 2>/dev/null | sort -V | tail -n1)}
[ -n "$kernel" ] && [ -r "$kernel" ] || die "no /boot/vmlinuz-6.1.*-amd64: apt-get install linux-image-amd64"
kver=${kernel##*/vmlinuz-}
case $results in
/run/* | /var/tmp/* | /var/log/* | /var/cache/* | /dev/shm/*)
	die "$results is under a directory the guest mounts its own tmpfs on: use another location" ;;
esac

mkdir -p "$results" || die "cannot create $results"
results=$(cd "$results" && pwd)
rm -f "$results"/guest.log "$results"/status "$results"/smoke.log "$results"/dmesg.txt
KDIR=/lib/modules/$kver/build "$build_sh" "$results" || exit $?
[ "$(modinfo -F vermagic "$results/$module.ko" | cut -d' ' -f1)" = "$kver" ] ||
	die "$module.ko was not built for $kver"

cat >"$results/guest.sh" <<'GUEST'
# runs inside the VM: $1 = results directory (shared with the host), $2 module, $3 driver,
# $4 smoke program
cd "$1" || exit 1
module=$2 driver=$3 smoke=$4
fails=0
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; fails=$((fails + 1)); }
echo "guest: $(uname -r), up $(cut -d' ' -f1 /proc/uptime) s"
dmesg -C 2>/dev/null
modprobe vgem 2>/dev/null && echo "guest: vgem loaded first: $(ls /dev/dri | tr '\n' ' ')"
if modprobe drm_shmem_helper && insmod "./$module.ko" 2>insmod.err; then
	pass insmod
	sleep 0.2
	card=$(basename "$(ls -d "/sys/bus/platform/devices/$module/drm/card"* 2>/dev/null | head -n1)")
	drv=$(basename "$(readlink "/sys/bus/platform/devices/$module/driver")")
	if [ -n "$card" ] && [ "$drv" = "$driver" ] && [ -c "/dev/dri/$card" ]; then
		pass "sysfs_nodes ($card, platform driver $drv)"
	else
		fail sysfs_nodes "expected /dev/dri/cardN of platform device $module bound to driver $driver, got card '$card' driver '$drv'"
	fi
	"./$smoke" "/dev/dri/$card" >smoke.log 2>&1
	rc=$?
	grep -E '^(PASS|FAIL)' smoke.log
	tail -n1 smoke.log | grep -q ' passed, 0 failed$' && [ $rc = 0 ] ||
		fail smoke "exit status $rc: $(tail -n1 smoke.log)"
	if rmmod "$module" 2>rmmod.err; then pass rmmod; else fail rmmod "$(cat rmmod.err)"; fi
else
	fail insmod "$(cat insmod.err 2>/dev/null)"
fi
dmesg >dmesg.txt 2>&1
if grep -qE 'BUG:|WARNING:|general protection|Oops|refcount_t|use-after-free' dmesg.txt; then
	fail kernel_log "$(grep -m1 -E 'BUG:|WARNING:|general protection|Oops|refcount_t|use-after-free' dmesg.txt)"
else
	pass kernel_log
fi
echo "guest: done, up $(cut -d' ' -f1 /proc/uptime) s"
echo $fails >status
GUEST

echo "run-smoke: kernel $kernel, results in $results"
start=$(date +%s%N)
cmd=$(printf 'bash %q %q %q %q %q >%q 2>&1' "$results/guest.sh" "$results" "$module" "$driver" "$smoke" "$results/guest.log")
timeout -k 10 "${VM_TIMEOUT:-300}" vng --run "$kernel" --disable-kvm "--qemu-opts=-accel tcg,thread=single" --force-9p --memory 1G --cpus 2 \
	--rwdir "$results" -- "$cmd" </dev/null >"$results/console.log" 2>&1
vng_rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
cat "$results/guest.log" 2>/dev/null
printf 'run-smoke: boot + test took %d.%d s\n' $((ms / 1000)) $((ms % 1000 / 100))
if [ ! -s "$results/status" ]; then
	echo "run-smoke: last lines of the VM console ($results/console.log):"
	tail -n 20 "$results/console.log" | sed 's/^/    /'
	echo "FAIL: the VM reported no result (vng exit status $vng_rc)"
	exit 1
fi
npass=$(grep -c '^PASS' "$results/guest.log")
nfail=$(grep -c '^FAIL' "$results/guest.log")
echo "$npass passed, $nfail failed"
[ "$(cat "$results/status")" = 0 ] && [ "$nfail" = 0 ]
