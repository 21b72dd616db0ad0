# shellcheck shell=bash
# Helpers of the guest-side runner (sourced by run-scenarios.sh after common.sh, which has
# fail, last_line, indent and wait_for; bash, runs as root in the VM).
#
# A scenario function uses these and returns 0 (pass), 1 (fail) or 2 (skip), with the reason
# in REASON. Per scenario, the runner sets NAME and WORK (a fresh directory on tmpfs), and
# cleans up afterwards: it kills CLEANUP_PIDS and removes CLEANUP_CGS (in reverse order).
# Globals read: GPUWATCH, HAVE_GW, WL_DIR, VMTESTS, PYTHON, *_TIMEOUT, and HOOKS (the hook
# path the runner put this scenario on, empty for auto).

CG_ROOT=/sys/fs/cgroup

# cg_make VAR NAME: create the cgroup NAME (under the root) and store its path in VAR. It
# is removed by the runner's cleanup. Not to be called in $(...): the cleanup list would be lost.
cg_make() {
	local _cgpath=$CG_ROOT/$2
	[ -d "$_cgpath" ] && rmdir "$_cgpath" 2>/dev/null
	mkdir "$_cgpath" || { fail "cannot create cgroup $_cgpath"; return 1; }
	CLEANUP_CGS+=("$_cgpath")
	printf -v "$1" %s "$_cgpath"
}

# gw_start CGROUP [ATTACH ARGS...]: start `gpuwatch attach` on it (with GPUWATCH_HOOKS=$HOOKS if set) and wait
# for its first manifest (attached), which must then say it uses the hook path $HOOKS.
# Without a gpuwatch binary it does nothing: the scenario still checks its workload's truth.
gw_start() {
	MANIFEST=$WORK/manifest.json
	GW_PID=
	[ "$HAVE_GW" = 1 ] || return 0
	env ${HOOKS:+GPUWATCH_HOOKS="$HOOKS"} "$GPUWATCH" attach --cgroup "$1" --manifest "$MANIFEST" "${@:2}" \
		>"$WORK/gpuwatch.log" 2>&1 &
	GW_PID=$!
	CLEANUP_PIDS+=("$GW_PID")
	local deadline=$((SECONDS + ATTACH_TIMEOUT))
	until [ -s "$MANIFEST" ]; do
		if ! kill -0 "$GW_PID" 2>/dev/null; then
			wait "$GW_PID"
			local rc=$?
			GW_PID=''
			indent "$WORK/gpuwatch.log"
			fail "gpuwatch exited (status $rc) before writing a manifest$(last_line "$WORK/gpuwatch.log")"
			return 1
		fi
		[ $SECONDS -lt $deadline ] || { fail "no manifest ${ATTACH_TIMEOUT}s after gpuwatch attach"; return 1; }
		sleep 0.1
	done
	if [ -n "${HOOKS:-}" ] && ! py "$VMTESTS/hook_paths.py" hooks "$MANIFEST" "$HOOKS" >"$WORK/hooks.txt" 2>&1; then
		fail "GPUWATCH_HOOKS=$HOOKS: $(head -n1 "$WORK/hooks.txt")"
		return 1
	fi
}

# gw_stop: SIGINT, expect exit status 0 and a final manifest, within STOP_TIMEOUT
gw_stop() {
	[ -n "$GW_PID" ] || return 0
	kill -INT "$GW_PID" 2>/dev/null
	local deadline=$((SECONDS + STOP_TIMEOUT)) rc
	while kill -0 "$GW_PID" 2>/dev/null; do
		[ $SECONDS -lt $deadline ] || { fail "gpuwatch still running ${STOP_TIMEOUT}s after SIGINT"; return 1; }
		sleep 0.1
	done
	wait "$GW_PID"
	rc=$?
	GW_PID=
	[ $rc = 0 ] || { indent "$WORK/gpuwatch.log"; fail "gpuwatch exited with status $rc on SIGINT"; return 1; }
	[ -s "$MANIFEST" ] || { fail "no manifest after gpuwatch stopped"; return 1; }
	if [ -n "${HOOKS:-}" ] && ! py "$VMTESTS/hook_paths.py" records "$WORK/gpuwatch.log" "$HOOKS" >"$WORK/records.txt" 2>&1; then
		fail "GPUWATCH_HOOKS=$HOOKS: $(head -n1 "$WORK/records.txt")"
		return 1
	fi
}

gw_alive() {
	[ -z "$GW_PID" ] && return 0
	kill -0 "$GW_PID" 2>/dev/null && return 0
	indent "$WORK/gpuwatch.log"
	fail "gpuwatch died during the scenario$(last_line "$WORK/gpuwatch.log")"
}

# wl_start CGROUP DIR WORKLOAD [ARGS...]: start a workload inside CGROUP (from its first
# instruction on, through incgroup); sets WL_PID. DIR receives its truth and phase files.
wl_start() {
	local cg=$1 dir=$2 bin=$WL_DIR/$3
	shift 3
	[ -x "$bin" ] || { fail "workload $bin not found (build vmtests/ first)"; return 1; }
	mkdir -p "$dir"
	"$VMTESTS/guest/incgroup" "$cg" "$bin" "$dir" "$@" >"$dir/stdout" 2>"$dir/stderr" &
	WL_PID=$!
	CLEANUP_PIDS+=("$WL_PID")
}

# wait_ready DIR N PID: 0 when DIR/ready.N exists; 3 when PID exited 0 instead (no more
# phases); 1 (fail) when it failed or timed out.
wait_ready() {
	local dir=$1 n=$2 pid=$3 deadline=$((SECONDS + PHASE_TIMEOUT)) rc
	until [ -e "$dir/ready.$n" ]; do
		if ! kill -0 "$pid" 2>/dev/null; then
			[ -e "$dir/ready.$n" ] && return 0
			wait "$pid"
			rc=$?
			[ $rc = 0 ] && return 3
			indent "$dir/stderr"
			fail "workload exited with status $rc before phase $n$(last_line "$dir/stderr")"
			return 1
		fi
		[ $SECONDS -lt $deadline ] || { fail "workload not ready for phase $n after ${PHASE_TIMEOUT}s"; return 1; }
		sleep 0.05
	done
}

go() { touch "$1/go.$2"; }

# wl_wait PID DIR: the workload must exit 0 within PHASE_TIMEOUT
wl_wait() {
	local pid=$1 dir=$2 deadline=$((SECONDS + PHASE_TIMEOUT)) rc
	while kill -0 "$pid" 2>/dev/null; do
		[ $SECONDS -lt $deadline ] || { fail "workload still running after its last phase"; return 1; }
		sleep 0.05
	done
	wait "$pid"
	rc=$?
	[ $rc = 0 ] || { indent "$dir/stderr"; fail "workload exited with status $rc$(last_line "$dir/stderr")"; }
}

# check_phase DIR N [CHECKER ARGS...]: the truth of phase N agrees with /proc, then the
# manifest matches it within SETTLE_TIMEOUT (gpuwatch rewrites it within 100 ms of a change).
check_phase() {
	local dir=$1 n=$2
	shift 2
	local truths=("$dir"/truth."$n".*.json)
	[ -e "${truths[0]}" ] || { fail "phase $n: no truth file in $dir"; return 1; }
	if ! py "$VMTESTS/verify_truth.py" "${truths[@]}" >"$dir/verify.$n.txt" 2>&1; then
		indent "$dir/verify.$n.txt"
		fail "phase $n: the workload's truth disagrees with /proc (test bug): $(head -n1 "$dir/verify.$n.txt")"
		return 1
	fi
	[ -n "$GW_PID" ] || return 0
	check_manifest "$dir/check.$n.txt" "phase $n" "${truths[@]}" "$@"
}

# check_manifest OUT WHAT [CHECKER ARGS...]: poll the checker until it passes or SETTLE_TIMEOUT.
# The copy it checked last is kept beside OUT (OUT without .txt, plus .manifest.json): the
# run under another hook path must have accepted the same (hook_paths.py same).
check_manifest() {
	local out=$1 what=$2 deadline=$((SECONDS + SETTLE_TIMEOUT)) snap=${1%.txt}.manifest.json
	shift 2
	until cp "$MANIFEST" "$snap" 2>/dev/null && py "$VMTESTS/check_manifest.py" -q "$snap" "$@" >"$out" 2>&1; do
		gw_alive || return 1
		if [ $SECONDS -ge $deadline ]; then
			indent "$out"
			fail "$what: manifest differs after ${SETTLE_TIMEOUT}s: $(sed -n 2p "$out" | sed 's/^ *- //' | cut -c1-240)"
			return 1
		fi
		sleep 0.2
	done
}

# run_phases DIR PID [CHECKER ARGS...]: check every phase of a workload, then its exit
run_phases() {
	local dir=$1 pid=$2 n=1 rc
	shift 2
	while :; do
		wait_ready "$dir" $n "$pid"
		rc=$?
		[ $rc = 3 ] && return 0
		[ $rc = 0 ] || return 1
		check_phase "$dir" $n "$@" || return 1
		go "$dir" $n
		n=$((n + 1))
	done
}

# final_check: once every workload has exited the manifest is empty; then stop gpuwatch
final_check() {
	if [ -n "$GW_PID" ]; then
		check_manifest "$WORK/check.final.txt" "after exit" "$@" || return 1
	fi
	gw_stop || return 1
	if [ -n "$MANIFEST" ] && [ -s "$MANIFEST" ]; then
		py "$VMTESTS/check_manifest.py" -q "$MANIFEST" "$@" >"$WORK/check.stopped.txt" 2>&1 ||
			{ indent "$WORK/check.stopped.txt"; fail "final manifest (after SIGINT) is not empty"; return 1; }
	fi
	return 0
}
