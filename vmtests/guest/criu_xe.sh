# shellcheck shell=bash
# criu_xe (sourced by scenarios.sh): an xe client survives a CRIU checkpoint/restore with its
# VMs, bindings, exec queues and buffers. The gwxe fixture (vmtests/xetest/, a DRM driver named
# "xe" for the VM's 6.1 kernel, which has no xe) is loaded next to vgem; wl_xe_criu builds its
# state on the fixture's render node (holes in the VM, queue and handle tables, a VM-private
# buffer, bindings incl. a userptr and a NULL one, mapped buffers with patterns) under
# `gpuwatch attach`, and is dumped and restored with gpuwatch's plugin. The kernel is the judge:
# the fixture's debugfs state of the workload's file must be the same after the restore
# (check_xe_restore.py compare), and gpuwatch's manifest must have said the same before the dump
# (check_xe_restore.py manifest). Then the workload checks itself and the new ids (go.after).
# No Intel GPU is involved: see vmtests/xetest/README.md for what the fixture mirrors.

# xe_load: 0 loaded (XE_STATE, XE_RENDER set), 2 skip (REASON), 1 fail
xe_load() {
	local kodir=${KO_DIR:-$WL_DIR} card render
	local ko=$kodir/gwxe.ko
	if ! grep -q '^gwxe ' /proc/modules; then
		if [ ! -e "$ko" ]; then
			REASON="$ko not built ($(cat "$kodir/gwxe.skip" 2>/dev/null || echo 'see vmtests/xetest/build.sh'))"
			return 2
		fi
		[ "$(modinfo -F vermagic "$ko" 2>/dev/null | cut -d' ' -f1)" = "$(uname -r)" ] ||
			{ REASON="$ko was built for another kernel than $(uname -r)"; return 2; }
		modprobe drm_shmem_helper 2>/dev/null
		insmod "$ko" 2>"$WORK/insmod.txt" || { fail "insmod gwxe.ko failed: $(cat "$WORK/insmod.txt")"; return 1; }
	fi
	grep -q " /sys/kernel/debug " /proc/mounts || mount -t debugfs none /sys/kernel/debug 2>/dev/null
	for _ in $(seq 50); do
		card=$(basename "$(ls -d /sys/bus/platform/devices/gwxe/drm/card* 2>/dev/null | head -n1)")
		render=$(basename "$(ls -d /sys/bus/platform/devices/gwxe/drm/renderD* 2>/dev/null | head -n1)")
		[ -c "/dev/dri/$render" ] && break
		sleep 0.1
	done
	[ -c "/dev/dri/$render" ] || { fail "gwxe loaded but no render node (card '$card', render '$render')"; return 1; }
	XE_RENDER=/dev/dri/$render
	XE_STATE=/sys/kernel/debug/dri/${card#card}/gwxe_state
	[ -r "$XE_STATE" ] || { fail "gwxe loaded but no $XE_STATE"; return 1; }
}

# xewl_wait DIR FILE PID: until DIR/FILE exists while PID lives
xewl_wait() {
	local deadline=$((SECONDS + PHASE_TIMEOUT))
	until [ -e "$1/$2" ]; do
		alive "$3" || { indent "$1/stderr"; fail "wl_xe_criu ($3) died while we waited for $2$(last_line "$1/stderr")"; return 1; }
		[ $SECONDS -lt $deadline ] || { fail "no $2 from wl_xe_criu after ${PHASE_TIMEOUT}s"; return 1; }
		sleep 0.05
	done
}

# xe_check WHAT OUT CHECKER-ARGS...: runs check_xe_restore.py; fails with its first difference
xe_check() {
	local what=$1 out=$2
	shift 2
	py "$VMTESTS/check_xe_restore.py" "$@" >"$out" 2>&1 && return 0
	indent "$out" 30
	fail "$what: $(sed -n 2p "$out")"
}

sc_criu_xe() {
	local cg dir=$WORK/wl img=$WORK/img pid r deadline rc
	criu_need plugin || return $?
	[ -x "$WL_DIR/wl_xe_criu" ] || { fail "workload $WL_DIR/wl_xe_criu not found (build vmtests/ first)"; return 1; }
	xe_load || return $?
	cg_make cg "gwt-$NAME" || return 1
	gw_start "$cg" || return 1
	mkdir -p "$dir"
	(cd "$dir" && exec setsid "$VMTESTS/guest/incgroup" "$cg" "$WL_DIR/wl_xe_criu" "$dir" "$XE_RENDER" \
		</dev/null >"$dir/stdout" 2>"$dir/stderr" 3>&- 4>&- 5>&-) &
	WL_PID=$!
	disown "$WL_PID"
	CLEANUP_PIDS+=("$WL_PID")
	xewl_wait "$dir" ready "$WL_PID" || return 1
	pid=$(cat "$dir/pid")
	[ "$pid" = "$WL_PID" ] || { fail "wl_xe_criu says pid $pid, started as $WL_PID"; return 1; }
	# the decoder: gpuwatch's manifest says what the kernel says (within SETTLE_TIMEOUT)
	deadline=$((SECONDS + SETTLE_TIMEOUT))
	until cat "$XE_STATE" >"$WORK/state.before.txt" && cp "$MANIFEST" "$WORK/manifest.before.json" &&
		py "$VMTESTS/check_xe_restore.py" manifest "$WORK/manifest.before.json" "$WORK/state.before.txt" \
			--pid "$pid" >"$WORK/check.manifest.txt" 2>&1; do
		gw_alive || return 1
		[ $SECONDS -lt $deadline ] || { xe_check "manifest before the dump" "$WORK/check.manifest.txt" \
			manifest "$WORK/manifest.before.json" "$WORK/state.before.txt" --pid "$pid"; return 1; }
		sleep 0.2
	done
	echo "    manifest before the dump: as the kernel says ($(grep -c . "$WORK/state.before.txt") state lines)"
	mkdir -p "$img"
	criu_run "dump" "$WORK/dump.log" dump -t "$pid" -D "$img" --shell-job "${CRIU_GW_ARGS[@]}"
	if [ "$CRIU_RC" != 0 ]; then
		criu_show "$WORK/dump.log"
		criu_timings
		fail "criu dump failed (exit $CRIU_RC)$(criu_why "$WORK/dump.log")"
		return 1
	fi
	pids_gone "$pid" || return 1
	criu_run "restore" "$WORK/restore.log" restore -D "$img" --shell-job -d "${CRIU_GW_ARGS[@]}"
	criu_timings
	if [ "$CRIU_RC" != 0 ]; then
		criu_show "$WORK/restore.log"
		fail "criu restore failed (exit $CRIU_RC)$(criu_why "$WORK/restore.log")"
		return 1
	fi
	CLEANUP_PIDS+=("$pid")
	grep -E 'gpuwatch: .*xe' "$WORK/restore.log" | sed 's/^([0-9. ]*) /    /' | head -n 8
	alive "$pid" || { criu_show "$WORK/restore.log"; fail "restored wl_xe_criu $pid is not running$(last_line "$dir/stderr")"; return 1; }
	cat "$XE_STATE" >"$WORK/state.after.txt"
	xe_check "the kernel's state after the restore" "$WORK/check.restore.txt" \
		compare "$WORK/state.before.txt" "$WORK/state.after.txt" --pid "$pid" || return 1
	echo "    kernel state after the restore: identical to before the dump"
	sleep 0.3 # a few rounds of the workload's own verification on the restored state
	[ -e "$dir/result.$pid" ] && { fail "wl_xe_criu gave up after the restore: $(cat "$dir/result.$pid")"; return 1; }
	touch "$dir/go.after"
	deadline=$((SECONDS + PHASE_TIMEOUT))
	while alive "$pid"; do
		[ $SECONDS -lt $deadline ] || { fail "wl_xe_criu still running after go.after"; return 1; }
		sleep 0.05
	done
	r=$(head -n1 "$dir/result.$pid" 2>/dev/null)
	[ "$r" = PASS ] || { fail "wl_xe_criu: ${r:-no result.$pid}"; return 1; }
	criu_keep_images "$img"
	gw_stop
	rc=$?
	return $rc
}
