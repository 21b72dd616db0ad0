#!/bin/bash
# The plugin's own VM check (run by tests/run-all.sh after the main suite): boots one lane's
# kernel under virtme-ng, loads vgem and runs guest_criu.sh, which dumps and restores
# wl_criu_scratch with the plugin (with gpuwatch's manifest, in degraded mode without one,
# from damaged images, onto another node of the same driver). Prints PASS/FAIL per case and
# ends with "N passed, N failed, N skipped" and "ALL PASS" on success.
#
# usage: vmtests/plugin/vm_criu.sh BUILD_DIR [OUT_DIR]      (as root)
#   env LANE=debian12|debian13   the stack (vmtests/lanes/lane.sh; default debian12)
#   env CASES="daemon manifest degraded corrupt predump criuargs device"   which cases
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: $0 BUILD_DIR [OUT_DIR]}" && pwd)
. "$here/../lanes/lane.sh"
lane_init || { echo "FAIL plugin-vm: lane ${LANE:-debian12} unavailable"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
out=${2:-$build/plugin-vm-results-$LANE}
rm -rf "$out" && mkdir -p "$out"
out=$(cd "$out" && pwd)
lane_map "$build" && lane_out "$out" || { echo "0 passed, 1 failed, 0 skipped"; exit 1; }
cmd=$(printf 'CASES=%q bash %q %q %q >%q 2>&1' "${CASES:-daemon manifest degraded corrupt predump criuargs device}" \
	"$here/guest_criu.sh" "$build" "$LANE_GUEST_OUT" "$LANE_GUEST_OUT/guest.log")
echo "plugin-vm: lane $LANE_DESC, results in $out"
start=$SECONDS
# A bochs display device: its DRM driver (bochs, PCI 1234:1111) takes card0 when loaded
# before vgem (the "device" case). Blacklisted for udev's autoload: only that case loads it.
lane_boot "${VM_TIMEOUT:-900}" 1G "$out/console.log" "$cmd" \
	--qemu-opts="-device bochs-display" --append modprobe.blacklist=bochs
cat "$out/guest.log" 2>/dev/null
echo "plugin-vm: boot + cases took $((SECONDS - start)) s"
grep -q '^[0-9]* passed, [0-9]* failed' "$out/guest.log" 2>/dev/null ||
	{ echo "FAIL plugin-vm: the VM reported no result (see $out/console.log)"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
grep -q '^ALL PASS' "$out/guest.log"
