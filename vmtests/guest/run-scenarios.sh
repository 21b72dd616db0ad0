#!/bin/bash
# The VM suite, guest side: runs every scenario of scenarios.sh inside the VM, as root.
#
# Environment:
#   GPUWATCH   the gpuwatch binary (missing: each scenario still runs its workload and checks
#              its truth against /proc, then reports SKIP; never PASS)
#   WL_DIR     directory of the built workloads (wl_*)
#   RESULTS    directory for artefacts, `summary` and `status` (the host reads them)
#   ONLY       optional: space-separated scenario names to run
#   ATTACH_TIMEOUT, SETTLE_TIMEOUT, PHASE_TIMEOUT, STOP_TIMEOUT: seconds (60, 10, 120, 30)
# Prints one line per scenario: PASS name / FAIL name: reason / SKIP name: reason, then
# "N passed, N failed, N skipped". Exits 1 if anything failed.
set -u

VMTESTS=$(cd "$(dirname "$0")/.." && pwd)
. "$VMTESTS/guest/lib.sh"
. "$VMTESTS/guest/scenarios.sh"

GPUWATCH=${GPUWATCH:-}
WL_DIR=${WL_DIR:-$VMTESTS/build}
RESULTS=${RESULTS:-/tmp/gpuwatch-vmtests-results}
PYTHON=${PYTHON:-python3}
ATTACH_TIMEOUT=${ATTACH_TIMEOUT:-60}
SETTLE_TIMEOUT=${SETTLE_TIMEOUT:-10}
PHASE_TIMEOUT=${PHASE_TIMEOUT:-120}
STOP_TIMEOUT=${STOP_TIMEOUT:-30}
WORK_ROOT=/run/gpuwatch-vmtests
passed=0 failed=0 skipped=0

finish() {
	local line="$passed passed, $failed failed, $skipped skipped"
	echo "$line"
	echo "$line" >"$RESULTS/summary"
	local st=0
	[ $failed = 0 ] || st=1
	echo $st >"$RESULTS/status"
	exit $st
}

setup() {
	mkdir -p "$RESULTS" "$WORK_ROOT" || return 1
	grep -q "^cgroup2 $CG_ROOT " /proc/mounts || mount -t cgroup2 none "$CG_ROOT" ||
		{ REASON="cgroup v2 is not mounted at $CG_ROOT and mounting it failed"; return 1; }
	[ -e /dev/dri/card0 ] || modprobe vgem ||
		{ REASON="modprobe vgem failed (kernel $(uname -r))"; return 1; }
	for i in $(seq 50); do [ -e /dev/dri/renderD128 ] && break; sleep 0.1; done
	[ -c /dev/dri/card0 ] && [ -c /dev/dri/renderD128 ] ||
		{ REASON="vgem loaded but /dev/dri/card0 or renderD128 is missing"; return 1; }
	HAVE_GW=0
	if [ -n "$GPUWATCH" ] && [ -x "$GPUWATCH" ]; then
		HAVE_GW=1
	else
		export WL_SELFCHECK=1     # nobody watches: let the workloads probe their handles
	fi
}

cleanup() {
	local pid cg i
	for pid in "${CLEANUP_PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null; done
	for pid in "${CLEANUP_PIDS[@]}"; do wait "$pid" 2>/dev/null; done
	for ((i = ${#CLEANUP_CGS[@]} - 1; i >= 0; i--)); do
		cg=${CLEANUP_CGS[i]}
		for _ in $(seq 50); do
			[ -d "$cg" ] || break
			rmdir "$cg" 2>/dev/null && break
			for pid in $(cat "$cg/cgroup.procs" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
			sleep 0.1
		done
	done
	CLEANUP_PIDS=() CLEANUP_CGS=()
}

run_one() {
	local fn=$1 rc
	shift
	WORK=$WORK_ROOT/$NAME
	rm -rf "$WORK" && mkdir -p "$WORK"
	REASON='' GW_PID='' MANIFEST='' CLEANUP_PIDS=() CLEANUP_CGS=()
	"$fn" "$@"
	rc=$?
	cleanup
	mkdir -p "$RESULTS/$NAME" && cp -r "$WORK/." "$RESULTS/$NAME/" 2>/dev/null
	if [ $rc = 0 ] && [ "$HAVE_GW" != 1 ]; then
		rc=2
		REASON="gpuwatch binary missing (GPUWATCH='$GPUWATCH'); workload ran and its truth matched /proc"
	fi
	case $rc in
	0) echo "PASS $NAME"; passed=$((passed + 1)) ;;
	2) echo "SKIP $NAME: $REASON"; skipped=$((skipped + 1)) ;;
	*) echo "FAIL $NAME: ${REASON:-scenario function returned $rc without a reason}"; failed=$((failed + 1)) ;;
	esac
}

mkdir -p "$RESULTS"
cut -d' ' -f1 /proc/uptime >"$RESULTS/uptime-at-start"
if ! setup; then
	echo "FAIL setup: $REASON"
	failed=1
	finish
fi
echo "kernel $(uname -r); gpuwatch: ${GPUWATCH:-none}$([ "$HAVE_GW" = 1 ] || echo ' (missing)'); workloads: $WL_DIR"
for entry in "${SCENARIOS[@]}"; do
	read -r NAME fn args <<<"$entry"
	if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $NAME "* ]]; then
		continue
	fi
	# shellcheck disable=SC2086 # args is a word list by design
	run_one "$fn" $args
done
finish
