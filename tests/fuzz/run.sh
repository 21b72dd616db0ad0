#!/usr/bin/env bash
# Builds gpuwatch's libFuzzer targets (clang, ASan+UBSan on every library, the model's gc
# oracle on) in BUILD_FUZZ (default build-fuzz/) and runs each on its seed corpus
# (tests/fuzz/corpus/TARGET/, committed). One line per target: "PASS fuzz_T: N execs in S s" or
# "FAIL fuzz_T: ..." with the finding saved under BUILD_FUZZ/findings/T/; then
# "N passed, N failed, N skipped". Exits 1 on any finding.
#
#   tests/fuzz/run.sh                    the brief run the test command makes (20000 runs,
#                                        seed 1: the same inputs every time)
#   tests/fuzz/run.sh --runs N [T...]    N executions per target (fuzz_manifest fuzz_images ...)
#   tests/fuzz/run.sh --time S [T...]    a campaign of S seconds per target; what it learns goes
#                                        to BUILD_FUZZ/corpus/T/ and is kept for the next one
#   env FUZZ_JOBS=J                      J libFuzzer workers per target (--time only)
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
BUILD_FUZZ=${BUILD_FUZZ:-build-fuzz}
# the brief run is reproducible (a fixed seed: the same inputs every time); --runs and --time
# draw a new seed each run
mode=(-runs=20000 -seed=1)
what="--runs 20000, seed 1"
case ${1:-} in
--runs) mode=(-runs="$2"); what="--runs $2"; shift 2 ;;
--time) mode=(-max_total_time="$2"); what="--time $2"; shift 2 ;;
esac
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_manifest fuzz_images fuzz_records fuzz_config)

if ! command -v clang++ >/dev/null; then
	echo "SKIP fuzz: clang++ is not installed (tests/setup installs clang)"
	echo "0 passed, 0 failed, ${#targets[@]} skipped"
	exit 0
fi
CC=clang CXX=clang++ cmake -S . -B "$BUILD_FUZZ" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUWATCH_FUZZ=ON >/dev/null ||
	{ echo "FAIL fuzz: cmake could not configure $BUILD_FUZZ"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
if ! cmake --build "$BUILD_FUZZ" -j"$(nproc)" --target "${targets[@]}" >"$BUILD_FUZZ/build.log" 2>&1; then
	tail -n 20 "$BUILD_FUZZ/build.log"
	echo "FAIL fuzz: the targets did not build ($BUILD_FUZZ/build.log)"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi

passed=0 failed=0
for t in "${targets[@]}"; do
	name=${t#fuzz_}
	seeds=tests/fuzz/corpus/$name work=$BUILD_FUZZ/corpus/$name found=$BUILD_FUZZ/findings/$name
	mkdir -p "$work" "$found"
	log=$BUILD_FUZZ/$t.log
	jobs=()
	[ "${FUZZ_JOBS:-1}" -gt 1 ] && [ "${mode[0]#-max_total_time}" != "${mode[0]}" ] &&
		jobs=(-fork="$FUZZ_JOBS" -ignore_crashes=0)
	t0=$SECONDS
	# the campaign's own corpus first (new inputs go there), the committed seeds read only
	"$BUILD_FUZZ/fuzz/$t" "${mode[@]}" ${jobs[@]+"${jobs[@]}"} -max_len=65536 -rss_limit_mb=4096 \
		-timeout=10 -artifact_prefix="$found/" -print_final_stats=1 "$work" "$seeds" >"$log" 2>&1
	rc=$?
	execs=$(grep -oE '^stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' | tail -n1)
	[ -n "$execs" ] || execs=$(grep -oE 'Done [0-9]+ runs' "$log" | grep -oE '[0-9]+' | tail -n1)
	# with -fork the parent prints no final stats, only "#N: cov: ... job: J" lines (N: the
	# executions of all jobs so far)
	[ -n "$execs" ] || execs=$(grep -oE '^#[0-9]+: ' "$log" | grep -oE '[0-9]+' | tail -n1)
	if [ $rc = 0 ]; then
		echo "PASS $t: ${execs:-?} execs in $((SECONDS - t0)) s ($what), no finding"
		passed=$((passed + 1))
	else
		grep -E 'ERROR: |SUMMARY: |runtime error|deadly signal|Test unit written' "$log" | head -n 6 | sed 's/^/    /'
		echo "FAIL $t: a finding after ${execs:-?} execs (exit $rc; $log, input in $found/)"
		failed=$((failed + 1))
	fi
done
echo "$passed passed, $failed failed, 0 skipped"
[ $failed = 0 ]
