# shellcheck shell=bash
# i915 scenarios (sourced by scenarios.sh): the gwi915 test fixture (vmtests/i915test/, a
# DRM driver named "i915" that implements the i915 uapi gpuwatch decodes) is loaded next to
# vgem, and an i915 workload's manifest is compared with what the kernel says about it
# (vmtests/check_i915.py: the fixture's debugfs state, /proc/PID/maps, /proc/PID/fd).
# No Intel GPU is involved: see vmtests/i915test/README.md for what the fixture mirrors.

# i915_load: 0 loaded (I915_STATE set), 2 skip (REASON), 1 fail
i915_load() {
	local kodir=${KO_DIR:-$WL_DIR} f
	local ko=$kodir/gwi915.ko
	if ! grep -q '^gwi915 ' /proc/modules; then
		if [ ! -e "$ko" ]; then
			REASON="$ko not built ($(cat "$kodir/gwi915.skip" 2>/dev/null || echo 'see vmtests/i915test/build.sh'))"
			return 2
		fi
		[ "$(modinfo -F vermagic "$ko" 2>/dev/null | cut -d' ' -f1)" = "$(uname -r)" ] ||
			{ REASON="$ko was built for another kernel than $(uname -r)"; return 2; }
		modprobe drm_shmem_helper 2>/dev/null
		insmod "$ko" 2>"$WORK/insmod.txt" || { fail "insmod gwi915.ko failed: $(cat "$WORK/insmod.txt")"; return 1; }
	fi
	grep -q " /sys/kernel/debug " /proc/mounts || mount -t debugfs none /sys/kernel/debug 2>/dev/null
	for f in /sys/kernel/debug/dri/*/gwi915_state; do
		[ -e "$f" ] && { I915_STATE=$f; return 0; }
	done
	fail "gwi915 loaded but no /sys/kernel/debug/dri/*/gwi915_state"
}

# check_i915_phase DIR N PIDS...: the manifest matches the kernel within SETTLE_TIMEOUT
# (env I915_CHECK_ARGS: extra checker options, e.g. --preexisting)
check_i915_phase() {
	local dir=$1 n=$2 deadline=$((SECONDS + SETTLE_TIMEOUT))
	shift 2
	# shellcheck disable=SC2086
	until cat "$I915_STATE" >"$dir/state.$n.txt" &&
		py "$VMTESTS/check_i915.py" -q ${I915_CHECK_ARGS:-} "$MANIFEST" "$dir/state.$n.txt" --pids "$@" >"$dir/check.$n.txt" 2>&1; do
		gw_alive || return 1
		if [ $SECONDS -ge $deadline ]; then
			cp "$MANIFEST" "$dir/check.$n.manifest.json" 2>/dev/null
			for p in "$@"; do cp "/proc/$p/maps" "$dir/maps.$n.$p.txt" 2>/dev/null; done
			indent "$dir/check.$n.txt"
			fail "phase $n: manifest differs from the kernel after ${SETTLE_TIMEOUT}s: $(sed -n 2p "$dir/check.$n.txt" | sed 's/^ *- //' | cut -c1-240)"
			return 1
		fi
		sleep 0.2
	done
	# what was compared, for the record (and the checker's own test fixtures)
	cp "$MANIFEST" "$dir/manifest.$n.json" 2>/dev/null
	for p in "$@"; do
		mkdir -p "$dir/proc.$n/$p/fd" && cp "/proc/$p/maps" "$dir/proc.$n/$p/maps" 2>/dev/null
		for l in /proc/"$p"/fd/*; do ln -sf "$(readlink "$l")" "$dir/proc.$n/$p/fd/${l##*/}" 2>/dev/null; done
	done
}

# A VA-API-like workload (libdrm_intel + raw i915 ioctls, a forked child with its own fd):
# every phase's manifest equals the kernel's state; empty after exit.
# --at-attach: gpuwatch attaches only once the workload built its phase-1 state, so the
# snapshot (task_file / task_vma iterators) must find the fds and the anon_inode:i915.gem
# mappings; what was created before attach is unknown (checked with --preexisting).
sc_i915_va() {
	local cg rc n pids at_attach=0 I915_CHECK_ARGS=
	[ "${1:-}" = --at-attach ] && at_attach=1 I915_CHECK_ARGS=--preexisting
	i915_load
	rc=$?
	[ $rc = 0 ] || return $rc
	cg_make cg "gwt-$NAME" || return 1
	[ $at_attach = 1 ] || gw_start "$cg" || return 1
	wl_start "$cg" "$WORK/wl" wl_i915_va || return 1
	for n in 1 2; do
		wait_ready "$WORK/wl" $n "$WL_PID" || return 1
		if [ $n = 1 ] && [ $at_attach = 1 ]; then
			gw_start "$cg" || return 1
		fi
		pids="$WL_PID $(cat "/proc/$WL_PID/task/$WL_PID/children" 2>/dev/null)"
		if [ -n "$GW_PID" ]; then
			# shellcheck disable=SC2086
			check_i915_phase "$WORK/wl" $n $pids || return 1
		fi
		go "$WORK/wl" $n
	done
	wl_wait "$WL_PID" "$WORK/wl" || return 1
	final_check --cgroup "$cg"
}
