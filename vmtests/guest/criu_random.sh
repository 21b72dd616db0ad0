# shellcheck shell=bash
# Randomized checkpoint/restore (sourced by scenarios.sh): wl_random builds, from a seed alone,
# a random DRM state in one to four processes (opens, dumb buffers, closes, mappings, unmaps,
# exports, imports, dups, fd closes, exec, fork, a child that exits before the dump) and records
# its ground truth. Each seed is traced by one daemon following the cgroup, its manifest is
# compared exactly with the truth, it is dumped and restored with gpuwatch, every process
# verifies itself (fds and flags, handles and sizes, buffer contents, mappings, dma-bufs), the
# manifest is compared again, and the processes work on (a new file and buffer).
#
# sc_criu_random FIRST COUNT: seeds FIRST .. FIRST+COUNT-1; RANDOM_FIRST and RANDOM_COUNT
# replace them, RANDOM_SEEDS=S (one seed) replaces both. A failing seed does not stop the
# others; the scenario fails naming every failing seed and its first reason, and keeps its
# files (seed.S/: wl_random's operations in stdout, dump.log, restore.log). Replay one:
#   ONLY=criu_random_vgem_1 GUEST_ENV="RANDOM_SEEDS=S" vmtests/run.sh build
# Soak (thousands of seeds in one boot; the scenario watchdog raised to match):
#   ONLY=criu_random_vgem_1 GUEST_ENV="RANDOM_FIRST=1000 RANDOM_COUNT=3000 SCENARIO_TIMEOUT=86400" vmtests/run.sh build
sc_criu_random() {
	local first=$1 count=$2 cg seeds s dir img=$WORK/img failed='' n=0 nfail=0 rc t0=$SECONDS
	criu_need plugin || return $?
	[ -x "$WL_DIR/wl_random" ] || { fail "workload $WL_DIR/wl_random not found (build vmtests/ first)"; return 1; }
	first=${RANDOM_FIRST:-$first} count=${RANDOM_COUNT:-$count}
	seeds=${RANDOM_SEEDS:-$(seq "$first" $((first + count - 1)))}
	cg_make cg "gwt-$NAME" || return 1
	gw_start "$cg" || return 1
	for s in $seeds; do
		dir=$WORK/seed.$s
		n=$((n + 1))
		REASON=''
		random_seed "$s" "$dir" "$cg"
		rc=$?
		crwl_kill "$dir" 2>/dev/null
		if [ "$rc" != 0 ]; then
			nfail=$((nfail + 1))
			failed+="${failed:+; }seed $s: ${REASON:-failed}"
			cp "$WORK/dump.log" "$WORK/restore.log" "$dir/" 2>/dev/null
			echo "    seed $s: FAIL: $REASON ($(grep -c '^op ' "$dir/stdout" 2>/dev/null) operations; $dir/stdout)"
		else
			rm -rf "$dir" # keep only the failing seeds' files
		fi
		rm -rf "$img"
		: >"$WORK/timings.txt"
	done
	echo "    $n seeds on ${WL_CARD:-/dev/dri/card0 (vgem)}: $nfail failed, $((SECONDS - t0)) s"
	[ "$nfail" = 0 ] || { REASON="$nfail of $n seeds failed (replay: RANDOM_SEEDS='<seed>'): ${failed:0:600}"; return 1; }
	final_check --cgroup "$cg"
}

# random_seed SEED DIR CG: one seed, start to finish; REASON says why not
random_seed() {
	local s=$1 dir=$2 cg=$3 img=$WORK/img
	CRWL_WL=wl_random crwl_start "$cg" "$dir" "$s" || return 1
	crwl_wait "$dir" ready.1 || return 1
	check_phase "$dir" 1 --cgroup "$cg" || { REASON="before the dump: $REASON"; return 1; }
	crwl_dump "$dir" "$img" "${CRIU_GW_ARGS[@]}" || return 1
	crwl_restore "$dir" "$img" "$WORK/restore.log" "${CRIU_GW_ARGS[@]}" || return 1
	crwl_in_cgroup "$dir" "$cg" || return 1
	crwl_run_rest "$dir" 1 --cgroup "$cg"
}
