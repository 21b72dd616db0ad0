#!/bin/bash
# The i915 pre-dump's VM check (run by tests/run-all.sh): boots one lane's kernel once under
# virtme-ng, loads the gwi915 fixture and runs vmtests/remote/guest.sh, which drives the real
# action-script helper (gpuwatch-criu-action) as criu does, and real `criu dump` runs, on
# wl_i915_va. Prints PASS/FAIL/SKIP per case and ends with "N passed, N failed, N skipped".
#
# usage: vmtests/remote/run.sh BUILD_DIR [OUT_DIR]      (as root)
#   env LANE=debian12|debian13   the stack (vmtests/lanes/lane.sh; default debian12)
#   env CASES="convert criu_killed copy criu_noplugin criu_plugin criu_sigkill root_cgroup criu_cgroup no_i915 legacy entry_stop exit_stop"
#       SIGKILL_AT="Dumping pages"   (criu_sigkill: kill criu only when its log says this)
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: $0 BUILD_DIR [OUT_DIR]}" && pwd)
. "$here/../lanes/lane.sh"
lane_init || { echo "FAIL remote-vm: lane ${LANE:-debian12} unavailable"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
out=${2:-$build/remote-vm-results-$LANE}
rm -rf "$out" && mkdir -p "$out"
out=$(cd "$out" && pwd)
[ -x "$build/gpuwatch-criu-action" ] && [ -x "$build/vmtests/gwr_peek" ] && [ -x "$build/vmtests/wl_i915_va" ] &&
	[ -x "$build/vmtests/gwr_legacy" ] || {
	echo "FAIL remote-vm: $build lacks gpuwatch-criu-action, vmtests/gwr_peek, gwr_legacy or wl_i915_va"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
}
lane_map "$build" && lane_out "$out" || { echo "0 passed, 1 failed, 0 skipped"; exit 1; }
ko_dir=$(lane_modules "$build")
cmd=$(printf 'KO_DIR=%q CASES=%q SIGKILL_AT=%q bash %q %q %q >%q 2>&1' "${ko_dir:-$build/vmtests}" "${CASES:-}" \
	"${SIGKILL_AT:-}" "$here/guest.sh" "$build" "$LANE_GUEST_OUT" "$LANE_GUEST_OUT/guest.log")
echo "remote-vm: lane $LANE_DESC, results in $out"
start=$SECONDS
lane_boot "${VM_TIMEOUT:-900}" 1G "$out/console.log" "$cmd"
cat "$out/guest.log" 2>/dev/null
echo "remote-vm: boot + cases took $((SECONDS - start)) s (per case: $(tr '\n' ',' <"$out/timings.txt" 2>/dev/null | sed 's/,$//'); artefacts in $out)"
grep -q '^[0-9]* passed, [0-9]* failed' "$out/guest.log" 2>/dev/null ||
	{ echo "FAIL remote-vm: the VM reported no result (see $out/console.log)"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
grep -q '^ALL PASS' "$out/guest.log"
