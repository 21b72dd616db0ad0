# shellcheck shell=bash
# Display drivers QEMU gives the VM (sourced by scenarios.sh; bash, root, in the VM).
# vmtests/run.sh adds their devices with the drivers blacklisted, so that vgem keeps card0 for
# every other scenario; a scenario here loads its driver, finds its card by driver name (the
# workload asks DRM_IOCTL_VERSION: numbering changes between boots) and unloads it after.
#   criu_kms_DRIVER  wl_kms, a KMS client (dumb buffer, ADDFB, SETCRTC, GETFB's handle) in a
#                    followed cgroup: the manifest lists the framebuffer and both handles (one
#                    buffer) and names SETCRTC as undecoded (not complete); criu dump reads back
#                    the CRTC showing the framebuffer; after criu restore the buffer holds its
#                    bytes, GETFB's handle still names it, the framebuffer has its id and the
#                    CRTC shows it in the same mode (the workload checks, and the log says so).

# kms_device DRIVER: the PCI vendor:device QEMU's device for DRIVER has
kms_device() {
	case $1 in
	virtio_gpu) echo 0x1af4:0x1050 ;;
	bochs) echo 0x1234:0x1111 ;;
	*) return 1 ;;
	esac
}

# kms_load DRIVER: the VM has the device (else REASON and 2) and its driver is loaded
kms_load() {
	local drv=$1 want d
	want=$(kms_device "$drv") || { fail "kms_load: no device known for driver $drv"; return 1; }
	for d in /sys/bus/pci/devices/*; do
		[ "$(cat "$d/vendor"):$(cat "$d/device")" = "$want" ] && break
		d=
	done
	[ -n "$d" ] || { REASON="the VM has no PCI device $want for $drv (vmtests/run.sh adds it with --qemu-opts)"; return 2; }
	modprobe "$drv" 2>"$WORK/modprobe.err" || { fail "modprobe $drv failed$(last_line "$WORK/modprobe.err")"; return 1; }
}

# kms_unload DRIVER: back to vgem alone (a later scenario counts on card numbering)
kms_unload() {
	rmmod "$1" 2>"$WORK/rmmod.err" || echo "    note: rmmod $1 failed$(last_line "$WORK/rmmod.err")"
}

# sc_criu_kms MODULE DRM-DRIVER-NAME [--no-daemon]: --no-daemon, no manifest: the dump probes
# the file (without PRIME on bochs: by MODE_MAP_DUMB and mapping), the buffers' bytes come back
sc_criu_kms() {
	local drv=$1 name=$2 cg dir=$WORK/wl img=$WORK/img p rc=0 daemon=1
	[ "${3:-}" = --no-daemon ] && daemon=0
	criu_need plugin || return $?
	kms_load "$drv" || return $?
	if ! cg_make cg "gwt-$NAME" || { [ $daemon = 1 ] && ! gw_start "$cg"; }; then kms_unload "$drv"; return 1; fi
	if [ $daemon = 1 ]; then
		CRWL_WL=wl_kms crwl_start "$cg" "$dir" "$name"
		sc_criu_kms_run "$cg" "$dir" "$img" || rc=$?
	else
		CRWL_WL=wl_kms crwl_start "$cg" "$dir" "$name" --degraded
		sc_criu_kms_run "$cg" "$dir" "$img" --no-daemon || rc=$?
	fi
	for p in $(crwl_pids "$dir"); do kill -9 "$p" 2>/dev/null; done
	gw_stop
	kms_unload "$drv"
	return $rc
}

sc_criu_kms_run() {
	local cg=$1 dir=$2 img=$3 deadline pid
	crwl_wait "$dir" ready.1 || return 1
	sed 's/^/    /' "$dir/stdout"
	if [ "${4:-}" = --no-daemon ]; then
		crwl_truth "$dir" 1 || return 1
		crwl_dump "$dir" "$img" "${CRIU_GW_ARGS[@]}" || { criu_timings; return 1; }
		grep -h 'gpuwatch: .*\(no manifest\|probed\|PRIME\)' "$WORK/dump.log" | sed 's/^([0-9. ]*) /    dump: /' | head -n 4
		grep -q 'gpuwatch: no manifest' "$WORK/dump.log" || { fail "dump without a daemon: dump.log does not say that there was no manifest"; return 1; }
	else
		check_phase "$dir" 1 --cgroup "$cg" || return 1
		crwl_dump "$dir" "$img" "${CRIU_GW_ARGS[@]}" || { criu_timings; return 1; }
		sc_criu_kms_dumplog || return 1
	fi
	crwl_restore "$dir" "$img" "$WORK/restore.log" "${CRIU_GW_ARGS[@]}" || { criu_timings; return 1; }
	criu_timings
	grep -h 'gpuwatch: .*\(framebuffer\|CRTC\)' "$WORK/restore.log" | sed 's/^([0-9. ]*) *[0-9]*:* */    restore: /'
	if [ "${4:-}" != --no-daemon ]; then
		grep -q 'gpuwatch: file [0-9]*: 1 framebuffers and 1 CRTCs set again' "$WORK/restore.log" ||
			{ criu_show "$WORK/restore.log"; fail "restore.log does not say the framebuffer and the CRTC were set again"; return 1; }
	fi
	go "$dir" 1
	crwl_wait "$dir" ready.2 || return 1
	sed 's/^/    after the restore: /' "$dir"/result.*.log
	crwl_results "$dir" result || return 1
	go "$dir" 2
	pid=$(cat "$dir/pid.parent")
	deadline=$((SECONDS + PHASE_TIMEOUT))
	while alive "$pid"; do
		[ $SECONDS -lt $deadline ] || { fail "workload $pid still running after its last phase"; return 1; }
		sleep 0.05
	done
	[ "$(cat "$dir/done.$pid" 2>/dev/null)" = 0 ] || { fail "workload did not finish cleanly"; return 1; }
	criu_keep_images "$img"
}

# dump.log of a dump with the manifest: it says which CRTC configuration it read back
sc_criu_kms_dumplog() {
	grep -q 'MODE_SETCRTC succeeded on this file .*, except the configuration the dump read back (CRTC [0-9]* showing framebuffer [0-9]*), set again' "$WORK/dump.log" ||
		{ criu_show "$WORK/dump.log"; fail "dump.log does not say which CRTC configuration it read back for MODE_SETCRTC"; return 1; }
	grep -h 'gpuwatch: file .*\(succeeded on this file\|MODE_GETFB\|framebuffer\)' "$WORK/dump.log" | sed 's/^([0-9. ]*) /    dump: /'
}
