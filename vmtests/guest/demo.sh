#!/bin/bash
# Guest side of vmtests/demo.sh: one workload in a cgroup followed by gpuwatch, its manifest
# shown after each phase. Environment as for run-scenarios.sh (GPUWATCH, WL_DIR, RESULTS).
set -u
VMTESTS=$(cd "$(dirname "$0")/.." && pwd)
step() { printf '\n=== %s\n' "$*"; }
result() { echo "$1" >"$RESULTS/summary"; echo "$2" >"$RESULTS/status"; exit "$2"; }
trap 'result "demo failed" 1' ERR

step "kernel $(uname -r): loading vgem (a real DRM driver) and creating cgroup /sys/fs/cgroup/demo"
modprobe vgem
for i in $(seq 50); do [ -e /dev/dri/renderD128 ] && break; sleep 0.1; done
ls -l /dev/dri/card0 /dev/dri/renderD128
cg=/sys/fs/cgroup/demo work=/run/gpuwatch-demo
mkdir -p "$cg" "$work/wl"

step "gpuwatch attach --cgroup $cg --manifest $work/manifest.json"
"$GPUWATCH" attach --cgroup "$cg" --manifest "$work/manifest.json" 2>"$work/gpuwatch.log" &
gw=$!
for i in $(seq 600); do [ -e "$work/manifest.json" ] && break; sleep 0.1; done
[ -e "$work/manifest.json" ] || { cat "$work/gpuwatch.log"; result "gpuwatch did not attach" 1; }
cat "$work/gpuwatch.log"

step "workload wl_prime: two card0 files and a renderD128 file; dumb buffers exported as dma-bufs and imported across files; a buffer mapped through two files"
"$VMTESTS/guest/incgroup" "$cg" "$WL_DIR/wl_prime" "$work/wl" >"$work/wl.out" 2>&1 &
wl=$!
for phase in 1 2; do
	until [ -e "$work/wl/ready.$phase" ]; do
		kill -0 $wl 2>/dev/null || { cat "$work/wl.out"; result "workload died" 1; }
		sleep 0.1
	done
	sleep 0.3 # > the 50 ms debounce: the manifest has caught up
	step "live manifest after phase $phase (gpuwatch show)"
	"$GPUWATCH" show "$work/manifest.json"
	[ $phase = 1 ] && step "phase 2: GEM_CLOSE of an imported handle, a render-node handle, and a dma-buf fd closed"
	touch "$work/wl/go.$phase"
done
wait $wl

step "workload exited; stopping gpuwatch (SIGTERM writes the final manifest)"
kill -TERM $gw
wait $gw
"$GPUWATCH" show "$work/manifest.json"
step "raw manifest JSON is at $work/manifest.json; schema gpuwatch.manifest/v1 (see README)"
result "demo completed" 0
