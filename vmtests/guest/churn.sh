# shellcheck shell=bash
# Churn (sourced by scenarios.sh): CHURN_N (10000) short-lived processes in a followed cgroup,
# two at a time, each opening vgem's card, creating, mapping, writing, unmapping and closing a
# dumb buffer through a dup()ed fd (wl_churn). After a warm-up of CHURN_WARM (300) the daemon's
# resident memory and open fds are its baseline; after the churn, once the manifest is empty
# again, they must be back there (memory within CHURN_SLACK_KB, 512: a leak of 52 bytes per
# process would exceed it), the manifest complete with no event lost and every record decoded;
# once the daemon is stopped, nothing of it is left in the run directory.

CHURN_N=${CHURN_N:-10000}
CHURN_WARM=${CHURN_WARM:-300}
CHURN_SLACK_KB=${CHURN_SLACK_KB:-512}

# churn_run DIR N: wl_churn DIR N in the followed cgroup CHURN_CG, to its end; every child worked
churn_run() {
	local dir=$1 n=$2 rc
	wl_start "$CHURN_CG" "$dir" wl_churn "$n" || return 1
	wait "$WL_PID"
	rc=$?
	[ "$rc" = 0 ] || { indent "$dir/stderr"; fail "wl_churn $n exited $rc$(last_line "$dir/stderr")"; return 1; }
	[ "$(cat "$dir/churn.$n" 2>/dev/null)" = 0 ] ||
		{ indent "$dir/stderr"; fail "wl_churn $n: $(cat "$dir/churn.$n" 2>/dev/null || echo '?') children failed$(last_line "$dir/stderr")"; return 1; }
}

# churn_settled: the manifest lists no process, file or object (every exit seen), within 120 s
churn_settled() {
	local deadline=$((SECONDS + 120))
	until grep -q '"files":\[\].*"objects":\[\].*"processes":\[\]' "$MANIFEST" 2>/dev/null; do
		[ $SECONDS -lt $deadline ] || { fail "the manifest still lists state 120 s after the last process exited: $(head -c 300 "$MANIFEST")"; return 1; }
		sleep 0.5
	done
}

# churn_mem: the daemon's anonymous resident memory (heap; not the ring buffer's pages) in KiB and its number of open fds
churn_mem() {
	echo "$(awk '/^RssAnon:/ { print $2 }' "/proc/$GW_PID/status") $(find "/proc/$GW_PID/fd" -mindepth 1 | wc -l)"
}

sc_churn() {
	local dir=$WORK/churn rss0 fd0 rss1 fd1 gen0 gen1 t0 t1 pid run_dir=${GPUWATCH_RUN_DIR:-/run/gpuwatch}
	# shellcheck disable=SC2034 # REASON is the runner's
	[ "$HAVE_GW" = 1 ] || { REASON="no gpuwatch binary"; return 2; }
	cg_make CHURN_CG "gwt-$NAME" || return 1
	gw_start "$CHURN_CG" || return 1
	pid=$GW_PID
	churn_run "$dir.warm" "$CHURN_WARM" && churn_settled || return 1
	read -r rss0 fd0 < <(churn_mem)
	gen0=$(grep -o '"generation":[0-9]*' "$MANIFEST" | cut -d: -f2)
	t0=$SECONDS
	churn_run "$dir" "$CHURN_N" || return 1
	t1=$SECONDS
	churn_settled || return 1
	read -r rss1 fd1 < <(churn_mem)
	gen1=$(grep -o '"generation":[0-9]*' "$MANIFEST" | cut -d: -f2)
	echo "    $CHURN_N processes in $((t1 - t0)) s; daemon: ${rss0} KiB and $fd0 fds after $CHURN_WARM, ${rss1} KiB and $fd1 fds after $CHURN_N more; manifest generation $gen0 -> $gen1"
	# the daemon saw them: the manifest was rewritten while they came and went (writes coalesce)
	[ "${gen1:-0}" -gt $((${gen0:-0} + 10)) ] || { fail "the manifest went from generation $gen0 to $gen1 over $CHURN_N processes: were they followed?"; return 1; }
	cp "$MANIFEST" "$WORK/manifest.1.json" # what the runner compares across hook paths
	if ! grep -q '"complete":true' "$MANIFEST" || ! grep -q '"lost_events":0' "$MANIFEST" ||
		! grep -q '"malformed_records":0' "$MANIFEST"; then
		fail "after the churn the manifest is not complete, lost events or found malformed records: $(head -c 300 "$MANIFEST")"
		return 1
	fi
	[ "$fd1" -le "$fd0" ] || { find "/proc/$pid/fd" -mindepth 1 -printf '    %f -> %l\n'; fail "the daemon holds $fd1 fds after the churn, $fd0 before"; return 1; }
	[ "$rss1" -le $((rss0 + CHURN_SLACK_KB)) ] ||
		{ fail "the daemon's memory grew from $rss0 KiB to $rss1 KiB over $CHURN_N processes (slack $CHURN_SLACK_KB KiB)"; return 1; }
	[ -z "$(cat "$CHURN_CG/cgroup.procs")" ] || { fail "processes left in the cgroup: $(tr '\n' ' ' <"$CHURN_CG/cgroup.procs")"; return 1; }
	gw_stop || return 1
	local left
	left=$(find "$run_dir" -maxdepth 1 -name "$pid.*" 2>/dev/null)
	[ -z "$left" ] || { fail "the stopped daemon left $left"; return 1; }
}
