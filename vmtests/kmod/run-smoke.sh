#!/bin/bash
# Host side of a test fixture module's smoke test (vmtests/i915test, vmtests/xetest), on a VM
# lane (vmtests/lanes/lane.sh): builds the smoke program on this host (Debian 12) with the
# fixture's build.sh into RESULTS_DIR, gets the module for the lane's kernel (debian12: built by
# that build.sh against the 6.1 headers, as before; another lane: lane_modules, i.e.
# lanes/build-modules.sh in the lane's root, into RESULTS_DIR/lanes/LANE), boots the lane's
# kernel once under virtme-ng (TCG), loads the module (after vgem, as the gpuwatch suite has it,
# so it is not minor 0), checks its sysfs nodes, runs the smoke program, unloads the module;
# then, when gwdummy.ko was built for that kernel, checks that gwdummy loaded before vgem takes
# card0 and leaves vgem card1 and renderD128 (criu_minor_changed's setup), and unloads both;
# last it checks the kernel log. Run as root.
#
# usage: vmtests/kmod/run-smoke.sh MODULE DRIVER SMOKE BUILD_SH RESULTS_DIR
#   (MODULE gwi915, DRIVER i915: the DRM driver name it registers, SMOKE: the program
#    BUILD_SH leaves in RESULTS_DIR); the fixtures' own run-smoke.sh fill these in
#   env LANE=NAME         debian12 (default: Debian 12's 6.1 over this host's root) or debian13
#                         (the Debian 13 root, kernel 6.12); see vmtests/lanes/lane.sh
#   env KERNEL=PATH       kernel image of the debian12 lane (default: the newest
#                         /boot/vmlinuz-6.1.*-amd64)
#   env VM_TIMEOUT=S      bound on boot + test (default 300)
# Prints the guest's PASS/FAIL lines, the time taken and a summary. Exit: 0 all passed,
# 1 a failure or no result from the VM, 2 missing prerequisite.
set -u

die() { echo "run-smoke.sh: $*" >&2; exit 2; }

[ $# = 5 ] || die "usage: $0 MODULE DRIVER SMOKE BUILD_SH RESULTS_DIR"
module=$1 driver=$2 smoke=$3 build_sh=$4 results=$5
here=$(cd "$(dirname "$0")" && pwd)
[ "$(id -u)" = 0 ] || die "must run as root (the guest loads a module)"
. "$here/../lanes/lane.sh"
lane_init || exit 2

mkdir -p "$results" || die "cannot create $results"
results=$(cd "$results" && pwd)
# not lane_results: the smoke program and the modules are built into it first
lane_out "$results" || exit 2
LANE_RESULTS=$results
rm -f "$results"/guest.log "$results"/summary "$results"/status "$results"/smoke.log "$results"/dmesg.txt
if [ -z "$LANE_ROOT" ]; then
	# the lane boots this host's root: the module is built against the 6.1 headers here
	KDIR=/lib/modules/$LANE_KVER/build "$build_sh" "$results" || exit $?
	ko_dir=$results
	# gwdummy.ko too, for the minor check (without headers: gwdummy.skip, the check is not run)
	rm -f "$results/gwdummy.skip"
	"$here/gwdummy/build.sh" "$results" >/dev/null 2>"$results/gwdummy.err"
	case $? in
	0) ;;
	2) mv "$results/gwdummy.err" "$results/gwdummy.skip" ;;
	*) cat "$results/gwdummy.err" >&2; exit 1 ;;
	esac
	rm -f "$results/gwdummy.err"
else
	# the smoke program is built here (Debian 12) and runs in the lane's root unchanged; the
	# modules are built in that root for its kernel
	SMOKE_ONLY=1 "$build_sh" "$results" || exit $?
	ko_dir=$(lane_modules "$results") || { echo "run-smoke.sh: building the modules for $LANE_DESC failed" >&2; exit 1; }
	[ -e "$ko_dir/$module.ko" ] || die "no $module.ko for $LANE_DESC: $(cat "$ko_dir/$module.skip" 2>/dev/null)"
fi
[ "$(modinfo -F vermagic "$ko_dir/$module.ko" | cut -d' ' -f1)" = "$LANE_KVER" ] ||
	die "$ko_dir/$module.ko was not built for $LANE_KVER"
# the guest's path of the modules: under the results directory, or mapped read-only as it is
if lane_under "$ko_dir" "$results"; then
	guest_ko_dir=$LANE_GUEST_OUT${ko_dir#"$results"}
else
	lane_map "$ko_dir" || die "cannot map $ko_dir into the guest"
	guest_ko_dir=$ko_dir
fi

cat >"$results/guest.sh" <<'GUEST'
# runs inside the VM: $1 = results directory (shared with the host), $2 module, $3 driver,
# $4 smoke program, $5 the directory of the modules built for this kernel, $6 guest/common.sh
cd "$1" || exit 1
module=$2 driver=$3 smoke=$4 ko_dir=$5
. "$6"
guest_begin "$1" 120
# each check is one result line: passed NAME, or failed NAME WHY
passed() { REASON=; t_result "$1" 0 0; }
failed() { REASON=$2; t_result "$1" 1 0; }
node_driver() { basename "$(readlink "/sys/class/drm/$1/device" 2>/dev/null)" 2>/dev/null; }
echo "guest: $(uname -r), up $(cut -d' ' -f1 /proc/uptime) s"
dmesg -C 2>/dev/null
modprobe vgem 2>/dev/null && echo "guest: vgem loaded first: $(ls /dev/dri | tr '\n' ' ')"
if modprobe drm_shmem_helper && insmod "$ko_dir/$module.ko" 2>insmod.err; then
	passed insmod
	sleep 0.2
	card=$(basename "$(ls -d "/sys/bus/platform/devices/$module/drm/card"* 2>/dev/null | head -n1)")
	drv=$(basename "$(readlink "/sys/bus/platform/devices/$module/driver")")
	if [ -n "$card" ] && [ "$drv" = "$driver" ] && [ -c "/dev/dri/$card" ]; then
		passed "sysfs_nodes ($card, platform driver $drv)"
	else
		failed sysfs_nodes "expected /dev/dri/cardN of platform device $module bound to driver $driver, got card '$card' driver '$drv'"
	fi
	"./$smoke" "/dev/dri/$card" >smoke.log 2>&1
	rc=$?
	grep -E '^(PASS|FAIL)' smoke.log | sed 's/^/    smoke: /'
	tail -n1 smoke.log | grep -q ' passed, 0 failed$' && [ $rc = 0 ] ||
		failed smoke "exit status $rc: $(tail -n1 smoke.log)"
	if rmmod "$module" 2>rmmod.err; then passed rmmod; else failed rmmod "$(cat rmmod.err)"; fi
else
	failed insmod "$(cat insmod.err 2>/dev/null)"
fi
# gwdummy before vgem: card0 = gwdummy, card1 = vgem, renderD128 = vgem
if [ -e "$ko_dir/gwdummy.ko" ]; then
	if rmmod vgem 2>rmmod.err && insmod "$ko_dir/gwdummy.ko" 2>insmod.err && modprobe vgem; then
		for _ in $(seq 50); do [ -c /dev/dri/card1 ] && [ -c /dev/dri/renderD128 ] && break; sleep 0.1; done
		got="card0=$(node_driver card0) card1=$(node_driver card1) renderD128=$(node_driver renderD128)"
		if [ "$got" = "card0=gwdummy card1=vgem renderD128=vgem" ]; then
			passed "gwdummy_minor ($got)"
		else
			failed gwdummy_minor "expected card0=gwdummy card1=vgem renderD128=vgem, got $got"
		fi
		rmmod vgem && rmmod gwdummy 2>rmmod.err || failed gwdummy_rmmod "$(cat rmmod.err)"
	else
		failed gwdummy_minor "$(cat rmmod.err insmod.err 2>/dev/null | head -n1)"
	fi
else
	echo "guest: no gwdummy.ko in $ko_dir ($(cat "$ko_dir/gwdummy.skip" 2>/dev/null)): its minor check not run"
fi
dmesg >dmesg.txt 2>&1
if grep -qE 'BUG:|WARNING:|general protection|Oops|refcount_t|use-after-free' dmesg.txt; then
	failed kernel_log "$(grep -m1 -E 'BUG:|WARNING:|general protection|Oops|refcount_t|use-after-free' dmesg.txt)"
else
	passed kernel_log
fi
echo "guest: done, up $(cut -d' ' -f1 /proc/uptime) s"
t_finish
GUEST

echo "run-smoke: lane $LANE_DESC, kernel $LANE_KERNEL, modules in $ko_dir, results in $results"
g=$LANE_GUEST_OUT
cmd=$(printf 'bash %q %q %q %q %q %q %q' "$g/guest.sh" "$g" "$module" "$driver" "$smoke" "$guest_ko_dir" \
	"$LANE_SRC/vmtests/guest/common.sh")
lane_run run-smoke "${VM_TIMEOUT:-300}" 1G "$cmd"
