# shellcheck shell=bash
# The case watchdog of every guest script (sourced by common.sh's guest_begin). Every wait of a
# case is bounded, but a case can still hang where no bound reaches: a command blocked in the
# kernel (a process stuck after SIGKILL was seen once). Without the watchdog the host kills the
# whole VM at VM_TIMEOUT and learns nothing. (A guest whose CPUs all spin, as with
# multi-threaded TCG, runs no watchdog either: lane_run then shows the kernel's soft-lockup
# report from console.log.) With it, a case running longer than SCENARIO_TIMEOUT seconds is
# reported FAIL with the kernel's view (hang.txt in RESULTS: blocked tasks and their stacks),
# the summary so far is written, and the VM powers off so that the host prints that summary.
#
# Also the task helpers the runner's cleanup uses (task_state, tasks_not_sleeping).
#
# Contract (common.sh's t_run and t_result keep it): watchdog_begin NAME before a case,
# watchdog_end after it; watchdog_counts PASSED FAILED SKIPPED after each result.

SCENARIO_TIMEOUT=${SCENARIO_TIMEOUT:-420}
WATCHDOG_STATE=$WORK_ROOT/.watchdog

watchdog_begin() { echo "$1 $(date +%s)" >"$WATCHDOG_STATE.current"; }
watchdog_end() { rm -f "$WATCHDOG_STATE.current"; }
watchdog_counts() { echo "$1 $2 $3" >"$WATCHDOG_STATE.counts"; }

# task_state PID: the state letter of /proc/PID/stat (empty when it is gone)
task_state() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1; }

# every task that is not sleeping interruptibly: pid, state, comm, wchan and kernel stack.
# Never reads a task's memory (cmdline, environ): that blocks when the task's mmap lock is held.
tasks_not_sleeping() {
	local d st
	for d in /proc/[0-9]*; do
		st=$(task_state "${d#/proc/}")
		case $st in S | I | "") continue ;; esac
		echo "${d#/proc/} $st $(cat "$d/comm" 2>/dev/null) $(cat "$d/wchan" 2>/dev/null)"
		sed 's/^/    /' "$d/stack" 2>/dev/null
	done
}

watchdog_report() {
	local name=$1 age=$2 d
	echo "scenario $name still running after $age s (SCENARIO_TIMEOUT=$SCENARIO_TIMEOUT)"
	echo "--- tasks not sleeping interruptibly (pid, state, comm, wchan, kernel stack):"
	tasks_not_sleeping
	echo "--- every task (pid, ppid, state, comm):"
	for d in /proc/[0-9]*; do
		echo "${d#/proc/} $(sed 's/^[0-9]* (\(.*\)) \([A-Z]\) \([0-9]*\).*/\3 \2 \1/' "$d/stat" 2>/dev/null)"
	done
	# blocked tasks and every CPU's backtrace, into the kernel log
	echo w >/proc/sysrq-trigger 2>/dev/null
	echo l >/proc/sysrq-trigger 2>/dev/null
	sleep 2
	echo "--- kernel log (last 400 lines):"
	dmesg | tail -n 400
}

watchdog_loop() {
	local name since age p f s
	while sleep 10; do
		read -r name since 2>/dev/null <"$WATCHDOG_STATE.current" || continue
		age=$(($(date +%s) - since))
		[ "$age" -ge "$SCENARIO_TIMEOUT" ] || continue
		# the report may block on a stuck task: it gets 30 s in the background, then we go on
		watchdog_report "$name" "$age" >"$RESULTS/hang.txt" 2>&1 &
		sleep 30
		read -r p f s 2>/dev/null <"$WATCHDOG_STATE.counts" || { p=0 f=0 s=0; }
		f=$((f + 1))
		echo "FAIL $name ($age s): hung, no bounded wait returned; the kernel's view is in hang.txt"
		grep -A3 "^--- tasks not sleeping" "$RESULTS/hang.txt" 2>/dev/null | sed 's/^/    /'
		echo "$p passed, $f failed, $s skipped (the suite stopped at the hung scenario)" | tee "$RESULTS/summary"
		echo 1 >"$RESULTS/status"
		sync
		echo o >/proc/sysrq-trigger # power off: the host reads the summary
		return
	done
}

watchdog_start() {
	watchdog_counts 0 0 0
	watchdog_loop &
	WATCHDOG_PID=$!
}
watchdog_stop() { [ -n "${WATCHDOG_PID:-}" ] && kill "$WATCHDOG_PID" 2>/dev/null; }
