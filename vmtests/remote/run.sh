#!/bin/bash
# The i915 pre-dump's VM check (run by tests/run-all.sh): boots one lane's kernel once under
# virtme-ng, loads the gwi915 fixture and runs vmtests/remote/guest.sh, which drives the real
# action-script helper (gpuwatch-criu-action) as criu does, and real `criu dump` runs, on
# wl_i915_va. Prints PASS/FAIL/SKIP per case and ends with "N passed, N failed, N skipped"
# (lanes/lane.sh's lane_run). Exit: 0 all passed or skipped, 1 failures, 2 bad setup.
#
# usage: vmtests/remote/run.sh BUILD_DIR [OUT_DIR]      (as root)
#   env LANE=debian12|debian13   the stack (vmtests/lanes/lane.sh; default debian12)
#   env CASES="convert criu_killed copy criu_noplugin criu_plugin criu_sigkill root_cgroup criu_cgroup no_i915 legacy entry_stop exit_stop"
#       SIGKILL_AT="Dumping pages"   (criu_sigkill: kill criu only when its log says this)
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: $0 BUILD_DIR [OUT_DIR]}" && pwd)
. "$here/../lanes/lane.sh"
lane_init || exit 2
[ -x "$build/gpuwatch-criu-action" ] && [ -x "$build/vmtests/gwr_peek" ] && [ -x "$build/vmtests/wl_i915_va" ] &&
	[ -x "$build/vmtests/gwr_legacy" ] || {
	echo "remote-vm: $build lacks gpuwatch-criu-action, vmtests/gwr_peek, gwr_legacy or wl_i915_va (cmake --build $build)" >&2
	exit 2
}
lane_results "${2:-$build/remote-vm-results-$LANE}" && lane_map "$build" || exit 2
ko_dir=$(lane_modules "$build")
cmd=$(printf 'KO_DIR=%q CASES=%q SIGKILL_AT=%q bash %q %q %q' "${ko_dir:-$build/vmtests}" "${CASES:-}" \
	"${SIGKILL_AT:-}" "$here/guest.sh" "$build" "$LANE_GUEST_OUT")
echo "remote-vm: lane $LANE_DESC, results in $LANE_RESULTS"
lane_run remote-vm "${VM_TIMEOUT:-900}" 1G "$cmd"
