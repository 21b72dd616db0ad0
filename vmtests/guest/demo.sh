#!/bin/bash
# Guest side of vmtests/demo.sh: attach -> checkpoint -> restore, in a VM running Debian's
# kernel with vgem. A "transcoder" (wl_demo) draws frames into mapped GEM buffers in a cgroup
# followed by gpuwatch; it is checkpointed with CRIU and gpuwatch's plugin, killed, restored,
# and carries on drawing, checking every pixel it drew before the checkpoint.
# Environment as for run-scenarios.sh (GPUWATCH, WL_DIR, RESULTS).
set -u
. "$(dirname "$0")/common.sh"
guest_begin "$RESULTS"
t0=$SECONDS
step() { printf '\n=== %s\n' "$*"; }
# the demo is one case: its first failure ends it
# demo_failed WHY: the demo ends here, failed (common.sh's fail only sets REASON and returns)
demo_failed() { REASON="demo failed: $*"; t_result demo 1 $((SECONDS - t0)); t_finish; }

step "kernel $(uname -r): loading vgem (a real DRM driver)"
modprobe vgem || demo_failed "modprobe vgem"
for i in $(seq 50); do [ -e /dev/dri/renderD128 ] && break; sleep 0.1; done
ls -l /dev/dri/card0 /dev/dri/renderD128
cg=/sys/fs/cgroup/demo work=/run/gpuwatch-demo img=/run/gpuwatch-demo/checkpoint
mkdir -p "$cg" "$img"
CRIU_ARGS=$("$GPUWATCH" criu-args) || demo_failed "gpuwatch criu-args"

step "gpuwatch attach --cgroup $cg --manifest $work/manifest.json"
"$GPUWATCH" attach --cgroup "$cg" --manifest "$work/manifest.json" 2>"$work/gpuwatch.log" &
gw=$!
for i in $(seq 600); do [ -e "$work/manifest.json" ] && break; sleep 0.1; done
[ -e "$work/manifest.json" ] || { cat "$work/gpuwatch.log"; demo_failed "gpuwatch did not attach"; }
cat "$work/gpuwatch.log"

step "the workload starts in the cgroup: it draws a frame every 200 ms into one of three mapped GEM buffers"
setsid sh -c "echo \$\$ > $cg/cgroup.procs && exec $WL_DIR/wl_demo" </dev/null >"$work/wl.log" 2>&1 &
wl=$!
sleep 4
cat "$work/wl.log"

step "gpuwatch show: the live manifest"
"$GPUWATCH" show "$work/manifest.json"

step "criu dump -t $wl -D $img $CRIU_ARGS"
criu dump -t "$wl" -D "$img" $CRIU_ARGS -v4 -o dump.log || { grep -E "Error|gpuwatch" "$img/dump.log" | tail; demo_failed "criu dump"; }
wait "$wl" 2>/dev/null
grep -hoE "gpuwatch(-criu-action)?: .*" "$img/dump.log" | sed "s/^/  criu log: /" | head -n 12
echo "  the process is gone: $(kill -0 "$wl" 2>/dev/null && echo STILL RUNNING || echo killed by criu)"
echo "  image: $(ls "$img" | grep -c gpuwatch) gpuwatch files, $(du -sh "$img" | cut -f1) in all"
lines_before=$(wc -l <"$work/wl.log")

step "criu restore -D $img -d $CRIU_ARGS"
criu restore -D "$img" -d $CRIU_ARGS -v4 -o restore.log || { grep -E "Error|gpuwatch" "$img/restore.log" | tail; demo_failed "criu restore"; }
grep -hoE "gpuwatch(-criu-action)?: .*" "$img/restore.log" | sed "s/^/  criu log: /" | head -n 12

step "the restored workload carries on (its output after the restore):"
# The verdict is what the workload says, however slow the machine: within 120 s of the restore
# it must report a frame drawn after the restore (it checks every pixel of the frames before),
# and no failure; it runs until the demo stops it.
last=$(head -n "$lines_before" "$work/wl.log" | grep -oE 'frame [0-9]+ drawn' | grep -oE '[0-9]+' | tail -n 1)
new_frame=''
for i in $(seq 240); do
	grep -q FAILED "$work/wl.log" && break
	new_frame=$(tail -n +"$((lines_before + 1))" "$work/wl.log" | grep -oE 'frame [0-9]+ drawn' | grep -oE '[0-9]+' | tail -n 1)
	[ -n "$new_frame" ] && [ "$new_frame" -gt "${last:--1}" ] && break
	new_frame=''
	kill -0 "$wl" 2>/dev/null || break
	sleep 0.5
done
tail -n +"$((lines_before + 1))" "$work/wl.log"
grep -q FAILED "$work/wl.log" && demo_failed "the workload found its GPU state damaged"
[ -n "$new_frame" ] || demo_failed "the restored workload drew no new frame within 120 s$(kill -0 "$wl" 2>/dev/null || echo ' (it is not running)')"
kill -0 "$wl" 2>/dev/null || demo_failed "the restored workload is not running"
echo "  frame $new_frame drawn after the restore (the last one before the checkpoint: ${last:-none})"

step "gpuwatch show: the daemon, still attached, sees the restored process with the same handles"
"$GPUWATCH" show "$work/manifest.json"

kill -TERM "$wl"
kill -TERM "$gw"
wait "$gw"
echo "demo completed: attach, checkpoint, kill, restore, and the workload carried on with every buffer intact"
t_result demo 0 $((SECONDS - t0))
t_finish
