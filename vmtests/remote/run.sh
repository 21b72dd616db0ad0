#!/bin/bash
# The i915 pre-dump's VM check (run by tests/run-all.sh): boots Debian's kernel once under
# virtme-ng, loads the gwi915 fixture and runs vmtests/remote/guest.sh, which drives the real
# action-script helper (gpuwatch-criu-action) as criu does, and real `criu dump` runs, on
# wl_i915_va. Prints PASS/FAIL/SKIP per case and ends with "N passed, N failed, N skipped".
#
# usage: vmtests/remote/run.sh BUILD_DIR [OUT_DIR]      (as root)
#   env CASES="convert criu_killed copy criu_noplugin criu_plugin criu_sigkill root_cgroup criu_cgroup no_i915 legacy entry_stop"
#       SIGKILL_AT="Dumping pages"   (criu_sigkill: kill criu only when its log says this)
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: $0 BUILD_DIR [OUT_DIR]}" && pwd)
out=${2:-/tmp/gwremote-vm}
kernel=${KERNEL:-$(ls /boot/vmlinuz-6.1.*-amd64 2>/dev/null | sort -V | tail -n1)}
rm -rf "$out" && mkdir -p "$out"
out=$(cd "$out" && pwd)
if [ -z "$kernel" ] || ! command -v vng >/dev/null; then
	echo "SKIP remote-vm: no 6.1 kernel in /boot or no vng (virtme-ng)"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
fi
[ -x "$build/gpuwatch-criu-action" ] && [ -x "$build/vmtests/gwr_peek" ] && [ -x "$build/vmtests/wl_i915_va" ] &&
	[ -x "$build/vmtests/gwr_legacy" ] || {
	echo "FAIL remote-vm: $build lacks gpuwatch-criu-action, vmtests/gwr_peek, gwr_legacy or wl_i915_va"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
}
cmd=$(printf 'CASES=%q SIGKILL_AT=%q bash %q %q %q >%q 2>&1' "${CASES:-}" "${SIGKILL_AT:-}" "$here/guest.sh" "$build" "$out" "$out/guest.log")
start=$SECONDS
timeout -k 10 "${VM_TIMEOUT:-900}" vng --run "$kernel" --disable-kvm "--qemu-opts=-accel tcg,thread=single" --force-9p --memory 1G --cpus 2 \
	--rwdir "$out" -- "$cmd" </dev/null >"$out/console.log" 2>&1
cat "$out/guest.log" 2>/dev/null
echo "remote-vm: boot + cases took $((SECONDS - start)) s (per case: $(tr '\n' ',' <"$out/timings.txt" 2>/dev/null | sed 's/,$//'); artefacts in $out)"
grep -q '^[0-9]* passed, [0-9]* failed' "$out/guest.log" 2>/dev/null ||
	{ echo "FAIL remote-vm: the VM reported no result (see $out/console.log)"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
grep -q '^ALL PASS' "$out/guest.log"
