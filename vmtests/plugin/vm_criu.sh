#!/bin/bash
# The plugin's own VM check (run by tests/run-all.sh after the main suite): boots Debian's kernel under virtme-ng,
# loads vgem and runs guest_criu.sh, which dumps and restores wl_criu_scratch with the plugin
# (with gpuwatch's manifest, in degraded mode without one, from damaged images, onto another
# node of the same driver). Prints PASS/FAIL per case and ends with "ALL PASS" on success.
#
# usage: vmtests/plugin/vm_criu.sh BUILD_DIR [OUT_DIR]      (as root)
#   env CASES="daemon manifest degraded corrupt device big"   which cases (see guest_criu.sh)
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: $0 BUILD_DIR [OUT_DIR]}" && pwd)
out=${2:-/tmp/gwcriu-vm}
kernel=${KERNEL:-$(ls /boot/vmlinuz-*-amd64 | sort -V | tail -n1)}
rm -rf "$out" && mkdir -p "$out"
out=$(cd "$out" && pwd)
cmd=$(printf 'CASES=%q bash %q %q %q >%q 2>&1' "${CASES:-daemon manifest degraded corrupt predump criuargs device}" "$here/guest_criu.sh" "$build" "$out" "$out/guest.log")
# A bochs display device: its DRM driver (bochs, PCI 1234:1111) takes card0 when loaded
# before vgem (the "device" case). Blacklisted for udev's autoload: only that case loads it.
timeout -k 10 "${VM_TIMEOUT:-900}" vng --run "$kernel" --disable-kvm "--qemu-opts=-accel tcg,thread=single" --force-9p --memory 1G --cpus 2 \
	--qemu-opts="-device bochs-display" --append modprobe.blacklist=bochs --rwdir "$out" -- "$cmd" </dev/null >"$out/console.log" 2>&1
cat "$out/guest.log"
grep -q '^[0-9]* passed, [0-9]* failed' "$out/guest.log" ||
	{ echo "FAIL plugin-vm: the VM reported no result (see $out/console.log)"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
grep -q '^ALL PASS' "$out/guest.log"
