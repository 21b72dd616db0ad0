#!/usr/bin/env bash
# The host benchmarks in one command: builds gpuwatch and the benchmark programs, runs
# gw_bench_model (the daemon's decoder and model: events/s, bytes per handle and mapping,
# manifest write) and, as root, host_syscalls.sh (what an attached gpuwatch costs other
# processes' syscalls) and action_script.sh (what the CRIU action script adds to a checkpoint
# with no DRM state), prints their tables and writes OUT_DIR/host-bench.json.
# Benchmarks print numbers; they never fail on speed.
#
#   tests/bench/run.sh [OUT_DIR]        (default: build/bench-results)
#   env: BUILD (build), REPS (7), PAIRS (7), QUICK=1 (no 10^6-handle memory figure)
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
OUT=${1:-$BUILD/bench-results}
mkdir -p "$OUT" || exit 1
OUT=$(cd "$OUT" && pwd)

cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUWATCH_TESTS=ON >/dev/null || exit 1
cmake --build "$BUILD" -j"$(nproc)" --target gpuwatch gw_bench_model gw_syscall_loop gpuwatch-criu-action || exit 1

model_args=(--reps "${REPS:-7}" --json "$OUT/model-bench.json" --dir "$OUT")
[ "${QUICK:-0}" = 1 ] && model_args+=(--quick)
"$BUILD/bench/gw_bench_model" "${model_args[@]}" || exit 1
echo

rm -f "$OUT/host-syscalls.json"
PAIRS=${PAIRS:-7} tests/bench/host_syscalls.sh "$BUILD" "$OUT/host-syscalls.json"
rc=$?
[ "$rc" = 0 ] || [ "$rc" = 77 ] || exit "$rc"

echo
tests/bench/action_script.sh "$BUILD" "$OUT/action-script.json" || exit 1

{
	printf '{"date": "%s", "kernel": "%s", "nproc": %s, "cpu": "%s",\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
		"$(uname -r)" "$(nproc)" "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
	printf ' "model": '
	cat "$OUT/model-bench.json"
	printf ', "syscalls": '
	if [ -s "$OUT/host-syscalls.json" ]; then cat "$OUT/host-syscalls.json"; else echo null; fi
	printf ', "action_script": '
	cat "$OUT/action-script.json"
	printf '}\n'
} >"$OUT/host-bench.json"
echo "written: $OUT/host-bench.json"
