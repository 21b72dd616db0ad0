# shellcheck shell=bash
# Faults around a checkpoint (sourced by scenarios.sh). Each must end in a clean success or a
# clean failure with one gpuwatch line, and a failed dump must leave the workload carrying on
# untouched (it verifies itself as if never dumped, and the manifest stays exact).

# fault_cgroup [ATTACH ARGS...]: the plugin is needed (its skip status otherwise); a cgroup for
# this scenario (cg: the caller's, by bash's scoping) and the daemon attached to it
fault_cgroup() {
	criu_need plugin || return $?
	cg_make cg "gwt-$NAME" || return 1
	gw_start "$cg" "$@"
}

# fault_workload DIR: wl_criu started in the cgroup cg with DIR, ready and exact in the manifest
fault_workload() {
	crwl_start "$cg" "$1" || return 1
	crwl_wait "$1" ready.1 || return 1
	check_phase "$1" 1 --cgroup "$cg"
}

# fault_begin DIR [ATTACH ARGS...]: fault_cgroup, then fault_workload DIR
fault_begin() {
	local dir=$1
	shift
	fault_cgroup "$@" || return $?
	fault_workload "$dir"
}

# A full image directory: wl_criu is dumped into a tmpfs of FAULT_SIZES (64k 256k 512k 560k
# 600k 620k 640k 1m 4m 64m: CRIU's own images of it take about 580k, gpuwatch's 80k) in turn.
# Each dump either succeeds (then that image restores, verifies and works, and the run ends
# there) or fails; a failed one must name the cause, leave none of gpuwatch's
# temporary files in the image directory, and leave the workload running, untouched.
sc_criu_enospc() {
	local cg dir=$WORK/wl mnt=$WORK/small size outcome table='' p ok=''
	fault_begin "$dir" || return $?
	mkdir -p "$mnt"
	for size in ${FAULT_SIZES:-64k 256k 512k 560k 600k 620k 640k 1m 4m 64m}; do
		mount -t tmpfs -o size="$size" gwt-enospc "$mnt" || { fail "cannot mount a tmpfs of $size"; return 1; }
		criu_run "dump into $size" "$WORK/dump.$size.log" dump -t "$(cat "$dir/pid.parent")" -D "$mnt" \
			--shell-job "${CRIU_GW_ARGS[@]}"
		if [ "$CRIU_RC" = 0 ]; then
			outcome="dumped ($(du -sh "$mnt" | cut -f1))"
			table+="    $size: $outcome"$'\n'
			cp -a "$mnt" "$WORK/img"
			umount "$mnt"
			ok=$size
			break
		fi
		outcome="failed: $(grep -m1 -E 'No space left|ENOSPC' "$WORK/dump.$size.log" | sed 's/^([0-9. ]*) //' | cut -c1-200)"
		table+="    $size: $outcome"$'\n'
		local tmp
		tmp=$(find "$mnt" -name '*gpuwatch*.tmp*' 2>/dev/null | head -n3 | tr '\n' ' ')
		umount "$mnt"
		[ -z "$tmp" ] || { printf '%s' "$table"; fail "dump into $size failed and left gpuwatch's temporary files: $tmp"; return 1; }
		grep -q 'No space left on device\|ENOSPC' "$WORK/dump.$size.log" ||
			{ printf '%s' "$table"; fail "dump into $size failed without saying the disk is full$(criu_why "$WORK/dump.$size.log")"; return 1; }
		for p in $(crwl_pids "$dir"); do
			alive "$p" || { printf '%s' "$table"; fail "the failed dump into $size left process $p dead"; return 1; }
		done
	done
	printf '%s' "$table"
	if [ -z "$ok" ]; then
		# every size failed: the workload was never dumped and must be as it was
		crwl_run_rest "$dir" 1 --cgroup "$cg" || { REASON="after the failed dumps: $REASON"; return 1; }
		final_check --cgroup "$cg"
		return
	fi
	# shellcheck disable=SC2046 # one pid per word
	pids_gone $(crwl_pids "$dir") # a pid still there fails the restore, which says so
	crwl_restore "$dir" "$WORK/img" "$WORK/restore.log" "${CRIU_GW_ARGS[@]}" || { criu_timings; return 1; }
	crwl_run_rest "$dir" 1 --cgroup "$cg" || { REASON="after the dump into $ok: $REASON"; return 1; }
	rm -rf "$WORK/img"
	final_check --cgroup "$cg"
}

# vgem unloaded while followed: with the daemon attached and idle (a workload came and went),
# rmmod vgem must succeed (gpuwatch holds nothing of the driver), the daemon must live on, and
# once vgem is back, a new workload's state must be exact in the manifest.
sc_vgem_unload() {
	local cg
	[ "$HAVE_GW" = 1 ] || { REASON="no gpuwatch binary"; return 2; }
	cg_make cg "gwt-$NAME" || return 1
	gw_start "$cg" || return 1
	wl_start "$cg" "$WORK/wl1" wl_two_opens || return 1
	run_phases "$WORK/wl1" "$WL_PID" --cgroup "$cg" || return 1
	if ! rmmod vgem 2>"$WORK/rmmod.err"; then
		modprobe vgem
		fail "rmmod vgem with the daemon following an idle cgroup: $(cat "$WORK/rmmod.err") (holders: $(ls /sys/module/vgem/holders 2>/dev/null | tr '\n' ' ')refcnt $(cat /sys/module/vgem/refcnt 2>/dev/null))"
		return 1
	fi
	sleep 1
	gw_alive || { modprobe vgem; return 1; }
	modprobe vgem || { fail "modprobe vgem after rmmod failed"; return 1; }
	udevadm settle 2>/dev/null
	[ -e /dev/dri/card0 ] && [ -e /dev/dri/renderD128 ] || { fail "vgem is back, but not as card0 and renderD128"; return 1; }
	wl_start "$cg" "$WORK/wl2" wl_two_opens || return 1
	run_phases "$WORK/wl2" "$WL_PID" --cgroup "$cg" || { REASON="after vgem came back: $REASON"; return 1; }
	final_check --cgroup "$cg"
}

# criu_bg WHAT LOG ARGS...: criu_run in the background (CRIU_BG: its pid); criu_bg_wait sets
# CRIU_RC
criu_bg() {
	criu_run "$@" &
	CRIU_BG=$! CRIU_BG_LOG=$2
}
criu_bg_wait() {
	wait "$CRIU_BG"
	CRIU_RC=$(awk 'END { print $NF }' "$WORK/timings.txt")
}

# wait_log LOG PATTERN: until the (growing) log has a line matching PATTERN, 0; 1 after 60 s
wait_log() {
	local deadline=$((SECONDS + 60))
	until grep -qE "$2" "$1" 2>/dev/null; do
		[ $SECONDS -lt $deadline ] || return 1
		sleep 0.01
	done
}

# kill_daemon_at LOG PATTERN: once criu's LOG (criu_bg) matches PATTERN, SIGKILLs the daemon,
# then waits for criu (CRIU_RC)
kill_daemon_at() {
	wait_log "$1" "$2" || { fail "criu's $(basename "$1") never said /$2/"; return 1; }
	kill -KILL "$GW_PID"
	wait "$GW_PID" 2>/dev/null
	GW_PID=''
	criu_bg_wait
}

# The daemon SIGKILLed during a dump (as CRIU runs the pre-dump action script, which syncs
# with it) and during a restore. The dump either succeeds (with the manifest it synced, or
# degraded without one; the workload runs with --degraded, as it cannot know which) or fails
# in one line with the workload untouched (then a new daemon and a second dump take it); the
# restore, which needs no daemon, succeeds with the daemon killed as it begins.
sc_criu_daemon_killed() {
	local cg dir=$WORK/wl img=$WORK/img p
	criu_need plugin || return $?
	cg_make cg "gwt-$NAME" || return 1
	gw_start "$cg" || return 1
	crwl_start "$cg" "$dir" --degraded || return 1
	crwl_wait "$dir" ready.1 || return 1
	mkdir -p "$img"
	criu_bg dump "$WORK/dump.log" dump -t "$(cat "$dir/pid.parent")" -D "$img" --shell-job "${CRIU_GW_ARGS[@]}"
	kill_daemon_at "$WORK/dump.log" 'Running pre-dump scripts' || return 1
	echo "    dump with the daemon killed at pre-dump: exit $CRIU_RC$(criu_why "$WORK/dump.log")"
	grep -E 'gpuwatch(-criu-action)?: ' "$WORK/dump.log" | sed 's/^([0-9. ]*) //' | head -n 4 | sed 's/^/      /'
	if [ "$CRIU_RC" != 0 ]; then
		grep -qE 'gpuwatch' "$WORK/dump.log" || { fail "the dump failed without a gpuwatch line$(criu_why "$WORK/dump.log")"; return 1; }
		for p in $(crwl_pids "$dir"); do
			alive "$p" || { fail "the failed dump left process $p dead"; return 1; }
		done
		# untouched: a dump with a live daemon now takes it whole
		rm -rf "$img" "$MANIFEST" # gw_start waits for a new manifest
		gw_start "$cg" || return 1
		crwl_dump "$dir" "$img" "${CRIU_GW_ARGS[@]}" || { REASON="after the failed dump: $REASON"; return 1; }
		grep -q 'no manifest' "$WORK/dump.log" && { fail "the second dump, with a new daemon, found none"; return 1; }
		gw_stop || return 1
	fi
	# shellcheck disable=SC2046 # one pid per word
	pids_gone $(crwl_pids "$dir") # a pid still there fails the restore, which says so
	# a new daemon follows the cgroup; it is killed once the restore has begun
	rm -f "$MANIFEST"
	gw_start "$cg" || return 1
	criu_bg restore "$WORK/restore.log" restore -D "$img" --shell-job -d "${CRIU_GW_ARGS[@]}"
	kill_daemon_at "$WORK/restore.log" 'gpuwatch' || return 1
	echo "    restore with the daemon killed as it began: exit $CRIU_RC$(criu_why "$WORK/restore.log")"
	[ "$CRIU_RC" = 0 ] || { criu_show "$WORK/restore.log"; fail "the restore failed once the daemon was killed$(criu_why "$WORK/restore.log")"; return 1; }
	for p in $(crwl_pids "$dir"); do
		CLEANUP_PIDS+=("$p")
		alive "$p" || { fail "restored process $p is not running"; return 1; }
	done
	crwl_run_rest "$dir" 0 || return 1
	rm -rf "$img"
}

# criu_held ACTION WHAT LOG CRIU ARGS...: criu_bg with one more action script (guest/hold-action),
# which holds criu at ACTION once criu gets there, until criu_release; fails if criu ended first
criu_held() {
	local at=$1 saved=(${CRIU_ENV[@]+"${CRIU_ENV[@]}"})
	shift
	rm -f "$WORK/held" "$WORK/held.go"
	CRIU_ENV=(${saved[@]+"${saved[@]}"} GWT_HOLD_AT="$at" GWT_HOLD_FILE="$WORK/held")
	criu_bg "$@" --action-script "$VMTESTS/guest/hold-action"
	CRIU_ENV=(${saved[@]+"${saved[@]}"})
	criu_bg_until "its $at action" 0.05 test -e "$WORK/held"
}

# criu_bg_until WHAT POLL TEST...: polls TEST (a command) every POLL seconds (0: at once again)
# while the criu of criu_bg runs; fails if criu ended first (CRIU_RC) or after 120 s
criu_bg_until() {
	local what=$1 poll=$2 deadline=$((SECONDS + 120))
	shift 2
	until "$@"; do
		if ! kill -0 "$CRIU_BG" 2>/dev/null; then
			criu_bg_wait
			fail "criu ended (exit $CRIU_RC) before $what$(criu_why "$CRIU_BG_LOG")"
			return 1
		fi
		[ $SECONDS -lt $deadline ] || { fail "criu did not get to $what in 120 s"; return 1; }
		[ "$poll" = 0 ] || sleep "$poll"
	done
}
criu_release() {
	: >"$WORK/held.go"
}

# kill_held_criu: SIGKILLs the criu that criu_held holds, waits for it (CRIU_RC), then lets the
# orphaned hold script go
kill_held_criu() {
	pkill -KILL -x "$(basename "$CRIU")"
	criu_bg_wait
	criu_release
}

# dump_killed DIR IMG LOG: criu dump (with gpuwatch) of DIR's workload into IMG, SIGKILLed once
# held at its post-dump action (CRIU_RC)
dump_killed() {
	mkdir -p "$2"
	criu_held post-dump dump "$3" dump -t "$(cat "$1/pid.parent")" -D "$2" --shell-job "${CRIU_GW_ARGS[@]}" || return 1
	kill_held_criu
	echo "    dump: criu killed at post-dump (exit $CRIU_RC)"
}

# unmount_under DIR: lazily unmounts whatever a killed criu left mounted under DIR (its
# cgroup yard in the image directory)
unmount_under() {
	awk -v d="$1/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r | xargs -r -n1 umount -l
}

# criu SIGKILLed during a dump and during a restore, each held by one more action script where
# gpuwatch's work is done and CRIU's is not: at post-dump (every image written, the tasks still
# seized, cured of CRIU's parasite) and at post-restore (every file restored, the tasks not yet
# resumed). The dumped tasks are let go by the dying criu (ptrace detaches them): they carry on
# untouched, with the manifest exact, and a second dump into the same directory takes them
# whole. The restored tasks a killed restore leaves behind wait in CRIU's restore code forever
# (CRIU sets no parent-death signal): they are killed, as an operator would, and a second
# restore of the same images succeeds.
sc_criu_killed() {
	local cg dir=$WORK/wl img=$WORK/img p
	fault_begin "$dir" || return $?
	dump_killed "$dir" "$img" "$WORK/dump.killed.log" || return 1
	for p in $(crwl_pids "$dir"); do
		alive "$p" || { fail "process $p died with the killed dump"; return 1; }
	done
	check_phase "$dir" 1 --cgroup "$cg" || { REASON="after the killed dump: $REASON"; return 1; }
	crwl_dump "$dir" "$img" "${CRIU_GW_ARGS[@]}" || { REASON="after the killed dump: $REASON"; return 1; }
	criu_held post-restore restore "$WORK/restore.killed.log" restore -D "$img" --shell-job -d "${CRIU_GW_ARGS[@]}" ||
		return 1
	kill_held_criu
	echo "    restore: criu killed at post-restore (exit $CRIU_RC)"
	unmount_under "$img"
	for p in $(crwl_pids "$dir"); do kill -KILL "$p" 2>/dev/null; done
	# shellcheck disable=SC2046 # one pid per word
	pids_gone $(crwl_pids "$dir") || return 1
	crwl_restore "$dir" "$img" "$WORK/restore.log" "${CRIU_GW_ARGS[@]}" || { REASON="after the killed restore: $REASON"; return 1; }
	crwl_in_cgroup "$dir" "$cg" || return 1
	crwl_run_rest "$dir" 1 --cgroup "$cg" || return 1
	rm -rf "$img"
	final_check --cgroup "$cg"
}

# criu_kill_when WHAT TEST...: SIGKILLs the criu that criu_bg started (its first process: the
# tasks a restore forks are named criu too, until they are restored) as soon as TEST (a
# command) succeeds, then waits for it (CRIU_RC); fails if criu ended first or after 120 s
criu_kill_when() {
	local what=$1 name
	shift
	name=$(basename "$CRIU")
	# its pid first: looking it up once TEST succeeds lets a fast criu run past the point. The
	# child of criu_bg's job, not the oldest criu of the guest: a criu (or a task not yet named
	# back) left by an earlier scenario would be watched instead, and never be seen reading
	criu_bg_until "its start" 0.01 pgrep -o -x "$name" -P "$CRIU_BG" >/dev/null || return 1
	CRIU_MAIN=$(pgrep -o -x "$name" -P "$CRIU_BG")
	echo "    criu's main process: $CRIU_MAIN"
	criu_bg_until "$what" 0 "$@" || return 1
	kill -KILL "$CRIU_MAIN"
	criu_bg_wait
}

# gw_tmp_in IMG: the plugin is writing a buffer image there (its ".tmp", renamed once whole)
gw_tmp_in() { compgen -G "$1/gpuwatch-object-*.tmp" >/dev/null; }

# gw_reading IMG PID: process PID (a restoring task, which CRIU restores with its pid, or criu
# itself) has one of IMG's buffer images open (the plugin). Only that process's fds are looked at, with shell
# builtins (`-ef`: the same file): the plugin holds a 128 MiB image open for a few hundred ms
# under TCG since it maps images instead of reading them (696950d), less than one run of
# `find` from 9p took, which missed it; a scan of every process's fds took longer still.
gw_reading() {
	local f o
	for f in /proc/"$2"/fd/*; do
		for o in "$1"/gpuwatch-object-*; do
			[ "$f" -ef "$o" ] && return 0
		done
	done
	return 1
}

# gw_read_at_restore IMG PID: a buffer image of IMG is open in the restoring task PID (a buffer
# it does not map: filled at RESTORE_EXT_FILE) or in criu's own process (CRIU_MAIN, set by
# criu_kill_when: a buffer it maps, filled at RESUME_DEVICES_LATE)
gw_read_at_restore() { gw_reading "$1" "$2" || gw_reading "$1" "$CRIU_MAIN"; }

# criu SIGKILLed in the middle of the plugin's own work, not where an action script holds it:
# bench_hold keeps KILL_MIB (128) MiB in one vgem buffer, whose image takes a while to write and
# to read under TCG. The dump is killed while the plugin writes that buffer's image (a
# gpuwatch-*.tmp is in the image directory; CRIU's parasite is in the task); the restore while
# a restoring task reads it. After the killed dump the task must be alive, and a second dump
# into the same directory must succeed and leave no .tmp (its pre-dump removes the first's).
# After the killed restore the tasks it left are killed (as in criu_killed), the images must
# be unchanged (sha256), and a second restore must bring the buffer back: bench_hold checks
# every page of it through its own mapping.
sc_criu_killed_inplugin() {
	local cg d=$WORK/hold img=$WORK/img pid left result
	fault_cgroup || return $?
	mkdir -p "$d" "$img"
	(cd "$d" && exec setsid "$VMTESTS/guest/incgroup" "$cg" "$WL_DIR/bench_hold" "$d" gpu 1 "${KILL_MIB:-128}" \
		</dev/null >"$d/stdout" 2>"$d/stderr") &
	pid=$!
	disown "$pid"
	CLEANUP_PIDS+=("$pid")
	wait_file "$d/ready" 300 "$pid" || { fail "bench_hold never got ready: $(head -c 200 "$d/stderr")"; return 1; }
	criu_bg dump "$WORK/dump.killed.log" dump -t "$pid" -D "$img" --shell-job "${CRIU_GW_ARGS[@]}"
	criu_kill_when "the plugin wrote a buffer image" gw_tmp_in "$img" || return 1
	left=$(cd "$img" && echo gpuwatch-*.tmp)
	echo "    dump: criu killed while the plugin wrote $left (exit $CRIU_RC)"
	[ "$CRIU_RC" != 0 ] || { fail "the killed dump exited 0"; return 1; }
	sleep 1
	alive "$pid" || { fail "bench_hold died with the dump killed inside the plugin"; return 1; }
	criu_dump_pid "$pid" "$img" "${CRIU_GW_ARGS[@]}" || return 1
	pids_gone "$pid" || return 1
	left=$(find "$img" -name 'gpuwatch-*.tmp' | head -n 3 | tr '\n' ' ')
	[ -z "$left" ] || { fail "the second dump left the first's temporary files: $left"; return 1; }
	img_sums "$img" || return 1
	criu_bg restore "$WORK/restore.killed.log" restore -D "$img" --shell-job -d "${CRIU_GW_ARGS[@]}"
	criu_kill_when "the plugin read the buffer image" gw_read_at_restore "$img" "$pid" || return 1
	echo "    restore: criu killed while the plugin read the buffer image (exit $CRIU_RC)"
	[ "$CRIU_RC" != 0 ] || { fail "the killed restore exited 0"; return 1; }
	# killed while filling the buffer it maps (RESUME_DEVICES_LATE): the task was stopped under
	# criu, which must not let it run with the buffer half filled (PTRACE_O_EXITKILL)
	sleep 1
	if alive "$pid"; then
		fail "pid $pid runs after criu was killed in the middle of filling its buffer ($(grep -E '^(State|TracerPid)' /proc/"$pid"/status | tr '\n' ' '))"
		return 1
	fi
	echo "    after the killed restore: pid $pid is gone, not resumed with its buffer half filled"
	unmount_under "$img"
	pkill -KILL -x "$(basename "$CRIU")"
	kill -KILL "$pid" 2>/dev/null
	pids_gone "$pid" || return 1
	img_unchanged "$img" "the killed restore" || return 1
	criu_run restore "$WORK/restore.log" restore -D "$img" --shell-job -d "${CRIU_GW_ARGS[@]}"
	[ "$CRIU_RC" = 0 ] || { criu_show "$WORK/restore.log"; fail "the second restore failed (exit $CRIU_RC)$(criu_why "$WORK/restore.log")"; return 1; }
	touch "$d/go"
	wait_file "$d/result" 300 "$pid" || { fail "the restored bench_hold wrote no result"; return 1; }
	result=$(head -n1 "$d/result")
	echo "    restored after both kills: $result"
	[ "$result" = OK ] || { fail "the restored buffer is not the dumped one: $result"; return 1; }
	rm -rf "$img"
	final_check --cgroup "$cg"
}

# A container that exits during its checkpoint: wl_criu's processes SIGKILLed while CRIU is held
# at its pre-dump action (before it seizes them), then, on a second workload, at post-dump (seized,
# every image written). The first dump must fail with an error line in its log (CRIU's
# `Dumping FAILED`); the second succeeds (a task SIGKILLed while seized dies only when CRIU lets
# it go, after the dump), and its images restore the workload whole, which verifies itself. Neither leaves a
# gpuwatch temporary file; the daemon follows on, and its manifest empties once the processes
# are gone.
sc_criu_exits() {
	local cg dir img=$WORK/img at p left n=0
	fault_cgroup || return $?
	for at in pre-dump post-dump; do
		n=$((n + 1))
		dir=$WORK/wl.$n
		fault_workload "$dir" || return 1
		rm -rf "$img"
		mkdir -p "$img"
		criu_held "$at" dump "$WORK/dump.log" dump -t "$(cat "$dir/pid.parent")" -D "$img" --shell-job \
			"${CRIU_GW_ARGS[@]}" || return 1
		for p in $(crwl_pids "$dir"); do kill -KILL "$p" 2>/dev/null; done
		criu_release
		criu_bg_wait
		echo "    killed at $at: dump exit $CRIU_RC$(criu_why "$WORK/dump.log")"
		left=$(find "$img" -name 'gpuwatch-*.tmp' | head -n 3 | tr '\n' ' ')
		[ -z "$left" ] || { fail "the dump left gpuwatch's temporary files: $left"; return 1; }
		# shellcheck disable=SC2046 # one pid per word
		pids_gone $(crwl_pids "$dir") || return 1
		if [ "$at" = pre-dump ]; then
			[ "$CRIU_RC" != 0 ] || { fail "the dump of processes killed before it seized them succeeded"; return 1; }
			[ -n "$(criu_why "$WORK/dump.log")" ] || { criu_show "$WORK/dump.log"; fail "the dump failed without an error line"; return 1; }
		else
			[ "$CRIU_RC" = 0 ] || { criu_show "$WORK/dump.log"; fail "the dump of processes killed once seized failed (exit $CRIU_RC)$(criu_why "$WORK/dump.log")"; return 1; }
			crwl_restore "$dir" "$img" "$WORK/restore.log" "${CRIU_GW_ARGS[@]}" || return 1
			crwl_run_rest "$dir" 1 --cgroup "$cg" || { REASON="restored from the dump they were killed in: $REASON"; return 1; }
		fi
		gw_alive || return 1
	done
	rm -rf "$img"
	final_check --cgroup "$cg"
}

# The ring buffer overflowing during a dump's sync: the daemon attached with a small ring
# (--ring-size RING_OVERFLOW_SIZE, 262144: room for wl_criu's records however slow the VM),
# wl_criu ready and exact in the manifest, then two processes of the followed cgroup (outside
# the dumped tree) flood it with DRM ioctls (bench_ioctl dumb) while the daemon is SIGSTOPped,
# and the dump begins: its pre-dump sync waits on the stopped daemon, which is let go once criu
# runs the script and then finds the ring overflowed. The dump must finish, say the manifest
# is incomplete with records lost, and take the workload exact (the plugin checks every handle
# table against the kernel; none of the dumped tree is probed); the restore (the daemon
# stopped: its manifest stays incomplete for good) verifies and works.
sc_criu_ring_overflow() {
	local cg dir=$WORK/wl img=$WORK/img flood
	fault_begin "$dir" --ring-size "${RING_OVERFLOW_SIZE:-262144}" || return $?
	"$VMTESTS/guest/incgroup" "$cg" "$WL_DIR/bench_ioctl" dumb 1000000000 2 >"$WORK/flood.out" 2>&1 &
	flood=$!
	CLEANUP_PIDS+=("$flood")
	kill -STOP "$GW_PID"
	sleep 2
	mkdir -p "$img"
	criu_bg dump "$WORK/dump.log" dump -t "$(cat "$dir/pid.parent")" -D "$img" --shell-job "${CRIU_GW_ARGS[@]}"
	wait_log "$WORK/dump.log" 'Running pre-dump scripts' || { kill -CONT "$GW_PID"; fail "criu never ran its pre-dump scripts"; return 1; }
	sleep 0.5
	kill -CONT "$GW_PID"
	criu_bg_wait
	pkill -KILL -f "$WL_DIR/bench_ioctl"
	kill -KILL "$flood" 2>/dev/null
	[ "$CRIU_RC" = 0 ] || { criu_show "$WORK/dump.log"; fail "the dump during the overflow failed (exit $CRIU_RC)$(criu_why "$WORK/dump.log")"; return 1; }
	# shellcheck disable=SC2046 # one pid per word
	pids_gone $(crwl_pids "$dir") || return 1
	echo "    dumped during the overflow: $(grep -o '"lost_events":[0-9]*' "$img"/gpuwatch-manifest*.json | head -n1); $(grep -o 'gpuwatch: manifest 0 is incomplete.*' "$WORK/dump.log" | head -n1 | cut -c1-120)"
	grep -q '"lost_events":[1-9]' "$img"/gpuwatch-manifest*.json ||
		{ fail "the manifest the dump took counts no lost record: the ring did not overflow"; return 1; }
	grep -q 'gpuwatch: manifest 0 is incomplete' "$WORK/dump.log" ||
		{ criu_show "$WORK/dump.log"; fail "the dump did not say the manifest was incomplete"; return 1; }
	if grep -q 'handle table probed' "$img"/gpuwatch-file-*.json; then
		fail "the plugin probed a handle table of the dumped tree, whose records were not the lost ones (it had none in flight)"
		return 1
	fi
	gw_stop || return 1
	crwl_restore "$dir" "$img" "$WORK/restore.log" "${CRIU_GW_ARGS[@]}" || return 1
	crwl_run_rest "$dir" 1 || return 1
	rm -rf "$img"
}
