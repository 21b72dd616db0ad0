#!/usr/bin/env bash
# Builds gpuwatch and runs every test layer: unit tests (no root), host tests (root, the
# running kernel), and the VM suite (virtme-ng, Debian's kernel, vgem). Prints one summary
# line "N passed, N failed, N skipped" and exits non-zero if anything failed.
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

# run_vm NAME CMD...: a VM suite that ends with "N passed, N failed, N skipped"
run_vm() {
	local name=$1 out line
	shift
	out=$(mktemp)
	"$@" | tee "$out"
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out" | tail -n 1)
	rm -f "$out"
	if [ -z "$line" ]; then
		echo "FAIL $name: no summary line"
		failed=$((failed + 1))
		return
	fi
	set -- $(echo "$line" | grep -oE '[0-9]+')
	passed=$((passed + $1)) failed=$((failed + $2)) skipped=$((skipped + ${3:-0}))
}

if [ "${GPUWATCH_SKIP_VM:-0}" = 1 ]; then
	echo "SKIP vm-suites: GPUWATCH_SKIP_VM=1"
	skipped=$((skipped + 4))
else
	run_vm vm-suite vmtests/run.sh "$BUILD"
	run_vm plugin-vm vmtests/plugin/vm_criu.sh "$BUILD" "$BUILD/plugin-vm-results"
	run_vm remote-vm vmtests/remote/run.sh "$BUILD" "$BUILD/remote-vm-results"
	run_vm containers-vm vmtests/containers/run.sh "$BUILD" "$BUILD/containers-vm-results"
fi

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
