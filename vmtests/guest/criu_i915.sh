# shellcheck shell=bash
# i915 checkpoint/restore scenarios (sourced by scenarios.sh, after criu.sh and i915.sh; bash,
# root, in the VM). The workload wl_i915_criu (workloads/wl_i915_criu.c: two processes, each
# with its own file of the gwi915 fixture's render node, libdrm_intel surfaces with GTT
# mappings, a legacy GEM_MMAP mapping, GEM_CREATE_EXT buffers with placements and PAT mapped
# WB/WC, userptr, tiling, caching, VMs shared by contexts with priority/engine maps, holes in
# the handle, context and VM id tables) checks itself every ~100 ms and, after go.1, works.
# Here the kernel's side is compared too: the fixture's debugfs state and /proc/PID/maps before
# the dump and after the restore (check_i915_restore.py).
#
#   criu_i915               dump (the workload is killed), restore -d, compare, go.1
#   criu_i915_leave_running dump --leave-running, compare on the original, go.1
#   criu_i915_selfcheck     no CRIU: the workload alone passes, and each kind of damage a broken
#                           restore could do (sabotage) makes the workload's check and/or the
#                           state comparison fail: the two scenarios above can fail
# Artefacts: wl/ (expect.*, verify.*, result.*, exit.*), state.{before,after}.txt,
# maps.{before,after}.PID, compare.txt, dump.log, restore.log, criu.out, timings.txt.

I915_CRIU_WL=wl_i915_criu

# ci_need [plugin]: criu (and gpuwatch's CRIU options with `plugin`), gwi915, the workload
ci_need() {
	local rc
	if [ "${1:-}" = plugin ]; then
		criu_need plugin
		rc=$?
		[ $rc = 0 ] || return $rc
	fi
	[ -x "$WL_DIR/$I915_CRIU_WL" ] || {
		REASON="$WL_DIR/$I915_CRIU_WL not built (libdrm_intel missing at build time?)"
		return 2
	}
	i915_load
}

# ci_start CG DIR: the workload as a detached session leader in CG (as crwl_start); sets WL_PID
ci_start() {
	local cg=$1 dir=$2
	mkdir -p "$dir"
	(cd "$dir" && exec setsid "$VMTESTS/guest/incgroup" "$cg" "$WL_DIR/$I915_CRIU_WL" "$dir" \
		</dev/null >"$dir/stdout" 2>"$dir/stderr" 3>&- 4>&- 5>&-) &
	WL_PID=$!
	disown "$WL_PID"
	CLEANUP_PIDS+=("$WL_PID")
}

# ci_ready DIR: both processes built and checked their state (DIR/ready.1)
ci_ready() {
	crwl_wait "$1" ready.1 || return 1
	local p
	for p in $(crwl_pids "$1"); do CLEANUP_PIDS+=("$p"); done
}

# ci_verified DIR: a fresh round of every process's self-check (verify.<pid> removed, then
# rewritten) says PASS; a failure is sticky in the workload, so none since the start is missed
ci_verified() {
	local dir=$1 p v deadline=$((SECONDS + PHASE_TIMEOUT)) bad=''
	for p in $(crwl_pids "$dir"); do rm -f "$dir/verify.$p"; done
	for p in $(crwl_pids "$dir"); do
		until [ -s "$dir/verify.$p" ]; do
			alive "$p" || {
				indent "$dir/stderr"
				fail "workload $(crwl_role "$dir" "$p") $p is not running$(last_line "$dir/stderr")"
				return 1
			}
			[ $SECONDS -lt $deadline ] || { fail "no verify.$p from the workload after ${PHASE_TIMEOUT}s"; return 1; }
			sleep 0.05
		done
		v=$(head -n1 "$dir/verify.$p")
		[ "${v%% *}" = PASS ] && continue
		echo "    self-check of the $(crwl_role "$dir" "$p") ($p): $v"
		indent "$dir/verify.$p.log" 25 | sed 's/^/  /'
		bad+="${bad:+; }$(crwl_role "$dir" "$p"): $(echo "$v" | cut -d' ' -f3- | cut -c1-200)"
	done
	[ -z "$bad" ] || { fail "self-check failed: $bad"; return 1; }
}

# ci_snapshot DIR TAG: the fixture's state and every process's maps, as WORK/state.TAG.txt and
# WORK/maps.TAG.PID
ci_snapshot() {
	local p
	cat "$I915_STATE" >"$WORK/state.$2.txt" || { fail "cannot read $I915_STATE"; return 1; }
	for p in $(crwl_pids "$1"); do
		cp "/proc/$p/maps" "$WORK/maps.$2.$p" || { fail "cannot read /proc/$p/maps"; return 1; }
	done
}

# ci_compare DIR TAG_BEFORE TAG_AFTER [OUT]: check_i915_restore.py on the two snapshots; its
# status is returned (0 same, 1 differences, 2 unreadable), its report is in OUT
ci_compare() {
	local dir=$1 out=${4:-$WORK/compare.txt} p args=()
	for p in $(crwl_pids "$dir"); do args+=(--maps "$p" "$WORK/maps.$2.$p" "$WORK/maps.$3.$p"); done
	# shellcheck disable=SC2046
	py "$VMTESTS/check_i915_restore.py" "$WORK/state.$2.txt" "$WORK/state.$3.txt" \
		--pids $(crwl_pids "$dir") "${args[@]}" --allow-added-offsets >"$out" 2>&1
}

# ci_same DIR: the state and maps after equal those before (normalised), or fail
ci_same() {
	ci_compare "$1" before after
	local rc=$?
	grep '^note:' "$WORK/compare.txt" | sed 's/^/    /'
	[ $rc = 0 ] && return 0
	indent "$WORK/compare.txt" 30
	fail "the kernel's i915 state differs from before the dump: $(grep -m1 '^  - ' "$WORK/compare.txt" | sed 's/^  - //' | cut -c1-240)"
}

# ci_finish DIR: go.1; both processes work, write result.<pid> PASS and exit; the parent's
# exit.<pid> says "0 child 0"
ci_finish() {
	local dir=$1 parent p deadline=$((SECONDS + PHASE_TIMEOUT)) ex
	parent=$(cat "$dir/pid.parent")
	go "$dir" 1
	for p in $(crwl_pids "$dir"); do
		while alive "$p"; do
			[ $SECONDS -lt $deadline ] || { fail "workload $(crwl_role "$dir" "$p") $p still running ${PHASE_TIMEOUT}s after go.1"; return 1; }
			sleep 0.05
		done
	done
	crwl_results "$dir" result || return 1
	ex=$(cat "$dir/exit.$parent" 2>/dev/null)
	[ "$ex" = "0 child 0" ] ||
		{ indent "$dir/stderr"; fail "workload exit status: '${ex:-no exit.$parent}' (want '0 child 0')$(last_line "$dir/stderr")"; return 1; }
}

# ci_count_i915_maps TAG: how many i915 mappings (GEM and legacy) the snapshot's maps hold
ci_count_i915_maps() {
	cat "$WORK"/maps."$1".* 2>/dev/null | grep -cE ' (anon_inode:i915\.gem|/i915 \(deleted\))$'
}

# ci_dump_log_checks LEAVE: the plugin said it handled every i915 mapping (each replaced by a
# placeholder, none by a copy: every mapping of this workload has a handle) on the path the
# running CRIU calls for (3.x: the action script, freezing the cgroup, before CRIU seizes the
# tasks; 4.x: the plugin's CHECKPOINT_DEVICES in the seized tasks, nothing frozen; a watcher puts them back should criu die),
# put them all back (in the dumped tasks with LEAVE=1, in the restored ones otherwise), and
# brought none back degraded. Wording from restore/plugin (i915_late_maps.cpp, dump_session.cpp,
# restore_vma.cpp, dump_probe.cpp) and restore/helper (criu_action.cpp):
#   "gpuwatch: dump: N i915 mappings were replaced by placeholders and N by copies ..."  (once,
#      or once per task on 4.x)
#   "gpuwatch: pid P: N i915 mappings converted in the seized task ..."  (4.x)
#   "gpuwatch-criu-action: CRIU 4.x: the i915 mappings (...) are converted by the plugin ..."
#   "gpuwatch: pid P: N i915 mappings put back in the dumped task"     (dump end)
#   "gpuwatch: pid P: N i915 mappings back at their addresses"         (RESUME_DEVICES_LATE)
#   "gpuwatch: mapping 0x...: ... comes back ..." / "contents not saved" / "does not fit"
ci_dump_log_checks() {
	local leave=$1 want lines held copies back log pat degraded criu_major
	want=$(ci_count_i915_maps before)
	lines=$(grep -oE 'gpuwatch: dump: [0-9]+ i915 mappings were replaced by placeholders and [0-9]+ by copies' "$WORK/dump.log")
	[ -n "$lines" ] || { fail "dump.log has no 'gpuwatch: dump: N i915 mappings were replaced by placeholders' line: the plugin saw no converted mapping (or its wording changed: see ci_dump_log_checks)"; return 1; }
	held=$(echo "$lines" | sed -E 's/.*dump: ([0-9]+) i915.*/\1/' | awk '{ n += $1 } END { print n + 0 }')
	copies=$(echo "$lines" | sed -E 's/.* and ([0-9]+) by copies/\1/' | awk '{ n += $1 } END { print n + 0 }')
	echo "    plugin: $held i915 mappings replaced by placeholders and $copies by copies (the tasks had $want i915 mappings)"
	[ "$held" = "$want" ] && [ "$copies" = 0 ] ||
		{ fail "the plugin took $held placeholder(s) and $copies copy(ies) at dump; the tasks had $want i915 mappings, all with a handle"; return 1; }
	criu_major=$("$CRIU" --version | sed -n 's/^Version: \([0-9]*\).*/\1/p')
	if [ "${criu_major:-0}" -ge 4 ]; then
		grep -q 'i915 mappings converted in the seized task' "$WORK/dump.log" && ! grep -q 'frozen until criu' "$WORK/dump.log" ||
			{ fail "CRIU $("$CRIU" --version | head -n1): the i915 mappings were not converted by the plugin's CHECKPOINT_DEVICES alone (no freeze)"; return 1; }
		echo "    converted at CHECKPOINT_DEVICES (CRIU $criu_major.x): nothing frozen"
	else
		grep -q 'frozen until criu' "$WORK/dump.log" ||
			{ fail "CRIU 3.x: the action script did not convert the i915 mappings at pre-dump"; return 1; }
	fi
	if [ "$leave" = 1 ]; then
		log=$WORK/dump.log pat='i915 mappings put back in the dumped task'
	else
		log=$WORK/restore.log pat='i915 mappings back at their addresses'
	fi
	back=$(grep -oE "gpuwatch: pid [0-9]+: [0-9]+ $pat" "$log" | awk '{ n += $4 } END { print n + 0 }')
	[ "${back:-0}" = "$want" ] || { fail "the plugin reports ${back:-0} i915 mapping(s) '$pat' in $(basename "$log"), expected $want"; return 1; }
	degraded=$(cat "$WORK/dump.log" "$WORK/restore.log" 2>/dev/null |
		grep -E 'gpuwatch: mapping 0x[0-9a-f]+.*(comes back|contents not saved|does not fit)')
	[ -z "$degraded" ] || {
		echo "$degraded" | head -n 10 | sed 's/^([0-9. ]*) /    /'
		fail "the plugin brought $(echo "$degraded" | wc -l) i915 mapping(s) back degraded: $(echo "$degraded" | head -n1 | sed 's/^.*gpuwatch: //' | cut -c1-200)"
		return 1
	}
}

# ci_failed_dump DIR: after a failed dump, add to REASON whether the workload was left intact
# (alive, and a fresh self-check round passes)
ci_failed_dump() {
	local dir=$1 why=$REASON
	if ci_verified "$dir" >/dev/null; then
		REASON="$why (the workload survived it intact: its self-check passes)"
	else
		REASON="$why; and the failed dump harmed the workload: $REASON"
	fi
	return 1
}

# ci_begin DIR: the plugin is needed (its skip status otherwise); a cgroup for this scenario, the
# daemon attached to it, wl_i915_criu started in it with DIR, ready and verified, and the kernel's
# state snapshotted as "before"
ci_begin() {
	local dir=$1 rc   # cg: the caller's (bash scoping), set by cg_make
	ci_need plugin
	rc=$?
	[ $rc = 0 ] || return $rc
	cg_make cg "gwt-$NAME" || return 1
	gw_start "$cg" || return 1
	ci_start "$cg" "$dir" || return 1
	ci_ready "$dir" || return 1
	ci_verified "$dir" || return 1
	ci_snapshot "$dir" before || return 1
}

# criu_i915 / criu_i915_leave_running
sc_criu_i915() {
	local cg dir=$WORK/wl img=$WORK/img leave=0 p
	[ "${1:-}" = --leave-running ] && leave=1
	ci_begin "$dir" || return $?
	if [ $leave = 1 ]; then
		mkdir -p "$img"
		criu_run "dump --leave-running" "$WORK/dump.log" dump -t "$(cat "$dir/pid.parent")" -D "$img" \
			--shell-job --leave-running "${CRIU_GW_ARGS[@]}"
		if [ "$CRIU_RC" != 0 ]; then
			criu_show "$WORK/dump.log"
			criu_timings
			fail "criu dump --leave-running failed (exit $CRIU_RC)$(criu_why "$WORK/dump.log")"
			ci_failed_dump "$dir"
			return 1
		fi
		criu_timings
		for p in $(crwl_pids "$dir"); do
			alive "$p" || { fail "the $(crwl_role "$dir" "$p") ($p) died during criu dump --leave-running"; return 1; }
		done
	else
		if ! crwl_dump "$dir" "$img" "${CRIU_GW_ARGS[@]}"; then
			criu_timings
			[ "$CRIU_RC" = 0 ] || ci_failed_dump "$dir"
			return 1
		fi
		crwl_restore "$dir" "$img" "$WORK/restore.log" "${CRIU_GW_ARGS[@]}" || { criu_timings; return 1; }
		criu_timings
		crwl_in_cgroup "$dir" "$cg" || return 1
	fi
	ci_snapshot "$dir" after || return 1
	local why=''
	ci_same "$dir" || why=$REASON
	[ -n "$why" ] || ci_dump_log_checks "$leave" || why=$REASON
	ci_verified "$dir" || why=${why:+$why; and }$REASON
	[ -z "$why" ] || { REASON=$why; return 1; }
	ci_finish "$dir" || return 1
	criu_keep_images "$img"
	gw_stop
}

# criu_i915_predump: `criu pre-dump` of a task holding i915 mappings is refused before the tasks
# are touched, with gpuwatch's one line (no CRIU runs a device hook after a pre-dump, so
# converted mappings could not be put back); the workload carries on intact (its self-check, and
# the kernel's state, as before), and finishes its work.
sc_criu_i915_predump() {
	local cg dir=$WORK/wl img=$WORK/img
	ci_begin "$dir" || return $?
	mkdir -p "$img"
	criu_run "pre-dump" "$WORK/pre-dump.log" pre-dump -t "$(cat "$dir/pid.parent")" -D "$img" --shell-job "${CRIU_GW_ARGS[@]}"
	criu_timings
	[ "$CRIU_RC" != 0 ] || { fail "criu pre-dump of i915 mappings succeeded"; return 1; }
	grep -q "gpuwatch: criu pre-dump: process [0-9]* has i915 GEM mappings" "$WORK/pre-dump.log" ||
		{ criu_show "$WORK/pre-dump.log"; fail "criu pre-dump failed (exit $CRIU_RC) without gpuwatch's line$(criu_why "$WORK/pre-dump.log")"; return 1; }
	echo "    refused: $(grep -o "gpuwatch: criu pre-dump: .*" "$WORK/pre-dump.log" | head -n1 | cut -c1-200)"
	ci_snapshot "$dir" after || return 1
	ci_same "$dir" || return 1
	ci_verified "$dir" || return 1
	ci_finish "$dir" || return 1
	gw_stop
}

# One line per case: KIND, the workload check that must report it (verify: the ~100 ms loop;
# result: the go.1 work) with a phrase of its reason, and whether the kernel-side
# comparison (check_i915_restore.py) must see it too (1) or cannot (0: not kernel state).
CI_SABOTAGE=(
	"byte      verify contents.differ              0"
	"usermem   verify userptr.memory               0"
	"anoncopy  verify maps.says                    1"
	"othertype verify not.this.handle's.mapping    1"
	"handle    verify the.handle.is.gone           1"
	"filler    verify handle.2.exists              1"
	"tiling    verify tiling                       1"
	"caching   verify caching                      1"
	"userptr   verify not.a.userptr                1"
	"priority  verify priority                     1"
	"context   verify GETPARAM.PRIORITY            1"
	"ctxfiller verify context.4.exists             1"
	"vmfiller  result VM.id.2.was.destroyed        1"
)

# criu_i915_selfcheck: no CRIU. The workload alone: ready, its check passes, the kernel state
# is unchanged a while later (the normalisation hides nothing that changes by itself), go.1
# passes. Then each sabotage case on a fresh workload must be caught as listed in CI_SABOTAGE.
# The snapshots of the clean run are what vmtests/selftest/i915_restore/ was recorded from.
sc_criu_i915_selfcheck() {
	local cg dir rc entry kind where phrase kernel got parent cmp failed='' n=0
	ci_need
	rc=$?
	[ $rc = 0 ] || return $rc
	cg_make cg "gwt-$NAME" || return 1
	dir=$WORK/wl
	ci_start "$cg" "$dir" || return 1
	ci_ready "$dir" || return 1
	ci_verified "$dir" || return 1
	ci_snapshot "$dir" before || return 1
	sleep 1
	ci_verified "$dir" || return 1
	ci_snapshot "$dir" after || return 1
	ci_same "$dir" || { REASON="the workload alone: $REASON"; return 1; }
	ci_finish "$dir" || { REASON="the workload alone: $REASON"; return 1; }
	echo "    the workload alone: ready, self-check PASS, kernel state unchanged, go.1 PASS, exit 0"
	for entry in "${CI_SABOTAGE[@]}"; do
		read -r kind where phrase kernel <<<"$entry"
		n=$((n + 1))
		dir=$WORK/sab-$kind
		ci_start "$cg" "$dir" || return 1
		ci_ready "$dir" || return 1
		ci_verified "$dir" || { failed+="${failed:+; }$kind: clean run: $REASON"; crwl_kill "$dir"; continue; }
		ci_snapshot "$dir" "sab-$kind-before" || return 1
		parent=$(cat "$dir/pid.parent")
		echo "$kind" >"$dir/sabotage"
		sleep 1
		ci_snapshot "$dir" "sab-$kind-after" || return 1
		ci_compare "$dir" "sab-$kind-before" "sab-$kind-after" "$WORK/compare-$kind.txt"
		cmp=$?
		go "$dir" 1
		for _ in $(seq 200); do alive "$parent" || break; sleep 0.05; done
		crwl_kill "$dir"
		got=$(head -n1 "$dir/$where.$parent" 2>/dev/null)
		printf '    sabotage %-9s %s: %s | kernel state: %s\n' "$kind" "$where" "$(echo "${got:-nothing}" | cut -c1-110)" \
			"$([ $cmp = 1 ] && grep -m1 '^  - ' "$WORK/compare-$kind.txt" | sed 's/^  - //' | cut -c1-90 || echo "same (rc $cmp)")"
		# shellcheck disable=SC2053 # the phrase is a pattern: '.' in the table matches any character
		[[ "$got" == FAIL*${phrase//./?}* ]] || failed+="${failed:+; }$kind: $where.$parent does not report '${phrase//./ }'"
		[ "$cmp" = "$kernel" ] || failed+="${failed:+; }$kind: check_i915_restore.py exit $cmp, want $kernel"
	done
	[ -z "$failed" ] || { fail "sabotage not caught: $failed"; return 1; }
	echo "    $n sabotage cases, each caught as expected"
}

# criu_i915_va: wl_i915_va (the tracing scenarios' workload) dumped in its phase 2, where it
# holds what wl_i915_criu does not: an i915 perf stream fd and an out-fence (sync_file) fd, a
# mapping whose handle was closed (its buffer lives only through it: copied to anonymous
# memory), a GTT mapping with a hole punched in it (the part starting inside its buffer is
# copied too), a context whose VM id was destroyed, and a decoder child with its own file.
# Checked: the dump and restore succeed; the kernel's i915 state of both processes is the same
# after (check_i915_restore.py, without --maps: the copied mappings are anonymous memory now);
# the still-attached daemon's manifest equals the kernel's state after the restore
# (check_i915.py, as in i915_va); the plugin restored the perf stream and the fence; and the
# workload then releases everything (closing the restored fds, unmapping, destroying) and
# exits with an empty stderr (it dies with a message on any failed call).
sc_criu_i915_va() {
	local cg dir=$WORK/wl img=$WORK/img pids p rc deadline
	criu_need plugin
	rc=$?
	[ $rc = 0 ] || return $rc
	i915_load
	rc=$?
	[ $rc = 0 ] || return $rc
	cg_make cg "gwt-$NAME" || return 1
	gw_start "$cg" || return 1
	mkdir -p "$dir"
	(cd "$dir" && exec setsid "$VMTESTS/guest/incgroup" "$cg" "$WL_DIR/wl_i915_va" "$dir" \
		</dev/null >"$dir/stdout" 2>"$dir/stderr" 3>&- 4>&- 5>&-) &
	WL_PID=$!
	disown "$WL_PID"
	CLEANUP_PIDS+=("$WL_PID")
	wait_ready "$dir" 1 "$WL_PID" || return 1
	go "$dir" 1
	wait_ready "$dir" 2 "$WL_PID" || return 1
	pids="$WL_PID $(cat "/proc/$WL_PID/task/$WL_PID/children" 2>/dev/null)"
	for p in $pids; do CLEANUP_PIDS+=("$p"); done
	# shellcheck disable=SC2086
	check_i915_phase "$dir" 2 $pids || return 1
	cat "$I915_STATE" >"$WORK/state.before.txt"
	mkdir -p "$img"
	criu_run "dump" "$WORK/dump.log" dump -t "$WL_PID" -D "$img" --shell-job "${CRIU_GW_ARGS[@]}"
	[ "$CRIU_RC" = 0 ] || { criu_show "$WORK/dump.log"; criu_timings; fail "criu dump failed (exit $CRIU_RC)$(criu_why "$WORK/dump.log")"; return 1; }
	# shellcheck disable=SC2086 # one pid per word
	pids_gone $pids || return 1
	criu_run "restore" "$WORK/restore.log" restore -D "$img" --shell-job -d "${CRIU_GW_ARGS[@]}"
	criu_timings
	[ "$CRIU_RC" = 0 ] || { criu_show "$WORK/restore.log"; fail "criu restore failed (exit $CRIU_RC)$(criu_why "$WORK/restore.log")"; return 1; }
	for p in $pids; do
		alive "$p" || { criu_show "$WORK/restore.log"; fail "restored process $p is not running"; return 1; }
	done
	cat "$I915_STATE" >"$WORK/state.after.txt"
	# shellcheck disable=SC2086
	py "$VMTESTS/check_i915_restore.py" "$WORK/state.before.txt" "$WORK/state.after.txt" --pids $pids \
		--allow-added-offsets >"$WORK/compare.txt" 2>&1 ||
		{ indent "$WORK/compare.txt" 30; fail "the kernel's i915 state differs from before the dump: $(grep -m1 '^  - ' "$WORK/compare.txt" | sed 's/^  - //' | cut -c1-240)"; return 1; }
	# shellcheck disable=SC2086
	check_i915_phase "$dir" restored $pids || return 1
	for what in "restored sync_file" "restored i915_perf"; do
		grep -q "gpuwatch: $what [0-9]* on /dev/dri/" "$WORK/restore.log" ||
			{ fail "restore.log does not say '$what' (the plugin's line for it)"; return 1; }
	done
	go "$dir" 2
	deadline=$((SECONDS + PHASE_TIMEOUT))
	while alive "$WL_PID"; do
		[ $SECONDS -lt $deadline ] || { fail "the restored workload still runs ${PHASE_TIMEOUT}s after its last phase"; return 1; }
		sleep 0.05
	done
	[ ! -s "$dir/stderr" ] || { indent "$dir/stderr"; fail "the restored workload failed$(last_line "$dir/stderr")"; return 1; }
	criu_keep_images "$img"
	gw_stop
}

# criu_i915_killed: criu SIGKILLed during the dump of wl_i915_criu, held at its post-dump action
# (every image written, the tasks still seized) while the i915 mappings are still replaced for
# it (CRIU 3.x: by the pre-dump, the cgroup frozen, a watcher left behind; 4.x: by the plugin in
# the seized tasks, put back at the dump's end, which a killed criu never reaches). Once the
# watcher is done, the workload has every mapping as it was (the kernel's state as before the
# dump), passes its self-check and finishes its work.
# On CRIU 4.x nothing is frozen: the dying criu lets the tasks go with their placeholders, and
# they run until the watcher has put their mappings back (docs/criu.md: a touch in that window
# faults). The workload is held idle (its `hold` file) from before the dump until the watcher
# is done, so that its self-check tests the state after the revert, not the window: a check run
# inside the window fails (two adjacent placeholders merge into one mapping) and is sticky.
sc_criu_i915_killed() {
	local cg dir=$WORK/wl img=$WORK/img deadline p
	ci_begin "$dir" || return $?
	: >"$dir/hold"
	for p in $(crwl_pids "$dir"); do
		wait_file "$dir/held.$p" "$PHASE_TIMEOUT" "$p" || { fail "workload $p did not hold"; return 1; }
	done
	dump_killed "$dir" "$img" "$WORK/dump.log" || return 1
	# the watcher (3.x: the pre-dump's; 4.x: the plugin's, one per task) sees criu gone within
	# its poll, puts back what is still replaced and exits
	deadline=$((SECONDS + 30))
	while pgrep -x gpuwatch-watch >/dev/null; do
		[ $SECONDS -lt $deadline ] || { fail "the i915 watcher still runs 30 s after criu was killed"; return 1; }
		sleep 0.1
	done
	[ ! -e "$img/gpuwatch-watcher.log" ] || tail -n 4 "$img/gpuwatch-watcher.log" | sed 's/^/    watcher: /'
	ci_snapshot "$dir" after || return 1
	ci_same "$dir" || return 1
	rm -f "$dir/hold"
	ci_verified "$dir" || return 1
	ci_finish "$dir" || return 1
	gw_stop
}
