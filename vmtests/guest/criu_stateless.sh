# shellcheck shell=bash
# The stateless mode (sourced by scenarios.sh): what the seed asked for. wl_stateless keeps a
# mapped dumb buffer and a dma-buf fd and writes frames; it is dumped with
# GPUWATCH_CHECKPOINT_MODE=stateless and restored with GPUWATCH_RESTORE_SIGNAL=SIGUSR2. The
# images must hold no buffer contents and no manifest; after the restore the workload must find
# its fds at the same numbers with the same flags, its old handle gone, its old mapping
# zero-filled memory with no device behind it (/memfd:gpuwatch-stateless), get the signal,
# rebuild its buffer and carry on writing frames.

# sc_criu_stateless [--daemon|--i915]: as above; with --daemon a gpuwatch daemon follows the
# cgroup (it is not needed: the stateless dump takes no manifest). --i915: on the gwi915 test
# driver (WL_I915=1: GEM_CREATE buffers mapped through anon_inode:i915.gem), with a daemon, whose
# manifest lets the dump replace the mapping by a placeholder instead of a copy of its bytes;
# the mapping comes back as anonymous zero-filled memory
sc_criu_stateless() {
	local cg dir=$WORK/wl img=$WORK/img pid got bytes GW_PID="" rc
	local mapname='/memfd:gpuwatch-stateless' WL_I915=''
	criu_need plugin || return $?
	if [ "${1:-}" = --i915 ]; then
		i915_load
		rc=$?
		[ $rc = 0 ] || return $rc
		WL_I915=1 mapname=''
	fi
	export WL_I915
	cg_make cg "gwt-$NAME" || return 1
	if [ "${1:-}" = --daemon ] || [ -n "$WL_I915" ]; then gw_start "$cg" || return 1; fi
	CRWL_WL=wl_stateless crwl_start "$cg" "$dir" || return 1
	crwl_wait "$dir" ready || return 1
	pid=$(cat "$dir/pid.parent")
	wait_file "$dir/progress" 60 "$pid" || { fail "wl_stateless wrote no frames$(last_line "$dir/stderr")"; return 1; }
	local CRIU_ENV=(GPUWATCH_CHECKPOINT_MODE=stateless)
	crwl_dump "$dir" "$img" "${CRIU_GW_ARGS[@]}" || { criu_timings; return 1; }
	grep -q 'stateless checkpoint (mode from GPUWATCH_CHECKPOINT_MODE)' "$WORK/dump.log" ||
		{ criu_show "$WORK/dump.log"; fail "the dump log does not say the checkpoint is stateless"; return 1; }
	got=$(cd "$img" && ls gpuwatch-object-* gpuwatch-manifest* 2>/dev/null | tr '\n' ' ')
	[ -z "$got" ] || { fail "a stateless dump saved buffer contents or a manifest: $got"; return 1; }
	grep -l '"source": "stateless"' "$img"/gpuwatch-file-*.json >/dev/null 2>&1 ||
		{ fail "no file image of the stateless dump says source \"stateless\""; return 1; }
	bytes=$(cat "$img"/gpuwatch-* | wc -c)
	echo "    stateless images: $(find "$img" -name 'gpuwatch-*' | wc -l) gpuwatch files, $bytes bytes; all images $(du -sk "$img" | cut -f1) KiB"
	# shellcheck disable=SC2034 # read by criu_run
	CRIU_ENV=(GPUWATCH_RESTORE_SIGNAL=SIGUSR2) # the restore follows the images, not the mode
	crwl_restore "$dir" "$img" "$WORK/restore.log" "${CRIU_GW_ARGS[@]}" || { criu_timings; return 1; }
	criu_timings
	wait_file "$dir/rebuilt.1" 60 "$pid" ||
		{ criu_show "$WORK/restore.log"; fail "the restored workload did not rebuild its GPU state (no signal?)$(last_line "$dir/stderr")"; return 1; }
	got=$(find "/proc/$pid/fd" -mindepth 1 -printf '%f %l\n' 2>/dev/null | awk '$1 >= 1000 || /memfd:/' | tr '\n' ' ')
	[ -z "$got" ] || { fail "the restored workload holds a file the plugin left: $got"; return 1; }
	stateless_after "$dir" signal "$mapname" || return 1
	echo "    rebuilt: $(tr '\n' ' ' <"$dir/rebuilt.1"); then $(cat "$dir/progress")"
	kill -TERM "$pid"
	wait_for 10 sh -c "! kill -0 $pid 2>/dev/null" || { fail "wl_stateless did not exit on SIGTERM"; return 1; }
	criu_keep_images "$img"
	if [ -n "$GW_PID" ]; then gw_stop || return 1; fi
}

# stateless_after DIR TOLD MAPNAME: what wl_stateless (in DIR) found after a stateless restore
# and did then (also the container suite's): told by TOLD (signal, handle-gone), its fds at the
# same numbers with the same flags and kinds, its old handle gone, the untouched part of its old
# mapping reading zeros on MAPNAME ("": anonymous memory), and 40 frames more after rebuilding
stateless_after() {
	local dir=$1 told=$2 mapname=$3 want key got frames
	for want in "told_by $told" "card_fd_ok 1" "render_fd_ok 1" "dmabuf_fd_ok 1" "old_handle gone" "map_zero 1"; do
		key=${want%% *}
		got=$(grep "^$key " "$dir/after" | cut -d' ' -f2-)
		[ "$key $got" = "$want" ] || { indent "$dir/after"; fail "after the restore $key is '$got', not '${want#* }'"; return 1; }
	done
	got=$(sed -n 's/^map_name //p' "$dir/after")
	[ "${got%% *}" = "$mapname" ] ||
		{ indent "$dir/after"; fail "the old mapping is '$got', not the stateless zero-filled memory (${mapname:-anonymous})"; return 1; }
	frames=$(grep -o 'frames [0-9]*' "$dir/rebuilt.1" | cut -d' ' -f2)
	wait_for 60 awk -v f="$frames" '$1 == "generation" && $2 == 1 && $4 > f + 40 { ok = 1 } END { exit !ok }' "$dir/progress" ||
		{ fail "the workload did not carry on after rebuilding ($(cat "$dir/progress" 2>/dev/null))$(last_line "$dir/stderr")"; return 1; }
	echo "    after the restore: $(tr '\n' ' ' <"$dir/after" | cut -c1-200)"
}
