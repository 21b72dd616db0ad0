#!/usr/bin/env bash
# Builds gpuwatch and runs every test layer: unit tests (no root), host tests (root, the
# running kernel), the fuzz targets briefly (tests/fuzz/run.sh), and the VM suites
# (virtme-ng, vgem and the test drivers) in each lane (vmtests/lanes/lane.sh): debian12
# (kernel 6.1, CRIU 3.17, podman 4.3) and debian13 (kernel 6.12, CRIU 4.1, podman 5.4, runc
# and crun). Prints each lane's counts and times, then one
# summary line "N passed, N failed, N skipped", and exits non-zero if anything failed.
#   env GPUWATCH_SKIP_VM=1   no VM suite (each counts as skipped)
#   env LANES="debian12 debian13"   the lanes to run (default both). The lanes share the display
#                       drivers' scenarios out (vmtests/guest/scenarios.sh, lane_share): one lane
#                       alone runs its share only
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}

cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUWATCH_TESTS=ON >/dev/null || exit 1
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

# the libFuzzer targets, briefly (tests/fuzz/run.sh: a clang build of its own in build-fuzz/,
# each target 20000 executions from its committed seeds); each target counts as a test
fuzz_log=$(mktemp)
BUILD_FUZZ=${BUILD_FUZZ:-build-fuzz} tests/fuzz/run.sh 2>&1 | tee "$fuzz_log"
line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$fuzz_log" | tail -n 1)
rm -f "$fuzz_log"
[ -n "$line" ] || line="0 passed, 1 failed, 0 skipped"
read -r p _ f _ s _ <<<"$line"
passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))

# run_vm LANE NAME CMD...: a VM suite that ends with "N passed, N failed, N skipped"; appends
# "NAME|that line|seconds" to $BUILD/lane-LANE.results; progress lines go to fd 3
run_vm() {
	local lane=$1 name=$2 out line t0=$SECONDS
	shift 2
	echo "lane $lane: $name started" >&3
	out=$(mktemp)
	LANE=$lane "$@" >"$out" 2>&1
	cat "$out"
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out" | tail -n 1)
	rm -f "$out"
	if [ -z "$line" ]; then
		echo "FAIL $name ($lane): no summary line"
		line="0 passed, 1 failed, 0 skipped"
	fi
	echo "$name|$line|$((SECONDS - t0))" >>"$BUILD/lane-$lane.results"
	echo "lane $lane: $name: $line ($((SECONDS - t0)) s)" >&3
}

# run_lane LANE: every VM suite of one lane, one VM at a time
run_lane() {
	local lane=$1
	: >"$BUILD/lane-$lane.results"
	run_vm "$lane" vm-suite vmtests/run.sh "$BUILD"
	run_vm "$lane" remote-vm vmtests/remote/run.sh "$BUILD"
	run_vm "$lane" containers-vm vmtests/containers/run.sh "$BUILD"
}

if [ "${GPUWATCH_SKIP_VM:-0}" = 1 ]; then
	echo "SKIP vm-suites: GPUWATCH_SKIP_VM=1"
	skipped=$((skipped + 3))
else
	lanes=${LANES:-debian12 debian13}
	# The lanes run side by side, one VM each: a VM runs its two vCPUs on one host thread
	# (single-threaded TCG, vmtests/README.md "Hangs"), so two lanes keep two cores busy.
	# Each lane's output goes to BUILD/lane-LANE.log, shown when the lane is done.
	# LANES_IN_PARALLEL=0 runs them one after the other.
	t0=$SECONDS
	pids=()
	for lane in $lanes; do
		if [ "${LANES_IN_PARALLEL:-1}" = 1 ]; then
			run_lane "$lane" 3>&1 >"$BUILD/lane-$lane.log" 2>&1 &
			pids+=($!)
			echo "lane $lane: running (output in $BUILD/lane-$lane.log)"
		else
			run_lane "$lane" 3>/dev/null 2>&1 | tee "$BUILD/lane-$lane.log"
		fi
	done
	for p in "${pids[@]}"; do wait "$p"; done
	if [ "${LANES_IN_PARALLEL:-1}" = 1 ]; then
		for lane in $lanes; do
			echo "=== lane $lane"
			cat "$BUILD/lane-$lane.log"
		done
	fi
	echo "VM suites ($((SECONDS - t0)) s in all):"
	for lane in $lanes; do
		lp=0 lf=0 ls=0 lt=0
		while IFS='|' read -r name line secs; do
			echo "  $lane $name: $line ($secs s)"
			set -- $(echo "$line" | grep -oE '[0-9]+')
			lp=$((lp + $1)) lf=$((lf + $2)) ls=$((ls + ${3:-0})) lt=$((lt + secs))
		done <"$BUILD/lane-$lane.results"
		[ -s "$BUILD/lane-$lane.results" ] || { echo "  $lane: no suite reported"; lf=1; }
		echo "lane $lane: $lp passed, $lf failed, $ls skipped in $lt s"
		passed=$((passed + lp)) failed=$((failed + lf)) skipped=$((skipped + ls))
	done
fi

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
