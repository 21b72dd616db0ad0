# shellcheck shell=bash
# Display drivers QEMU gives the VM (sourced by scenarios.sh; bash, root, in the VM).
# vmtests/run.sh adds their devices with the drivers blacklisted, so that vgem keeps card0 for
# every other scenario; a scenario here loads its driver, finds its card by driver name (the
# workload asks DRM_IOCTL_VERSION: numbering changes between boots) and unloads it after.
#   criu_kms_DRIVER  wl_kms, a KMS client (dumb buffer, ADDFB, SETCRTC, GETFB's handle) in a
#                    followed cgroup: the manifest lists the framebuffer and both handles (one
#                    buffer) and the CRTC configuration SETCRTC made (complete); criu dump
#                    reads back the CRTC showing the framebuffer; after criu restore the buffer holds its
#                    bytes, GETFB's handle still names it, the framebuffer has its id and the
#                    CRTC shows it in the same mode (the workload checks, and the log says so).
#                    QEMU's picture of the display (screendump, taken on the host) is the
#                    client's buffer before the dump and the same after the restore.
#   criu_kms_virtio_gpu_cursor  the same with the cursor set by the legacy MODE_CURSOR2 and
#                    MODE_CURSOR(MOVE): the manifest lists it (complete), the restore sets it again
#                    and wl_kms finds the cursor plane at the same place (debugfs state).
#   criu_kms_virtio_gpu_resource  the same with handle 1 a 2D resource of virtio_gpu's own
#                    RESOURCE_CREATE (VIRTGPU_MAP, TRANSFER_TO_HOST): the manifest lists it
#                    with its resource parameters and host upload; the restore makes it again
#                    with them and writes its host copy again (restore.log says so).

# kms_device DRIVER: the PCI vendor:device QEMU's device for DRIVER has
kms_device() {
	case $1 in
	virtio_gpu) echo 0x1af4:0x1050 ;;
	bochs) echo 0x1234:0x1111 ;;
	qxl) echo 0x1b36:0x0100 ;;
	cirrus) echo 0x1013:0x00b8 ;;
	*) return 1 ;;
	esac
}

# kms_qemu_id DRIVER: QEMU's id of the display device for DRIVER (vmtests/run.sh names them)
kms_qemu_id() {
	case $1 in
	virtio_gpu) echo gwvgpu ;;
	bochs) echo gwbochs ;;
	qxl) echo gwqxl ;;
	cirrus) echo gwcirrus ;;
	*) return 1 ;;
	esac
}

# kms_shot DRIVER NAME: RESULTS/screendump/NAME.ppm, QEMU's picture of DRIVER's display, taken
# on the host by vmtests/screendump.py (which run.sh starts with a QMP socket)
kms_shot() {
	local id dir=$RESULTS/screendump deadline
	id=$(kms_qemu_id "$1") || { fail "kms_shot: no QEMU device id for $1"; return 1; }
	sleep 1 # let QEMU process the last display commands of the guest
	rm -f "$dir/$2".*
	printf '%s\n' "$id" >"$dir/$2.req.tmp" && mv "$dir/$2.req.tmp" "$dir/$2.req" ||
		{ fail "kms_shot: cannot ask for a screendump in $dir (vmtests/run.sh makes it)"; return 1; }
	deadline=$((SECONDS + 30))
	until [ -e "$dir/$2.done" ]; do
		[ -e "$dir/$2.err" ] && { fail "screendump of $id: $(cat "$dir/$2.err")"; return 1; }
		[ $SECONDS -lt $deadline ] || { fail "no screendump of $id within 30 s (is vmtests/screendump.py running on the host? see screendump.log)"; return 1; }
		sleep 0.2
	done
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
	# qxl loaded a second time in one boot panicked 6.1 (qxl_irq_handler: the interrupt left
	# pending by the first load arrives before the driver maps its RAM header)
	if [ "$drv" = qxl ] && [ -e "$WORK_ROOT/qxl-loaded" ]; then
		REASON="qxl was loaded once in this boot already: a second load panics Debian's 6.1 kernel"
		return 2
	fi
	[ "$drv" = qxl ] && touch "$WORK_ROOT/qxl-loaded"
	modprobe "$drv" 2>"$WORK/modprobe.err" || { fail "modprobe $drv failed$(last_line "$WORK/modprobe.err")"; return 1; }
}

# kms_unload DRIVER: back to vgem alone (a later scenario counts on card numbering)
kms_unload() {
	rmmod "$1" 2>"$WORK/rmmod.err" || echo "    note: rmmod $1 failed$(last_line "$WORK/rmmod.err")"
}

# sc_criu_kms MODULE DRM-DRIVER-NAME [--no-daemon | --resource | --legacy-cursor]: --no-daemon, no manifest: the
# dump probes the file (without PRIME on bochs: by MODE_MAP_DUMB and mapping), the buffers'
# bytes come back; --resource: handle 1 is a virtio_gpu resource (wl_kms --resource);
# --legacy-cursor: the cursor is handle 3 through MODE_CURSOR2 (wl_kms --legacy-cursor): the
# manifest is complete and the restore sets the cursor again at its place
sc_criu_kms() {
	local drv=$1 name=$2 cg dir=$WORK/wl img=$WORK/img p rc=0 daemon=1 wlargs=()
	KMS_DRIVER=$drv
	[ "${3:-}" = --no-daemon ] && daemon=0
	[ "${3:-}" = --resource ] && wlargs=(--resource)
	[ "${3:-}" = --legacy-cursor ] && wlargs=(--legacy-cursor)
	criu_need plugin || return $?
	kms_load "$drv" || return $?
	if ! cg_make cg "gwt-$NAME" || { [ $daemon = 1 ] && ! gw_start "$cg"; }; then kms_unload "$drv"; return 1; fi
	if [ $daemon = 1 ]; then
		CRWL_WL=wl_kms crwl_start "$cg" "$dir" "$name" "${wlargs[@]}"
		sc_criu_kms_run "$cg" "$dir" "$img" "${wlargs[@]}" || rc=$?
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
		kms_shot "$KMS_DRIVER" "$NAME-before" || return 1
		crwl_dump "$dir" "$img" "${CRIU_GW_ARGS[@]}" || { criu_timings; return 1; }
		sc_criu_kms_dumplog || return 1
	fi
	crwl_restore "$dir" "$img" "$WORK/restore.log" "${CRIU_GW_ARGS[@]}" || { criu_timings; return 1; }
	criu_timings
	# the picture first: what a user sees
	if [ "${4:-}" != --no-daemon ]; then
		kms_same_picture "$KMS_DRIVER" --pattern || return 1
	fi
	grep -h 'gpuwatch: .*\(framebuffer\|CRTC\)' "$WORK/restore.log" | sed 's/^([0-9. ]*) *[0-9]*:* */    restore: /'
	if [ "${4:-}" != --no-daemon ]; then
		if [ "${4:-}" = --legacy-cursor ]; then
			grep -q 'legacy cursor of CRTC' "$dir/stdout" || { fail "wl_kms set no legacy cursor"; return 1; }
			grep -q 'gpuwatch: file [0-9]*: 1 framebuffers and 1 CRTCs set again, and 1 cursors' "$WORK/restore.log" ||
				{ criu_show "$WORK/restore.log"; fail "restore.log does not say the framebuffer, the CRTC and the cursor were set again"; return 1; }
		elif grep -q 'cursor plane [0-9]* shows framebuffer' "$dir/stdout"; then
			grep -q 'gpuwatch: file [0-9]*: 2 framebuffers and 1 CRTCs set again, and 1 other planes' "$WORK/restore.log" ||
				{ criu_show "$WORK/restore.log"; fail "restore.log does not say the framebuffers, the CRTC and the cursor plane were set again"; return 1; }
		else
			grep -q 'gpuwatch: file [0-9]*: 1 framebuffers and 1 CRTCs set again' "$WORK/restore.log" ||
				{ criu_show "$WORK/restore.log"; fail "restore.log does not say the framebuffer and the CRTC were set again"; return 1; }
		fi
		[ "$KMS_DRIVER" != virtio_gpu ] || grep -q 'cursor plane [0-9]* \(shows framebuffer\|at \)' "$dir/stdout" ||
			{ fail "wl_kms found no cursor plane on virtio_gpu"; return 1; }
	fi
	if [ "${4:-}" = --resource ]; then
		grep -q '"origin": "virtio_gpu.resource_create"' "$img"/gpuwatch-file-*.json &&
			grep -q '"host_uploaded": true' "$img"/gpuwatch-file-*.json ||
			{ fail "the file image does not list handle 1 as a virtio_gpu resource whose host copy was written"; return 1; }
		grep -q 'gpuwatch: file [0-9]*: host copies written again: handles 1\b' "$WORK/restore.log" ||
			{ criu_show "$WORK/restore.log"; fail "restore.log does not say handle 1's host copy was written again"; return 1; }
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
	grep -q 'gpuwatch: dumped file .* from the manifest; read back: CRTC [0-9]* showing framebuffer [0-9]*' "$WORK/dump.log" ||
		{ criu_show "$WORK/dump.log"; fail "dump.log does not say which CRTC configuration it read back"; return 1; }
	grep -h 'gpuwatch: \(dumped file .*read back\|file .*\(succeeded on this file\|MODE_GETFB\|framebuffer\|CRTC\)\)' "$WORK/dump.log" | sed 's/^([0-9. ]*) /    dump: /'
}

# kms_same_picture DRIVER [--pattern]: QEMU's picture of DRIVER's display now
# (RESULTS/screendump/NAME-after) is the one taken before the dump (NAME-before), which is not
# blank (--pattern: and is wl_kms's buffer); vmtests/check_screendump.py compares
kms_same_picture() {
	kms_shot "$1" "$NAME-after" || return 1
	py "$VMTESTS/check_screendump.py" "$RESULTS/screendump/$NAME-before.ppm" \
		"$RESULTS/screendump/$NAME-after.ppm" "${@:2}" >"$WORK/shot.txt" 2>&1 ||
		{ sed 's/^/    /' "$WORK/shot.txt"; fail "QEMU's picture of the display is not the same after the restore"; return 1; }
	sed 's/^/    screendump: /' "$WORK/shot.txt"
}

# kms_wait_manifest DIR DRM-DRIVER-NAME CLIENT MIN MAX [--atomic]: waits until the manifest
# (copied to DIR/manifest.json) lists one file of the driver, with MIN to MAX framebuffers whose
# planes all name a handle, no undecoded ioctl, and a display configuration of one CRTC in a
# mode, with connectors, showing one of those framebuffers (--atomic: one property blob and at
# least one atomic commit instead); and says complete. DIR/card and DIR/blob get the file's
# node and its first blob's id.
kms_wait_manifest() {
	local dir=$1 name=$2 client=$3 deadline=$((SECONDS + SETTLE_TIMEOUT))
	shift 3
	until cp "$MANIFEST" "$dir/manifest.json" 2>/dev/null && py - "$dir/manifest.json" "$name" "$1" "$2" "$dir" "${@:3}" >"$dir/check.txt" 2>&1 <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
files = [f for f in m["files"] if f["driver"] == sys.argv[2]]
assert len(files) == 1, f"{len(files)} files of {sys.argv[2]}"
f = files[0]
fbs = f.get("framebuffers", [])
assert int(sys.argv[3]) <= len(fbs) <= int(sys.argv[4]), f"framebuffers: {fbs}"
assert all(fb["planes"] and all(p["handle"] for p in fb["planes"]) for fb in fbs), f"framebuffer planes without a handle: {fbs}"
assert not f.get("undecoded_ioctls"), f"undecoded: {f.get('undecoded_ioctls')}"
d = f.get("display") or {}
if sys.argv[6:] == ["--atomic"]:
    assert d.get("atomic_commits", 0) >= 1, f"no atomic commit counted: {d}"
    assert len(d.get("blobs", [])) == 1, f"property blobs: {d.get('blobs')}"
    open(sys.argv[5] + "/blob", "w").write(str(d["blobs"][0]["id"]))
    shown = f"property blob {d['blobs'][0]['id']} ({d['blobs'][0]['length']} bytes), {d['atomic_commits']} atomic commit(s)"
else:
    crtcs = d.get("crtcs", [])
    assert len(crtcs) == 1, f"display CRTCs: {crtcs}"
    c = crtcs[0]
    assert c["configured"] and c["mode"] and c["connectors"] >= 1, f"CRTC not configured with a mode and connectors: {c}"
    assert c["fb"] in [fb["id"] for fb in fbs], f"CRTC {c['crtc']} shows framebuffer {c['fb']}, not one of the file's"
    shown = f"CRTC {c['crtc']} shows framebuffer {c['fb']}, {c['mode']['hdisplay']}x{c['mode']['vdisplay']}@{c['mode']['vrefresh']} on {c['connectors']} connector(s)"
assert m["complete"] is True, f"not complete: {m.get('incomplete_reasons')}"
open(sys.argv[5] + "/card", "w").write(f["path"])
print(f"file {f['id']}: {len(f['handles'])} handles, framebuffers {' '.join(str(fb['id']) for fb in fbs)} ({fbs[0]['width']}x{fbs[0]['height']} {fbs[0]['format']}); "
      f"display: {shown}; complete")
PY
	do
		gw_alive || return 1
		[ $SECONDS -lt $deadline ] || { indent "$dir/check.txt"; fail "the manifest does not show $client's framebuffers: $(tail -n1 "$dir/check.txt")"; return 1; }
		sleep 0.5
	done
	sed 's/^/    manifest: /' "$dir/check.txt"
}

# sc_criu_modetest MODULE DRM-DRIVER-NAME [--atomic]: libdrm's own test client, as a user runs
# it: `modetest -M DRIVER -s CONNECTOR:#0` (a dumb buffer with its test pattern, ADDFB2,
# SETCRTC; it then waits on its stdin, a pipe from `sleep` in the same dumped tree) in a
# followed cgroup. The manifest lists its file with a framebuffer and the CRTC it set
# (complete); after criu dump and restore modetest runs on, restore.log says the framebuffer
# and the CRTC were set again, QEMU's picture of the display is the same as before, and the
# kernel (debugfs clients) says the restored modetest is DRM master as it was.
# --atomic: `modetest -a -s CONNECTOR@CRTC:#0 -P PRIMARY@CRTC:WxH` (CREATEPROPBLOB of the
# mode, one MODE_ATOMIC commit): the manifest lists the blob and counts the commit (complete);
# the dump reads the CRTC back and says the commit's other properties are not set again; after
# the restore the blob has its id and its bytes (GETPROPBLOB, through another file).
# --drop-master: `modetest -d -s ...` drops DRM master after setting the mode: the restored
# modetest is not master either (the restore drops what the first opener gets).
sc_criu_modetest() {
	local drv=$1 name=$2 cg dir=$WORK/mt img=$WORK/img conn crtc plane size rc=0 pid args
	command -v modetest >/dev/null || { REASON="modetest is not installed in the VM (libdrm-tests; setup.sh installs it)"; return 2; }
	criu_need plugin || return $?
	kms_load "$drv" || return $?
	for _ in $(seq 100); do
		conn=$(modetest -M "$name" -c 2>/dev/null | awk '$3 == "connected" { print $1; exit }')
		[ -n "$conn" ] && break
		sleep 0.1
	done
	if [ -z "$conn" ]; then fail "modetest -M $name -c lists no connected connector"; kms_unload "$drv"; return 1; fi
	args=(-s "$conn:#0")
	if [ "${3:-}" = --atomic ]; then
		modetest -M "$name" -a -c -p >"$WORK/resources.txt" 2>&1
		read -r crtc plane size < <(kms_atomic_pipe "$WORK/resources.txt" "$conn")
		[ -n "$size" ] || { indent "$WORK/resources.txt"; fail "modetest -a -c -p shows no CRTC, primary plane and mode for connector $conn"; kms_unload "$drv"; return 1; }
		args=(-a -s "$conn@$crtc:#0" -P "$plane@$crtc:$size")
	fi
	[ "${3:-}" = --drop-master ] && args=(-d "${args[@]}")
	if ! cg_make cg "gwt-$NAME" || ! gw_start "$cg"; then kms_unload "$drv"; return 1; fi
	mkdir -p "$dir"
	echo "    modetest -M $name ${args[*]}"
	# shellcheck disable=SC2016 # $$ is the dumped tree's shell
	(cd "$dir" && exec setsid "$VMTESTS/guest/incgroup" "$cg" sh -c 'echo $$ >pid.parent; sleep 1000000 | exec stdbuf -oL modetest "$@"' modetest -M "$name" "${args[@]}" \
		</dev/null >"$dir/stdout" 2>"$dir/stderr" 3>&- 4>&- 5>&-) &
	disown $!
	sc_criu_modetest_run "$drv" "$name" "$cg" "$dir" "$img" "${3:-}" || rc=$?
	pid=$(cat "$dir/pid.parent" 2>/dev/null) && pkill -KILL -s "$pid" 2>/dev/null
	gw_stop
	kms_unload "$drv"
	return $rc
}

# kms_atomic_pipe FILE CONNECTOR: "CRTC PLANE WxH" from `modetest -a -c -p` output: the CRTC the
# connector's first encoder may drive (the first CRTC listed), its primary plane (type 1), and
# the connector's mode #0
kms_atomic_pipe() {
	awk -v conn="$2" '
		/^Connectors:/ { sec = "conn"; next } /^CRTCs:/ { sec = "crtc"; next } /^Planes:/ { sec = "plane"; next }
		/^(Encoders|Frame buffers):/ { sec = ""; next }
		sec == "conn" && $1 == conn { inconn = 1; next }
		sec == "conn" && /^[0-9]/ { inconn = 0 }
		sec == "conn" && inconn && $1 == "#0" && !size { size = $2; sub(/-.*/, "", size) }
		sec == "crtc" && /^[0-9]/ && !crtc { crtc = $1 }
		sec == "plane" && /^[0-9]/ { p = $1; typ = 0 }
		sec == "plane" && /^[[:space:]]+[0-9]+ type:/ { typ = 1; next }
		sec == "plane" && typ && /value:/ { if ($2 == 1 && !plane) plane = p; typ = 0 }
		END { if (crtc && plane && size) print crtc, plane, size }' "$1"
}

# kms_master CARD COMM PID: y or n, whether the kernel says PID (command COMM) holds DRM master
# on CARD (debugfs dri/MINOR/clients: command tgid dev master a uid magic)
kms_master() {
	awk -v c="$2" -v p="$3" '$1 == c && $2 == p { print $4; exit }' "/sys/kernel/debug/dri/${1#/dev/dri/card}/clients" 2>/dev/null
}

# kms_blob CARD ID: the bytes of property blob ID as hex (MODE_GETPROPBLOB through a file of our
# own: any file may read any blob), or nothing
kms_blob() {
	py - "$1" "$2" <<'PY' 2>/dev/null
import ctypes, fcntl, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CLOEXEC)
GETPROPBLOB = (3 << 30) | (16 << 16) | (ord("d") << 8) | 0xAC  # _IOWR('d', 0xAC, struct drm_mode_get_blob)
arg = bytearray(struct.pack("=IIQ", int(sys.argv[2]), 0, 0))
fcntl.ioctl(fd, GETPROPBLOB, arg)
length = struct.unpack_from("=I", arg, 4)[0]
buf = ctypes.create_string_buffer(length)
arg = bytearray(struct.pack("=IIQ", int(sys.argv[2]), length, ctypes.addressof(buf)))
fcntl.ioctl(fd, GETPROPBLOB, arg)
print(buf.raw.hex())
PY
}

sc_criu_modetest_run() {
	local drv=$1 name=$2 cg=$3 dir=$4 img=$5 mode=${6:-} deadline=$((SECONDS + 60)) pid mt card blob bytes after now master
	until grep -q '^setting mode' "$dir/stdout" 2>/dev/null; do
		[ $SECONDS -lt $deadline ] || { indent "$dir/stderr"; fail "modetest did not set a mode within 60 s"; return 1; }
		sleep 0.2
	done
	sed 's/^/    modetest: /' "$dir/stdout"
	# the manifest: its file, a framebuffer on its buffer, the CRTC it set (atomic: the blob
	# and the commit), complete
	kms_wait_manifest "$dir" "$name" modetest 1 1 ${mode:+"$mode"} || return 1
	card=$(cat "$dir/card")
	if [ "$mode" = --atomic ]; then
		blob=$(cat "$dir/blob")
		bytes=$(kms_blob "$card" "$blob")
		[ -n "$bytes" ] || { fail "property blob $blob cannot be read before the dump"; return 1; }
	fi
	pid=$(cat "$dir/pid.parent")
	mt=$(pgrep -s "$pid" -x modetest)
	master=y
	[ "$mode" = --drop-master ] && master=n
	[ "$(kms_master "$card" modetest "$mt")" = $master ] || { indent "/sys/kernel/debug/dri/${card#/dev/dri/card}/clients"; fail "debugfs clients: modetest $mt on $card before the dump: master is not $master"; return 1; }
	kms_shot "$drv" "$NAME-before" || return 1
	crwl_dump "$dir" "$img" "${CRIU_GW_ARGS[@]}" || { criu_timings; return 1; }
	if [ "$mode" = --atomic ]; then
		grep -q 'gpuwatch: dumped file .* from the manifest; read back: CRTC [0-9]* showing framebuffer [0-9]*' "$WORK/dump.log" &&
			grep -q 'gpuwatch: file .*: it made 1 atomic commits (MODE_ATOMIC), whose properties are not captured' "$WORK/dump.log" ||
			{ criu_show "$WORK/dump.log"; fail "dump.log does not say the CRTC was read back and the atomic commit's other properties are not set again"; return 1; }
		grep -h 'gpuwatch: \(dumped file .*read back\|file .*atomic commits\)' "$WORK/dump.log" | sed 's/^([0-9. ]*) /    dump: /'
	fi
	crwl_restore "$dir" "$img" "$WORK/restore.log" "${CRIU_GW_ARGS[@]}" || { criu_timings; return 1; }
	criu_timings
	mt=$(pgrep -s "$pid" -x modetest) || { criu_show "$WORK/restore.log"; fail "modetest is not running after the restore"; return 1; }
	grep -h 'gpuwatch: .*\(framebuffer\|CRTC\|blob\|master\)' "$WORK/restore.log" | sed 's/^([0-9. ]*) *[0-9]*:* */    restore: /'
	grep -q "gpuwatch: file [0-9]*: 1 framebuffers and 1 CRTCs set again$([ "$mode" = --atomic ] && echo '; 1 property blobs made again'); $([ $master = n ] && echo 'not ')DRM master" "$WORK/restore.log" ||
		{ criu_show "$WORK/restore.log"; fail "restore.log does not say modetest's framebuffer, CRTC$([ "$mode" = --atomic ] && echo ', blob') and DRM master state came back"; return 1; }
	kms_same_picture "$drv" || return 1
	[ "$(kms_master "$card" modetest "$mt")" = $master ] || { indent "/sys/kernel/debug/dri/${card#/dev/dri/card}/clients"; fail "debugfs clients: the restored modetest $mt on $card: master is not $master as before the dump"; return 1; }
	echo "    debugfs clients: the restored modetest $mt on $card: master $master, as before the dump"
	if [ "$mode" = --atomic ]; then
		# the blob made again: with its id, or with the one restore.log names (its id taken,
		# often by the CRTC's state, which still holds the blob modetest gave it)
		now=$(sed -n "s/.*gpuwatch: file [0-9]*: property blob $blob comes back as property blob \([0-9]*\).*/\1/p" "$WORK/restore.log")
		after=$(kms_blob "$card" "${now:-$blob}")
		[ "$after" = "$bytes" ] || { fail "property blob ${now:-$blob} after the restore: '${after:-cannot be read}', modetest's blob $blob before: '$bytes'"; return 1; }
		echo "    property blob ${now:-$blob} has the $((${#bytes} / 2)) bytes of modetest's blob $blob again (MODE_GETPROPBLOB)${now:+; its id $blob was taken}"
	fi
	alive "$mt" || { fail "modetest $mt died after the restore"; return 1; }
	criu_keep_images "$img"
}

# kms_fb_shown CARD: the framebuffer id the first CRTC's primary plane scans out, read from
# the kernel's atomic state (debugfs dri/MINOR/state), not from any client
kms_fb_shown() {
	awk '/^plane\[/ { p = 0 } /type=PRI|plane-0/ { p = 1 } p && /^[[:space:]]*fb=/ { sub(/.*fb=/, ""); print; exit }' \
		"/sys/kernel/debug/dri/${1#/dev/dri/card}/state" 2>/dev/null
}

# sc_criu_kmssink MODULE DRM-DRIVER-NAME: gstreamer's kmssink, as a transcoding box's preview
# runs it: `gst-launch-1.0 videotestsrc is-live=true ! kmssink force-modesetting=true
# sync=false` (dumb buffers of its own pool, ADDFB2 each, one SETCRTC, then a PAGE_FLIP with an
# event per frame, one frame a second, paced by the live source: the clock jumps by the time
# spent dumped, and a sink synced to it would drop and warn) in a followed cgroup, dumped and restored. The manifest lists its
# framebuffers and the CRTC it set and flips (complete); dump.log says which CRTC configuration
# it read back; after the restore the CRTC scans out one of kmssink's
# framebuffer ids (the kernel's atomic state), QEMU's picture is the same, and kmssink goes on
# flipping its own framebuffers (its trace log names each fb it shows: the ids it holds are
# valid) without a warning.
sc_criu_kmssink() {
	local drv=$1 name=$2 dir=$WORK/ks img=$WORK/img rc=0 pid plugins=$WORK/gst-plugins p so
	command -v gst-launch-1.0 >/dev/null || { REASON="gst-launch-1.0 is not installed in the VM (gstreamer1.0-tools; setup.sh installs it)"; return 2; }
	criu_need plugin || return $?
	# only the three plugins the pipeline uses: scanning every installed one costs minutes
	# under TCG; the registry in the scenario's directory (the VM's home may be read-only)
	mkdir -p "$plugins" "$dir"
	for p in kms videotestsrc coreelements; do
		so=$(ls /usr/lib/*/gstreamer-1.0/libgst$p.so 2>/dev/null | head -n1)
		[ -n "$so" ] || { REASON="gstreamer plugin libgst$p.so is not installed (gstreamer1.0-plugins-bad/-base; setup.sh installs them)"; return 2; }
		ln -sf "$so" "$plugins/"
	done
	export GST_PLUGIN_SYSTEM_PATH_1_0=$plugins GST_REGISTRY_1_0=$WORK/gst-registry.bin GST_REGISTRY_FORK=no
	gst-inspect-1.0 kmssink >"$WORK/gst-inspect.txt" 2>&1 || { indent "$WORK/gst-inspect.txt" 5; REASON="gstreamer's kmssink is not installed (gstreamer1.0-plugins-bad)"; return 2; }
	kms_load "$drv" || return $?
	sc_criu_kmssink_run "$drv" "$name" "$dir" "$img" || rc=$?
	pid=$(cat "$dir/pid.parent" 2>/dev/null) && kill -KILL "$pid" 2>/dev/null
	gw_stop
	kms_unload "$drv"
	unset GST_PLUGIN_SYSTEM_PATH_1_0 GST_REGISTRY_1_0 GST_REGISTRY_FORK
	return $rc
}

sc_criu_kmssink_run() {
	local drv=$1 name=$2 dir=$3 img=$4 cg card nodes= fb_before fb_after deadline pid n0 l0 shown
	for _ in $(seq 100); do
		nodes=$(py "$VMTESTS/drm_node.py" "$name" 2>"$WORK/drm_node.err") && break
		sleep 0.1
	done
	[ -n "$nodes" ] || { fail "no node of $name after loading $drv$(last_line "$WORK/drm_node.err")"; return 1; }
	card=${nodes%% *}
	cg_make cg "gwt-$NAME" && gw_start "$cg" || return 1
	# shellcheck disable=SC2016 # $$ is the dumped process itself (exec)
	(cd "$dir" && exec setsid "$VMTESTS/guest/incgroup" "$cg" env GST_DEBUG=kmssink:7 GST_DEBUG_NO_COLOR=1 ORC_CODE=backup sh -c 'echo $$ >pid.parent; exec gst-launch-1.0 videotestsrc is-live=true pattern=smpte100 ! video/x-raw,format=BGRx,width=640,height=480,framerate=1/1 ! kmssink driver-name="$0" force-modesetting=true sync=false' "$name" \
		</dev/null >"$dir/stdout" 2>"$dir/stderr" 3>&- 4>&- 5>&-) &
	disown $!
	deadline=$((SECONDS + 90))
	until [ "$(grep -c 'displaying fb' "$dir/stderr" 2>/dev/null)" -ge 3 ]; do
		[ $SECONDS -lt $deadline ] || { grep -v ' TRACE \| LOG \| DEBUG ' "$dir/stderr" | indent /dev/stdin; fail "kmssink did not show 3 frames within 90 s"; return 1; }
		sleep 0.5
	done
	# the manifest: kmssink's file with its framebuffers, the CRTC it set and flips, complete
	kms_wait_manifest "$dir" "$name" kmssink 2 16 || return 1
	kms_shot "$drv" "$NAME-before" || return 1
	fb_before=$(kms_fb_shown "$card")
	[ -n "$fb_before" ] || { fail "the kernel's state (debugfs dri/${card#/dev/dri/card}/state) shows no framebuffer on the primary plane"; return 1; }
	pid=$(cat "$dir/pid.parent")
	if ! crwl_dump "$dir" "$img" "${CRIU_GW_ARGS[@]}"; then
		# gstreamer 1.26 (Debian 13) maps a frame's buffer through its dma-buf while it fills
		# it: CRIU cannot dump such a mapping (docs/criu.md, Limits), fails the dump and leaves
		# the task running. A user dumps again; so does this scenario, once, and says so.
		grep -q '/dmabuf:' "$WORK/dump.log" && alive "$pid" || { criu_timings; return 1; }
		echo "    note: the dump failed on a dma-buf mapping of kmssink's ($(grep -m1 '/dmabuf:' "$WORK/dump.log" | sed 's/^([0-9. ]*) //')); kmssink ran on; dumping again"
		rm -rf "$img"
		sleep 0.3
		crwl_dump "$dir" "$img" "${CRIU_GW_ARGS[@]}" || { criu_timings; return 1; }
	fi
	grep -q 'gpuwatch: dumped file .* from the manifest; read back: CRTC [0-9]* showing framebuffer [0-9]*' "$WORK/dump.log" ||
		{ criu_show "$WORK/dump.log"; fail "dump.log does not say which CRTC configuration it read back"; return 1; }
	grep -h 'gpuwatch: \(dumped file .*read back\|file .*\(succeeded on this file\|events\)\)' "$WORK/dump.log" | sed 's/^([0-9. ]*) /    dump: /'
	if grep -q 'events the task had not read yet' "$WORK/dump.log"; then
		fail "the dump caught a page flip completion kmssink had not read yet (docs/criu.md: it is lost, and kmssink would wait for it for ever)"
		return 1
	fi
	n0=$(grep -c 'displaying fb' "$dir/stderr")
	l0=$(wc -l <"$dir/stderr")
	crwl_restore "$dir" "$img" "$WORK/restore.log" "${CRIU_GW_ARGS[@]}" || { criu_timings; return 1; }
	criu_timings
	grep -h 'gpuwatch: .*\(framebuffer\|CRTC\)' "$WORK/restore.log" | sed 's/^([0-9. ]*) *[0-9]*:* */    restore: /'
	grep -q 'gpuwatch: file [0-9]*: [0-9]* framebuffers and 1 CRTCs set again' "$WORK/restore.log" ||
		{ criu_show "$WORK/restore.log"; fail "restore.log does not say kmssink's framebuffers and CRTC were set again"; return 1; }
	# kmssink flips on at once: the plane shows one of its framebuffers, not always the one the
	# dump saw (restore.log said that one was set again)
	fb_after=$(kms_fb_shown "$card")
	echo "    the primary plane scans out framebuffer $fb_before before the dump, ${fb_after:-none} after the restore"
	[ -n "$fb_after" ] || { fail "the kernel's state shows no framebuffer on the primary plane after the restore"; return 1; }
	kms_same_picture "$drv" || return 1
	# kmssink goes on: new frames on framebuffers of its own, page flips that work
	deadline=$((SECONDS + 60))
	until [ "$(grep -c 'displaying fb' "$dir/stderr")" -ge $((n0 + 3)) ]; do
		alive "$pid" || { grep -v ' TRACE \| LOG \| DEBUG ' "$dir/stderr" | tail -n 5 | indent /dev/stdin; fail "gst-launch-1.0 $pid died after the restore"; return 1; }
		[ $SECONDS -lt $deadline ] || { fail "kmssink showed no 3 new frames within 60 s of the restore"; return 1; }
		sleep 0.5
	done
	shown=$(tail -n +"$((n0 + 1))" <(grep -o 'displaying fb [0-9]*' "$dir/stderr") | awk '{ print $3 }' | sort -un | tr '\n' ' ')
	echo "    after the restore kmssink showed framebuffers: $shown"
	py - "$dir/manifest.json" "$name" $shown "$fb_after" <<'PY' || { fail "kmssink showed, or the plane scanned out, a framebuffer after the restore that kmssink did not have before the dump"; return 1; }
import json, sys
m = json.load(open(sys.argv[1]))
ids = {fb["id"] for f in m["files"] if f["driver"] == sys.argv[2] for fb in f.get("framebuffers", [])}
shown = {int(x) for x in sys.argv[3:]}
assert shown <= ids, f"shown {sorted(shown)}, its framebuffers before the dump {sorted(ids)}"
PY
	if tail -n +"$((l0 + 1))" "$dir/stderr" | grep -q 'WARN\|ERROR'; then
		tail -n +"$((l0 + 1))" "$dir/stderr" | grep 'WARN\|ERROR' | tail -n 5 | indent /dev/stdin
		fail "kmssink warned after the restore"
		return 1
	fi
	criu_keep_images "$img"
}

# sc_on_driver MODULE DRM-DRIVER-NAME FUNCTION [ARGS...]: a generic scenario (FUNCTION) with the
# workloads' card and render node those of DRM-DRIVER-NAME instead of vgem's (WL_CARD,
# WL_RENDER; found by DRM_IOCTL_VERSION, vmtests/drm_node.py; DRV_PRIME says whether the card
# has PRIME: sc_need_prime)
sc_on_driver() {
	local drv=$1 name=$2 nodes rc=0 DRV_PRIME
	shift 2
	kms_load "$drv" || return $?
	for _ in $(seq 100); do
		nodes=$(py "$VMTESTS/drm_node.py" "$name" 2>"$WORK/drm_node.err") && break
		sleep 0.1
	done
	if [ -z "$nodes" ]; then fail "no node of $name after loading $drv$(last_line "$WORK/drm_node.err")"; kms_unload "$drv"; return 1; fi
	read -r WL_CARD WL_RENDER DRV_PRIME <<<"$nodes"
	[ "$WL_RENDER" = - ] && WL_RENDER=
	echo "    $name: card $WL_CARD, render ${WL_RENDER:-none}, ${DRV_PRIME:-?}"
	export WL_CARD WL_RENDER
	"$@" || rc=$?
	unset WL_CARD WL_RENDER
	gw_stop
	for p in $(crwl_pids "$WORK/wl" 2>/dev/null) ${WL_PID:-}; do kill -KILL "$p" 2>/dev/null; done
	sleep 0.2
	kms_unload "$drv"
	return $rc
}

# sc_need_prime FUNCTION [ARGS...], inside sc_on_driver: FUNCTION where the driver's card has
# PRIME; a skip, with the reason, where it has not (bochs-drm on 6.1)
sc_need_prime() {
	[ "$DRV_PRIME" = prime ] ||
		{ REASON="the card $WL_CARD has no PRIME on kernel $(uname -r) (GET_CAP), which this workload needs"; return 2; }
	"$@"
}
