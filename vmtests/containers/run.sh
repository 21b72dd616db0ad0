#!/bin/bash
# The container suite (run by tests/run-all.sh): boots Debian's kernel under virtme-ng, loads
# vgem and runs guest.sh, which checkpoints and restores podman + runc containers configured
# only by `gpuwatch container-config`. Prints PASS/FAIL per case and ends with "ALL PASS".
#
# usage: vmtests/containers/run.sh BUILD_DIR [OUT_DIR]     (as root; after cmake --build)
#   env CASES="config drm export annot plain gone"   which cases (see guest.sh)
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: $0 BUILD_DIR [OUT_DIR]}" && pwd)
out=${2:-$build/containers-vm-results}
kernel=${KERNEL:-$(ls /boot/vmlinuz-*-amd64 | sort -V | tail -n1)}
for t in podman runc criu; do
	command -v "$t" >/dev/null || { echo "FAIL containers-vm: $t is not installed (run setup.sh)"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
done
for f in "$build/gpuwatch" "$build/criu-plugin/gpuwatch_criu.so" "$build/criu-plugin-tests/wl_criu_scratch_static"; do
	[ -e "$f" ] || { echo "FAIL containers-vm: $f missing (cmake --build $build)"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
done
rm -rf "$out" && mkdir -p "$out"
out=$(cd "$out" && pwd)
cmd=$(printf 'CASES=%q bash %q %q %q >%q 2>&1' "${CASES:-config drm export annot plain gone}" "$here/guest.sh" "$build" "$out" "$out/guest.log")
timeout -k 10 "${VM_TIMEOUT:-1500}" vng --run "$kernel" --disable-kvm "--qemu-opts=-accel tcg,thread=single" --force-9p --memory 2G --cpus 2 \
	--rwdir "$out" -- "$cmd" </dev/null >"$out/console.log" 2>&1
cat "$out/guest.log"
grep -q '^[0-9]* passed, [0-9]* failed' "$out/guest.log" ||
	{ echo "FAIL containers-vm: the VM reported no result (see $out/console.log)"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
grep -q '^ALL PASS' "$out/guest.log"
