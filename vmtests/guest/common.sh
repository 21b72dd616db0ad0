# shellcheck shell=bash
# What every guest-side script of the VM suites shares (sourced first; bash, root, in the VM).
# The host side boots the guest with lanes/lane.sh's lane_run, which reads what t_finish writes.
#
# The protocol of a guest script:
#   guest_begin RESULTS [SCENARIO_TIMEOUT]   results directory (shared with the host), the
#                                   watchdog (watchdog.sh: a case running longer than
#                                   SCENARIO_TIMEOUT seconds is reported FAIL with the kernel's
#                                   view and the VM powers off with the summary so far)
#   t_run NAME FUNCTION [ARGS...]   runs one case: FUNCTION returns 0 (pass), 2 (skip) or
#                                   anything else (fail), with the reason in REASON (`fail`
#                                   sets it); prints "PASS NAME (N s)", "SKIP NAME (N s): why"
#                                   or "FAIL NAME (N s): why", counted
#   t_result NAME RC SECONDS        the same line and count, for a runner with its own loop
#   py SCRIPT|-|-c CODE [ARGS...]   python3, run by one resident interpreter (vmtests/pyserve.py,
#                                   started by guest_begin): a python3 start costs 1.5-3 s under
#                                   TCG. Same streams, working directory and exit status; falls
#                                   back to PYTHON (python3) when the server is not running.
#                                   Foreground only: one caller at a time.
#   t_finish                        prints "N passed, N failed, N skipped", writes it to
#                                   RESULTS/summary and 0 or 1 to RESULTS/status, exits with it
# Lines a case prints itself (indented details, notes) go to the same log, between its start
# and its PASS/FAIL line.

# virtme-ng's serial ports: a workload (or a dumped task) must not hold them
exec 3>&- 4>&- 5>&-

GUEST_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
T_PASSED=0 T_FAILED=0 T_SKIPPED=0
REASON=

# fail WHY: the case fails with this reason (returns 1: `cmd || fail "why" || return 1`, or
# `fail "why"; return 1`)
# shellcheck disable=SC2034 # REASON is read by t_run and the runners
fail() { REASON=$*; return 1; }

# last_line FILE: its last non-empty line, prefixed with ": " (nothing if there is none)
last_line() { local l; l=$(grep -v '^[[:space:]]*$' "$1" 2>/dev/null | tail -n1); [ -n "$l" ] && echo ": $l"; }

# indent FILE [N]: show a log or diff under the case, indented (first N lines, 40)
indent() { sed 's/^/    /' "$1" 2>/dev/null | head -n "${2:-40}"; }

# wait_for SECONDS COMMAND...: polls COMMAND every WAIT_POLL seconds (default 0.2) until it
# succeeds; 1 after SECONDS (bounded by the clock, not by a count of polls: under TCG a poll
# costs far more than its sleep)
wait_for() {
	local deadline=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -lt $deadline ] || return 1
		sleep "${WAIT_POLL:-0.2}"
	done
}

# alive PID: the process exists and is not a zombie
alive() {
	local st
	st=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# wait_file FILE SECONDS [PID]: until FILE exists, at most SECONDS (by the clock), and while
# PID (if given) lives
wait_file() {
	local deadline=$((SECONDS + $2))
	until [ -e "$1" ]; do
		[ -z "${3:-}" ] || alive "$3" || { [ -e "$1" ]; return; }
		[ $SECONDS -lt $deadline ] || return 1
		sleep 0.05
	done
}

PYTHON=${PYTHON:-python3}
PYSERVE_PID=

py_start() {
	local d=${WORK_ROOT:-/run/gpuwatch-vmtests}/.pyserve
	mkdir -p "$d" || return 1
	"$PYTHON" "$GUEST_LIB/../pyserve.py" "$d" </dev/null >"$d/log" 2>&1 &
	PYSERVE_PID=$!
	PYSERVE_DIR=$d
	wait_for 60 test -p "$d/resp" || { kill "$PYSERVE_PID" 2>/dev/null; PYSERVE_PID=; return 1; }
}

py() {
	local rc
	if [ -n "$PYSERVE_PID" ] && kill -0 "$PYSERVE_PID" 2>/dev/null; then
		printf '%s\0' "$BASHPID" "$PWD" "$@" >"$PYSERVE_DIR/req"
		read -r rc <"$PYSERVE_DIR/resp"
		[ "${rc:-255}" != 255 ] && return "$rc"
	fi
	"$PYTHON" "$@"
}

guest_begin() {
	RESULTS=$1
	SCENARIO_TIMEOUT=${2:-${SCENARIO_TIMEOUT:-420}}
	WORK_ROOT=${WORK_ROOT:-/run/gpuwatch-vmtests}
	mkdir -p "$RESULTS" "$WORK_ROOT" || exit 1
	cut -d' ' -f1 /proc/uptime >"$RESULTS/uptime-at-start"
	py_start || echo "note: the resident interpreter (vmtests/pyserve.py) did not start: each check starts python3"
	. "$GUEST_LIB/watchdog.sh"
	watchdog_start
}

t_result() {
	local name=$1 rc=$2 secs=$3
	case $rc in
	0) echo "PASS $name ($secs s)"; T_PASSED=$((T_PASSED + 1)) ;;
	2) echo "SKIP $name ($secs s): ${REASON:-no reason given}"; T_SKIPPED=$((T_SKIPPED + 1)) ;;
	*) echo "FAIL $name ($secs s): ${REASON:-returned $rc without a reason}"; T_FAILED=$((T_FAILED + 1)) ;;
	esac
	watchdog_counts $T_PASSED $T_FAILED $T_SKIPPED
}

t_run() {
	local name=$1 fn=$2 t0=$SECONDS rc
	shift 2
	REASON=
	watchdog_begin "$name"
	"$fn" "$@"
	rc=$?
	watchdog_end
	t_result "$name" $rc $((SECONDS - t0))
	return $rc
}

t_finish() {
	local line="$T_PASSED passed, $T_FAILED failed, $T_SKIPPED skipped" st=0
	watchdog_stop
	[ -n "$PYSERVE_PID" ] && kill "$PYSERVE_PID" 2>/dev/null
	[ $T_FAILED = 0 ] || st=1
	echo "$line"
	echo "$line" >"$RESULTS/summary"
	echo $st >"$RESULTS/status"
	exit $st
}
