#!/usr/bin/env bash
# Builds gpuwatch and runs every test layer: unit tests (no root), host tests (root, the
# running kernel), and the VM suites (virtme-ng, vgem and the test drivers) in each lane
# (vmtests/lanes/lane.sh): debian12 (kernel 6.1, CRIU 3.17, podman 4.3) and debian13 (kernel
# 6.12, CRIU 4.1, podman 5.4, runc and crun). Prints each lane's counts and times, then one
# summary line "N passed, N failed, N skipped", and exits non-zero if anything failed.
#   env GPUWATCH_SKIP_VM=1   no VM suite (each counts as skipped)
#   env LANES="debian12 debian13"   the lanes to run (default both)
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}

cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null || exit 1
cmake --build "$BUILD" -j"$(nproc)" || exit 1

passed=0 failed=0 skipped=0
ctest_log=$(mktemp)
ctest --test-dir "$BUILD" --output-on-failure 2>&1 | tee "$ctest_log"
# ctest's per-test lines: "... Passed", "***Failed", "***Skipped" / "Not Run"
p=$(grep -cE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .* +Passed' "$ctest_log")
f=$(grep -cE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .*(\*\*\*Failed|\*\*\*Exception|\*\*\*Timeout|Not Run)' "$ctest_log")
s=$(grep -cE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .*\*\*\*Skipped' "$ctest_log")
rm -f "$ctest_log"
passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))

declare -A lane_p=() lane_f=() lane_s=() lane_t=()
report=()

# run_vm LANE NAME CMD...: a VM suite that ends with "N passed, N failed, N skipped"
run_vm() {
	local lane=$1 name=$2 out line t0=$SECONDS
	shift 2
	out=$(mktemp)
	LANE=$lane "$@" | tee "$out"
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out" | tail -n 1)
	rm -f "$out"
	if [ -z "$line" ]; then
		echo "FAIL $name ($lane): no summary line"
		line="0 passed, 1 failed, 0 skipped"
	fi
	set -- $(echo "$line" | grep -oE '[0-9]+')
	passed=$((passed + $1)) failed=$((failed + $2)) skipped=$((skipped + ${3:-0}))
	lane_p[$lane]=$((${lane_p[$lane]:-0} + $1)) lane_f[$lane]=$((${lane_f[$lane]:-0} + $2))
	lane_s[$lane]=$((${lane_s[$lane]:-0} + ${3:-0})) lane_t[$lane]=$((${lane_t[$lane]:-0} + SECONDS - t0))
	report+=("  $lane $name: $line ($((SECONDS - t0)) s)")
}

if [ "${GPUWATCH_SKIP_VM:-0}" = 1 ]; then
	echo "SKIP vm-suites: GPUWATCH_SKIP_VM=1"
	skipped=$((skipped + 4))
else
	for lane in ${LANES:-debian12 debian13}; do
		run_vm "$lane" vm-suite vmtests/run.sh "$BUILD"
		run_vm "$lane" plugin-vm vmtests/plugin/vm_criu.sh "$BUILD"
		run_vm "$lane" remote-vm vmtests/remote/run.sh "$BUILD"
		run_vm "$lane" containers-vm vmtests/containers/run.sh "$BUILD"
	done
	echo "VM suites:"
	printf '%s\n' "${report[@]}"
	for lane in ${LANES:-debian12 debian13}; do
		echo "lane $lane: ${lane_p[$lane]:-0} passed, ${lane_f[$lane]:-0} failed, ${lane_s[$lane]:-0} skipped in ${lane_t[$lane]:-0} s"
	done
fi

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
