#!/bin/bash
# The container suite (run by tests/run-all.sh): boots one lane's kernel under virtme-ng, loads
# vgem and runs guest.sh, which checkpoints and restores podman containers configured only by
# `gpuwatch container-config`. Prints PASS/FAIL/SKIP per case and ends with "N passed, N failed,
# N skipped" (lanes/lane.sh's lane_run). Exit: 0 all passed or skipped, 1 failures, 2 bad setup.
#
# usage: vmtests/containers/run.sh BUILD_DIR [OUT_DIR]     (as root; after cmake --build)
#   env LANE=debian12|debian13   the stack (vmtests/lanes/lane.sh; default debian12)
#   env CASES="config drm ..."   which cases (default: all of guest.sh's, in its order)
#   env RUNTIMES="runc crun"     runtimes to run every case with (default: runc on debian12,
#                                whose crun cannot checkpoint; runc and crun on debian13)
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: $0 BUILD_DIR [OUT_DIR]}" && pwd)
. "$here/../lanes/lane.sh"
lane_init || exit 2
for t in podman runc criu; do
	[ -n "$LANE_ROOT" ] && { chroot "$LANE_ROOT" sh -c "command -v $t" >/dev/null && continue; } ||
		command -v "$t" >/dev/null || { echo "containers-vm: $t is not installed in lane $LANE (run setup.sh)" >&2; exit 2; }
done
for f in "$build/gpuwatch" "$build/criu-plugin/gpuwatch_criu.so" "$build/vmtests/wl_criu_scratch_static"; do
	[ -e "$f" ] || { echo "containers-vm: $f missing (cmake --build $build)" >&2; exit 2; }
done
lane_results "${2:-$build/containers-vm-results-$LANE}" && lane_map "$build" || exit 2
runtimes=${RUNTIMES:-runc}
[ "$LANE" = debian12 ] || runtimes=${RUNTIMES:-runc crun}
ko_dir=$(lane_modules "$build")
cmd=$(printf 'LANE=%q CASES=%q RUNTIMES=%q KO_DIR=%q bash %q %q %q' "$LANE" \
	"${CASES:-}" "$runtimes" "${ko_dir:-$build/vmtests}" \
	"$here/guest.sh" "$build" "$LANE_GUEST_OUT")
echo "containers-vm: lane $LANE_DESC, results in $LANE_RESULTS"
lane_run containers-vm "${VM_TIMEOUT:-2400}" 2G "$cmd"
