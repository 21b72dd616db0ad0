#!/bin/bash
# The container suite (run by tests/run-all.sh): boots one lane's kernel under virtme-ng, loads
# vgem and runs guest.sh, which checkpoints and restores podman containers configured only by
# `gpuwatch container-config`. Prints PASS/FAIL per case and ends with "ALL PASS".
#
# usage: vmtests/containers/run.sh BUILD_DIR [OUT_DIR]     (as root; after cmake --build)
#   env LANE=debian12|debian13   the stack (vmtests/lanes/lane.sh; default debian12)
#   env CASES="config drm export annot plain gone i915"   which cases (see guest.sh)
#   env RUNTIMES="runc crun"     runtimes to run every case with (default: runc on debian12,
#                                whose crun cannot checkpoint; runc and crun on debian13)
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: $0 BUILD_DIR [OUT_DIR]}" && pwd)
. "$here/../lanes/lane.sh"
lane_init || { echo "FAIL containers-vm: lane ${LANE:-debian12} unavailable"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
out=${2:-$build/containers-vm-results-$LANE}
for t in podman runc criu; do
	[ -n "$LANE_ROOT" ] && { chroot "$LANE_ROOT" sh -c "command -v $t" >/dev/null && continue; } ||
		command -v "$t" >/dev/null ||
		{ echo "FAIL containers-vm: $t is not installed in lane $LANE (run setup.sh)"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
done
for f in "$build/gpuwatch" "$build/criu-plugin/gpuwatch_criu.so" "$build/criu-plugin-tests/wl_criu_scratch_static"; do
	[ -e "$f" ] || { echo "FAIL containers-vm: $f missing (cmake --build $build)"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
done
rm -rf "$out" && mkdir -p "$out"
out=$(cd "$out" && pwd)
lane_map "$build" && lane_out "$out" || { echo "0 passed, 1 failed, 0 skipped"; exit 1; }
runtimes=${RUNTIMES:-runc}
[ "$LANE" = debian12 ] || runtimes=${RUNTIMES:-runc crun}
ko_dir=$(lane_modules "$build")
cmd=$(printf 'LANE=%q CASES=%q RUNTIMES=%q KO_DIR=%q bash %q %q %q >%q 2>&1' "$LANE" \
	"${CASES:-config drm export annot plain gone i915}" "$runtimes" "${ko_dir:-$build/vmtests}" \
	"$here/guest.sh" "$build" "$LANE_GUEST_OUT" "$LANE_GUEST_OUT/guest.log")
echo "containers-vm: lane $LANE_DESC, results in $out"
start=$SECONDS
lane_boot "${VM_TIMEOUT:-2400}" 2G "$out/console.log" "$cmd"
cat "$out/guest.log"
echo "containers-vm: boot + cases took $((SECONDS - start)) s"
grep -q '^[0-9]* passed, [0-9]* failed' "$out/guest.log" ||
	{ echo "FAIL containers-vm: the VM reported no result (see $out/console.log)"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
grep -q '^ALL PASS' "$out/guest.log"
