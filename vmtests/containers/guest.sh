#!/bin/bash
# Guest side of vmtests/containers/run.sh (root, inside the VM): podman + runc or crun + CRIU
# (all the lane's Debian packages) checkpoint and restore containers configured only by
# `gpuwatch container-config`. Every case runs once per runtime of RUNTIMES (default runc; the
# Debian 13 lane: "runc crun"), named CASE@RUNTIME when there are several.
#
# The image (localhost/gwct) is made here with `podman import`: busybox and the static
# wl_criu_scratch (vgem buffers, some mapped, holes in the handle tables, a forked child that
# shares them; it speaks the phase protocol of vmtests/workloads/wl.h: /w/ready.1 when built,
# then it waits for /w/go.1, checks its own state (/w/result.<pid>: PASS), writes /w/ready.2
# and keeps running until /w/go.2). /w is a directory of this VM's /run.
#
# Cases (CASES, default all, in this order):
#   config    container-config with its defaults writes /etc/criu/default.conf (merged into an
#             existing one) and the OCI hooks; run twice, it changes nothing (first runtime only)
#   drm       --device /dev/dri/card0 (and renderD128): a daemon follows it from its start;
#             pm container checkpoint stops it (poststop hook stops the daemon); podman
#             container restore brings it back (prestart hook: a new daemon follows it); the
#             daemon's view after the restore matches the one before; the restored container
#             opens its device again (the device cgroup was re-applied); the workload passes
#   export    --leave-running --export to a tarball (the gpuwatch images are inside): the
#             original carries on and passes; then it is removed and restored with --import
#             and passes again
#   annot     /etc/criu/default.conf moved away; the container names its own CRIU configuration
#             (annotation org.criu.config, written by container-config --criu-conf): works.
#             crun 1.21 hands CRIU no configuration file (it ignores the annotation): SKIP
#   plain     a container without a DRM device: no daemon, checkpoint and restore as usual
#             (with a damaged /etc/criu/gpuwatch.conf, which concerns DRM checkpoints only),
#             its counter goes on
#   gone      the device is gone on the target (vgem unloaded after the checkpoint): the
#             restore fails with an error naming it, nothing crashes, and with vgem back the
#             same checkpoint restores
#   stateless container-config --checkpoint-mode stateless --restore-signal SIGUSR2; a container
#             running wl_stateless is checkpointed (no buffer contents, no manifest in it) and
#             restored: its fds are back, its handle gone, its mapping zero-filled memory; told by
#             the signal (CRIU 3.19+; 3.17 runs no action script under a runtime: the workload
#             finds its handle gone), it rebuilds and carries on; then the mode is set back to full
#   i915      the seed's case: the gwi915 fixture's render node in the container, running
#             wl_i915_criu (libdrm_intel surfaces mapped through anon_inode:i915.gem, a legacy
#             GEM_MMAP mapping, contexts, VMs; it checks itself every ~100 ms). CRIU >= 4: the
#             plugin converts the i915 mappings at CHECKPOINT_DEVICES; checkpoint + restore,
#             then checkpoint --leave-running --export (the original carries on), rm, restore
#             --import; the workload's checks pass after each, then its after-work. CRIU 3.x
#             (no action script under RPC, no CHECKPOINT_DEVICES): the checkpoint fails and
#             the container carries on intact, as the README says
# Prints PASS/FAIL/SKIP per case, then "N passed, N failed, N skipped" (guest/common.sh).
set -u
build=$1 out=$2
. "$(dirname "$0")/../guest/common.sh"
. "$(dirname "$0")/../guest/criu_stateless.sh" # stateless_after
guest_begin "$out" "${SCENARIO_TIMEOUT:-900}"   # podman under TCG: a case takes minutes
here=$(cd "$(dirname "$0")" && pwd)
GW=$build/gpuwatch
WL=$build/vmtests/wl_criu_scratch_static
CASES=${CASES:-config drm export annot plain gone stateless i915}
RUNTIMES=${RUNTIMES:-runc}
KO_DIR=${KO_DIR:-$build/vmtests}
T=/run/gwct
CONF=/etc/criu/default.conf

say() { echo "[$(date +%T)] $*"; }
pm() { timeout -k 5 "${PM_TIMEOUT:-300}" podman "$@"; } # a hung podman fails its case, not the suite

# --- environment: podman on tmpfs storage, the default config paths on a scratch tmpfs -----
setup() {
	modprobe vgem || { fail "modprobe vgem"; return 1; }
	rm -rf "$T" && mkdir -p "$T"
	local d
	for d in /etc/criu /etc/containers/oci/hooks.d /usr/share/containers/oci/hooks.d; do
		# the Debian 12 lane's root is the host's, read-only (setup.sh makes these); the Debian
		# 13 root's /etc and /usr are the guest's own overlays
		[ -d "$d" ] || mkdir -p "$d" 2>/dev/null ||
			{ fail "$d does not exist on the host (run setup.sh)"; return 1; }
		mount -t tmpfs gwct "$d" || { fail "cannot mount a tmpfs on $d"; return 1; }
	done
	# podman: vfs storage on /run (bolt's database does not work on 9p), cgroupfs (no systemd
	# here), file events; the runtime per RUNTIMES (Debian 12's crun refuses checkpoints)
	cat >"$T/storage.conf" <<-EOF
	[storage]
	driver = "vfs"
	runroot = "$T/runroot"
	graphroot = "$T/root"
	EOF
	cat >"$T/containers.conf" <<-EOF
	[engine]
	cgroup_manager = "cgroupfs"
	events_logger = "file"
	events_logfile_path = "$T/events.log"
	runtime = "runc"
	tmp_dir = "$T/libpod-tmp"
	[containers]
	netns = "none"
	log_driver = "k8s-file"
	EOF
	export CONTAINERS_STORAGE_CONF=$T/storage.conf CONTAINERS_CONF=$T/containers.conf
	export TMPDIR=$T/tmp
	mkdir -p "$TMPDIR"
	local r=$T/rootfs
	mkdir -p "$r/bin" "$r/dev" "$r/proc" "$r/sys" "$r/w" "$r/tmp"
	cp /bin/busybox "$r/bin/busybox" && cp "$WL" "$r/wl" || { fail "image files"; return 1; }
	for d in sh sleep cat echo dd ls; do ln -s busybox "$r/bin/$d"; done
	tar -C "$r" -cf "$T/rootfs.tar" . &&
		pm import --change 'ENV PATH=/bin' "$T/rootfs.tar" localhost/gwct:1 >"$T/import.log" 2>&1 ||
		{ cat "$T/import.log"; fail "podman import"; return 1; }
	say "setup: podman $(podman --version | awk '{print $3}'), runc $(runc --version | awk 'NR==1{print $3}'), $(command -v crun >/dev/null && crun --version | head -n1), $(criu --version | head -n1)"
}

use_runtime() { # RUNTIME: podman runs the containers it starts from now on with it
	sed -i "s/^runtime = .*/runtime = \"$1\"/" "$T/containers.conf"
}

# wl_image NAME WORKLOAD: the image localhost/NAME:1 of busybox, WORKLOAD (as /wl) and what it
# links, from this root (made once; the import's log is $T/import-NAME.log)
wl_image() {
	local r=$T/rootfs-$1 lib d
	[ -n "$(pm images -q "localhost/$1:1" 2>/dev/null)" ] && return 0
	rm -rf "$r" && mkdir -p "$r/bin" "$r/dev" "$r/proc" "$r/sys" "$r/w" "$r/tmp" || return 1
	cp /bin/busybox "$r/bin/busybox" && cp "$2" "$r/wl" || return 1
	for d in sh sleep cat echo ls; do ln -s busybox "$r/bin/$d"; done
	for lib in $(ldd "$2" | grep -oE '/[^ ]+'); do
		mkdir -p "$r$(dirname "$lib")" && cp -L "$lib" "$r$lib" || return 1
	done
	tar -C "$r" -cf "$T/rootfs-$1.tar" . &&
		pm import --change 'ENV PATH=/bin' "$T/rootfs-$1.tar" "localhost/$1:1" >"$T/import-$1.log" 2>&1
}

# rpc_scripts: 0 when the installed CRIU runs action scripts under RPC (3.19 and later)
rpc_scripts() {
	local major minor
	IFS=. read -r major minor _ <<<"$(criu --version | sed -n 's/^Version: //p')"
	[ "$major" -gt 3 ] || { [ "$major" = 3 ] && [ "$minor" -ge 19 ]; }
}

daemon_of() { # CONTAINER: pid of the daemon the hook recorded, if it runs
	local id pid
	id=$(pm inspect -f '{{.Id}}' "$1" 2>/dev/null) || return 1
	read -r pid _ <"/run/gpuwatch/containers/$id/daemon.pid" 2>/dev/null || return 1 # "PID START-TIME"
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}
manifest_of() { echo "/run/gpuwatch/containers/$(pm inspect -f '{{.Id}}' "$1")/manifest.json"; }

run_drm() { # NAME DIR [pm run options...]
	local name=$1 dir=$2 rc
	shift 2
	rm -rf "$dir" && mkdir -p "$dir"
	pm run -d --name "$name" --device /dev/dri/card0 --device /dev/dri/renderD128 -v "$dir:/w" "$@" \
		localhost/gwct:1 /wl /w >"$T/$name.run.log" 2>&1 || { rc=$?; cat "$T/$name.run.log"; fail "pm run exited $rc"; return 1; }
	wait_for 120 test -e "$dir/ready.1" || { pm logs "$name" 2>&1 | tail -n 5; fail "the workload never got ready"; return 1; }
}

# the workload checks itself: go.1, then ready.2 when both processes have written their result,
# which must read PASS
verify() { # DIR WHAT
	local dir=$1 what=$2 r bad=0
	# what an earlier round left (the export case checks the original and then the imported
	# copy in the same directory): stale, a cdone would let the parent check the buffer the
	# child shares before the child wrote it, a cready.2 or ready.2 would end the wait early
	rm -f "$dir"/result.* "$dir"/notes.* "$dir/cdone" "$dir"/cready.2.* "$dir/ready.2"
	touch "$dir/go.1"
	wait_for 120 test -e "$dir/ready.2" ||
		{ fail "$what: no ready.2 (results: $(ls "$dir"/result.* 2>/dev/null | wc -l))"; return 1; }
	# result.<pid> per process (in the container's pid namespace: 1 and 2), result.<pid>.log beside
	local n=0
	for r in "$dir"/result.*; do
		case $r in *.log | *'*') continue ;; esac
		n=$((n + 1))
		[ "$(cat "$r")" = PASS ] || { bad=1; echo "  $what: ${r##*/}: $(cat "$r")"; sed 's/^/    /' "$r.log"; }
	done
	[ $n -ge 2 ] || { bad=1; echo "  $what: $n result file(s), expected one per process (2)"; }
	for r in "$dir"/notes.*; do [ -s "$r" ] && sed "s/^/  note ($what, ${r##*/}): /" "$r"; done
	rm -f "$dir/go.1"
	[ $bad = 0 ] || fail "$what: the workload found its state damaged"
}

checkpoint() { # NAME [options]: pm container checkpoint, its CRIU log kept
	local name=$1 rc
	shift
	pm container checkpoint "$@" "$name" >"$T/$name.ckpt.log" 2>&1
	rc=$?
	[ $rc = 0 ] || { tail -n 5 "$T/$name.ckpt.log"; criu_log "$name" dump; fail "pm container checkpoint $* exited $rc"; }
}
restore() { # NAME [options]
	local name=$1 rc
	shift
	pm container restore "$@" "$name" >"$T/$name.rst.log" 2>&1
	rc=$?
	[ $rc = 0 ] || { tail -n 5 "$T/$name.rst.log"; criu_log "$name" restore; fail "pm container restore $* exited $rc"; }
}
criu_log() { # NAME dump|restore: the last errors of CRIU's log for that container
	local f
	f=$(ls -t "$T"/root/vfs-containers/*/userdata/"$2".log 2>/dev/null | head -n 1)
	[ -n "$f" ] && { cp "$f" "$out/$1-$2.log"; grep -E "Error|gpuwatch" "$f" | grep -v "hook [0-9]* ->" | tail -n 8 | sed 's/^/  criu: /'; }
}

# --- cases -------------------------------------------------------------------------------------
case_config() {
	printf '# site setting kept by the merge\ntcp-established\n' >"$CONF"
	"$GW" container-config >"$T/config.out" 2>&1 || { cat "$T/config.out"; fail "container-config exited $?"; return 1; }
	sed 's/^/  /' "$T/config.out"
	grep -qx "libdir $build/criu-plugin" "$CONF" || fail "$CONF has no libdir line for $build/criu-plugin" || return 1
	grep -qx "tcp-established" "$CONF" || fail "the existing setting was lost" || return 1
	# the action script where this CRIU runs it under RPC (3.19+), never otherwise (3.17 aborts)
	local version
	version=$(criu --version | sed -n 's/^Version: //p')
	if rpc_scripts; then
		grep -qx "action-script $build/gpuwatch-criu-action" "$CONF" || fail "CRIU $version: no action-script line" || return 1
		[ -z "$("$GW" criu-args)" ] || fail "criu-args repeats what $CONF sets: $("$GW" criu-args)" || return 1
	else
		! grep -q "^action-script" "$CONF" || fail "CRIU $version aborts on an action-script under RPC, but one was written" || return 1
		[ "$("$GW" criu-args)" = "--action-script $build/gpuwatch-criu-action" ] ||
			fail "criu-args: '$("$GW" criu-args)'" || return 1
	fi
	for s in prestart poststop; do
		for h in /usr/share/containers/oci/hooks.d /etc/containers/oci/hooks.d; do
			py -c 'import json,sys; h=json.load(open(sys.argv[1])); assert h["hook"]["args"][1:]==["oci-hook",sys.argv[2]], h' \
				"$h/gpuwatch-$s.json" "$s" || fail "hook definition for $s in $h" || return 1
		done
	done
	cp "$CONF" "$T/default.conf.once"
	"$GW" container-config >"$T/config2.out" 2>&1 || fail "container-config (again) exited $?" || return 1
	cmp -s "$CONF" "$T/default.conf.once" || fail "a second container-config changed $CONF" || return 1
	printf 'libdir /usr/lib/elsewhere\n' >"$T/other.conf"
	if "$GW" container-config --criu-conf "$T/other.conf" --hooks-dir "$T/hooks-other" >"$T/config3.out" 2>&1; then
		fail "a config loading plugins from another directory was overwritten"; return 1
	fi
	grep -q "/usr/lib/elsewhere" "$T/config3.out" || fail "the refusal does not name the other directory" || return 1
	[ "$(cat "$T/other.conf")" = "libdir /usr/lib/elsewhere" ] || fail "the refused config was changed" || return 1
}

case_drm() {
	local d=$T/w-drm gw1 gw2 m
	run_drm drm "$d" || return 1
	gw1=$(daemon_of drm) || { fail "no gpuwatch daemon follows the container"; return 1; }
	m=$(manifest_of drm)
	# the manifest trails the last change by its debounce: wait (bounded) for both processes
	wait_for 30 py -c 'import json,sys; m=json.load(open(sys.argv[1])); n=len(m["processes"]); assert n==2, n' "$m" ||
		fail "the daemon does not see the workload's 2 processes" || return 1
	sleep 1 # and for the workload's last changes after its child started
	cp "$m" "$out/drm-manifest-before.json"
	checkpoint drm || return 1
	wait_for 30 sh -c "! kill -0 $gw1 2>/dev/null" || fail "the daemon $gw1 still runs after the container stopped" || return 1
	restore drm || return 1
	gw2=$(daemon_of drm) || { criu_log drm restore; fail "no daemon follows the restored container"; return 1; }
	[ "$gw2" != "$gw1" ] || fail "the daemon was not restarted" || return 1
	# the new daemon snapshots the restored container: wait (bounded) until its view settles
	m=$(manifest_of drm)
	wait_for 60 py "$here/../compare_manifests.py" --any-pids "$out/drm-manifest-before.json" "$m" \
		>/dev/null 2>&1
	cp "$m" "$out/drm-manifest-after.json"
	py "$here/../compare_manifests.py" --any-pids "$out/drm-manifest-before.json" \
		"$out/drm-manifest-after.json" | sed 's/^/  manifests: /'
	[ "${PIPESTATUS[0]}" = 0 ] || fail "the daemon's view after the restore differs" || return 1
	pm exec drm dd if=/dev/dri/card0 of=/dev/null bs=1 count=0 >"$T/drm.exec.log" 2>&1 ||
		{ cat "$T/drm.exec.log"; fail "the restored container cannot open /dev/dri/card0 (device cgroup)"; return 1; }
	verify "$d" "after restore" || return 1
	touch "$d/go.2"
	wait_for 60 sh -c "[ \"\$(timeout 30 podman inspect -f '{{.State.Running}}' drm)\" = false ]" || fail "the workload did not exit" || return 1
	pm rm -f drm >/dev/null 2>&1
	wait_for 30 sh -c "! kill -0 $gw2 2>/dev/null" || fail "the daemon $gw2 outlived its container" || return 1
}

case_export() {
	local d=$T/w-export tar=$T/export.tar.gz rc
	run_drm export "$d" || return 1
	checkpoint export --leave-running --export="$tar" || return 1
	[ "$(pm inspect -f '{{.State.Running}}' export)" = true ] || fail "--leave-running: the container stopped" || return 1
	daemon_of export >/dev/null || fail "--leave-running: its daemon stopped" || return 1
	# podman compresses with zstd by default whatever the name; tar calls zstd to read it
	tar -tf "$tar" >"$T/export.list" 2>&1 || fail "cannot list $tar: $(tail -n 1 "$T/export.list")" || return 1
	grep -q 'gpuwatch-' "$T/export.list" || fail "the exported tarball holds no gpuwatch image" || return 1
	verify "$d" "the original after --leave-running" || return 1
	pm rm -f export >/dev/null 2>&1
	rm -f "$d"/result.* "$d/go.1"
	pm container restore --import="$tar" >"$T/export.rst.log" 2>&1 ||
		{ rc=$?; tail -n 5 "$T/export.rst.log"; fail "podman container restore --import exited $rc"; return 1; }
	verify "$d" "after --import" || return 1
	touch "$d/go.2"
	wait_for 60 sh -c "[ \"\$(timeout 30 podman inspect -f '{{.State.Running}}' export)\" = false ]"
	pm rm -f export >/dev/null 2>&1
}

# the seed's ask: gpuwatch.conf set to stateless with a restore signal by container-config; the
# container's checkpoint holds no buffer contents and no manifest; the restored workload finds
# its fds, its handle gone and its mapping zero-filled, rebuilds and carries on. Told by the
# signal where the action script runs under the runtime (CRIU 3.19+); under CRIU 3.17 there is
# no action script, so the workload finds out itself (--poll: its handle is gone)
case_stateless() {
	local d=$T/w-sl poll="" told=signal got dirs
	wl_image gwct-sl "$build/vmtests/wl_stateless" || { fail "cannot build the image (see $out/import-gwct-sl.log)"; return 1; }
	"$GW" container-config --checkpoint-mode stateless --restore-signal SIGUSR2 >"$T/sl.config.out" 2>&1 ||
		{ cat "$T/sl.config.out"; fail "container-config --checkpoint-mode stateless exited"; return 1; }
	grep 'gpuwatch.conf\|checkpoint mode' "$T/sl.config.out" | sed 's/^/  /'
	grep -qx 'mode = stateless' /etc/criu/gpuwatch.conf && grep -qx 'restore_signal = SIGUSR2' /etc/criu/gpuwatch.conf ||
		{ fail "/etc/criu/gpuwatch.conf does not say stateless and SIGUSR2"; return 1; }
	rpc_scripts || { poll=--poll; told=handle-gone; }
	rm -rf "$d" && mkdir -p "$d"
	pm run -d --name stateless --device /dev/dri/card0 --device /dev/dri/renderD128 -v "$d:/w" localhost/gwct-sl:1 \
		/wl /w $poll >"$T/stateless.run.log" 2>&1 || { cat "$T/stateless.run.log"; fail "pm run exited"; return 1; }
	wait_for 120 test -e "$d/progress" || { pm logs stateless 2>&1 | tail -n 5; fail "the workload wrote no frames"; return 1; }
	checkpoint stateless --keep || return 1
	dirs=$(find "$T/root" -path '*userdata/checkpoint' -type d 2>/dev/null)
	got=$(find $dirs -name 'gpuwatch-*' -printf '%f\n' 2>/dev/null | sort | tr '\n' ' ')
	echo "  gpuwatch images in the checkpoint: $got"
	case " $got" in *" gpuwatch-file-"*) ;; *) fail "the checkpoint holds no gpuwatch file image"; return 1 ;; esac
	case " $got" in *" gpuwatch-object-"* | *" gpuwatch-manifest"*) fail "a stateless checkpoint saved buffer contents or a manifest"; return 1 ;; esac
	restore stateless || return 1
	wait_for 120 test -e "$d/rebuilt.1" || { criu_log stateless restore; fail "the restored workload did not rebuild (no signal?)"; return 1; }
	stateless_after "$d" "$told" /memfd:gpuwatch-stateless || return 1
	pm rm -f stateless >/dev/null 2>&1
	"$GW" container-config --checkpoint-mode full --restore-signal none >"$T/sl.config2.out" 2>&1 &&
		grep -qx 'mode = full' /etc/criu/gpuwatch.conf && ! grep -q '^restore_signal' /etc/criu/gpuwatch.conf ||
		{ cat "$T/sl.config2.out"; fail "container-config did not set the mode back to full"; return 1; }
}

case_annot() {
	local d=$T/w-annot
	if [ "$RUNTIME" = crun ]; then
		REASON="crun $(crun --version | sed -n 's/^crun version //p') hands CRIU no configuration file: it ignores org.criu.config (crun 1.26 and later with CRIU 4.2 read it); $CONF configures crun's CRIU"
		return 2
	fi
	mv "$CONF" "$T/default.conf.saved"
	"$GW" container-config --criu-conf "$T/annot.conf" --hooks-dir "$T/hooks-annot" >"$T/annot.config.out" 2>&1 ||
		{ mv "$T/default.conf.saved" "$CONF"; fail "container-config --criu-conf exited"; return 1; }
	local rc=0
	{ run_drm annot "$d" --annotation "org.criu.config=$T/annot.conf" && checkpoint annot && restore annot &&
		verify "$d" "after restore (annotation)"; } || rc=1
	mv "$T/default.conf.saved" "$CONF"
	touch "$d/go.2"
	pm rm -f annot >/dev/null 2>&1
	return $rc
}

case_plain() {
	local d=$T/w-plain a b
	rm -rf "$d" && mkdir -p "$d"
	pm run -d --name plain -v "$d:/w" localhost/gwct:1 sh -c 'i=0; while :; do i=$((i+1)); echo $i >/w/count; sleep 0.2; done' \
		>"$T/plain.run.log" 2>&1 || { cat "$T/plain.run.log"; fail "pm run exited"; return 1; }
	wait_for 60 test -s "$d/count" || fail "the container does not count" || return 1
	local id
	id=$(pm inspect -f '{{.Id}}' plain)
	[ ! -e "/run/gpuwatch/containers/$id" ] || fail "a container without a DRM device got a daemon" || return 1
	# a damaged /etc/criu/gpuwatch.conf concerns DRM checkpoints only: this one goes on (the action
	# script, where CRIU runs it under the runtime, says so in its log)
	printf 'mode = sideways\n' >/etc/criu/gpuwatch.conf
	checkpoint plain || { rm -f /etc/criu/gpuwatch.conf; return 1; }
	a=$(cat "$d/count")
	restore plain || { rm -f /etc/criu/gpuwatch.conf; return 1; }
	rm -f /etc/criu/gpuwatch.conf
	wait_for 30 sh -c "c=\$(cat $d/count); [ \"\${c:-0}\" -gt $((a + 3)) ] 2>/dev/null" || fail "the restored container does not count on from $a" || return 1
	[ ! -e "/run/gpuwatch/containers/$id" ] || fail "the restored container got a daemon" || return 1
	pm rm -f plain >/dev/null 2>&1
}

case_gone() {
	local d=$T/w-gone out_rst
	run_drm gone "$d" || return 1
	checkpoint gone || return 1
	modprobe -r vgem || { fail "cannot unload vgem"; return 1; }
	if pm container restore gone >"$T/gone.rst.log" 2>&1; then
		modprobe vgem; fail "the restore succeeded without the device"; return 1
	fi
	sed 's/^/  restore without the device: /' "$T/gone.rst.log" | tail -n 3
	criu_log gone restore
	# the runtimes report CRIU's failure generically (runc names CRIU's log): in that log
	# gpuwatch's line names the device
	local log
	log=$(ls -t "$T"/root/vfs-containers/*/userdata/restore.log 2>/dev/null | head -n 1)
	[ -n "$log" ] && [ -e "$log" ] || { modprobe vgem; fail "no CRIU restore.log in podman's storage"; return 1; }
	grep -q "gpuwatch: cannot restore DRM file .*no DRM device for /dev/dri/card0" "$log" ||
		{ modprobe vgem; fail "CRIU's log has no gpuwatch error naming the device"; return 1; }
	grep -qiE "panic|segmentation|core dumped" "$T/gone.rst.log" && { modprobe vgem; fail "something crashed"; return 1; }
	[ "$(pm inspect -f '{{.State.Running}}' gone)" = false ] || { modprobe vgem; fail "a container runs after the failed restore"; return 1; }
	modprobe vgem || { fail "cannot load vgem again"; return 1; }
	restore gone || return 1
	verify "$d" "after restore (device back)" || return 1
	touch "$d/go.2"
	pm rm -f gone >/dev/null 2>&1
}

# --- i915 ---------------------------------------------------------------------------------------
# i915_node: loads the gwi915 fixture (a test driver named i915, vmtests/i915test) if needed and
# sets I915_NODE to its render node
i915_node() {
	local ko=$KO_DIR/gwi915.ko n
	if ! grep -q '^gwi915 ' /proc/modules; then
		[ -e "$ko" ] || { REASON="$ko not built ($(cat "$KO_DIR/gwi915.skip" 2>/dev/null || echo 'see vmtests/i915test/build.sh'))"; return 2; }
		modprobe drm_shmem_helper 2>/dev/null
		insmod "$ko" 2>"$T/insmod.txt" || { fail "insmod $ko: $(cat "$T/insmod.txt")"; return 1; }
	fi
	for n in /sys/bus/platform/devices/gwi915/drm/renderD*; do
		[ -e "$n" ] && wait_for 10 test -c "/dev/dri/${n##*/}" && { I915_NODE=/dev/dri/${n##*/}; return 0; }
	done
	fail "gwi915 is loaded but has no render node"
}

# i915_verified DIR WHAT: a fresh round of both processes' self-check (verify.<pid>, pids of the
# container's namespace) says PASS
i915_verified() {
	local dir=$1 what=$2 f bad=0
	rm -f "$dir"/verify.[0-9] "$dir"/verify.[0-9][0-9] "$dir"/verify.[0-9][0-9][0-9]
	wait_for 60 sh -c "[ \$(ls $dir | grep -cE '^verify\.[0-9]+\$') -ge 2 ] && for f in \$(ls $dir | grep -E '^verify\.[0-9]+\$'); do [ -s $dir/\$f ] || exit 1; done" ||
		{ fail "$what: the workload's self-check did not report (is it running?)"; return 1; }
	for f in $(ls "$dir" | grep -E '^verify\.[0-9]+$'); do
		head -n1 "$dir/$f" | grep -q '^PASS' && continue
		bad=1
		echo "  $what: $f: $(head -n1 "$dir/$f" | cut -c1-200)"
		sed 's/^/    /' "$dir/$f.log" 2>/dev/null | head -n 20
	done
	[ $bad = 0 ] || fail "$what: the workload found its i915 state damaged"
}

# i915_maps_of CONTAINER: the i915 mappings (GEM and legacy) of its processes, as the host sees them
i915_maps_of() {
	local p pids
	p=$(pm inspect -f '{{.State.Pid}}' "$1") || return 1
	pids="$p $(cat "/proc/$p/task/$p/children" 2>/dev/null)"
	# shellcheck disable=SC2086
	for p in $pids; do cat "/proc/$p/maps"; done | grep -cE ' (anon_inode:i915\.gem|/i915 \(deleted\))$'
}

# sum_log LOG PATTERN: the sum of the number that starts each match of "gpuwatch: ...PATTERN"
sum_log() {
	grep -oE "$2" "$1" 2>/dev/null | grep -oE '[0-9]+ i915' | awk '{ n += $1 } END { print n + 0 }'
}
latest_log() { ls -t "$T"/root/vfs-containers/*/userdata/"$1".log 2>/dev/null | head -n 1; }

# i915_record_check ID WANT: the checkpoint's gpuwatch-i915-maps.json holds WANT placeholders,
# made by the plugin at CHECKPOINT_DEVICES, not by the action script (whose pre-dump watcher the record
# would name; the plugin's own watchers, which only wait for criu to end, start after the record is written)
i915_record_check() {
	local ck=$T/root/vfs-containers/$1/userdata/checkpoint
	[ -e "$ck/gpuwatch-i915-maps.json" ] || { fail "no gpuwatch-i915-maps.json in $ck"; return 1; }
	py - "$ck/gpuwatch-i915-maps.json" "$2" >"$T/record-check.txt" 2>&1 <<-'EOF' || { fail "the conversion record: $(tail -n 1 "$T/record-check.txt")"; return 1; }
	import json, sys
	r = json.load(open(sys.argv[1]))
	ph = [m for m in r["maps"] if m["mode"] == "placeholder"]
	assert r["watcher_pid"] is None, "the record names the pre-dump's watcher: the action script converted them"
	assert len(ph) == len(r["maps"]) == int(sys.argv[2]), f"{len(ph)} placeholders of {len(r['maps'])} records, want {sys.argv[2]}"
	EOF
	echo "  the checkpoint's record: $2 placeholders made at CHECKPOINT_DEVICES, not at pre-dump"
}

case_i915() {
	local d=$T/w-i915 tar=$T/i915.tar.gz want n major log rc
	i915_node
	rc=$?
	[ $rc = 0 ] || return $rc
	wl_image gwct-i915 "$build/vmtests/wl_i915_criu" || { fail "cannot build the i915 image (see $out/import-gwct-i915.log)"; return 1; }
	rm -rf "$d" && mkdir -p "$d"
	# SYS_NICE: the workload gives contexts a priority above the default, which i915 (and the
	# fixture) allow only with CAP_SYS_NICE
	pm run -d --name i915 --cap-add SYS_NICE --device "$I915_NODE" -v "$d:/w" localhost/gwct-i915:1 /wl /w \
		>"$T/i915.run.log" 2>&1 ||
		{ cat "$T/i915.run.log"; fail "pm run exited"; return 1; }
	wait_for 120 test -e "$d/ready.1" || { pm logs i915 2>&1 | tail -n 5; fail "the workload never got ready"; return 1; }
	i915_verified "$d" "before the checkpoint" || return 1
	want=$(i915_maps_of i915)
	[ "${want:-0}" -gt 0 ] || { fail "the container holds no i915 mapping"; return 1; }
	daemon_of i915 >/dev/null || { fail "no gpuwatch daemon follows the container"; return 1; }
	major=$(criu --version | sed -n 's/^Version: \([0-9]*\).*/\1/p')
	if [ "$major" -lt 4 ]; then
		# 3.x under RPC: no action script, no CHECKPOINT_DEVICES: CRIU fails on the mappings
		if pm container checkpoint i915 >"$T/i915.ckpt.log" 2>&1; then
			fail "CRIU $major.x: the checkpoint of live i915 mappings succeeded, which the README says it cannot"
			return 1
		fi
		echo "  CRIU $major.x: checkpoint refused: $(grep -m1 -E 'Error|anon_inode' "$(latest_log dump)" 2>/dev/null | cut -c1-160)"
		[ "$(pm inspect -f '{{.State.Running}}' i915)" = true ] || { fail "the container stopped after the failed checkpoint"; return 1; }
		i915_verified "$d" "after the refused checkpoint" || return 1
		touch "$d/go.1"
		pm rm -f i915 >/dev/null 2>&1
		return 0
	fi
	# checkpoint + restore (--keep: podman 5 deletes CRIU's logs of a successful run otherwise)
	checkpoint i915 --keep || return 1
	cp "$(latest_log dump)" "$out/$name-dump1.log" 2>/dev/null
	i915_record_check "$(pm inspect -f '{{.Id}}' i915)" "$want" || return 1
	n=$(sum_log "$(latest_log dump)" 'dump: [0-9]+ i915 mappings were replaced by placeholders and 0 by copies')
	[ "$n" = "$want" ] || { fail "dump.log: $n of $want i915 mappings converted"; return 1; }
	restore i915 --keep || return 1
	cp "$(latest_log restore)" "$out/$name-restore1.log" 2>/dev/null
	n=$(sum_log "$(latest_log restore)" 'pid [0-9]+: [0-9]+ i915 mappings back at their addresses')
	[ "$n" = "$want" ] || { fail "restore.log: $n of $want i915 mappings mapped back"; return 1; }
	i915_verified "$d" "after restore" || return 1
	daemon_of i915 >/dev/null || { fail "no daemon follows the restored container"; return 1; }
	# --leave-running + --export, then --import. The workload holds its file writes meanwhile:
	# the original runs on and would rename away a verify.<pid>.tmp the image holds open.
	touch "$d/hold"
	wait_for 30 sh -c "[ \$(ls $d | grep -cE '^held\.[0-9]+\$') -ge 2 ]" ||
		{ fail "the workload did not hold its writes"; return 1; }
	checkpoint i915 --keep --leave-running --export="$tar" || return 1
	rm -f "$d/hold" "$d"/held.*
	cp "$(latest_log dump)" "$out/$name-dump2.log" 2>/dev/null
	mkdir -p "$out/$name-images2" && cp "$T/root/vfs-containers/$(pm inspect -f '{{.Id}}' i915)"/userdata/checkpoint/gpuwatch-* \
		"$out/$name-images2/" 2>/dev/null
	[ "$(pm inspect -f '{{.State.Running}}' i915)" = true ] || { fail "--leave-running: the container stopped"; return 1; }
	n=$(sum_log "$(latest_log dump)" 'pid [0-9]+: [0-9]+ i915 mappings put back in the dumped task')
	[ "$n" = "$want" ] || { fail "--leave-running: $n of $want i915 mappings put back in the original"; return 1; }
	i915_verified "$d" "the original after --leave-running" || return 1
	pm rm -f i915 >/dev/null 2>&1
	pm container restore --keep --import="$tar" >"$T/i915.import.log" 2>&1 ||
		{ rc=$?; tail -n 5 "$T/i915.import.log"; criu_log i915 restore; fail "podman container restore --import exited $rc"; return 1; }
	cp "$(latest_log restore)" "$out/$name-import.log" 2>/dev/null
	n=$(sum_log "$(latest_log restore)" 'pid [0-9]+: [0-9]+ i915 mappings back at their addresses')
	[ "$n" = "$want" ] || { fail "--import: $n of $want i915 mappings mapped back"; return 1; }
	i915_verified "$d" "after --import" || return 1
	# the after-work: new patterns through every mapping, new buffers, contexts and a VM
	touch "$d/go.1"
	wait_for 120 sh -c "[ \$(ls $d | grep -cE '^result\.[0-9]+\$') -ge 2 ]" || { fail "no results after go.1"; return 1; }
	sleep 0.5
	for f in $(ls "$d" | grep -E '^result\.[0-9]+$'); do
		[ "$(head -n1 "$d/$f")" = PASS ] || { sed 's/^/    /' "$d/$f.log" 2>/dev/null | head; fail "after-work: $f: $(head -n1 "$d/$f")"; return 1; }
	done
	wait_for 60 sh -c "cat $d/exit.* 2>/dev/null | grep -q ." || { fail "the workload did not exit"; return 1; }
	[ "$(cat "$d"/exit.*)" = "0 child 0" ] || { fail "workload exit: '$(cat "$d"/exit.*)' (want '0 child 0')"; return 1; }
	echo "  $want i915 mappings: converted at CHECKPOINT_DEVICES, put back after --leave-running, mapped back at each restore"
	pm rm -f i915 >/dev/null 2>&1
}

# one_case CASE: CASE of the current runtime (the configuration config makes, first)
one_case() {
	if [ "$1" != config ] && ! grep -q '^libdir ' "$CONF" 2>/dev/null; then
		"$GW" container-config >"$T/config.auto" 2>&1 || { cat "$T/config.auto"; fail "container-config"; return 1; }
	fi
	"case_$1"
}

if setup; then
	first=1
	for RUNTIME in $RUNTIMES; do
		use_runtime "$RUNTIME"
		for CASE in $CASES; do
			[ "$CASE" = config ] && [ $first = 0 ] && continue # the configuration is the runtimes'
			name=$CASE
			[ "$(echo $RUNTIMES | wc -w)" -gt 1 ] && name=$CASE@$RUNTIME
			say "case $name"
			t_run "$name" one_case "$CASE"
			pm rm -f "$CASE" >/dev/null 2>&1
		done
		first=0
	done
else
	t_result setup 1 0
fi
cp "$T"/*.log "$out/" 2>/dev/null
cp -r /run/gpuwatch/containers "$out/daemons" 2>/dev/null
t_finish
