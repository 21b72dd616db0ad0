#!/bin/bash
# Guest side of vm_criu.sh (runs as root in the VM): dump + restore of wl_criu_scratch.
#   daemon:   gpuwatch attach follows the workload's cgroup; the plugin syncs it at dump
#   manifest: the plugin is given the daemon's manifest file (GPUWATCH_MANIFEST) and a run
#             directory without daemons (GPUWATCH_RUN_DIR)
#   degraded: no daemon, no manifest
#   corrupt:  damaged copies of the images must each fail the restore with a gpuwatch error
#             line and no crash; then the intact images restore
#   device:   after the dump vgem is unloaded and bochs loaded (card0 is now bochs): the
#             restore fails naming the missing device; vgem loaded again (card1): the restore
#             picks card1
#   big:      a 256 MiB buffer more (images on the host through 9p: not in the VM's RAM)
#   predump:  like daemon, with a criu pre-dump first (iterative migration)
#   criuargs: like daemon, with $(gpuwatch criu-args) (the plugin directory and the
#             action-script helper) instead of -L
set -u
build=$1 out=$2
plug=$build/criu-plugin
wl=$build/criu-plugin-tests/wl_criu_scratch
here=$(cd "$(dirname "$0")" && pwd)
exec 3>&- 4>&- 5>&-   # virtme's serial ports: not the workload's business
modprobe vgem || { echo "FAIL: modprobe vgem"; exit 1; }
failed=0
CRIU_ARGS="-L $plug"

wait_file() { # FILE SECONDS
	local i=0
	while [ ! -e "$1" ]; do
		i=$((i + 1))
		[ $i -gt $(($2 * 10)) ] && return 1
		sleep 0.1
	done
}

# start NAME [WORKLOAD ARGS]: sets W (work dir), IMG, CG, GW (daemon pid or empty), PID
start() {
	local name=$1
	shift
	W=/run/gwcriu-$name CG=/sys/fs/cgroup/gwcriu-$name GW=
	IMG=${IMG_BASE:-$W}/img
	rm -rf "$W" "$IMG" && mkdir -p "$W" "$IMG" "$out/$name" "$CG"
	if [ "$name" != degraded ] && [ "$name" != device ] && [ "$name" != big ]; then
		"$build/gpuwatch" attach --cgroup "$CG" --manifest "$W/manifest.json" >"$W/gpuwatch.log" 2>&1 &
		GW=$!
		wait_file "$W/manifest.json" 30 || { echo "FAIL $name: gpuwatch wrote no manifest"; return 1; }
	fi
	setsid sh -c "echo \$\$ > $CG/cgroup.procs && exec $wl $W $*" </dev/null >"$W/wl.out" 2>&1 &
	PID=$!
	wait_file "$W/ready" 120 || { echo "FAIL $name: workload not ready"; cat "$W/wl.out"; return 1; }
	sleep 1 # let the manifest settle (rewritten within 100 ms of a change)
	[ -n "$GW" ] && cp "$W/manifest.json" "$out/$name/manifest-before-dump.json"
	return 0
}

dump() { # NAME [--criu-option...] [ENV=VALUE...]
	local name=$1 rc opts=()
	shift
	while [ $# -gt 0 ] && [ "${1#--}" != "$1" ]; do opts+=("$1"); shift; done
	env "$@" criu dump -t "$PID" -D "$IMG" --shell-job $CRIU_ARGS "${opts[@]}" -v4 -o dump.log
	rc=$?
	cp "$IMG/dump.log" "$out/$name/" 2>/dev/null
	grep -h "gpuwatch: " "$IMG/dump.log" | sed 's/^/  dump: /'
	if [ $rc != 0 ]; then
		echo "FAIL $name: criu dump exited $rc"
		grep -E "Error" "$IMG/dump.log" | tail -n 5
		kill -9 "$PID" 2>/dev/null
		return 1
	fi
	wait "$PID" 2>/dev/null # killed by criu after the dump
	sleep 0.5
}

restore() { # NAME DIR LOG: criu restore's exit status
	criu restore -D "$2" --shell-job $CRIU_ARGS -d -v4 -o "$3"
}

# finish NAME: restore done; checks the daemon's view, lets the workload verify itself
finish() {
	local name=$1 bad=0 r n
	cp "$IMG/restore.log" "$IMG/"gpuwatch-*.json "$out/$name/" 2>/dev/null
	grep -h "gpuwatch: " "$IMG/restore.log" | sed 's/^/  restore: /'
	if [ -n "$GW" ]; then
		sleep 1 # the daemon rewrites its manifest within 100 ms of a change
		cp "$W/manifest.json" "$out/$name/manifest-after-restore.json"
		echo "  the daemon's manifest after the restore, against the one before the dump:"
		python3 "$here/compare_manifests.py" "$out/$name/manifest-before-dump.json" \
			"$out/$name/manifest-after-restore.json" | sed 's/^/    /'
	fi
	touch "$W/go"
	local i=0
	while [ "$(ls "$W"/result.* 2>/dev/null | wc -l)" -lt 2 ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done
	cp "$W"/result.* "$W"/notes.* "$W/wl.out" "$out/$name/" 2>/dev/null
	touch "$W/exit"
	[ -n "$GW" ] && kill "$GW"
	for n in "$W"/notes.*; do [ -s "$n" ] && sed "s/^/  note (${n##*/}): /" "$n"; done
	[ "$(ls "$W"/result.* 2>/dev/null | wc -l)" = 2 ] || { echo "FAIL $name: $(ls "$W"/result.* 2>/dev/null | wc -l) result files"; return 1; }
	for r in "$W"/result.*; do
		if [ "$(cat "$r")" != OK ]; then bad=1; echo "FAIL $name: ${r##*/}:"; sed 's/^/    /' "$r"; fi
	done
	[ $bad = 0 ] && echo "PASS $name"
	return $bad
}

restore_and_finish() { # NAME
	restore "$1" "$IMG" restore.log || { echo "FAIL $1: criu restore exited $?";
		grep -E "Error|gpuwatch" "$IMG/restore.log" | tail -n 8; cp "$IMG/restore.log" "$out/$1/"; return 1; }
	finish "$1"
}

case_daemon() { start daemon && dump daemon && restore_and_finish daemon; }
case_manifest() {
	start manifest && dump manifest GPUWATCH_MANIFEST="$W/manifest.json" GPUWATCH_RUN_DIR=/run/gwcriu-none &&
		restore_and_finish manifest
}
case_degraded() { start degraded && dump degraded && restore_and_finish degraded; }
case_predump() {
	start predump || return 1
	mkdir -p "$W/pre"
	criu pre-dump -t "$PID" -D "$W/pre" --shell-job $CRIU_ARGS -v4 -o pre-dump.log ||
		{ echo "FAIL predump: criu pre-dump exited $?"; grep -E "Error" "$W/pre/pre-dump.log" | tail -n 5; return 1; }
	cp "$W/pre/pre-dump.log" "$out/predump/"
	grep -q "Plugin \"gpuwatch\"" "$W/pre/pre-dump.log" || { echo "FAIL predump: the pre-dump did not load the plugin"; return 1; }
	# new contents after the pre-dump: only the final dump can bring them back
	touch "$W/rewrite"
	wait_file "$W/rewritten" 30 || { echo "FAIL predump: the workload did not rewrite A.3"; return 1; }
	echo "  pre-dump done; A.3 rewritten since"
	dump predump --prev-images-dir=../pre --track-mem && restore_and_finish predump
}
case_criuargs() {
	CRIU_ARGS=$("$build/gpuwatch" criu-args) || { echo "FAIL criuargs: gpuwatch criu-args failed"; return 1; }
	echo "  criu-args: $CRIU_ARGS"
	# the action script's post-resume signal, off unless asked for
	start criuargs && dump criuargs && GPUWATCH_RESTORE_SIGNAL=SIGUSR2 restore_and_finish criuargs
	local rc=$?
	CRIU_ARGS="-L $plug"
	local n
	n=$(ls "$W"/signalled.* 2>/dev/null | wc -l)
	if [ $rc = 0 ] && [ "$n" != 2 ]; then
		echo "FAIL criuargs: $n of the 2 restored processes got GPUWATCH_RESTORE_SIGNAL"
		return 1
	fi
	[ $rc = 0 ] && echo "  post-resume: both restored processes got SIGUSR2"
	return $rc
}
case_big() { IMG_BASE=$out/big-img start big --big=256 && dump big && restore_and_finish big; rm -rf "$out/big-img"; }

# A damaged copy of the images must fail the restore with a gpuwatch error and no crash.
expect_refused() { # LABEL EXPECTED-TEXT (the damage is already done in $W/bad)
	local rc
	restore corrupt "$W/bad" restore.log
	rc=$?
	cp "$W/bad/restore.log" "$out/corrupt/restore-$1.log" 2>/dev/null
	local line
	line=$(grep -h "gpuwatch: " "$W/bad/restore.log" | grep -iE "refused|cannot|no saved|error" | head -n1)
	if [ $rc = 0 ] || [ $rc -ge 128 ] || ! grep -q -- "$2" "$W/bad/restore.log"; then
		echo "FAIL corrupt/$1: criu restore exited $rc; expected a gpuwatch error with '$2'"
		grep -E "Error|gpuwatch" "$W/bad/restore.log" | tail -n 5 | sed 's/^/    /'
		return 1
	fi
	echo "  refused ($1): ${line#*gpuwatch: }"
}

damage() { # LABEL EXPECTED-TEXT PYTHON-ON-FILES...
	rm -rf "$W/bad" && cp -a "$IMG" "$W/bad" && rm -f "$W/bad/restore.log"
	(cd "$W/bad" && python3 -c "$3") || { echo "FAIL corrupt/$1: cannot damage"; return 1; }
	expect_refused "$1" "$2"
}

case_corrupt() {
	start corrupt && dump corrupt || return 1
	local f bad=0
	f=$(cd "$IMG" && ls gpuwatch-file-*.json | head -n1)
	damage truncated-object "truncated" \
		"import os; os.truncate('gpuwatch-object-1.bin', os.path.getsize('gpuwatch-object-1.bin') // 2)" || bad=1
	damage missing-object "is missing" "import os; os.unlink('gpuwatch-object-2.bin')" || bad=1
	damage flipped-byte "do not match their checksum" \
		"f = open('gpuwatch-object-1.bin', 'r+b'); f.seek(100); b = f.read(1); f.seek(100); f.write(bytes([b[0] ^ 0xff]))" || bad=1
	damage truncated-json "not valid JSON" \
		"t = open('$f').read(); open('$f', 'w').write(t[:len(t) // 2])" || bad=1
	damage bad-size "not a positive multiple" \
		"import json; j = json.load(open('$f')); j['handles'][0]['size'] = 12345; json.dump(j, open('$f', 'w'))" || bad=1
	damage bad-path "is not /dev/dri/cardN" \
		"import json; j = json.load(open('$f')); j['device']['path'] = '/etc/shadow'; json.dump(j, open('$f', 'w'))" || bad=1
	damage dotdot-path "is not /dev/dri/cardN" \
		"import json; j = json.load(open('$f')); j['device']['path'] = '/dev/dri/../../etc/passwd'; json.dump(j, open('$f', 'w'))" || bad=1
	damage huge-handle "more than" \
		"import json; j = json.load(open('$f')); j['handles'][-1]['handle'] = 4000000000; json.dump(j, open('$f', 'w'))" || bad=1
	damage wrong-type "is not an unsigned integer" \
		"import json; j = json.load(open('$f')); j['handles'][0]['object'] = 'x'; json.dump(j, open('$f', 'w'))" || bad=1
	damage no-vmas "gpuwatch-vmas.json is missing" "import os; os.unlink('gpuwatch-vmas.json')" || bad=1
	damage vma-outside "outside its object" \
		"import json; j = json.load(open('gpuwatch-vmas.json')); v = [v for v in j['vmas'] if v['object']][0]; v['delta'] = v['object_size']; json.dump(j, open('gpuwatch-vmas.json', 'w'))" || bad=1
	damage not-json "not valid JSON" "open('$f', 'wb').write(bytes(range(256)))" || bad=1
	restore_and_finish corrupt || bad=1
	return $bad
}

case_device() {
	start device && dump device || return 1
	rmmod vgem && modprobe bochs || { echo "FAIL device: cannot swap vgem for bochs"; return 1; }
	ls -l /dev/dri | sed 's/^/  (bochs only) /'
	rm -f "$IMG/restore.log"
	restore device "$IMG" restore-nodevice.log
	local rc=$?
	cp "$IMG/restore-nodevice.log" "$out/device/"
	if [ $rc = 0 ] || ! grep -q "gpuwatch: .*no DRM device for /dev/dri/card0 (driver vgem" "$IMG/restore-nodevice.log"; then
		echo "FAIL device: restore without vgem exited $rc without naming the missing device"
		grep -E "Error|gpuwatch" "$IMG/restore-nodevice.log" | tail -n 5
		return 1
	fi
	echo "  refused without vgem: $(grep -ho "gpuwatch: .*no DRM device.*" "$IMG/restore-nodevice.log" | head -n1)"
	modprobe vgem
	ls -l /dev/dri | sed 's/^/  (bochs, then vgem) /'
	restore_and_finish device
}

passed=0
for c in ${CASES:-daemon manifest degraded corrupt predump criuargs device}; do
	echo "=== $c"
	if "case_$c"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done
[ $failed = 0 ] && echo "ALL PASS" || echo "$failed case(s) failed"
echo "$passed passed, $failed failed, 0 skipped"
