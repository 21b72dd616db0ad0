# shellcheck shell=bash
# The VM scenarios (sourced by run-scenarios.sh). Add one: write a function (see common.sh
# and lib.sh for the contract) or reuse sc_simple with another workload, and add a line to SCENARIOS.

# shellcheck disable=SC2034 # SCENARIOS is read by run-scenarios.sh
# name                   function         arguments
SCENARIOS=(
	"check_hooks          sc_check_hooks"
	"two_opens            sc_simple        wl_two_opens"
	"dup_fork             sc_simple        wl_dup_fork"
	"handles              sc_simple        wl_handles"
	"closed_mapped_handle sc_simple        wl_handles --close-mapped"
	"prime                sc_simple        wl_prime"
	"partial_munmap       sc_simple        wl_munmap"
	"exec_cloexec         sc_simple        wl_exec"
	"flink                sc_simple        wl_flink"
	"undecoded_ioctls     sc_simple        wl_undecoded"
	"outside_absent       sc_outside"
	"descendant_cgroup    sc_descendant"
	"moved_in             sc_moved_in"
	"running_at_attach    sc_running_at_attach"
	"churn                sc_churn"
	"vgem_unload          sc_vgem_unload"
	# i915 (guest/i915.sh): the gwi915 fixture, a VA-API-like workload, the kernel as truth
	"i915_va              sc_i915_va"
	"i915_va_at_attach    sc_i915_va --at-attach"
	# CRIU (guest/criu.sh): plain CRIU fails; gpuwatch's plugin and action script restore
	"criu_baseline             sc_criu_baseline"
	"criu_roundtrip            sc_criu_cycle"
	"criu_daemon_after_restore sc_criu_cycle --check-manifest"
	"criu_degraded             sc_criu_cycle --no-daemon"
	"criu_node_missing         sc_criu_node_missing"
	"criu_corrupt              sc_criu_corrupt"
	"criu_pidns                sc_criu_pidns"
	# faults (guest/criu_faults.sh)
	"criu_enospc               sc_criu_enospc"
	"criu_daemon_killed        sc_criu_daemon_killed"
	"criu_killed               sc_criu_killed"
	"criu_killed_inplugin      sc_criu_killed_inplugin"
	"criu_exits                sc_criu_exits"
	"criu_ring_overflow        sc_criu_ring_overflow"
	# the stateless mode (guest/criu_stateless.sh): the fds back, the application rebuilds
	"criu_stateless            sc_criu_stateless"
	"criu_stateless_daemon     sc_criu_stateless --daemon"
	"criu_stateless_i915       sc_criu_stateless --i915"
	# a restore into a cgroup whose device policy denies DRM (guest/criu_devdeny.sh): the
	# plugin's open refused; its mknod of a missing node refused
	"criu_devdeny              sc_criu_devdeny"
	"criu_devdeny_node         sc_criu_node_missing --devdeny"
	# randomized DRM state (guest/criu_random.sh): seeds 1-50 on vgem, 51-100 on virtio_gpu, in
	# scenarios of 12 or 13 seeds; _1 and _3 in debian12, _2 and _4 in the others (lane_skips)
	"criu_random_vgem_1        sc_criu_random 1 13"
	"criu_random_vgem_3        sc_criu_random 14 12"
	"criu_random_vgem_2        sc_criu_random 26 13"
	"criu_random_vgem_4        sc_criu_random 39 12"
	# checkpoints with no DRM state (guest/criu_citizen.sh): plain, criu-args, a conf file
	"criu_citizen              sc_criu_citizen"
	# i915 checkpoint/restore (guest/criu_i915.sh): gwi915, the kernel's state before and after
	"criu_i915_selfcheck       sc_criu_i915_selfcheck"
	"criu_i915                 sc_criu_i915"
	"criu_i915_leave_running   sc_criu_i915 --leave-running"
	"criu_i915_va              sc_criu_i915_va"
	"criu_i915_predump         sc_criu_i915_predump"
	"criu_i915_killed          sc_criu_i915_killed"
	"criu_minor_changed        sc_criu_minor_changed"
	# xe (guest/criu_xe.sh): the gwxe fixture; VMs, bindings, exec queues through CRIU
	"criu_xe                   sc_criu_xe"
	# display drivers QEMU gives (guest/kms.sh): a KMS client dumped and restored. qxl is
	# loaded once per boot: loading it again panics 6.1 (guest/kms.sh, kms_load)
	"criu_kms_virtio_gpu       sc_criu_kms virtio_gpu virtio_gpu"
	"criu_kms_virtio_gpu_resource sc_criu_kms virtio_gpu virtio_gpu --resource"
	"criu_kms_virtio_gpu_cursor sc_criu_kms virtio_gpu virtio_gpu --legacy-cursor"
	"criu_kms_bochs            sc_criu_kms bochs bochs-drm"
	"criu_kms_bochs_degraded   sc_criu_kms bochs bochs-drm --no-daemon"
	"criu_kms_qxl              sc_criu_kms qxl qxl"
	"criu_kms_cirrus           sc_criu_kms cirrus cirrus"
	"criu_kms_virtio_gpu_degraded sc_criu_kms virtio_gpu virtio_gpu --no-daemon"
	"criu_kms_cirrus_degraded  sc_criu_kms cirrus cirrus --no-daemon"
	"criu_modetest_virtio_gpu  sc_criu_modetest virtio_gpu virtio_gpu"
	"criu_modetest_bochs       sc_criu_modetest bochs bochs-drm"
	"criu_modetest_atomic_virtio_gpu sc_criu_modetest virtio_gpu virtio_gpu --atomic"
	"criu_modetest_dropmaster_bochs sc_criu_modetest bochs bochs-drm --drop-master"
	"criu_kmssink_virtio_gpu   sc_criu_kmssink virtio_gpu virtio_gpu"
	"criu_kmssink_bochs        sc_criu_kmssink bochs bochs-drm"
	# generic scenarios on another driver's nodes (guest/kms.sh, sc_on_driver). virtio_gpu has
	# a render node and PRIME: every generic scenario runs there. bochs-drm has no render node
	# (the workloads open its card again) and on 6.1 no PRIME (6.12 has): the workloads then
	# leave their dma-buf parts out, and wl_criu probes handles through MAP_DUMB; prime is a
	# skip there. Damaged images (criu_corrupt) test the image readers, not the driver: vgem
	# and virtio_gpu
	"two_opens_virtio_gpu      sc_on_driver virtio_gpu virtio_gpu sc_simple wl_two_opens"
	"dup_fork_virtio_gpu       sc_on_driver virtio_gpu virtio_gpu sc_simple wl_dup_fork"
	"handles_virtio_gpu        sc_on_driver virtio_gpu virtio_gpu sc_simple wl_handles"
	"closed_mapped_handle_virtio_gpu sc_on_driver virtio_gpu virtio_gpu sc_simple wl_handles --close-mapped"
	"prime_virtio_gpu          sc_on_driver virtio_gpu virtio_gpu sc_simple wl_prime"
	"partial_munmap_virtio_gpu sc_on_driver virtio_gpu virtio_gpu sc_simple wl_munmap"
	"exec_cloexec_virtio_gpu   sc_on_driver virtio_gpu virtio_gpu sc_simple wl_exec"
	"flink_virtio_gpu          sc_on_driver virtio_gpu virtio_gpu sc_simple wl_flink"
	"undecoded_ioctls_virtio_gpu sc_on_driver virtio_gpu virtio_gpu sc_simple wl_undecoded"
	"outside_absent_virtio_gpu sc_on_driver virtio_gpu virtio_gpu sc_outside"
	"descendant_cgroup_virtio_gpu sc_on_driver virtio_gpu virtio_gpu sc_descendant"
	"moved_in_virtio_gpu       sc_on_driver virtio_gpu virtio_gpu sc_moved_in"
	"running_at_attach_virtio_gpu sc_on_driver virtio_gpu virtio_gpu sc_running_at_attach"
	"criu_baseline_virtio_gpu  sc_on_driver virtio_gpu virtio_gpu sc_criu_baseline"
	"criu_roundtrip_virtio_gpu sc_on_driver virtio_gpu virtio_gpu sc_criu_cycle"
	"criu_daemon_after_restore_virtio_gpu sc_on_driver virtio_gpu virtio_gpu sc_criu_cycle --check-manifest"
	"criu_degraded_virtio_gpu  sc_on_driver virtio_gpu virtio_gpu sc_criu_cycle --no-daemon"
	"criu_random_virtio_gpu_1  sc_on_driver virtio_gpu virtio_gpu sc_criu_random 51 13"
	"criu_random_virtio_gpu_3  sc_on_driver virtio_gpu virtio_gpu sc_criu_random 64 12"
	"criu_random_virtio_gpu_2  sc_on_driver virtio_gpu virtio_gpu sc_criu_random 76 13"
	"criu_random_virtio_gpu_4  sc_on_driver virtio_gpu virtio_gpu sc_criu_random 89 12"
	"criu_stateless_virtio_gpu sc_on_driver virtio_gpu virtio_gpu sc_criu_stateless"
	"criu_node_missing_virtio_gpu sc_on_driver virtio_gpu virtio_gpu sc_criu_node_missing"
	"criu_corrupt_virtio_gpu   sc_on_driver virtio_gpu virtio_gpu sc_criu_corrupt"
	"two_opens_bochs           sc_on_driver bochs bochs-drm sc_simple wl_two_opens"
	"dup_fork_bochs            sc_on_driver bochs bochs-drm sc_simple wl_dup_fork"
	"handles_bochs             sc_on_driver bochs bochs-drm sc_simple wl_handles"
	"closed_mapped_handle_bochs sc_on_driver bochs bochs-drm sc_simple wl_handles --close-mapped"
	"partial_munmap_bochs      sc_on_driver bochs bochs-drm sc_simple wl_munmap"
	"exec_cloexec_bochs        sc_on_driver bochs bochs-drm sc_simple wl_exec"
	"prime_bochs               sc_on_driver bochs bochs-drm sc_need_prime sc_simple wl_prime"
	"flink_bochs               sc_on_driver bochs bochs-drm sc_simple wl_flink"
	"undecoded_ioctls_bochs    sc_on_driver bochs bochs-drm sc_simple wl_undecoded"
	"outside_absent_bochs      sc_on_driver bochs bochs-drm sc_outside"
	"descendant_cgroup_bochs   sc_on_driver bochs bochs-drm sc_descendant"
	"moved_in_bochs            sc_on_driver bochs bochs-drm sc_moved_in"
	"running_at_attach_bochs   sc_on_driver bochs bochs-drm sc_running_at_attach"
	"criu_baseline_bochs       sc_on_driver bochs bochs-drm sc_criu_baseline"
	"criu_roundtrip_bochs      sc_on_driver bochs bochs-drm sc_criu_cycle"
	"criu_daemon_after_restore_bochs sc_on_driver bochs bochs-drm sc_criu_cycle --check-manifest"
	"criu_degraded_bochs       sc_on_driver bochs bochs-drm sc_criu_cycle --no-daemon"
	"criu_stateless_bochs      sc_on_driver bochs bochs-drm sc_criu_stateless"
	"criu_node_missing_bochs   sc_on_driver bochs bochs-drm sc_criu_node_missing"
	# the plugin's scratch workload (guest/criu_scratch.sh): the plugin alone, its inputs
	# (a given manifest, none, damaged images, a pre-dump, another device); device is last:
	# it leaves bochs on card0
	"criu_scratch_daemon       sc_scratch_daemon"
	"criu_scratch_manifest     sc_scratch_manifest"
	"criu_scratch_degraded     sc_scratch_degraded"
	"criu_scratch_corrupt      sc_scratch_corrupt"
	"criu_scratch_predump      sc_scratch_predump"
	"criu_scratch_predump_degraded sc_scratch_predump_degraded"
	"criu_scratch_criuargs     sc_scratch_criuargs"
	"criu_scratch_device       sc_scratch_device"
)
. "$VMTESTS/guest/criu.sh"
. "$VMTESTS/guest/churn.sh"
. "$VMTESTS/guest/criu_citizen.sh"
. "$VMTESTS/guest/criu_random.sh"
. "$VMTESTS/guest/criu_faults.sh"
. "$VMTESTS/guest/criu_stateless.sh"
. "$VMTESTS/guest/criu_devdeny.sh"
. "$VMTESTS/guest/criu_dummydrm.sh"
. "$VMTESTS/guest/i915.sh"
. "$VMTESTS/guest/criu_i915.sh"
. "$VMTESTS/guest/criu_xe.sh"
. "$VMTESTS/guest/criu_scratch.sh"
. "$VMTESTS/guest/kms.sh"

# Scenarios that run once, under gpuwatch's own choice (auto); every other one runs under each
# hook path of HOOK_PATHS as NAME@PATH (run-scenarios.sh). The generic scenarios on another
# driver's nodes run once too: the hooks do not depend on the driver, and each path's
# manifests are compared on vgem.
runs_once() {
	case $1 in
	check_hooks | criu_* | *_virtio_gpu | *_bochs) return 0 ;;
	*) return 1 ;;
	esac
}

# Where each scenario runs when the whole suite runs (no ONLY). Both lanes run what tests the
# stack: the hooks on vgem (each lane's kernel), every CRIU scenario on vgem, gwi915 and gwxe
# (each lane's CRIU), the plugin's scratch set. The driver coverage is shared out, so that
# virtio_gpu and bochs-drm run on both kernels (qxl and cirrus, one KMS client each, on 6.1
# only) and the two lanes together fit CI's time
# (vmtests/README.md, "Time"): the tracer scenarios on virtio_gpu and the CRIU and KMS ones on
# bochs-drm, qxl and cirrus in debian12; the tracer scenarios on bochs-drm and the CRIU and KMS
# ones on virtio_gpu in debian13. Of the randomized seeds, 13 a lane: criu_random_vgem_1 (1-13)
# in debian12, criu_random_virtio_gpu_2 (76-88) in debian13; the other six shards run by hand
# (ONLY=NAME) and count as skipped in both. criu_i915_selfcheck tests the suite's own
# checkers (no CRIU): debian12, whose lane is the shorter (debian13's container suite runs
# two runtimes: 15 minutes against 7).
# lane_share NAME: prints debian12, debian13 (the other lanes), both, or hand
lane_share() {
	# a tracer scenario on another driver is one whose vgem twin runs per hook path (runs_once)
	case $1 in
	criu_random_vgem_1) echo debian12 ;;
	criu_random_virtio_gpu_2) echo debian13 ;;
	criu_random_*) echo hand ;;
	criu_i915_selfcheck) echo debian12 ;;
	*_virtio_gpu | *_virtio_gpu_*)
		if runs_once "${1%_virtio_gpu}"; then echo debian13; else echo debian12; fi ;;
	*_bochs | *_bochs_* | criu_kms_qxl | criu_kms_cirrus*)
		if runs_once "${1%_bochs}"; then echo debian12; else echo debian13; fi ;;
	*) echo both ;;
	esac
}

# lane_skips NAME: true where NAME does not run in this lane (lane_share)
lane_skips() {
	local share
	share=$(lane_share "$1")
	case $share in
	both) return 1 ;;
	debian12) [ "${LANE:-debian12}" != debian12 ] ;;
	debian13) [ "${LANE:-debian12}" = debian12 ] ;;
	*) return 0 ;;
	esac
}

# `gpuwatch check` on the suite's kernel (Debian's 6.1: BPF trampolines, module BTF, vgem
# loaded): every hook group on fexit; GPUWATCH_HOOKS=tracepoint forces the fallback.
sc_check_hooks() {
	[ "$HAVE_GW" = 1 ] || return 0
	local rc
	"$GPUWATCH" check >"$WORK/check.txt" 2>&1
	rc=$?
	indent "$WORK/check.txt"
	[ $rc = 0 ] || { fail "gpuwatch check exited with status $rc$(last_line "$WORK/check.txt")"; return 1; }
	"$GPUWATCH" check --json >"$WORK/check.json" 2>"$WORK/check.err" ||
		{ fail "gpuwatch check --json failed$(last_line "$WORK/check.err")"; return 1; }
	py "$VMTESTS/hook_paths.py" check "$WORK/check.json" fexit >"$WORK/check.out" 2>&1 ||
		{ fail "$(head -n1 "$WORK/check.out")"; return 1; }
	GPUWATCH_HOOKS=tracepoint "$GPUWATCH" check --json >"$WORK/check-tracepoint.json" 2>"$WORK/check.err" ||
		{ fail "GPUWATCH_HOOKS=tracepoint gpuwatch check --json failed$(last_line "$WORK/check.err")"; return 1; }
	py "$VMTESTS/hook_paths.py" check "$WORK/check-tracepoint.json" tracepoint >"$WORK/check.out" 2>&1 ||
		{ fail "GPUWATCH_HOOKS=tracepoint: $(head -n1 "$WORK/check.out")"; return 1; }
}

# A workload started in the watched cgroup after gpuwatch attached; every phase exact.
sc_simple() {
	local cg
	cg_make cg "gwt-$NAME" || return 1
	gw_start "$cg" || return 1
	wl_start "$cg" "$WORK/wl" "$@" || return 1
	run_phases "$WORK/wl" "$WL_PID" --cgroup "$cg" || return 1
	final_check --cgroup "$cg"
}

# A holder in a sibling cgroup is never listed, while one inside is.
sc_outside() {
	local cg out in_pid
	cg_make cg "gwt-$NAME" && cg_make out "gwt-$NAME-out" || return 1
	gw_start "$cg" || return 1
	wl_start "$out" "$WORK/out" wl_hold || return 1
	local out_pid=$WL_PID
	wait_ready "$WORK/out" 1 "$out_pid" || return 1
	wl_start "$cg" "$WORK/in" wl_hold || return 1
	in_pid=$WL_PID
	run_phases "$WORK/in" "$in_pid" --cgroup "$cg" --absent "$WORK"/out/truth.1.*.json || return 1
	go "$WORK/out" 1
	wl_wait "$out_pid" "$WORK/out" || return 1
	final_check --cgroup "$cg"
}

# A process in a descendant of the watched cgroup is followed.
sc_descendant() {
	local cg sub
	cg_make cg "gwt-$NAME" && cg_make sub "gwt-$NAME/sub" || return 1
	gw_start "$cg" || return 1
	wl_start "$sub" "$WORK/wl" wl_hold || return 1
	run_phases "$WORK/wl" "$WL_PID" --cgroup "$cg" || return 1
	final_check --cgroup "$cg"
}

# A process started elsewhere and moved into the cgroup before it touches DRM is followed
# exactly from then on.
sc_moved_in() {
	local cg out pid
	cg_make cg "gwt-$NAME" && cg_make out "gwt-$NAME-out" || return 1
	gw_start "$cg" || return 1
	wl_start "$out" "$WORK/wl" wl_hold --idle-first || return 1
	pid=$WL_PID
	wait_ready "$WORK/wl" 1 "$pid" || return 1
	check_phase "$WORK/wl" 1 --cgroup "$cg" || return 1
	echo "$pid" >"$cg/cgroup.procs" || { fail "cannot move $pid into $cg"; return 1; }
	go "$WORK/wl" 1
	wait_ready "$WORK/wl" 2 "$pid" || return 1
	check_phase "$WORK/wl" 2 --cgroup "$cg" || return 1
	go "$WORK/wl" 2
	wl_wait "$pid" "$WORK/wl" || return 1
	final_check --cgroup "$cg"
}

# A process that built its DRM state before gpuwatch attached: its fds and mappings are
# listed, its files say "handles_known": false and the manifest "complete": false; what it
# does after attach is known.
sc_running_at_attach() {
	local cg pid
	cg_make cg "gwt-$NAME" || return 1
	wl_start "$cg" "$WORK/wl" wl_hold --preexisting || return 1
	pid=$WL_PID
	wait_ready "$WORK/wl" 1 "$pid" || return 1
	gw_start "$cg" || return 1
	run_phases "$WORK/wl" "$pid" --cgroup "$cg" || return 1
	final_check --cgroup "$cg" --complete any || return 1
	# both lanes' kernels (6.1, 6.12) take a task iterator's pid: the snapshot walks only the
	# followed processes, never every task (user/tracer.cpp)
	if grep -q "refuses a task iterator's pid" "$WORK/gpuwatch.log"; then
		fail "the daemon fell back to walking every task: $(grep -m1 "refuses a task iterator" "$WORK/gpuwatch.log")"
		return 1
	fi
}
