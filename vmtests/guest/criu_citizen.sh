# shellcheck shell=bash
# gpuwatch in checkpoints with no DRM state (sourced by scenarios.sh): the non-GPU cases of
# wl_plain (pipes, unix and inet sockets, a pty, timers, file locks, mappings, threads, a
# process tree, cgroups, UTS and IPC namespaces), each dumped and restored three times by the
# VM's CRIU: plain (no gpuwatch), with `gpuwatch criu-args` on the command line and a daemon
# following the cgroup, and with the CRIU configuration file `gpuwatch container-config
# --criu-conf` writes (criu --config, with what that file loads on this CRIU; no daemon). Every
# case that passes plain must pass with gpuwatch, which must have been loaded. The table
# (citizen.txt) gives each run's outcome and dump and restore times.

CITIZEN_CASES=${CITIZEN_CASES:-pipe unix inet tty timers locks mmap threads tree cgroup ns}

# citizen_case_args CASE: CRIU options the case needs whoever loads the plugin
citizen_case_args() {
	case $1 in
	locks) echo --file-locks ;;
	esac
}

# citizen_run CASE MODE CG ARGS...: one dump and restore of wl_plain CASE in CG, with ARGS.
# Sets CIT_OUT ("PASS", or what failed) and CIT_MS ("dump ms/restore ms").
citizen_run() {
	local case=$1 mode=$2 cg=$3 dir=$WORK/citizen/$1.$2 img=$WORK/citizen/img parent p t0 t1 td=- deadline
	shift 3
	local args=("$@")
	# shellcheck disable=SC2207 # one word or none
	args+=($(citizen_case_args "$case"))
	CIT_OUT=PASS CIT_MS=-/-
	rm -rf "$dir" "$img" && mkdir -p "$dir" "$img"
	CRWL_WL=wl_plain crwl_start "$cg" "$dir" "$case"
	if ! crwl_wait "$dir" ready.1; then
		CIT_OUT="did not start: $REASON"
		crwl_kill "$dir"
		return
	fi
	parent=$(cat "$dir/pid.parent")
	t0=$(date +%s%N)
	criu_run "dump $case ($mode)" "$WORK/citizen/dump.$case.$mode.log" dump -t "$parent" -D "$img" --shell-job "${args[@]}"
	t1=$(date +%s%N)
	td=$(((t1 - t0) / 1000000))
	if [ "$CRIU_RC" != 0 ]; then
		CIT_OUT="dump failed (exit $CRIU_RC)$(criu_why "$WORK/citizen/dump.$case.$mode.log")"
		for p in $(crwl_pids "$dir"); do
			alive "$p" || CIT_OUT+="; the failed dump left process $p dead"
		done
		crwl_kill "$dir"
		CIT_MS=$td/-
		return
	fi
	# shellcheck disable=SC2046 # one pid per word
	pids_gone $(crwl_pids "$dir") # a pid still there fails the restore, which says so
	t0=$(date +%s%N)
	criu_run "restore $case ($mode)" "$WORK/citizen/restore.$case.$mode.log" restore -D "$img" --shell-job -d "${args[@]}"
	t1=$(date +%s%N)
	CIT_MS=$td/$(((t1 - t0) / 1000000))
	if [ "$CRIU_RC" != 0 ]; then
		CIT_OUT="restore failed (exit $CRIU_RC)$(criu_why "$WORK/citizen/restore.$case.$mode.log")"
		crwl_kill "$dir"
		return
	fi
	CLEANUP_PIDS+=("$parent")
	if [ "$mode" != plain ] && ! grep -q 'Plugin "gpuwatch"' "$WORK/citizen/dump.$case.$mode.log"; then
		CIT_OUT="gpuwatch's plugin was not loaded (dump.$case.$mode.log)"
	fi
	go "$dir" 1
	deadline=$((SECONDS + PHASE_TIMEOUT))
	while alive "$parent" && [ $SECONDS -lt $deadline ]; do sleep 0.05; done
	if [ "$CIT_OUT" != PASS ]; then
		:
	elif [ -s "$dir/result.$parent" ]; then
		CIT_OUT=$(head -n1 "$dir/result.$parent")
	elif alive "$parent"; then
		CIT_OUT="no result after ${PHASE_TIMEOUT}s"
	else
		CIT_OUT="exited without a result$(last_line "$dir/stderr")"
	fi
	crwl_kill "$dir"
}

sc_criu_citizen() {
	local cg_plain cg_cli cg_conf case mode out plain failed='' conf=$WORK/citizen.conf ran=0 n
	local -A total=()
	criu_need plugin || return $?
	[ -x "$WL_DIR/wl_plain" ] || { fail "workload $WL_DIR/wl_plain not found (build vmtests/ first)"; return 1; }
	ip link set lo up 2>/dev/null
	mkdir -p "$WORK/citizen"
	"$GPUWATCH" container-config --criu-conf "$conf" --hooks-dir "$WORK/citizen/hooks" >"$WORK/citizen/config.out" 2>&1 ||
		{ indent "$WORK/citizen/config.out"; fail "gpuwatch container-config --criu-conf $conf failed"; return 1; }
	cg_make cg_plain "gwt-$NAME-plain" && cg_make cg_cli "gwt-$NAME-cli" && cg_make cg_conf "gwt-$NAME-conf" || return 1
	gw_start "$cg_cli" || return 1
	printf '%-8s %-40s %-40s %s\n' case "plain (dump/restore ms)" "criu-args + daemon" "--config $(basename "$conf")" \
		>"$WORK/citizen.txt"
	for case in $CITIZEN_CASES; do
		local row=()
		for mode in plain cli conf; do
			case $mode in
			plain) citizen_run "$case" plain "$cg_plain" ;;
			cli) citizen_run "$case" cli "$cg_cli" "${CRIU_GW_ARGS[@]}" ;;
			conf) citizen_run "$case" conf "$cg_conf" --config "$conf" ;;
			esac
			rmdir "$CG_ROOT/gwt-$NAME-$mode/plain-sub" 2>/dev/null
			ran=$((ran + 1))
			out="$CIT_OUT ($CIT_MS)"
			[[ "$CIT_MS" == [0-9]*/[0-9]* ]] && total[$mode]=$((${total[$mode]:-0} + ${CIT_MS%/*} + ${CIT_MS#*/}))
			row+=("$out")
			[ "$mode" = plain ] && plain=$CIT_OUT
			if [ "$mode" != plain ] && [ "$plain" = PASS ] && [ "$CIT_OUT" != PASS ]; then
				failed+="${failed:+; }$case with $mode: $CIT_OUT"
			fi
		done
		printf '%-8s %-40s %-40s %s\n' "$case" "${row[0]:0:40}" "${row[1]:0:40}" "${row[2]}" >>"$WORK/citizen.txt"
		[[ "$plain" == PASS ]] || echo "    note: $case fails with plain CRIU (not counted against gpuwatch): $plain"
	done
	n=$(echo "$CITIZEN_CASES" | wc -w)
	printf 'dump + restore, mean per case: plain %d ms, criu-args + daemon %d ms, --config %d ms\n' \
		$((${total[plain]:-0} / n)) $((${total[cli]:-0} / n)) $((${total[conf]:-0} / n)) >>"$WORK/citizen.txt"
	indent "$WORK/citizen.txt"
	gw_stop || return 1
	[ "$ran" -gt 0 ] || { fail "no case ran (CITIZEN_CASES='$CITIZEN_CASES')"; return 1; }
	[ -z "$failed" ] || { fail "passes plain, fails with gpuwatch: $failed"; return 1; }
	# the daemon followed the cli cgroup throughout: no DRM state may have been invented
	"$PYTHON" -c '
import json, sys
m = json.load(open(sys.argv[1]))
fds = sum(len(p.get("fds", [])) + len(p.get("mmaps", [])) for p in m.get("processes", []))
nf, no = len(m.get("files", [])), len(m.get("objects", []))
if fds or nf or no:
    sys.exit(f"DRM state in a cgroup that never had any: {fds} fds and mappings, {nf} files, {no} objects")
' "$MANIFEST" >"$WORK/citizen/manifest-check.txt" 2>&1 ||
		{ fail "the daemon's manifest of the non-GPU cgroup: $(tail -n1 "$WORK/citizen/manifest-check.txt")"; return 1; }
}
