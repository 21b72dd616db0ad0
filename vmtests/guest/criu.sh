# shellcheck shell=bash
# The CRIU scenarios (sourced by scenarios.sh; bash, root, in the VM). The workload wl_criu
# (two processes, three DRM files, holes in a handle table, mapped and unmapped buffers, a
# dma-buf fd) runs as a detached session in a cgroup followed by `gpuwatch attach`, is dumped
# and restored by the VM's own CRIU with `$GPUWATCH criu-args` (gpuwatch's plugin directory
# and action script), then verifies itself (result.<pid>) and keeps working (work.<pid>).
#
# Environment (GUEST_ENV on the host):
#   CRIU          criu binary (default: criu)
#   CRIU_ARGS     CRIU options that load gpuwatch (default: the output of `$GPUWATCH criu-args`),
#                 e.g. "--libdir DIR_WITH_ONLY_gpuwatch_criu.so"
#   CRIU_TIMEOUT  seconds for one criu run (default 120)
#   CRIU_NS_RESTORE_ARGS  extra options for criu_node_missing's restore (e.g. --mntns-compat-mode)
# Artefacts per scenario: wl/ (the workload's expectations, results, truths, stdout), dump.log,
# restore*.log, criu.out (criu's stdout/stderr), timings.txt; image directories are removed
# except their gpuwatch-* files (kept in img-gpuwatch/).

CRIU=${CRIU:-criu}
CRIU_TIMEOUT=${CRIU_TIMEOUT:-120}
CRIU_DUMP_ERRORS="Can't handle non-regular mapping|Can't dump file [0-9]+ of that type .*chr 226:"

# criu_need [plugin]: 0 when criu (and with `plugin`, gpuwatch's CRIU options) can be used;
# else 2 (skip) with the reason. Sets CRIU_GW_ARGS (array).
criu_need() {
	local out
	CRIU_GW_ARGS=()
	command -v "$CRIU" >/dev/null || { REASON="criu is not installed in the VM ($CRIU)"; return 2; }
	[ -x "$WL_DIR/wl_criu" ] || { fail "workload $WL_DIR/wl_criu not found (build vmtests/ first)"; return 1; }
	[ "${1:-}" = plugin ] || return 0
	if [ -n "${CRIU_ARGS:-}" ]; then
		out=$CRIU_ARGS
	elif [ "$HAVE_GW" != 1 ]; then
		REASON="gpuwatch CRIU plugin not built (no gpuwatch binary, GPUWATCH='$GPUWATCH', and no CRIU_ARGS)"
		return 2
	elif ! out=$("$GPUWATCH" criu-args 2>&1); then
		REASON="gpuwatch CRIU plugin not built ($GPUWATCH criu-args: $(echo "$out" | tail -n1))"
		return 2
	fi
	read -r -a CRIU_GW_ARGS <<<"$out"
	echo "$out" >"$WORK/criu-args"
}

# criu_run WHAT LOG CRIU-ARGS...: runs criu (bounded by CRIU_TIMEOUT) with -v4 -o LOG, in the
# environment plus CRIU_ENV (an array of NAME=VALUE, if set); CRIU_RC is its exit status;
# WHAT, the time and the status go to timings.txt.
criu_run() {
	local what=$1 log=$2 t0 t1 ms
	shift 2
	t0=$(date +%s%N)
	env ${CRIU_ENV[@]+"${CRIU_ENV[@]}"} "$CRIU" "$@" -v4 -o "$log" <&0 >>"$WORK/criu.out" 2>&1 &
	local pid=$! watch
	criu_watch "$pid" "$what" "$log" &
	watch=$!
	wait "$pid"
	CRIU_RC=$?
	kill "$watch" 2>/dev/null
	wait "$watch" 2>/dev/null
	t1=$(date +%s%N)
	ms=$(((t1 - t0) / 1000000))
	printf '%-28s %3d.%d s  exit %d\n' "$what" $((ms / 1000)) $((ms % 1000 / 100)) "$CRIU_RC" >>"$WORK/timings.txt"
}

# criu_watch PID WHAT LOG: once criu (PID) has run CRIU_TIMEOUT seconds, reports where it hangs,
# before anything is killed, then kills it (criu_run kills the watch when criu ends)
criu_watch() {
	trap 'kill $CRIU_WATCH_SLEEP 2>/dev/null; exit 0' TERM
	sleep "$CRIU_TIMEOUT" &
	CRIU_WATCH_SLEEP=$!
	wait "$CRIU_WATCH_SLEEP"
	criu_hang_report "$2" "$3" >>"$WORK/timings.txt"
	kill -TERM "$1" 2>/dev/null
	sleep 5
	kill -KILL "$1" 2>/dev/null
}

# criu_hang_report WHAT LOG: criu ran past CRIU_TIMEOUT: every process's state and kernel
# wait channel, the kernel stacks of criu's and the workload's tasks and the criu log's tail
criu_hang_report() {
	local p
	echo "$1: still running after $CRIU_TIMEOUT s; the tasks, then the kernel stacks of criu's:"
	ps -eo pid,ppid,stat,wchan:32,comm | awk '$1 != 2 && $2 != 2 { print "  " $0 }'    # no kernel threads
	for p in $(pgrep -x criu) $(pgrep -f 'wl_|gwt-') ; do
		echo "  -- $p $(cat "/proc/$p/comm" 2>/dev/null)"
		sed 's/^/     /' "/proc/$p/stack" 2>/dev/null | head -n 12
	done
	echo "  -- the last lines of $(basename "$2"):"
	tail -n 25 "$2" 2>/dev/null | sed 's/^/     /'
}

# criu_why LOG: ": " + the last real error of a criu log (CRIU prints harmless ones while probing)
criu_why() {
	local l
	l=$(grep -E 'Error \(|gpuwatch: .*(refused|cannot|error)' "$1" 2>/dev/null |
		grep -vE 'tun: Unable to create tun|util.c:[0-9]+: exited, status=1' | tail -n1 | sed 's/^([0-9. ]*) //')
	[ -n "$l" ] && echo ": $l" | cut -c1-300
}

# criu_show LOG: its gpuwatch lines and last errors, indented, under the scenario
criu_show() {
	grep -E 'gpuwatch: |Error \(' "$1" 2>/dev/null | grep -vE 'tun: Unable|util.c:[0-9]+: exited' | tail -n 15 |
		sed 's/^/    /'
}

crwl_pids() { cat "$1/pid.parent" "$1/pid.child" 2>/dev/null; }

crwl_role() { [ "$(cat "$1/pid.parent" 2>/dev/null)" = "$2" ] && echo parent || echo child; }

# crwl_start CG DIR [WORKLOAD ARGS...]: wl_criu (or the workload CRWL_WL names) as a detached
# session leader (setsid: the dumped tree is a whole session, stdio are DIR/stdout and
# DIR/stderr) that joins CG before it starts. Sets WL_PID. With CRWL_WRAP set (a command, e.g.
# for a mount namespace), it runs the workload.
crwl_start() {
	local cg=$1 dir=$2
	shift 2
	mkdir -p "$dir"
	# shellcheck disable=SC2086 # CRWL_WRAP is a word list by design
	(cd "$dir" && exec ${CRWL_WRAP:-} setsid "$VMTESTS/guest/incgroup" "$cg" "$WL_DIR/${CRWL_WL:-wl_criu}" "$dir" "$@" \
		</dev/null >"$dir/stdout" 2>"$dir/stderr" 3>&- 4>&- 5>&-) &
	WL_PID=$!
	disown "$WL_PID"         # no "Killed" job notice when criu dump kills it
	CLEANUP_PIDS+=("$WL_PID")
}

# crwl_wait DIR FILE: until DIR/FILE exists, while every process of the workload lives
crwl_wait() {
	local dir=$1 file=$2 deadline=$((SECONDS + PHASE_TIMEOUT)) p
	until [ -e "$dir/$file" ]; do
		for p in $(crwl_pids "$dir"); do
			alive "$p" && continue
			[ -e "$dir/$file" ] && return 0
			indent "$dir/stderr"
			fail "workload $(crwl_role "$dir" "$p") $p died while we waited for $file$(last_line "$dir/stderr")"
			return 1
		done
		if [ ! -e "$dir/pid.parent" ] && ! alive "$WL_PID"; then
			indent "$dir/stderr"
			fail "workload exited before it started$(last_line "$dir/stderr")"
			return 1
		fi
		[ $SECONDS -lt $deadline ] || { fail "no $file from the workload after ${PHASE_TIMEOUT}s"; return 1; }
		sleep 0.05
	done
}

# crwl_results DIR WHAT: every process of the workload wrote WHAT.<pid> saying PASS
crwl_results() {
	local dir=$1 what=$2 p r first='' bad=''
	for p in $(crwl_pids "$dir"); do
		r=$(head -n1 "$dir/$what.$p" 2>/dev/null)
		[ "$r" = PASS ] && continue
		echo "    $what of the $(crwl_role "$dir" "$p") ($p): ${r:-no $dir/$what.$p}"
		grep '^FAIL' "$dir/$what.$p.log" 2>/dev/null | head -n 25 | sed 's/^/      /'
		bad+="${bad:+, }$(crwl_role "$dir" "$p") ${r:-missing}"
		[ -n "$first" ] || first=$(grep -m1 '^FAIL' "$dir/$what.$p.log" 2>/dev/null | cut -c6-200)
	done
	[ -z "$bad" ] || { fail "${what/result/self-verification}: $bad${first:+ (first: $first)}"; return 1; }
}

# crwl_run_rest DIR MANIFEST [CHECKER ARGS...]: after phase 1 (and a dump and restore, or not):
# the workload verifies itself, works, exits. MANIFEST=1: the manifest must also match the
# truth of phases 2 and 3 (after the verification, after the work).
crwl_run_rest() {
	local dir=$1 manifest=$2 parent p deadline
	shift 2
	parent=$(cat "$dir/pid.parent")
	go "$dir" 1
	if ! crwl_wait "$dir" ready.2; then
		local why=$REASON
		crwl_results "$dir" result    # whatever the processes reported before that
		REASON=$why
		return 1
	fi
	crwl_check_both "$dir" 2 result "$manifest" "$@" || return 1
	go "$dir" 2
	crwl_wait "$dir" ready.3 || return 1
	crwl_check_both "$dir" 3 work "$manifest" "$@" || return 1
	go "$dir" 3
	deadline=$((SECONDS + PHASE_TIMEOUT))
	for p in $(crwl_pids "$dir"); do
		while alive "$p"; do
			[ $SECONDS -lt $deadline ] || { fail "workload $p still running after its last phase"; return 1; }
			sleep 0.05
		done
	done
	[ "$(cat "$dir/done.$parent" 2>/dev/null)" = 0 ] ||
		{ indent "$dir/stderr"; fail "workload did not finish cleanly (no done.$parent)$(last_line "$dir/stderr")"; return 1; }
}

# crwl_check_both DIR N WHAT MANIFEST [CHECKER ARGS...]: the workload's WHAT results, and with
# MANIFEST=1 the manifest against the truth of phase N; both are checked and reported.
crwl_check_both() {
	local dir=$1 n=$2 what=$3 manifest=$4 mreason=''
	shift 4
	if [ "$manifest" = 1 ] && ! check_phase "$dir" "$n" "$@"; then
		mreason=$REASON
	fi
	if ! crwl_results "$dir" "$what"; then
		[ -z "$mreason" ] || REASON="$mreason; and $REASON"
		return 1
	fi
	[ -z "$mreason" ] || { REASON=$mreason; return 1; }
}

# crwl_truth DIR N: the workload's truth of phase N agrees with /proc (a test bug otherwise)
crwl_truth() {
	local truths=("$1"/truth."$2".*.json)
	py "$VMTESTS/verify_truth.py" "${truths[@]}" >"$1/verify.$2.txt" 2>&1 && return 0
	indent "$1/verify.$2.txt"
	fail "phase $2: the workload's truth disagrees with /proc (test bug): $(head -n1 "$1/verify.$2.txt")"
}

# criu_dump_pid PID IMG [CRIU ARGS...]: criu dump of PID's tree into IMG (log $WORK/dump.log);
# it must succeed
criu_dump_pid() {
	local pid=$1 img=$2
	shift 2
	mkdir -p "$img"
	criu_run "dump" "$WORK/dump.log" dump -t "$pid" -D "$img" --shell-job "$@"
	if [ "$CRIU_RC" != 0 ]; then
		criu_show "$WORK/dump.log"
		fail "criu dump failed (exit $CRIU_RC)$(criu_why "$WORK/dump.log")"
		return 1
	fi
}

# img_sums IMG: remembers the sha256 of every file of IMG; img_unchanged IMG WHAT fails (WHAT
# changed the image) if any differs now
img_sums() { (cd "$1" && sha256sum ./* >"$WORK/img.sums") || { fail "cannot checksum $1"; return 1; }; }
img_unchanged() {
	(cd "$1" && sha256sum -c --quiet "$WORK/img.sums") >"$WORK/img.sums.check" 2>&1 ||
		{ indent "$WORK/img.sums.check"; fail "$2 changed the image"; return 1; }
}

# crwl_dump DIR IMG [CRIU ARGS...]: dumps the workload (CRIU kills it), waits until its pids are
# free again (a restore needs them; bash reaps the parent, its disowned child).
crwl_dump() {
	local dir=$1 img=$2
	shift 2
	criu_dump_pid "$(cat "$dir/pid.parent")" "$img" "$@" || return 1
	# shellcheck disable=SC2046 # one pid per word
	pids_gone $(crwl_pids "$dir")
}

# pids_gone PID...: until none of the processes exists (a restore needs their pids), at most
# 20 s; else fails naming one still there
pids_gone() {
	local deadline=$((SECONDS + 20)) p
	for p in "$@"; do
		while [ -e "/proc/$p" ]; do
			[ $SECONDS -lt $deadline ] || { fail "process $p still exists after criu dump"; return 1; }
			sleep 0.05
		done
	done
}

# crwl_restore DIR IMG LOG [CRIU ARGS...]: restores (detached); every process must be back
crwl_restore() {
	local dir=$1 img=$2 log=$3 p
	shift 3
	criu_run "restore" "$log" restore -D "$img" --shell-job -d "$@"
	if [ "$CRIU_RC" != 0 ]; then
		criu_show "$log"
		fail "criu restore failed (exit $CRIU_RC)$(criu_why "$log")"
		return 1
	fi
	for p in $(crwl_pids "$dir"); do
		CLEANUP_PIDS+=("$p")
		alive "$p" || { criu_show "$log"; fail "restored workload $(crwl_role "$dir" "$p") $p is not running"; return 1; }
	done
}

# crwl_in_cgroup DIR CG: every restored process is back in the followed cgroup CG
crwl_in_cgroup() {
	local p want=0::${2#"$CG_ROOT"} got
	for p in $(crwl_pids "$1"); do
		got=$(grep '^0::' "/proc/$p/cgroup" 2>/dev/null)
		[ "$got" = "$want" ] || { fail "restored process $p is in cgroup '${got#0::}', not ${want#0::}"; return 1; }
	done
}

# crwl_kill DIR: kills the workload's processes and waits until they are gone
crwl_kill() {
	local p
	for p in $(crwl_pids "$1"); do kill -KILL "$p" 2>/dev/null; done
	kill -KILL "$WL_PID" 2>/dev/null
	for p in $(crwl_pids "$1"); do
		for _ in $(seq 100); do [ -e "/proc/$p" ] || break; sleep 0.05; done
	done
}

# criu_keep_images IMG: keep the plugin's images (small) for the results, drop CRIU's
criu_keep_images() {
	mkdir -p "$WORK/img-gpuwatch"
	cp "$1"/gpuwatch-* "$WORK/img-gpuwatch/" 2>/dev/null
	rm -rf "$1"
}

criu_timings() { [ -s "$WORK/timings.txt" ] && sed 's/^/    criu /' "$WORK/timings.txt"; }

# ---- scenarios ------------------------------------------------------------------------------

# Plain CRIU (no plugin, no gpuwatch options) cannot dump a DRM workload: the suite tests
# something. The failed dump leaves the workload as it was: it verifies itself (never dumped),
# works and exits; gpuwatch's manifest stays exact throughout.
sc_criu_baseline() {
	local cg dir=$WORK/wl
	criu_need || return $?
	cg_make cg "gwt-$NAME" || return 1
	gw_start "$cg" || return 1
	crwl_start "$cg" "$dir" || return 1
	crwl_wait "$dir" ready.1 || return 1
	check_phase "$dir" 1 --cgroup "$cg" || return 1
	mkdir -p "$WORK/no-plugins" "$WORK/img"
	criu_run "dump (plain CRIU)" "$WORK/dump.log" dump -t "$(cat "$dir/pid.parent")" -D "$WORK/img" \
		--shell-job --libdir "$WORK/no-plugins"
	criu_timings
	if [ "$CRIU_RC" = 0 ]; then
		fail "plain CRIU dumped the DRM workload: the CRIU scenarios would prove nothing"
		return 1
	fi
	if ! grep -qE "$CRIU_DUMP_ERRORS" "$WORK/dump.log"; then
		criu_show "$WORK/dump.log"
		fail "plain criu dump failed (exit $CRIU_RC), but not on DRM$(criu_why "$WORK/dump.log")"
		return 1
	fi
	grep -E "$CRIU_DUMP_ERRORS" "$WORK/dump.log" | head -n1 | sed 's/^([0-9. ]*) /    plain CRIU: /'
	rm -rf "$WORK/img"
	# gpuwatch's options, then a tool's own --libdir (CRIU keeps the last): gpuwatch's plugin is
	# not loaded. The action script's pre-dump says why in one line, before anything is frozen.
	if criu_need plugin; then
		mkdir -p "$WORK/img"
		criu_run "dump (--libdir after)" "$WORK/dump-libdir.log" dump -t "$(cat "$dir/pid.parent")" \
			-D "$WORK/img" --shell-job "${CRIU_GW_ARGS[@]}" --libdir "$WORK/no-plugins"
		local said="criu was given --libdir $WORK/no-plugins, which holds no gpuwatch_criu.so"
		[ "$CRIU_RC" != 0 ] || { fail "criu dumped the DRM workload without gpuwatch's plugin"; return 1; }
		grep -qF "$said" "$WORK/dump-libdir.log" || { criu_show "$WORK/dump-libdir.log"
			fail "dump with another --libdir after gpuwatch's: no line saying gpuwatch's plugin is not loaded$(criu_why "$WORK/dump-libdir.log")"
			return 1; }
		grep -F "$said" "$WORK/dump-libdir.log" | head -n1 | sed 's/^[^:]*: /    /' | cut -c1-200
		rm -rf "$WORK/img"
	fi
	crwl_run_rest "$dir" 1 --cgroup "$cg" || return 1
	final_check --cgroup "$cg"
}

# CRIU in a pid namespace of its own, with its own /proc (as CRIU's zdtm runs it, or a tool in
# a container): the daemon, in the root namespace, registered a pid that names nothing there,
# and its manifest names the tasks by root-namespace pids. The dump must still find the daemon
# (it answers on its socket), save its manifest in the namespace's pids, and the restored
# workload must get every handle back: wl_criu is not told to accept losses, which a dump
# without the manifest (the degraded path) would cause. Workload, dump, restore and the
# checks after run inside the namespace (criu_pidns_inner); the manifest checks, which compare
# root-namespace pids, are not made there.
sc_criu_pidns() {
	local cg rc
	criu_need plugin || return $?
	cg_make cg "gwt-$NAME" || return 1
	gw_start "$cg" || return 1
	rm -f "$WORK/inner.reason"
	# the inner bash gets the suite's functions and variables from a file: as one argument they
	# passed the kernel's 128 KiB limit on a single argument (MAX_ARG_STRLEN) once the suite grew
	{ declare -f && declare -p WORK WL_DIR VMTESTS PYTHON GUEST_LIB CRIU CRIU_TIMEOUT PHASE_TIMEOUT CRIU_GW_ARGS \
		CG_ROOT NAME 2>/dev/null; } >"$WORK/inner-env.sh"
	unshare --pid --fork --mount-proc bash -c ". '$WORK/inner-env.sh'; CLEANUP_PIDS=(); criu_pidns_inner '$cg'" \
		>"$WORK/inner.out" 2>&1
	rc=$?
	indent "$WORK/inner.out" 20
	criu_timings
	[ $rc = 0 ] || { fail "in a pid namespace: $(cat "$WORK/inner.reason" 2>/dev/null)"; return 1; }
	grep -E 'gpuwatch: .*(synced the manifest of daemon|manifest of daemon .* saved|stale)' "$WORK/dump.log" |
		sed 's/^([0-9. ]*) /    /' | head -n 4
	grep -qE 'gpuwatch: .*synced the manifest of daemon' "$WORK/dump.log" ||
		{ fail "criu in a pid namespace did not sync the daemon's manifest (dump.log)"; return 1; }
	if grep -qE 'gpuwatch: .*(stale|no manifest|degraded)' "$WORK/dump.log"; then
		fail "criu in a pid namespace: $(grep -m1 -E 'gpuwatch: .*(stale|no manifest|degraded)' "$WORK/dump.log" |
			sed 's/^([0-9. ]*) //' | cut -c1-200)"
		return 1
	fi
	criu_keep_images "$WORK/img"
	gw_stop
}

# criu_pidns_inner CG: sc_criu_pidns's steps, run as the init of a new pid namespace; the
# reason of a failure goes to $WORK/inner.reason
criu_pidns_inner() {
	local cg=$1 dir=$WORK/wl rc=0
	REASON=
	{ crwl_start "$cg" "$dir" && crwl_wait "$dir" ready.1 && crwl_truth "$dir" 1 &&
		echo "workload: pids $(crwl_pids "$dir" | tr '\n' ' ')in the namespace" &&
		crwl_dump "$dir" "$WORK/img" "${CRIU_GW_ARGS[@]}" &&
		crwl_restore "$dir" "$WORK/img" "$WORK/restore.log" "${CRIU_GW_ARGS[@]}" &&
		crwl_in_cgroup "$dir" "$cg" && crwl_run_rest "$dir" 0; } || rc=1
	echo "$REASON" >"$WORK/inner.reason"
	[ $rc = 0 ] || crwl_kill "$dir"
	return $rc
}

# dump, restore with gpuwatch's CRIU options; options:
#   --check-manifest  the daemon's manifest matches the workload's truth before the dump, after
#                     the restore and after more work (no filler handles), then empties
#   --swap-minor      between dump and restore, another DRM device takes card0 (vgem moves to
#                     card1): the plugin must pick the equivalent device and say so
#   --no-daemon       no gpuwatch daemon at all: the workload accepts lost handles (degraded)
sc_criu_cycle() {
	local cg dir=$WORK/wl img=$WORK/img manifest=0 swap=0 daemon=1 wlargs=() a rc
	for a in "$@"; do
		case $a in
		--check-manifest) manifest=1 ;;
		--swap-minor) swap=1 wlargs+=(--other-node) ;;
		--no-daemon) daemon=0 wlargs+=(--degraded) ;;
		*) fail "sc_criu_cycle: unknown option $a"; return 1 ;;
		esac
	done
	criu_need plugin || return $?
	[ $swap = 1 ] && { criu_dummydrm_build || return $?; }
	cg_make cg "gwt-$NAME" || return 1
	[ $daemon = 1 ] && { gw_start "$cg" || return 1; }
	crwl_start "$cg" "$dir" "${wlargs[@]}" || return 1
	crwl_wait "$dir" ready.1 || return 1
	if [ $manifest = 1 ]; then check_phase "$dir" 1 --cgroup "$cg" || return 1; else crwl_truth "$dir" 1 || return 1; fi
	crwl_dump "$dir" "$img" "${CRIU_GW_ARGS[@]}" || { criu_timings; return 1; }
	if [ $swap = 1 ]; then
		criu_swap_minor
		rc=$?
		[ $rc = 0 ] || { criu_timings; return $rc; }
	fi
	crwl_restore "$dir" "$img" "$WORK/restore.log" "${CRIU_GW_ARGS[@]}" || { criu_timings; return 1; }
	criu_timings
	crwl_in_cgroup "$dir" "$cg" || return 1
	if [ $swap = 1 ] && ! grep -qE 'gpuwatch: /dev/dri/card0 .* is now /dev/dri/card1 .*the equivalent card node of driver vgem: using it instead' "$WORK/restore.log"; then
		criu_show "$WORK/restore.log"
		fail "restored on another node, but restore.log has no gpuwatch line saying it uses /dev/dri/card1 for /dev/dri/card0"
		return 1
	fi
	if [ $daemon = 0 ]; then
		grep -E 'gpuwatch: .*(no manifest|degraded)' "$WORK/dump.log" "$WORK/restore.log" |
			sed 's/^[^:]*\///; s/([0-9. ]*) //' | head -n 6 | sed 's/^/    /'
		grep -qE 'gpuwatch: .*no manifest' "$WORK/dump.log" ||
			{ fail "dump without a daemon: dump.log does not say that there was no manifest"; return 1; }
	fi
	crwl_run_rest "$dir" $manifest --cgroup "$cg" || return 1
	criu_keep_images "$img"
	if [ $manifest = 1 ]; then final_check --cgroup "$cg"; else gw_stop; fi
}

sc_criu_minor_changed() {
	local rc
	sc_criu_cycle --swap-minor
	rc=$?
	crwl_kill "$WORK/wl"
	criu_unswap_minor || [ $rc != 0 ] || rc=1
	return $rc
}

# The workload in its own mount namespace whose /dev is a private tmpfs holding only the DRM
# nodes (and /dev/null). CRIU dumps the namespace (the tmpfs as a tarball, every other mount
# as an external bind of the VM's own); the restore gets the tarball without the DRM nodes:
# gpuwatch's plugin must create them from inside the restored tasks as it reopens the files.
# --devdeny: first restored into the cgroup with a device policy denying DRM,
# which must refuse the plugin's mknod (guest/criu_devdeny.sh).
sc_criu_node_missing() {
	local cg dir=$WORK/wl img=$WORK/img tar x devdeny=${1:-}
	criu_need plugin || return $?
	command -v unshare >/dev/null || { REASON="unshare (util-linux) not found"; return 2; }
	cg_make cg "gwt-$NAME" || return 1
	gw_start "$cg" || return 1
	# the workload's nodes: vgem's, or another driver's (guest/kms.sh, sc_on_driver; one
	# without a render node gives its card for both, as the workloads do: wl_util.c)
	local card=${WL_CARD:-/dev/dri/card0} render=${WL_RENDER:-} mk='' node maj min
	[ -n "$render" ] || render=${WL_CARD:-/dev/dri/renderD128}
	[ "$render" != "$card" ] || render=''
	for node in $card $render; do
		read -r maj min < <(stat -c '%t %T' "$node")
		mk+="mknod -m 666 $node c $((16#$maj)) $((16#$min))"$'\n'
	done
	cat >"$WORK/ns-start.sh" <<-EOF
		# in a new mount namespace: /dev becomes a tmpfs with only what the workload needs
		set -e
		mount -t tmpfs -o mode=755 gwtdev /dev
		mkdir -m 755 /dev/dri
		$mk
		mknod -m 666 /dev/null c 1 3
		exec </dev/null "\$@"
	EOF
	CRWL_WRAP="unshare --mount --propagation private sh $WORK/ns-start.sh" crwl_start "$cg" "$dir" || return 1
	crwl_wait "$dir" ready.1 || return 1
	crwl_truth "$dir" 1 || return 1
	crwl_dump "$dir" "$img" --ext-mount-map auto "${CRIU_GW_ARGS[@]}" || { criu_timings; return 1; }
	tar=$(compgen -G "$img/tmpfs-dev-*.tar.gz.img" | head -n1)
	if [ -z "$tar" ]; then
		criu_timings
		fail "the dump has no tarball of the private /dev tmpfs (tmpfs-dev-*.tar.gz.img): CRIU did not dump the mount namespace"
		return 1
	fi
	x=$WORK/devtmpfs
	{ mkdir -p "$x" && tar -xzf "$tar" -C "$x" && rm -f "$x"/dri/* &&
		tar --numeric-owner -czf "$tar" -C "$x" .; } || { fail "cannot rewrite $tar without the DRM nodes"; return 1; }
	tar -tzvf "$tar" >"$WORK/devtmpfs.restored.txt"
	# shellcheck disable=SC2086 # CRIU_NS_RESTORE_ARGS is a word list
	[ "$devdeny" != --devdeny ] ||
		devdeny_refused "$dir" "$img" "$cg" --ext-mount-map auto --root / ${CRIU_NS_RESTORE_ARGS:-} "${CRIU_GW_ARGS[@]}" ||
		return 1
	# shellcheck disable=SC2086
	crwl_restore "$dir" "$img" "$WORK/restore.log" --ext-mount-map auto --root / ${CRIU_NS_RESTORE_ARGS:-} "${CRIU_GW_ARGS[@]}" ||
		{ criu_timings; return 1; }
	criu_timings
	crwl_in_cgroup "$dir" "$cg" || return 1
	local pid want
	pid=$(cat "$dir/pid.parent")
	for node in $card $render; do
		stat -c "%n %F %t:%T %a %U:%G" "/proc/$pid/root$node" >>"$WORK/nodes-after-restore.txt" 2>&1 ||
			{ fail "$node is missing in the restored mount namespace"; return 1; }
	done
	# the node comes back no looser than this host's own node of the device: the image's mode
	# (666) masked by the host node's, with the host node's owner (an image may come from
	# elsewhere: nodes.hpp, as_host_allows)
	want="$(stat -c '%t:%T' "$card") $(printf '%o' $((0666 & 0$(stat -c '%a' "$card")))) $(stat -c '%U:%G' "$card")"
	grep -q "^/proc/$pid/root$card character special file $want\$" "$WORK/nodes-after-restore.txt" ||
		{ indent "$WORK/nodes-after-restore.txt"; fail "$card in the restored namespace is not $want (device in hex, mode, owner)"; return 1; }
	[ "$devdeny" != --devdeny ] || devdeny_post_restore "$img" "$cg" "$card" || return 1
	crwl_run_rest "$dir" 0 || return 1
	criu_keep_images "$img"
	gw_stop
}

# Corrupt or truncated gpuwatch images (each case a copy of one good dump; one image of each
# kind, truncated to half its size or with 64 bytes of garbage in its middle): criu restore
# must fail with gpuwatch's error in restore.log and exit with an error (no signal, no hang),
# leave no process of the workload and crash nothing. An image the restore does not read
# (the saved manifest; the action script's node list when no namespace is restored) may
# instead restore, but then the workload's verification must find nothing that the restore
# of the untouched dump (done first, good-verification.txt) did not. At the end the untouched
# dump restores again, verifies and works. Cases and outcomes: corrupt-cases.txt.
sc_criu_corrupt() {
	local cg dir=$WORK/wl img=$WORK/img bad=$WORK/bad f base n=0 how log crash0 outcome failed='' p
	criu_need plugin || return $?
	cg_make cg "gwt-$NAME" || return 1
	gw_start "$cg" || return 1
	crwl_start "$cg" "$dir" || return 1
	crwl_wait "$dir" ready.1 || return 1
	crwl_truth "$dir" 1 || return 1
	crwl_dump "$dir" "$img" "${CRIU_GW_ARGS[@]}" || { criu_timings; return 1; }
	cp -a "$dir" "$WORK/wl.at-dump"     # a restore that succeeds changes it: put it back after
	# the untouched dump first: what its restored workload reports is the reference for a
	# corrupt case that restores (only failures beyond these count against it)
	crwl_restore "$dir" "$img" "$WORK/restore-good.log" "${CRIU_GW_ARGS[@]}" || { criu_timings; return 1; }
	go "$dir" 1
	crwl_wait "$dir" ready.2 || { criu_timings; return 1; }
	criu_fail_lines "$dir" >"$WORK/good-verification.txt"
	crwl_kill "$dir"
	rm -rf "$dir" && cp -a "$WORK/wl.at-dump" "$dir"
	local files=() kinds=() seen=' '
	for f in "$img"/gpuwatch-*; do [ -e "$f" ] && files+=("${f##*/}"); done
	[ ${#files[@]} -gt 0 ] || { fail "the dump wrote no gpuwatch-* image"; return 1; }
	for f in "${files[@]}"; do
		base=${f%%[-.][0-9]*}
		[[ "$seen" == *" $base "* ]] && continue
		seen+="$base "
		kinds+=("$f")
	done
	echo "image files: ${files[*]}" >"$WORK/corrupt-cases.txt"
	for f in "${kinds[@]}"; do
		for how in truncate garbage; do
			n=$((n + 1))
			{ rm -rf "$bad" && cp -a "$img" "$bad"; } || { fail "cannot copy $img"; return 1; }
			criu_corrupt_file "$bad/$f" "$how"
			log=$WORK/restore-bad$n.log
			crash0=$(criu_crashes)
			criu_run "restore ($how $f)" "$log" restore -D "$bad" --shell-job -d "${CRIU_GW_ARGS[@]}"
			outcome=ok
			if [ "$CRIU_RC" = 0 ]; then
				outcome=$(criu_corrupt_restored "$dir") || failed+="${failed:+; }$how $f: $outcome"
			elif [ "$CRIU_RC" -ge 124 ]; then
				outcome="criu exit $CRIU_RC (signal or timeout)"
			elif ! grep -qE 'gpuwatch: .*(refused|cannot|error|corrupt|truncated|missing|invalid)' "$log"; then
				outcome="failed without a gpuwatch error in restore-bad$n.log"
			fi
			[ "$(criu_crashes)" = "$crash0" ] || outcome+=", crash: $(dmesg | grep -E 'segfault|traps:|general protection' | tail -n1)"
			if [ "$CRIU_RC" != 0 ]; then
				for p in $(crwl_pids "$dir"); do
					alive "$p" && outcome+=", process $p left running"
				done
			fi
			crwl_kill "$dir"
			rm -rf "$dir" && cp -a "$WORK/wl.at-dump" "$dir"
			printf '%-9s %-26s exit %-3s %s%s\n' "$how" "$f" "$CRIU_RC" "$outcome" \
				"$(grep -m1 -E 'gpuwatch: .*(refused|cannot)' "$log" | sed 's/^([0-9. ]*) */ | /')" >>"$WORK/corrupt-cases.txt"
			case $outcome in
			ok | "restored, verified as the untouched dump"*) ;;
			*) [[ "$failed" == *"$how $f:"* ]] || failed+="${failed:+; }$how $f: $outcome" ;;
			esac
		done
	done
	rm -rf "$bad"
	sed '1d; s/^/    /' "$WORK/corrupt-cases.txt"
	crwl_restore "$dir" "$img" "$WORK/restore.log" "${CRIU_GW_ARGS[@]}" || { criu_timings; return 1; }
	criu_timings
	crwl_in_cgroup "$dir" "$cg" || return 1
	[ -z "$failed" ] || { fail "corrupt images: $failed"; return 1; }
	crwl_run_rest "$dir" 0 || { REASON="after the corrupt cases, the good dump: $REASON"; return 1; }
	criu_keep_images "$img"
	gw_stop
}

# criu_crashes: how many crash reports the kernel has logged so far
criu_crashes() { dmesg | grep -cE 'segfault|traps:|general protection'; }

# criu_fail_lines DIR: the FAIL lines of every process's verification, sorted
criu_fail_lines() {
	local p
	for p in $(crwl_pids "$1"); do
		[ -e "$1/result.$p.log" ] || echo "pid $p: no result"
		grep '^FAIL' "$1/result.$p.log" 2>/dev/null
	done | sort
}

# criu_corrupt_restored DIR: a restore from corrupt images succeeded: the workload verifies
# itself, and must find nothing the untouched dump's restore did not (good-verification.txt).
# Prints the outcome; non-zero when that is a failure.
criu_corrupt_restored() {
	local dir=$1 REASON='' extra
	go "$dir" 1
	if ! crwl_wait "$dir" ready.2 >/dev/null; then
		echo "restored, then: $REASON"
		return 1
	fi
	extra=$(criu_fail_lines "$dir" | comm -13 "$WORK/good-verification.txt" -)
	if [ -n "$extra" ]; then
		echo "restored WITHOUT an error, and the workload found: $(echo "$extra" | head -n1 | cut -c6-160) ($(echo "$extra" | wc -l) failure(s) the untouched dump does not have)"
		return 1
	fi
	echo "restored, verified as the untouched dump (the restore does not read this image)"
}

# criu_corrupt_file FILE truncate|garbage: half its size, or 64 bytes of garbage in its middle
criu_corrupt_file() {
	local f=$1 size
	size=$(stat -c %s "$f")
	if [ "$2" = truncate ]; then
		truncate -s $((size / 2)) "$f"
	else
		head -c 64 /dev/urandom | tr '\0' 'x' | dd of="$f" bs=1 seek=$((size / 2)) conv=notrunc status=none
	fi
}
