#!/bin/bash
# The VM suite, guest side: runs every scenario of scenarios.sh inside the VM, as root.
#
# Environment:
#   GPUWATCH   the gpuwatch binary (missing: each scenario still runs its workload and checks
#              its truth against /proc, then reports SKIP; never PASS)
#   WL_DIR     directory of the built workloads (wl_*)
#   KO_DIR     directory of the test modules built for the running kernel (gwi915.ko, gwxe.ko,
#              gwdummy.ko, or NAME.skip saying why not; lane.sh's lane_modules); default WL_DIR
#   RESULTS    directory for artefacts, `summary` and `status` (the host reads them)
#   ONLY       optional: space-separated scenario names to run (two_opens: under every hook
#              path; two_opens@fexit: under that one)
#   HOOK_PATHS hook paths the per-path scenarios run under (default "tracepoint fexit"): each
#              runs as NAME@PATH with GPUWATCH_HOOKS=PATH for gpuwatch attach (scenarios.sh:
#              runs_once names those that run once, under auto). A scenario that passes under
#              a second path must have had the same manifests accepted as under the first.
#   ATTACH_TIMEOUT, SETTLE_TIMEOUT, PHASE_TIMEOUT, STOP_TIMEOUT: seconds (60, 10, 120, 30)
#   SCENARIO_TIMEOUT   seconds after which a scenario counts as hung (watchdog.sh; 420)
# Prints one line per scenario: PASS name (N s) / FAIL name (N s): reason / SKIP ..., then
# "N passed, N failed, N skipped" (and the count per hook path). Exits 1 if anything failed.
set -u

VMTESTS=$(cd "$(dirname "$0")/.." && pwd)
. "$VMTESTS/guest/common.sh"
. "$VMTESTS/guest/lib.sh"
. "$VMTESTS/guest/scenarios.sh"

GPUWATCH=${GPUWATCH:-}
WL_DIR=${WL_DIR:-$VMTESTS/build}
KO_DIR=${KO_DIR:-$WL_DIR}
RESULTS=${RESULTS:-/tmp/gpuwatch-vmtests-results}
ATTACH_TIMEOUT=${ATTACH_TIMEOUT:-60}
SETTLE_TIMEOUT=${SETTLE_TIMEOUT:-10}
PHASE_TIMEOUT=${PHASE_TIMEOUT:-120}
STOP_TIMEOUT=${STOP_TIMEOUT:-30}
HOOK_PATHS=${HOOK_PATHS:-tracepoint fexit}
WORK_ROOT=/run/gpuwatch-vmtests
PASSED=()
declare -A per_path=()

finish() {
	local p
	for p in "${!per_path[@]}"; do echo "ran under $p: ${per_path[$p]} scenarios"; done | sort
	t_finish
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

# running PID: it exists and is not a zombie
running() {
	local st
	st=$(task_state "$1")
	[ -n "$st" ] && [ "$st" != Z ]
}

# A process that SIGKILL does not end within 20 s is stuck in the kernel: waiting for it would
# hang the whole suite (seen once, unexplained, in exec_cloexec@fexit). It is reported (STUCK,
# with its kernel stack, state and the kernel log in the scenario's stuck.txt) instead.
cleanup() {
	local pid cg i deadline
	STUCK=()
	for pid in "${CLEANUP_PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null; done
	for pid in "${CLEANUP_PIDS[@]}"; do
		deadline=$((SECONDS + 20))
		while running "$pid" && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
		if running "$pid"; then
			STUCK+=("$pid")
			{
				echo "process $pid did not end 20 s after SIGKILL:"
				ps -o pid,ppid,stat,wchan:32,comm -p "$pid"
				echo "kernel stack:"
				cat "/proc/$pid/stack"
				for t in /proc/"$pid"/task/*; do echo "thread ${t##*/}: $(cat "$t/wchan" 2>/dev/null)"; done
				echo "--- tasks not sleeping interruptibly (pid, state, comm, wchan, kernel stack):"
				tasks_not_sleeping
				echo "--- kernel log (last 80 lines):"
				dmesg | tail -n 80
			} >>"$WORK/stuck.txt" 2>&1
		else
			wait "$pid" 2>/dev/null
		fi
	done
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

# The manifests NAME's checks accepted equal those of BASE under another hook path that
# passed before (pids, addresses and fake offsets aside: hook_paths.py same).
same_as_other_paths() {
	local other out
	for other in "${PASSED[@]}"; do
		[ "${other%@*}" = "$BASE" ] && [ "$other" != "$NAME" ] || continue
		out=$RESULTS/$NAME/same-as-${other#*@}.txt
		if ! py "$VMTESTS/hook_paths.py" same "$RESULTS/$other" "$RESULTS/$NAME" >"$out" 2>&1; then
			indent "$out"
			fail "manifests differ from $other's: $(sed -n 2p "$out" | sed 's/^ *- //' | cut -c1-240)"
			return 1
		fi
		echo "    $(head -n1 "$out")"
	done
}

run_one() {
	local fn=$1 rc t0=$SECONDS
	shift
	watchdog_begin "$NAME"
	WORK=$WORK_ROOT/$NAME
	rm -rf "$WORK" && mkdir -p "$WORK"
	REASON='' GW_PID='' MANIFEST='' CLEANUP_PIDS=() CLEANUP_CGS=()
	"$fn" "$@"
	rc=$?
	cleanup
	if [ ${#STUCK[@]} -gt 0 ]; then
		rc=1
		REASON="${REASON:+$REASON; and }process(es) ${STUCK[*]} cannot be killed (stuck in the kernel: see $NAME/stuck.txt)"
	fi
	[ $rc = 1 ] && dmesg | tail -n 80 >"$WORK/dmesg.txt" 2>&1
	mkdir -p "$RESULTS/$NAME" && cp -r "$WORK/." "$RESULTS/$NAME/" 2>/dev/null
	if [ $rc = 0 ] && [ "$HAVE_GW" != 1 ]; then
		rc=2
		REASON="gpuwatch binary missing (GPUWATCH='$GPUWATCH'); workload ran and its truth matched /proc"
	fi
	if [ $rc = 0 ] && [ -n "$HOOKS" ]; then
		same_as_other_paths || rc=1
	fi
	per_path[${HOOKS:-auto}]=$((${per_path[${HOOKS:-auto}]:-0} + 1))
	[ $rc = 0 ] && PASSED+=("$NAME")
	t_result "$NAME" $rc $((SECONDS - t0))
	watchdog_end
}

guest_begin "$RESULTS"
if ! setup; then
	t_result setup 1 0
	finish
fi
echo "kernel $(uname -r); gpuwatch: ${GPUWATCH:-none}$([ "$HAVE_GW" = 1 ] || echo ' (missing)'); workloads: $WL_DIR"
echo "hook paths: $HOOK_PATHS (per-path scenarios), auto (check_hooks, CRIU)"
for entry in "${SCENARIOS[@]}"; do
	read -r BASE fn args <<<"$entry"
	if [ -z "${ONLY:-}" ] && lane_skips "$BASE"; then
		if [ "$(lane_share "$BASE")" = hand ]; then
			# in no lane's share: counted as skipped, with the command that runs it
			REASON="run by hand only (scenarios.sh, lane_share): ONLY=$BASE vmtests/run.sh BUILD"
			t_result "$BASE" 2 0
		else
			echo "not run in lane ${LANE:-debian12}: $BASE (scenarios.sh, lane_share: it runs in the other lane)"
		fi
		continue
	fi
	variants=("$BASE")
	if ! runs_once "$BASE"; then
		variants=()
		for h in $HOOK_PATHS; do variants+=("$BASE@$h"); done
	fi
	for NAME in "${variants[@]}"; do
		if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $BASE "* && " $ONLY " != *" $NAME "* ]]; then
			continue
		fi
		HOOKS=${NAME#"$BASE"}
		HOOKS=${HOOKS#@}
		# shellcheck disable=SC2086 # args is a word list by design
		run_one "$fn" $args
	done
done
finish
