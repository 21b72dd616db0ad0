#!/bin/bash
# Guest side of vmtests/remote/run.sh (root, in the VM): the action-script helper's i915
# pre-dump (freeze, seize, convert, watcher) on the gwi915 fixture with wl_i915_va.
#   convert        pre-dump from a stand-in parent (as criu execs it): no i915 mapping left,
#                  placeholders where they were, the record matches, the cgroup is frozen
#   criu_killed    the stand-in "criu" is SIGKILLed: the watcher thaws and puts every mapping
#                  back (same addresses, offsets, contents); the workload carries on
#   copy           phase 2 (a mapping whose handle is closed, a mapping split by munmap): those
#                  become private copies with the same bytes; the others come back
#   criu_noplugin  a real `criu dump --leave-running` with only the helper (no plugin): criu gets
#                  past the mappings and fails on the DRM fd; the watcher reverts
#   criu_plugin    a real `criu dump --leave-running $(gpuwatch criu-args)`: the dump succeeds;
#                  the watcher reverts after criu (the plugin does not revert yet)
#   criu_sigkill   a real criu dump SIGKILLed at three points (the pre-dump's record written,
#                  without the plugin and with it; its parasite running): each time the
#                  watcher thaws and reverts, and the workload carries on
#   root_cgroup    the tree in the root cgroup: one error line, nothing changed
#   criu_cgroup    "criu" inside the tree's cgroup: one error line, nothing changed
#   no_i915        a tree without i915 mappings: exit 0, nothing frozen, no record
#   entry_stop     gwremote's finish() on a task stopped at a syscall entry: same registers
#                  after, and the syscall runs
#   exit_stop      finish() on a task stopped at the exit of rt_sigreturn (what the plugin meets
#                  in RESUME_DEVICES_LATE) under a seccomp filter that answers ENOSYS to
#                  unknown syscalls: same registers, and the task carries on with its syscall's
#                  result intact (gwr_peek --sigloop exits 3 if it ever sees tgkill fail)
#   legacy         a legacy GEM_MMAP mapping (gwr_legacy) made a placeholder and put back by
#                  gwremote (map_legacy): same place, and still the buffer's (a write through
#                  it is what PREAD returns)
# env KO_DIR: the directory holding gwi915.ko for the running kernel (default BUILD/vmtests)
set -u
build=$1 out=$2
helper=$build/gpuwatch-criu-action
wl=$build/vmtests/wl_i915_va
peek=$build/vmtests/gwr_peek
. "$(dirname "$0")/../guest/common.sh"
guest_begin "$out"
CASES=${CASES:-convert criu_killed copy criu_noplugin criu_plugin criu_sigkill root_cgroup criu_cgroup no_i915 legacy entry_stop exit_stop}
export GPUWATCH_WATCH_TIMEOUT_S=${GPUWATCH_WATCH_TIMEOUT_S:-120}

# common.sh's wait_for, polling every 0.05 s: criu_sigkill kills criu at a point its log names,
# and a slower poll lets criu run past it
WAIT_POLL=0.05
frozen() { grep -q '^frozen 1' "$1/cgroup.events"; }
i915_lines() { grep -E 'anon_inode:i915.gem|/i915 \(deleted\)' "/proc/$1/maps"; }

modprobe drm_shmem_helper 2>/dev/null
ko_dir=${KO_DIR:-$build/vmtests}   # the test modules for this kernel (lane.sh's lane_modules)
ko=$ko_dir/gwi915.ko
if [ ! -e "$ko" ] || ! insmod "$ko" 2>"$out/insmod.txt"; then
	why="gwi915.ko not loaded: $(cat "$ko_dir/gwi915.skip" "$out/insmod.txt" 2>/dev/null | head -n1)"
	REASON=$why
	for c in $CASES; do
		t_result "$c" 2 0
	done
	t_finish
fi

# start NAME [--no-daemon] [--root]: a wl_i915_va in cgroup CG (or the root cgroup) followed by
# gpuwatch; sets W, CG, IMG, PID, CHILD, GW; waits for phase 1
start() {
	local name=$1 daemon=1 root=0
	shift
	for a in "$@"; do
		[ "$a" = --no-daemon ] && daemon=0
		[ "$a" = --root ] && root=1
	done
	W=/run/gwr-$name CG=/sys/fs/cgroup/gwr-$name GW=
	IMG=$W/img
	rm -rf "$W" && mkdir -p "$W" "$IMG" "$out/$name" "$CG"
	if [ $daemon = 1 ]; then
		"$build/gpuwatch" attach --cgroup "$CG" --manifest "$W/manifest.json" >"$W/gpuwatch.log" 2>&1 &
		GW=$!
		wait_for 30 test -e "$W/manifest.json" || { echo "gpuwatch wrote no manifest"; return 1; }
	fi
	if [ $root = 1 ]; then
		setsid sh -c "echo \$\$ > /sys/fs/cgroup/cgroup.procs && exec $wl $W" </dev/null >"$W/wl.out" 2>&1 &
	else
		setsid sh -c "echo \$\$ > $CG/cgroup.procs && exec $wl $W" </dev/null >"$W/wl.out" 2>&1 &
	fi
	PID=$!
	wait_for 60 test -e "$W/ready.1" || { echo "workload not ready: $(cat "$W/wl.out")"; return 1; }
	CHILD=$(cat "/proc/$PID/task/$PID/children")
	sleep 1 # the manifest is rewritten within 100 ms of a change
	return 0
}

# finish NAME: let the workload run its remaining phases; it must exit 0
finish() {
	local name=$1
	touch "$W/go.1"
	wait_for 30 test -e "$W/ready.2" || { echo "workload did not reach phase 2: $(cat "$W/wl.out")"; return 1; }
	touch "$W/go.2"
	wait "$PID"
	local rc=$?
	[ -n "$GW" ] && { kill -INT "$GW"; wait "$GW"; }
	[ $rc = 0 ] || { echo "workload exited $rc: $(cat "$W/wl.out")"; return 1; }
	return 0
}

# snapshot TAG: i915 maps and contents (hash through the task) of PID and CHILD into $W/TAG.*;
# the contents at the addresses of before.maps.* (copies are no longer i915 mappings)
snapshot() {
	local tag=$1 p l a len
	: >"$W/$tag.hash"
	for p in $PID $CHILD; do
		i915_lines "$p" | awk '{print $1, $2, $3, $6, $7}' >"$W/$tag.maps.$p"
		while read -r l; do
			a=0x${l%%-*}
			len=$(( 0x$(echo "$l" | cut -d' ' -f1 | cut -d- -f2) - a ))
			[ $len -gt 65536 ] && len=65536
			echo "$p $a $("$peek" "$p" "$a" "$len" 2>&1)" >>"$W/$tag.hash"
		done <"$W/before.maps.$p"
	done
}

# predump NAME: runs the helper as criu would, from a stand-in parent that stays alive
# (STANDIN: its pid, the "criu" the watcher watches); PD_RC, $W/predump.err
predump() {
	rm -f "$W/rc"
	(
		CRTOOLS_SCRIPT_ACTION=pre-dump CRTOOLS_IMAGE_DIR=$IMG CRTOOLS_INIT_PID=$PID \
			bash -c "\"$helper\" 2>\"$W/predump.err\"; echo \$? >\"$W/rc.tmp\"; mv \"$W/rc.tmp\" \"$W/rc\"; exec sleep 600"
	) &
	STANDIN=$!
	wait_for 60 test -e "$W/rc" || { PD_RC=timeout; return; }
	PD_RC=$(cat "$W/rc")
}

# check_converted NAME: every i915 mapping of before.maps.* is a placeholder or a copy now,
# as the record says; the cgroup is frozen
check_converted() {
	local p
	for p in $PID $CHILD; do
		i915_lines "$p" >/dev/null && { echo "process $p still has i915 mappings: $(i915_lines "$p" | head -n1)"; return 1; }
		cp "/proc/$p/maps" "$out/$1/converted.maps.$p"
	done
	frozen "$CG" || { echo "cgroup $CG is not frozen"; return 1; }
	py - "$IMG/gpuwatch-i915-maps.json" "$W" $PID $CHILD <<'EOF' || return 1
import json, sys
rec = json.load(open(sys.argv[1])); w = sys.argv[2]; pids = [int(p) for p in sys.argv[3:]]
before = {}
for p in pids:
    for line in open(f"{w}/before.maps.{p}"):
        r, perms, off, name = line.split(None, 3)
        s, e = (int(x, 16) for x in r.split('-'))
        before[(p, s)] = (e - s, perms, int(off, 16), name.strip())
got = {(m["pid"], m["start"]): m for m in rec["maps"]}
err = []
if set(got) != set(before):
    err.append(f"record maps {sorted(got)} != i915 maps before {sorted(before)}")
for k, (ln, perms, off, name) in before.items():
    m = got.get(k)
    if not m:
        continue
    kind = "gem" if name == "anon_inode:i915.gem" else "shmem"
    prot = perms[:3].replace('-', '') or "none"
    if (m["length"], m["offset"], m["kind"], m["prot"]) != (ln, off, kind, prot):
        err.append(f"record {m} does not match maps {k}: {ln} {perms} {off:#x} {name}")
    now = None
    for line in open(f"/proc/{k[0]}/maps"):
        f = line.split()
        s, e = (int(x, 16) for x in f[0].split('-'))
        if s <= k[1] < e:
            now = f
    want = "---p" if m["mode"] == "placeholder" else perms[:3] + "p"
    if not now or now[1] != want or len(now) > 5:
        err.append(f"{k}: now {now}, want an anonymous {want} mapping ({m['mode']})")
if rec["criu_pid"] <= 0 or not rec["cgroup"].startswith("/sys/fs/cgroup/"):
    err.append(f"record header {rec['cgroup']} {rec['criu_pid']}")
for e in err:
    print(e)
sys.exit(1 if err else 0)
EOF
}

# check_back NAME [COPIES]: the i915 maps are those of before (COPIES: the maps listed in the
# record as copies are private anonymous instead), the contents unchanged, the cgroup thawed
check_back() {
	local p
	frozen "$CG" && { echo "cgroup $CG is still frozen"; return 1; }
	grep -q 1 "$CG/cgroup.freeze" && { echo "cgroup.freeze still 1"; return 1; }
	for p in $PID $CHILD; do
		grep -q TracerPid:.0 "/proc/$p/status" || { echo "process $p still traced"; return 1; }
	done
	snapshot after
	py - "$IMG/gpuwatch-i915-maps.json" "$W" $PID $CHILD <<'EOF' || return 1
import json, sys
rec = json.load(open(sys.argv[1])); w = sys.argv[2]; pids = [int(p) for p in sys.argv[3:]]
copies = {(m["pid"], m["start"]) for m in rec["maps"] if m["mode"] == "copy"}
err = []
for p in pids:
    b = [l.split() for l in open(f"{w}/before.maps.{p}")]
    a = [l.split() for l in open(f"{w}/after.maps.{p}")]
    want = [l for l in b if (p, int(l[0].split('-')[0], 16)) not in copies]
    if a != want:
        err.append(f"process {p}: i915 maps after {a} != before {want}")
    for l in b:
        s = int(l[0].split('-')[0], 16)
        if (p, s) in copies:
            for line in open(f"/proc/{p}/maps"):
                f = line.split()
                if f[0] == l[0] and (f[1] != l[1][:3] + "p" or len(f) > 5):
                    err.append(f"copy {f} is not a private anonymous {l[1][:3]}p mapping")
hb = open(f"{w}/before.hash").read().split("\n")
ha = open(f"{w}/after.hash").read().split("\n")
if hb != ha:
    err.append(f"contents differ: before {hb} after {ha}")
if any("gwr_peek" in h for h in hb):
    err.append(f"could not read contents: {hb}")
for e in err:
    print(e)
sys.exit(1 if err else 0)
EOF
}

# The real-criu cases drive the helper as a CRIU 3.x runs it. A CRIU 4.x runs the plugin's
# CHECKPOINT_DEVICES instead, and the helper leaves the mappings to it (scenarios criu_i915*
# of the main suite, and the container suite's i915 case, cover that path).
criu_major=$(criu --version 2>/dev/null | sed -n 's/^Version: \([0-9]*\).*/\1/p')
criu_3x_only() {
	case $1 in criu_noplugin | criu_plugin | criu_sigkill) [ "${criu_major:-0}" -ge 4 ] ;; *) return 1 ;; esac
}

# remote_case NAME: case_NAME with its output in NAME/case.log; a failed case's last line says why
remote_case() {
	local name=$1 log=$out/$1/case.log
	if criu_3x_only "$name"; then
		REASON="CRIU $criu_major.x converts i915 mappings in the plugin (CHECKPOINT_DEVICES); the helper's path with a real criu is CRIU 3.x's"
		return 2
	fi
	mkdir -p "$out/$name"
	"case_$name" >"$log" 2>&1 || fail "$(tail -n 1 "$log")"
}

run_case() { # NAME: one case (common.sh's t_run), then its artefacts and leftovers
	local name=$1
	t_run "$name" remote_case "$name"
	[ -n "${W:-}" ] && cp -r "$W"/*.maps.* "$W"/*.hash "$W"/predump.err "$W"/wl.out "$IMG"/*.json "$IMG"/*.log "$out/$name/" 2>/dev/null
	# leftovers of a failed case must not disturb the next one
	[ -n "${STANDIN:-}" ] && { kill -9 "$STANDIN"; wait "$STANDIN"; } 2>/dev/null
	[ -n "${CG:-}" ] && [ -e "$CG/cgroup.freeze" ] && echo 0 >"$CG/cgroup.freeze"
	[ -n "${PID:-}" ] && kill -9 "$PID" ${CHILD:-} 2>/dev/null
	[ -n "${GW:-}" ] && kill -INT "$GW" 2>/dev/null
	local j # every background job of the case, not the watchdog nor the interpreter (common.sh)
	for j in $(jobs -p); do [ "$j" = "${WATCHDOG_PID:-}" ] || [ "$j" = "${PYSERVE_PID:-}" ] || wait "$j"; done 2>/dev/null
	W= PID= CHILD= GW= STANDIN= CG=
}

case_convert() {
	start convert || return 1
	snapshot before
	predump convert
	[ "$PD_RC" = 0 ] || { echo "pre-dump exited $PD_RC: $(cat "$W/predump.err")"; return 1; }
	cat "$W/predump.err"
	check_converted convert || return 1
	# the watcher waits for criu (the stand-in) to seize the tasks
	sleep 0.5
	frozen "$CG" || { echo "cgroup thawed before criu seized the tasks"; return 1; }
	# case criu_killed continues from here
	return 0
}

case_criu_killed() {
	# continues case convert's state: W, PID, STANDIN of the previous case are gone by now, so
	# it runs its own conversion
	start criu_killed || return 1
	snapshot before
	predump criu_killed
	[ "$PD_RC" = 0 ] || { echo "pre-dump exited $PD_RC: $(cat "$W/predump.err")"; return 1; }
	check_converted criu_killed || return 1
	kill -9 "$STANDIN"
	wait "$STANDIN" 2>/dev/null
	STANDIN=
	wait_for 30 grep -qs 'done' "$IMG/gpuwatch-watcher.log" || { echo "the watcher did not finish: $(tail -n 3 "$IMG/gpuwatch-watcher.log")"; return 1; }
	cat "$IMG/gpuwatch-watcher.log"
	grep -q 'done$' "$IMG/gpuwatch-watcher.log" || { echo "watcher: $(tail -n 1 "$IMG/gpuwatch-watcher.log")"; return 1; }
	check_back criu_killed || return 1
	finish criu_killed
}

case_copy() {
	start copy || return 1
	touch "$W/go.1"
	wait_for 30 test -e "$W/ready.2" || { echo "workload did not reach phase 2: $(cat "$W/wl.out")"; return 1; }
	sleep 1
	snapshot before
	predump copy
	[ "$PD_RC" = 0 ] || { echo "pre-dump exited $PD_RC: $(cat "$W/predump.err")"; return 1; }
	cat "$W/predump.err"
	check_converted copy || return 1
	grep -q '"mode": *"copy"' "$IMG/gpuwatch-i915-maps.json" ||
		py -c "import json,sys; sys.exit(0 if any(m['mode']=='copy' for m in json.load(open('$IMG/gpuwatch-i915-maps.json'))['maps']) else 1)" ||
		{ echo "no copy-mode map in the record (the closed handle's mapping should be one)"; return 1; }
	grep -q 'no longer shared' "$W/predump.err" || { echo "pre-dump did not say a copy is no longer shared"; return 1; }
	kill -9 "$STANDIN"
	wait "$STANDIN" 2>/dev/null
	STANDIN=
	wait_for 30 grep -qs 'done' "$IMG/gpuwatch-watcher.log" || { echo "the watcher did not finish"; return 1; }
	cat "$IMG/gpuwatch-watcher.log"
	check_back copy || return 1
	touch "$W/go.2"
	wait "$PID" || { echo "workload failed: $(cat "$W/wl.out")"; return 1; }
}

# criu dump --leave-running; CRIU_RC, dump.log in $out/NAME
criu_dump() { # NAME ARGS...
	local name=$1
	shift
	(cd "$IMG" && timeout 120 criu dump -t "$PID" -D "$IMG" --shell-job --leave-running -v4 -o dump.log "$@")
	CRIU_RC=$?
	cp "$IMG/dump.log" "$out/$name/" 2>/dev/null
}

case_criu_noplugin() {
	start criu_noplugin || return 1
	snapshot before
	criu_dump criu_noplugin --action-script "$helper"
	echo "criu exited $CRIU_RC"
	grep -q 'Unknown shit' "$IMG/dump.log" && { echo "criu failed on a mapping: $(grep -m1 'Unknown shit' "$IMG/dump.log")"; return 1; }
	grep -q 'i915 mapping(s) converted' "$IMG/dump.log" "$IMG"/*.log 2>/dev/null || true
	[ -e "$IMG/gpuwatch-i915-maps.json" ] || { echo "no record: $(grep -m3 -E 'Error|gpuwatch' "$IMG/dump.log")"; return 1; }
	wait_for 30 grep -qs 'done' "$IMG/gpuwatch-watcher.log" || { echo "the watcher did not finish"; return 1; }
	cat "$IMG/gpuwatch-watcher.log"
	grep -E 'Error' "$IMG/dump.log" | tail -n 3
	check_back criu_noplugin || return 1
	finish criu_noplugin
}

case_criu_plugin() {
	start criu_plugin || return 1
	snapshot before
	# shellcheck disable=SC2046
	criu_dump criu_plugin $("$build/gpuwatch" criu-args)
	echo "criu exited $CRIU_RC"
	wait_for 30 grep -qs 'done' "$IMG/gpuwatch-watcher.log" || { echo "the watcher did not finish"; return 1; }
	cat "$IMG/gpuwatch-watcher.log"
	[ "$CRIU_RC" = 0 ] || { echo "criu dump failed ($CRIU_RC): $(grep -E 'Error' "$IMG/dump.log" | tail -n 1)"; check_back criu_plugin; return 1; }
	check_back criu_plugin || return 1
	finish criu_plugin
}

case_criu_sigkill() {
	# criu SIGKILLed at three points of its dump: as soon as the pre-dump has written its record,
	# without the plugin (criu fails on the DRM fd a moment later) and with it, and with its
	# parasite running in the leader as a daemon (criu held in the plugin's daemon sync); each
	# time the watcher must put everything back. Not at points where criu (or its plugin) is
	# injecting a syscall into a task: a tracer killed there leaves the task to trap with nobody
	# tracing it, and the kernel kills it (CRIU's own parasite setup has the same window; see
	# restore/plugin/README.md)
	local at
	local points=("record/noplugin" "record" "has been switched")
	[ -n "${SIGKILL_AT:-}" ] && points=("$SIGKILL_AT")
	for at in "${points[@]}"; do
		sigkill_at "$at" || { echo "criu killed at '$at': $(tail -n 1 "$out/criu_sigkill/case.log")"; return 1; }
	done
}

# sigkill_at MARKER: one criu dump of a fresh workload, SIGKILLed when the record appears
# (MARKER "record") or when MARKER appears in its log
sigkill_at() {
	local at=$1 criu
	echo "== killing criu at '$at'"
	start criu_sigkill || return 1
	snapshot before
	# with the plugin, so that the dump gets as far as the pages and the pstree; without it
	# (record/noplugin) criu fails on the DRM fd right after the pre-dump
	local args
	if [ "$at" = record/noplugin ]; then
		args="--action-script $helper"
	else
		args=$("$build/gpuwatch" criu-args)
	fi
	# shellcheck disable=SC2086
	(cd "$IMG" && exec criu dump -t "$PID" -D "$IMG" --shell-job --leave-running -v4 -o dump.log $args) &
	criu=$!
	wait_for 60 test -e "$IMG/gpuwatch-i915-maps.json" || { echo "no record: $(tail -n 3 "$IMG/dump.log")"; return 1; }
	if [ "${at%/*}" != record ]; then
		# criu is held where the kill lands: the plugin's dump hook (the leader's parasite a
		# daemon by then) syncs the gpuwatch daemon, stopped here until criu is dead, and waits
		# for it (10 s). Polling the log alone let a slow guest run criu past the marker into
		# the next task's parasite setup before the kill (CI of f538bf2), where a kill leaves
		# that task to the kernel
		[ -n "$GW" ] || { echo "no gpuwatch daemon to hold criu at"; return 1; }
		kill -STOP "$GW"
		wait_for 60 grep -qs "$at" "$IMG/dump.log" || { kill -CONT "$GW"; echo "criu never logged '$at': $(tail -n 3 "$IMG/dump.log")"; return 1; }
		wait_for 60 grep -qs 'gpuwatch: dump: .* seized tasks' "$IMG/dump.log" || {
			kill -CONT "$GW"
			echo "criu never reached the plugin's dump hook: $(tail -n 3 "$IMG/dump.log")"
			return 1
		}
	fi
	kill -9 "$criu"
	wait "$criu" 2>/dev/null
	if [ "${at%/*}" != record ]; then
		kill -CONT "$GW"
		# the sync ended (done, or its 10 s timed out): criu ran on past the hold
		! grep -qE 'synced the manifest|did not sync' "$IMG/dump.log" ||
			{ echo "criu was killed after the sync it was held at"; return 1; }
	fi
	echo "criu killed after: $(tail -n 1 "$IMG/dump.log")"
	at=${at//\//_}
	cp "$IMG/dump.log" "$out/criu_sigkill/dump.log.${at// /_}" 2>/dev/null
	wait_for 30 grep -qs 'done' "$IMG/gpuwatch-watcher.log" || {
		echo "watcher log:"; cat "$IMG/gpuwatch-watcher.log"
		echo "the watcher did not finish: $(tail -n 1 "$IMG/gpuwatch-watcher.log")"
		return 1
	}
	cat "$IMG/gpuwatch-watcher.log"
	grep -q 'done$' "$IMG/gpuwatch-watcher.log" || { echo "watcher: $(tail -n 1 "$IMG/gpuwatch-watcher.log")"; return 1; }
	check_back criu_sigkill || {
		local p t
		for p in $PID $CHILD; do
			t=$(awk '/^TracerPid/ {print $2}' "/proc/$p/status")
			echo "process $p: TracerPid $t ($(tr '\0' ' ' <"/proc/$t/cmdline" 2>/dev/null)), state $(awk '/^State/ {print $2}' "/proc/$p/status"), wchan $(cat "/proc/$p/wchan")"
			cat "/proc/$p/stack" 2>/dev/null | head -n 5
			grep -v '\.so\|\[' "/proc/$p/maps" | tail -n 12
		done
		tail -n 30 "$IMG/dump.log"
		return 1
	}
	finish criu_sigkill || return 1
}

# expect_refusal NAME: pre-dump failed with one line, nothing changed
expect_refusal() {
	[ "$PD_RC" != 0 ] && [ "$PD_RC" != timeout ] || { echo "pre-dump exited $PD_RC"; return 1; }
	# one error line (a "no gpuwatch daemon" notice may come before it)
	[ "$(grep -v 'no gpuwatch daemon follows' "$W/predump.err" | wc -l)" = 1 ] || { echo "not one line: $(cat "$W/predump.err")"; return 1; }
	cat "$W/predump.err"
	snapshot after
	cmp -s "$W/before.hash" "$W/after.hash" || { echo "contents changed"; return 1; }
	for p in $PID $CHILD; do
		cmp -s "$W/before.maps.$p" "$W/after.maps.$p" || { echo "maps of $p changed"; return 1; }
	done
	[ ! -e "$IMG/gpuwatch-i915-maps.json" ] || { echo "a record was left"; return 1; }
	return 0
}

case_root_cgroup() {
	start root_cgroup --no-daemon --root || return 1
	snapshot before
	predump root_cgroup
	expect_refusal || return 1
	grep -q 'cgroup' "$W/predump.err" || { echo "the error does not name the cgroup"; return 1; }
	finish root_cgroup
}

case_criu_cgroup() {
	start criu_cgroup --no-daemon || return 1
	snapshot before
	rm -f "$W/rc"
	(
		echo $BASHPID >"$CG/cgroup.procs"
		CRTOOLS_SCRIPT_ACTION=pre-dump CRTOOLS_IMAGE_DIR=$IMG CRTOOLS_INIT_PID=$PID "$helper" 2>"$W/predump.err"
		echo $? >"$W/rc"
	)
	PD_RC=$(cat "$W/rc")
	expect_refusal || return 1
	grep -qE 'criu|helper' "$W/predump.err" || { echo "the error does not say criu is inside"; return 1; }
	frozen "$CG" && { echo "frozen"; return 1; }
	finish criu_cgroup
}

case_no_i915() {
	W=/run/gwr-no_i915 CG=/sys/fs/cgroup/gwr-no_i915
	IMG=$W/img
	rm -rf "$W" && mkdir -p "$W" "$IMG" "$CG"
	setsid sh -c "echo \$\$ > $CG/cgroup.procs && exec sleep 300" </dev/null >/dev/null 2>&1 &
	PID=$!
	sleep 0.3
	(
		# watch the freezer while the helper runs
		while :; do cat "$CG/cgroup.freeze"; sleep 0.001; done >"$W/freeze.trace" 2>/dev/null
	) &
	local tracer=$!
	CRTOOLS_SCRIPT_ACTION=pre-dump CRTOOLS_IMAGE_DIR=$IMG CRTOOLS_INIT_PID=$PID "$helper" 2>"$W/predump.err"
	local rc=$?
	kill $tracer
	cat "$W/predump.err"
	[ $rc = 0 ] || { echo "pre-dump exited $rc"; return 1; }
	grep -q 1 "$W/freeze.trace" && { echo "the cgroup was frozen"; return 1; }
	[ ! -e "$IMG/gpuwatch-i915-maps.json" ] && [ ! -e "$IMG/gpuwatch-watcher.log" ] || { echo "a record or watcher log was written"; return 1; }
	kill "$PID"
}

case_legacy() {
	W=/run/gwr-legacy CG=/sys/fs/cgroup/gwr-legacy
	IMG=$W/img
	rm -rf "$W" && mkdir -p "$W" "$IMG" "$CG"
	setsid sh -c "echo \$\$ > $CG/cgroup.procs && exec $build/vmtests/gwr_legacy $W" </dev/null >"$W/wl.out" 2>&1 &
	PID=$!
	wait_for 30 test -e "$W/legacy.info" || { echo "gwr_legacy not ready: $(cat "$W/wl.out")"; return 1; }
	local fd handle addr size before after
	read -r fd handle addr size <"$W/legacy.info"
	before=$(grep "^${addr#0x}-" "/proc/$PID/maps" | awk '{print $1, $2, $3, $6, $7}')
	echo "before: $before"
	case "$before" in *"/i915 (deleted)"*) ;; *) echo "not a legacy mapping: $before"; return 1 ;; esac
	"$peek" --roundtrip "$PID" "$addr" "$size" shmem "$fd" "$handle" 0 || return 1
	after=$(grep "^${addr#0x}-" "/proc/$PID/maps" | awk '{print $1, $2, $3, $6, $7}')
	echo "after:  $after"
	[ "$before" = "$after" ] || { echo "mapping after ($after) != before ($before)"; return 1; }
	touch "$W/go"
	wait "$PID" || { echo "gwr_legacy: $(cat "$W/wl.out")"; return 1; }
	cat "$W/wl.out"
}

# survives_untraced PID: after gwr_peek let it go, PID still runs, is traced by no one, and
# SIGTERM ends it (status 143); otherwise one line with what happened, and 1
survives_untraced() {
	local pid=$1 rc
	if ! kill -0 "$pid" 2>/dev/null; then
		wait "$pid"
		rc=$?
		echo "the task stopped after finish() (exit status $rc)"
		return 1
	fi
	grep -q 'TracerPid:.0' "/proc/$pid/status" || { kill "$pid"; echo "still traced"; return 1; }
	kill "$pid"
	wait "$pid"
	rc=$?
	[ $rc = 143 ] || { echo "the task did not survive (exit status $rc)"; return 1; }
}

case_entry_stop() {
	python3 -c 'import os
while True: os.getppid()' &
	PID=$!
	sleep 0.5
	"$peek" --entry "$PID" || { kill "$PID"; return 1; }
	survives_untraced "$PID"
}

case_exit_stop() {
	"$peek" --sigloop &
	PID=$!
	sleep 0.5
	"$peek" --exit "$PID" || { kill "$PID"; return 1; }
	sleep 1 # gwr_peek --sigloop exits 3 the first time tgkill does not return 0
	survives_untraced "$PID"
}

for c in $CASES; do
	run_case "$c"
done
t_finish
