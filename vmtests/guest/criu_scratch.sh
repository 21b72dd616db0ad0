# shellcheck shell=bash
# The CRIU scenarios of the plugin's scratch workload (sourced by scenarios.sh; bash, root, in
# the VM). wl_criu_scratch (workloads/wl_criu_scratch.c: a window into a buffer, files kept
# only by mappings, flink names, a buffer only a render node still holds, holes in handle
# tables) runs as a detached session in a cgroup, is dumped and restored by the VM's CRIU with
# gpuwatch's plugin alone (--libdir: no action script), then checks itself (the phase protocol
# of wl.h: ready.1/go.1 around the checkpoint, then result.<pid> "PASS" and ready.2). Where wl_criu (criu.sh) checks exact state against a model, this workload checks
# what a real program would notice, and the cases stress the plugin's inputs:
#   daemon     gpuwatch attach follows the cgroup; the plugin syncs the daemon at dump; after
#              the restore the daemon's manifest lists what it listed before the dump; the
#              vgem fence ioctls (not decoded) are named by the manifest and the dump
#   manifest   the plugin is given the daemon's manifest file (GPUWATCH_MANIFEST) and a run
#              directory without daemons (GPUWATCH_RUN_DIR)
#   degraded   no daemon, no manifest
#   corrupt    damaged copies of the images (a bad path, a huge handle, a wrong type, a
#              mapping outside its buffer...) must each fail the restore with gpuwatch's error
#              line and no crash; then the intact images restore, their checksums turned
#              into those of earlier versions (zlib CRC-32, .crc32)
#   predump    a criu pre-dump first (the plugin copies the buffers ahead), then new
#              contents: the final dump saves the changed buffer and leaves the rest to the
#              pre-dump's images; a changed pre-dump image fails the restore, then the intact
#              one restores (predump_degraded: the same without a daemon, handles probed)
#   criuargs   $(gpuwatch criu-args) (plugin and action script), with the action script's
#              post-resume signal (GPUWATCH_RESTORE_SIGNAL)
#   device     after the dump vgem is unloaded and bochs loaded (card0 is now bochs): the
#              restore fails naming the missing device; vgem loaded again (card1): it picks
#              card1. The suite's last scenario: bochs keeps card0 after it
# Artefacts per scenario: wl/ (the workload's files), dump.log, restore*.log, manifests,
# img-gpuwatch/ (the plugin's images).

SCR_WL=wl_criu_scratch

# scr_start [--no-daemon] [WORKLOAD ARGS...]: the cgroup, the daemon, the workload built and
# ready. Sets SCR_DIR, SCR_IMG, SCR_CG, SCR_PID and SCR_ARGS (CRIU's options for gpuwatch:
# --libdir with the plugin only, or those of `gpuwatch criu-args` when SCR_CRIU_ARGS=full).
scr_start() {
	local daemon=1 a
	[ "${1:-}" = --no-daemon ] && { daemon=0; shift; }
	criu_need plugin || return $?
	[ -x "$WL_DIR/$SCR_WL" ] || { fail "workload $WL_DIR/$SCR_WL not found (build vmtests/ first)"; return 1; }
	SCR_ARGS=()
	if [ "${SCR_CRIU_ARGS:-}" = full ]; then
		SCR_ARGS=("${CRIU_GW_ARGS[@]}")
	else
		for ((a = 0; a < ${#CRIU_GW_ARGS[@]}; a++)); do
			[ "${CRIU_GW_ARGS[a]}" = --libdir ] && SCR_ARGS=(--libdir "${CRIU_GW_ARGS[a + 1]}")
		done
		[ ${#SCR_ARGS[@]} = 2 ] || { fail "no --libdir in gpuwatch's CRIU options: ${CRIU_GW_ARGS[*]}"; return 1; }
	fi
	SCR_DIR=$WORK/wl SCR_IMG=$WORK/img
	mkdir -p "$SCR_DIR" "$SCR_IMG"
	cg_make SCR_CG "gwt-$NAME" || return 1
	[ $daemon = 1 ] && { gw_start "$SCR_CG" || return 1; }
	CRWL_WL=$SCR_WL crwl_start "$SCR_CG" "$SCR_DIR" "$@"
	SCR_PID=$WL_PID
	crwl_wait "$SCR_DIR" ready.1 || return 1
	if [ -n "$GW_PID" ]; then
		sleep 1 # the daemon rewrites its manifest within 100 ms of a change
		cp "$MANIFEST" "$WORK/manifest-before-dump.json"
	fi
}

# scr_dump [--criu-option...] [ENV=VALUE...]
scr_dump() {
	local opts=()
	while [ $# -gt 0 ] && [ "${1#--}" != "$1" ]; do opts+=("$1"); shift; done
	CRIU_ENV=("$@")
	criu_run dump "$WORK/dump.log" dump -t "$SCR_PID" -D "$SCR_IMG" --shell-job "${SCR_ARGS[@]}" "${opts[@]}"
	CRIU_ENV=()
	grep -h "gpuwatch: " "$WORK/dump.log" | grep -v "mapping 0x" | sed 's/^([0-9. ]*) /    dump: /' | head -n 8
	if [ "$CRIU_RC" != 0 ]; then
		criu_show "$WORK/dump.log"
		fail "criu dump exited $CRIU_RC$(criu_why "$WORK/dump.log")"
		return 1
	fi
	wait_for 10 sh -c "! kill -0 $SCR_PID 2>/dev/null" # criu killed it after the dump
}

# scr_restore IMG LOG [ENV=VALUE...]: criu restore (detached); CRIU_RC is its exit status
scr_restore() {
	local img=$1 log=$2
	shift 2
	CRIU_ENV=("$@")
	criu_run restore "$log" restore -D "$img" --shell-job -d "${SCR_ARGS[@]}"
	CRIU_ENV=()
	return "$CRIU_RC"
}

# scr_finish: the restore (done) brought back what the daemon saw, and what the workload checks
# scr_same_after_restore: the daemon's manifest now equals the one before the dump
# (compare_manifests.py; its report in WORK/compare.txt)
scr_same_after_restore() {
	cp "$MANIFEST" "$WORK/manifest-after-restore.json" &&
		py "$VMTESTS/compare_manifests.py" "$WORK/manifest-before-dump.json" \
			"$WORK/manifest-after-restore.json" >"$WORK/compare.txt" 2>&1
}

scr_finish() {
	local r p bad=0
	grep -h "gpuwatch: " "$WORK/restore.log" | grep -vE 'mapping 0x|buffer of [0-9]+ bytes' |
		sed 's/^([0-9. ]*) *[0-9]*:* */    restore: /' | head -n 8
	if [ -n "$GW_PID" ]; then
		# the restored processes' fds, handles and mappings as before the dump (no filler left)
		if ! wait_for "$SETTLE_TIMEOUT" scr_same_after_restore; then
			indent "$WORK/compare.txt"
			fail "the daemon's manifest after the restore differs from the one before the dump: $(head -n1 "$WORK/compare.txt")"
			return 1
		fi
		echo "    the daemon's manifest after the restore: $(head -n1 "$WORK/compare.txt")"
	fi
	touch "$SCR_DIR/go.1"
	crwl_wait "$SCR_DIR" ready.2 || { touch "$SCR_DIR/go.2"; return 1; }
	for r in "$SCR_DIR"/notes.*; do [ -s "$r" ] && sed "s/^/    note (${r##*/}): /" "$r"; done
	touch "$SCR_DIR/go.2"
	for p in $(crwl_pids "$SCR_DIR"); do
		r=$SCR_DIR/result.$p
		[ "$(cat "$r" 2>/dev/null)" = PASS ] && continue
		bad=1
		echo "    result.$p: $(cat "$r" 2>/dev/null || echo missing)"
		indent "$r.log" 20
	done
	[ $bad = 0 ] || { fail "the workload found its state damaged after the restore: $(cat "$SCR_DIR"/result.*.log | head -n1)"; return 1; }
	mkdir -p "$WORK/img-gpuwatch" && cp "$SCR_IMG"/gpuwatch-* "$WORK/img-gpuwatch/" 2>/dev/null
	gw_stop
}

# scr_restore_finish [ENV=VALUE...]
scr_restore_finish() {
	scr_restore "$SCR_IMG" "$WORK/restore.log" "$@" ||
		{ criu_show "$WORK/restore.log"; fail "criu restore exited $CRIU_RC$(criu_why "$WORK/restore.log")"; return 1; }
	scr_finish
}

# ... and B's vgem fence ioctls, which gpuwatch does not decode: the manifest says it is not
# complete, and the dump lists them as state not restored
sc_scratch_daemon() {
	scr_start && scr_dump || return 1
	grep -q ': vgem ioctl 0x01 succeeded and gpuwatch does not decode it' "$WORK/manifest-before-dump.json" ||
		{ fail "the manifest before the dump does not name B's undecoded vgem ioctl 0x01"; return 1; }
	grep -q 'vgem ioctl 0x02 succeeded on this file and gpuwatch does not decode it: the state it made is not restored' "$WORK/dump.log" ||
		{ fail "dump.log does not list B's undecoded vgem ioctl 0x02 as state not restored"; return 1; }
	scr_restore_finish
}

sc_scratch_manifest() {
	scr_start && scr_dump GPUWATCH_MANIFEST="$MANIFEST" GPUWATCH_RUN_DIR="$WORK/no-daemons" && scr_restore_finish
}

sc_scratch_degraded() {
	scr_start --no-daemon && scr_dump || return 1
	grep -qE 'gpuwatch: .*no manifest' "$WORK/dump.log" ||
		{ fail "dump without a daemon: dump.log does not say that there was no manifest"; return 1; }
	scr_restore_finish
}

# sc_scratch_predump [--no-daemon]: without a daemon the pre-dump and the final dump find the
# buffers by probing handles (predump_degraded)
sc_scratch_predump() {
	scr_start "$@" || return 1
	mkdir -p "$WORK/pre"
	criu_run pre-dump "$WORK/pre-dump.log" pre-dump -t "$SCR_PID" -D "$WORK/pre" --shell-job "${SCR_ARGS[@]}"
	[ "$CRIU_RC" = 0 ] || { criu_show "$WORK/pre-dump.log"; fail "criu pre-dump exited $CRIU_RC$(criu_why "$WORK/pre-dump.log")"; return 1; }
	grep -q 'Plugin "gpuwatch"' "$WORK/pre-dump.log" || { fail "the pre-dump did not load the plugin"; return 1; }
	# new contents after the pre-dump: only the final dump can bring them back
	touch "$SCR_DIR/rewrite"
	wait_for 30 test -e "$SCR_DIR/rewritten" || { fail "the workload did not rewrite A.3 after the pre-dump"; return 1; }
	echo "    pre-dump done; A.3 rewritten since"
	# the pre-dump copied the buffers ahead (chunks.hpp)
	local copied
	copied=$(sed -n 's/.*gpuwatch: pre-dump: .* buffers: \([0-9]*\) bytes copied.*/\1/p' "$WORK/pre-dump.log")
	[ "${copied:-0}" -gt 0 ] && ls "$WORK/pre"/gpuwatch-pre-*.map >/dev/null 2>&1 ||
		{ criu_show "$WORK/pre-dump.log"; fail "the pre-dump copied no buffer (copied: '${copied:-}')"; return 1; }
	scr_dump --prev-images-dir=../pre --track-mem || return 1
	# the final dump saved what changed (A.3's buffer) and left the rest to the pre-dump
	local kept
	kept=$(sed -n 's/.*gpuwatch: buffers: \([0-9]*\) bytes saved, \([0-9]*\) bytes unchanged since the pre-dump.*/\1 \2/p' "$WORK/dump.log")
	[ -n "$kept" ] && [ "${kept#* }" -gt 0 ] && ls "$SCR_IMG"/gpuwatch-object-*.map >/dev/null 2>&1 ||
		{ criu_show "$WORK/dump.log"; fail "the final dump left nothing to the pre-dump ('$kept')"; return 1; }
	echo "    pre-dump copied $copied bytes; the final dump saved ${kept% *} and left ${kept#* } to the pre-dump"
	# a pre-dump image changed after the final dump: the restore refuses (the CRC-32 of the
	# assembled contents), then restores once it is back
	local bin
	bin=$(py -c "import glob, sys
for m in sorted(glob.glob(sys.argv[1] + '/gpuwatch-object-*.map')):
    lines = open(m).read().split('\n')
    if lines[0].split()[4] != '-' and lines[1].endswith(' parent'):  # its chunk 0 is the pre-dump's
        print(sys.argv[2] + '/gpuwatch-pre-' + lines[0].split()[4] + '.bin')
        break" "$SCR_IMG" "$WORK/pre")
	[ -f "$bin" ] || { fail "no saved buffer takes its first chunk from the pre-dump ('$bin')"; return 1; }
	cp "$bin" "$WORK/pre.bin.orig"
	py -c "import sys; f = open(sys.argv[1], 'r+b'); b = f.read(1); f.seek(0); f.write(bytes([b[0] ^ 0xff]))" "$bin"
	scr_restore "$SCR_IMG" "$WORK/restore-changed-pre.log"
	if [ "$CRIU_RC" = 0 ] || ! grep -q "a pre-dump's image changed" "$WORK/restore-changed-pre.log"; then
		criu_show "$WORK/restore-changed-pre.log"
		fail "a changed pre-dump image: criu restore exited $CRIU_RC without gpuwatch's checksum error"
		return 1
	fi
	echo "    refused (changed pre-dump image): $(grep -h -m1 "a pre-dump's image changed" "$WORK/restore-changed-pre.log" | sed 's/.*gpuwatch: //' | cut -c1-160)"
	cp "$WORK/pre.bin.orig" "$bin"
	scr_restore_finish
}

sc_scratch_predump_degraded() {
	sc_scratch_predump --no-daemon
}

sc_scratch_criuargs() {
	local n
	SCR_CRIU_ARGS=full scr_start && scr_dump || return 1
	echo "    criu-args: ${SCR_ARGS[*]}"
	scr_restore_finish GPUWATCH_RESTORE_SIGNAL=SIGUSR2 || return 1
	n=$(ls "$SCR_DIR" | grep -c '^signalled\.')
	[ "$n" = 2 ] || { fail "$n of the 2 restored processes got GPUWATCH_RESTORE_SIGNAL=SIGUSR2"; return 1; }
	echo "    post-resume: both restored processes got SIGUSR2"
}

# scr_damage LABEL EXPECTED-TEXT PYTHON: a copy of the images, damaged by PYTHON (run in it),
# must fail the restore with a gpuwatch error naming EXPECTED-TEXT, and no crash
scr_damage() {
	local label=$1 want=$2 bad=$WORK/bad-$1
	rm -rf "$bad" && cp -a "$SCR_IMG" "$bad" && rm -f "$bad"/*.log
	(cd "$bad" && py -c "$3") || { fail "corrupt/$label: cannot damage the copy"; return 1; }
	scr_restore "$bad" "$WORK/restore-$label.log"
	if [ "$CRIU_RC" = 0 ] || [ "$CRIU_RC" -ge 128 ] || ! grep -q -- "$want" "$WORK/restore-$label.log"; then
		criu_show "$WORK/restore-$label.log"
		fail "corrupt/$label: criu restore exited $CRIU_RC; expected a gpuwatch error with '$want'"
		return 1
	fi
	echo "    refused ($label): $(grep -h "gpuwatch: " "$WORK/restore-$label.log" | grep -m1 -- "$want" | sed 's/.*gpuwatch: //' | cut -c1-200)"
	rm -rf "$bad"
}

sc_scratch_corrupt() {
	local f
	scr_start && scr_dump || return 1
	f=$(cd "$SCR_IMG" && ls gpuwatch-file-*.json | head -n1)
	scr_damage truncated-object "truncated" \
		"import os; os.truncate('gpuwatch-object-1.bin', os.path.getsize('gpuwatch-object-1.bin') // 2)" || return 1
	scr_damage missing-object "is missing" "import os; os.unlink('gpuwatch-object-2.bin')" || return 1
	scr_damage flipped-byte "do not match their checksum" \
		"f = open('gpuwatch-object-1.bin', 'r+b'); f.seek(100); b = f.read(1); f.seek(100); f.write(bytes([b[0] ^ 0xff]))" || return 1
	scr_damage flipped-trailer "not a gpuwatch buffer trailer" \
		"f = open('gpuwatch-object-1.bin', 'r+b'); f.seek(-22, 2); b = f.read(1); f.seek(-22, 2); f.write(bytes([b[0] ^ 0xff]))" || return 1
	scr_damage truncated-json "not valid JSON" \
		"t = open('$f').read(); open('$f', 'w').write(t[:len(t) // 2])" || return 1
	scr_damage bad-size "not a positive multiple" \
		"import json; j = json.load(open('$f')); j['handles'][0]['size'] = 12345; json.dump(j, open('$f', 'w'))" || return 1
	scr_damage bad-path "is not /dev/dri/cardN" \
		"import json; d = 'gpuwatch-devices.json'; j = json.load(open(d)); j['devices'][0]['path'] = '/etc/shadow'; json.dump(j, open(d, 'w'))" || return 1
	scr_damage dotdot-path "is not /dev/dri/cardN" \
		"import json; d = 'gpuwatch-devices.json'; j = json.load(open(d)); j['devices'][0]['path'] = '/dev/dri/../../etc/passwd'; json.dump(j, open(d, 'w'))" || return 1
	scr_damage no-device "which names no entry of gpuwatch-devices.json" \
		"import json; j = json.load(open('$f')); j['device'] = 7; json.dump(j, open('$f', 'w'))" || return 1
	scr_damage no-devices "gpuwatch-devices.json is missing" "import os; os.unlink('gpuwatch-devices.json')" || return 1
	scr_damage huge-handle "more than" \
		"import json; j = json.load(open('$f')); j['handles'][-1]['handle'] = 4000000000; json.dump(j, open('$f', 'w'))" || return 1
	scr_damage wrong-type "expected an unsigned integer" \
		"import json; j = json.load(open('$f')); j['handles'][0]['object'] = 'x'; json.dump(j, open('$f', 'w'))" || return 1
	scr_damage no-vmas "gpuwatch-vmas.json is missing" "import os; os.unlink('gpuwatch-vmas.json')" || return 1
	scr_damage vma-outside "outside its object" \
		"import json; j = json.load(open('gpuwatch-vmas.json')); v = [v for v in j['vmas'] if v['object']][0]; v['delta'] = v['object_size']; json.dump(j, open('gpuwatch-vmas.json', 'w'))" || return 1
	scr_damage not-json "not valid JSON" "open('$f', 'wb').write(bytes(range(256)))" || return 1
	scr_damage flipped-legacy "do not match their checksum" "$SCR_LEGACY
f = open('gpuwatch-object-1.bin', 'r+b'); b = f.read(1); f.seek(0); f.write(bytes([b[0] ^ 0xff]))" || return 1
	# images of earlier versions (the checksum beside the contents: .xxh64, .crc32) restore
	(cd "$SCR_IMG" && py -c "$SCR_LEGACY") || { fail "cannot turn the images into earlier versions' ones"; return 1; }
	echo "    the images turned into earlier versions' (.xxh64, .crc32 beside the contents): restored below"
	scr_restore_finish
}

# the images turned into those of earlier versions: each buffer's contents without the
# trailer that ends them (magic, size, XXH64), their checksum beside them, in a .xxh64 (the
# first buffer's, as gpuwatch wrote until 2026-12) or a zlib CRC-32 .crc32 (the others')
SCR_LEGACY="import glob, os, struct, zlib
for b in glob.glob('gpuwatch-object-*.bin'):
    if os.path.exists(b[:-4] + '.map'):
        continue
    data = open(b, 'rb').read()
    magic, size, sum = struct.unpack('<8sQQ', data[-24:])
    assert magic == b'GWOBJ\\0\\0\\1' and size == len(data) - 24, b
    open(b, 'wb').write(data[:size])
    if b.endswith('-1.bin'):
        open(b[:-4] + '.xxh64', 'w').write('%016x %d\\n' % (sum, size))
    else:
        open(b[:-4] + '.crc32', 'w').write('%08x %d\\n' % (zlib.crc32(data[:size]), size))"

sc_scratch_device() {
	local rc
	scr_start --no-daemon && scr_dump || return 1
	if ! { rmmod vgem && modprobe bochs; }; then
		modprobe vgem
		fail "cannot swap vgem for bochs (the suite boots with -device bochs-display)"
		return 1
	fi
	ls /dev/dri | tr '\n' ' ' | sed 's/^/    bochs only: /; s/$/\n/'
	scr_restore "$SCR_IMG" "$WORK/restore-nodevice.log"
	rc=$CRIU_RC
	if [ "$rc" = 0 ] || ! grep -q "gpuwatch: .*no DRM device for /dev/dri/card0 (driver vgem" "$WORK/restore-nodevice.log"; then
		criu_show "$WORK/restore-nodevice.log"
		rmmod bochs
		modprobe vgem
		fail "the restore without vgem exited $rc without naming the missing device"
		return 1
	fi
	echo "    refused without vgem: $(grep -ho "gpuwatch: .*no DRM device.*" "$WORK/restore-nodevice.log" | head -n1 | cut -c1-200)"
	modprobe vgem
	wait_for 10 test -c /dev/dri/card1 -a -c /dev/dri/renderD128
	ls /dev/dri | tr '\n' ' ' | sed 's/^/    bochs, then vgem: /; s/$/\n/'
	# the suite's last scenario: bochs stays card0 (vgem card1) after it
	scr_restore_finish
}
