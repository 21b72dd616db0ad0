#!/bin/bash
# The VM benchmarks, guest side (run by vmtests/bench/run.sh as root inside the VM; every
# measurement of one run happens in this one boot). Appends one line per measurement to
# OUT/raw.tsv (tab-separated; report.py turns it into tables and vm-bench.json):
#   meta     KEY VALUE
#   ioctl    PATH MODE PAIR on|off NS_PER_OP      bench_ioctl in the followed cgroup
#   syscall  PATH MODE PAIR on|off NS_PER_OP      bench_syscall in a sibling cgroup (PATH
#                                                 tracefs-event: the control, no gpuwatch)
#            (ioctl PATH fentry-empty / fexit-record / fexit-follow: the controls of (1),
#            bench_floor's programs on drm_ioctl, no gpuwatch: empty ones / one ring record per
#            ioctl / one per DRM ioctl of the followed cgroup, with its fd)
#   gwstop   PATH PAIR LOST_EVENTS COMPLETE       the daemon's final manifest after an "on" run
#   progtime ROW MODE REP NS_PER_IOCTL IOCTLS     (1) the time inside the BPF programs on
#                                                 drm_ioctl per DRM ioctl (kernel.bpf_stats_enabled)
#                                                 of gpuwatch's fexit path and bench_floor's floors
#   burst    PATH RING IOCTLS SECONDS LOST_EVENTS COMPLETE RECORDS REASONS
#   criu     N MIB PAIR gpu|anon|stateless|floor BYTES DUMP_MS RESTORE_MS IMAGE_BYTES RESULT
#            (floor: the anon workload dumped by plain CRIU with an empty plugin, bench_plugin.c,
#            and a static no-op, bench_action.c, as its action script: the fixed cost of any
#            plugin + static script)
#   gwcpu    N MIB PAIR gpu|stateless|gpub DUMP_CPU_MS RESTORE_CPU_MS   the daemon's CPU time
#            (utime + stime, in 10 ms ticks) while criu dumped and while it restored: work it
#            does then competes with criu for the 2 vCPUs
#   iter     N MIB PAIR gpu|anon single|iterative BYTES PREDUMP_MS DUMP_MS RESTORE_MS IMAGE_BYTES RESULT
#   fault    MIB PAIR PAGES MAP_READ_MS MAP_WRITE_MS COPY_MS ANON_TOUCH_MS FREE_MS ANON_FREE_MS
#            [N ONE_DUMP_MS ONE_RESTORE_MS N_DUMP_MS N_RESTORE_MS ONE_FREE_MS N_FREE_MS]
#            bench_fault: the floor (its usage says what each is)
#   neighbour PATH JOB PAIR on|off MS              a realistic neighbour in the sibling cgroup
#                                                 (tests/bench/neighbour.sh: compile, transcode)
# "on": gpuwatch attach --hooks=PATH follows the benchmark cgroup; "off": no gpuwatch runs.
# Every pair is made of one on and one off run next to each other, their order alternating
# from pair to pair; gpuwatch is started afresh for every on run.
#
# Environment: GPUWATCH, WL_DIR (bench_* binaries), OUT (results; the host's --rwdir), and
#   SECTIONS    "hooks neighbour burst criu iterative" (default: all)
#   PAIRS       pairs per hook path for hooks (default 5)
#   PROG_REPS   hooks: loops per row and mode of the program-time measurement (default 3; 0: none)
#   HOOK_PATHS  "fexit tracepoint"
#   IOCTL_MODES "dumb getcap" (bench_ioctl modes; dumbmmap adds mmap+munmap to dumb)
#   SYSCALL_MODES "getpid readzero"
#   RUN_MS      length of one timed loop in ms, calibrated once with gpuwatch off (default 500)
#   BURST_IOCTLS  ioctls of the burst, over 2 processes (default 100000)
#   SMALL_RING  the ring size (bytes) that forces losses (default 4096, the smallest allowed)
#   NB_PAIRS    on/off pairs per hook path for neighbour (default 3); NB_FILES (default 2) and
#               NB_FRAMES (default 6): the jobs' sizes under TCG (neighbour.sh)
#   CRIU_PAIRS  gpu/anon pairs per cell (default 5)
#   CRIU_STATELESS  1 (default): each pair also dumps and restores the gpu workload in the
#               stateless mode (GPUWATCH_CHECKPOINT_MODE=stateless: its dump time and image size
#               against the full mode's); empty: not
#   CRIU_FLOOR  the cells whose pairs also run the fixed-cost control, kind floor (default "1:4";
#               empty: none)
#   FIXED_PAIRS pairs of those cells (default 11, or CRIU_PAIRS if more): the fixed cost is tens
#               of ms against pairs that the host moves by +-100 ms, so its median needs more of
#               them than the large cells' ratios do (about 10 s a pair at 1 x 4 MiB)
#   CRIU_B_PLUGIN  a directory holding another build's gpuwatch_criu.so (another commit, or
#               other flags): each pair also dumps and restores the gpu workload with it (kind
#               gpub, the same daemon, action script and arguments but --libdir): an A/B of two
#               plugin builds within one boot, which across boots the noise hides (default: none)
#   CELLS       "N:MIB ..." (default "1:4 1:256 1000:256"; the full grid: see vmtests/README.md)
#   ITER_CELLS  iterative's cells (default "1:256 1000:256"), ITER_PAIRS (3), ITER_WRITE_KIB
#               (2048: what the workload keeps writing), ITER_GAP (seconds between pre-dump
#               and dump, default 2)
#   IMAGES      tmpfs (default: /run, guest RAM) or 9p (OUT/img: the host's disk)
#   BINARIES    tmpfs (default: gpuwatch, its action script and plugin copied to /run) or 9p
#               (run from the build tree, read over 9p at every exec)
#   CRIU_VERBOSE=1  criu -v4 (timestamped logs, slower) and keep the logs in OUT/criu-logs/
#   CRIU_PERF=1  profile each criu dump and restore (perf record, flat, 1999 Hz: criu, its
#               plugin and the kernel under them; slower, and the times then include perf) into
#               OUT/perf/KIND-N-MIB-PAIR-dump.txt and -restore.txt (perf report by DSO and
#               symbol); CRIU_PERF=graph: with call graphs (frame pointers: build the plugin
#               with -fno-omit-frame-pointer) and a report of inclusive time, -inclusive.txt
#   ASLR        the guest's kernel.randomize_va_space for the whole run (default: left as booted,
#               2). 0: every process maps its libraries, and criu its plugin, at the same address
#               each time, so TCG reuses what it translated for an earlier process (it keys its
#               translations by virtual address); with 2 each new process translates the code it
#               runs again, a cost of the emulator that a CPU does not have (docs/benchmarks.md)
#   PIN_CPUS=1  hooks: gpuwatch on vCPU 1 and the timed loops on vCPU 0 (taskset), on and off
#               alike: the loop's own cost without the daemon's work sharing its vCPU
set -u
. "$(dirname "$0")/../guest/common.sh"

BENCH=$(cd "$(dirname "$0")" && pwd)
VMTESTS=$(cd "$BENCH/.." && pwd)
INCGROUP=$VMTESTS/guest/incgroup
PIN_LOOP=() PIN_GW=()
if [ -n "${PIN_CPUS:-}" ]; then
	PIN_LOOP=(taskset -c 0) PIN_GW=(taskset -c 1)
fi
: "${GPUWATCH:?}" "${WL_DIR:?}" "${OUT:?}"
SECTIONS=${SECTIONS:-hooks neighbour burst criu iterative}
PAIRS=${PAIRS:-5}
PROG_REPS=${PROG_REPS:-3}
HOOK_PATHS=${HOOK_PATHS:-fexit tracepoint}
IOCTL_MODES=${IOCTL_MODES:-dumb getcap}
SYSCALL_MODES=${SYSCALL_MODES:-getpid readzero}
RUN_MS=${RUN_MS:-500}
BURST_IOCTLS=${BURST_IOCTLS:-100000}
SMALL_RING=${SMALL_RING:-4096}
CRIU_PAIRS=${CRIU_PAIRS:-5}
NB_PAIRS=${NB_PAIRS:-3}
export NB_FILES=${NB_FILES:-2} NB_FRAMES=${NB_FRAMES:-6}
. "$VMTESTS/../tests/bench/neighbour.sh"
CRIU_STATELESS=${CRIU_STATELESS-1}
CELLS=${CELLS:-1:4 1:256 1000:256}
CRIU_FLOOR=${CRIU_FLOOR-1:4}
FIXED_PAIRS=${FIXED_PAIRS:-11}
[ "$FIXED_PAIRS" -ge "$CRIU_PAIRS" ] || FIXED_PAIRS=$CRIU_PAIRS
ITER_CELLS=${ITER_CELLS:-1:256 1000:256}
ITER_PAIRS=${ITER_PAIRS:-3}
ITER_WRITE_KIB=${ITER_WRITE_KIB:-2048}
ITER_GAP=${ITER_GAP:-2}
IMAGES=${IMAGES:-tmpfs}
CRIU=${CRIU:-criu}
W=/run/gwbench
CLK_TCK=$(getconf CLK_TCK 2>/dev/null || echo 100)
CG_IN=/sys/fs/cgroup/gwbench-in     # followed by gpuwatch; the traced workloads run here
CG_OUT=/sys/fs/cgroup/gwbench-out   # never followed: "everything else"
RAW=$OUT/raw.tsv
GW_PID=

say() { echo "[$(date +%T)] $*"; }
raw() { local IFS=$'\t'; echo "$*" >>"$RAW"; }
die() { say "FATAL: $*"; raw meta fatal "$*"; REASON=$*; t_result bench 1 0; t_finish; }

# json_get FILE KEY...: top-level values of a manifest, tab-separated
json_get() {
	python3 -c 'import json,sys
m = json.load(open(sys.argv[1]))
print("\t".join(json.dumps(m.get(k)) if not isinstance(m.get(k), str) else m[k] for k in sys.argv[2:]))' "$@"
}

# gw_on PATH [RING]: gpuwatch follows CG_IN with --hooks=PATH; returns once it wrote its
# first manifest, which must name PATH for every hook group
gw_on() {
	local path=$1 ring=${2:-}
	rm -f "$W/manifest.json"
	${PIN_GW[@]+"${PIN_GW[@]}"} "$GPUWATCH" attach --cgroup "$CG_IN" --manifest "$W/manifest.json" --hooks="$path" \
		${ring:+--ring-size "$ring"} >"$W/gw.log" 2>&1 &
	GW_PID=$!
	for _ in $(seq 1200); do
		[ -s "$W/manifest.json" ] && break
		kill -0 "$GW_PID" 2>/dev/null || { cat "$W/gw.log"; die "gpuwatch attach --hooks=$path exited"; }
		sleep 0.1
	done
	[ -s "$W/manifest.json" ] || die "gpuwatch attach --hooks=$path wrote no manifest in 120 s"
	local hooks
	hooks=$(python3 -c 'import json,sys; print(" ".join(sorted(set(json.load(open(sys.argv[1]))["hooks"].values()))))' "$W/manifest.json")
	[ "$hooks" = "$path" ] || die "--hooks=$path: the manifest says hooks $hooks"
}

# gw_off: SIGINT, exit 0 required; GW_LOST, GW_COMPLETE, GW_RECORDS, GW_REASONS from the
# final manifest and the stop line of the log
gw_off() {
	kill -INT "$GW_PID"
	wait "$GW_PID"
	local rc=$?
	GW_PID=
	[ $rc = 0 ] || { tail -n 5 "$W/gw.log"; die "gpuwatch exited with status $rc on SIGINT"; }
	IFS=$'\t' read -r GW_LOST GW_COMPLETE GW_REASONS < <(json_get "$W/manifest.json" lost_events complete incomplete_reasons)
	GW_RECORDS=$(sed -n 's/.*records by hook: tracepoint \([0-9]*\), fexit \([0-9]*\).*/\1 \2/p' "$W/gw.log" |
		awk '{ print $1 + $2 }')
}

# calibrate CG PROGRAM MODE ITERS: iterations for RUN_MS, measured once with gpuwatch off (0: failed)
calibrate() {
	local ns
	ns=$("$INCGROUP" "$1" "$WL_DIR/$2" "$3" "$4" | awk '{ print $3 }')
	[[ $ns =~ ^[0-9.]+$ ]] || { echo 0; return; }
	awk -v ns="$ns" -v ms="$RUN_MS" 'BEGIN { n = int(ms * 1e6 / ns / 10) * 10; if (n < 100) n = 100; print n }'
}

# measure PATH PAIR on|off: one timed run of every loop
# one timed loop and its raw row: ioctl|syscall ROW MODE PAIR on|off (bench_ioctl in CG_IN,
# bench_syscall in CG_OUT; on vCPU 0 under PIN_CPUS)
timed_loop() {
	local kind=$1 row=$2 m=$3 pair=$4 state=$5 cg=$CG_IN bin=bench_ioctl line
	[ "$kind" = ioctl ] || { cg=$CG_OUT; bin=bench_syscall; }
	line=$(${PIN_LOOP[@]+"${PIN_LOOP[@]}"} "$INCGROUP" "$cg" "$WL_DIR/$bin" "$m" "${ITERS[${kind}_$m]}") || die "$bin $m failed"
	raw "$kind" "$row" "$m" "$pair" "$state" "$(echo "$line" | awk '{ print $3 }')"
}

measure() {
	local path=$1 pair=$2 state=$3 m
	for m in $IOCTL_MODES; do timed_loop ioctl "$path" "$m" "$pair" "$state"; done
	for m in $SYSCALL_MODES; do timed_loop syscall "$path" "$m" "$pair" "$state"; done
}

# control for (2): no gpuwatch, one syscall event enabled through tracefs (ftrace, no BPF).
# Any enabled syscall tracepoint puts every task on the syscall slow path: this is that floor.
measure_tracefs() {
	local pair=$1 m state ev=/sys/kernel/tracing/events/syscalls/sys_enter_close/enable
	[ -e "$ev" ] || mount -t tracefs none /sys/kernel/tracing 2>/dev/null
	[ -e "$ev" ] || return 0
	for state in on off; do
		if [ $state = on ]; then echo 1 >"$ev"; else echo 0 >"$ev"; fi
		for m in $SYSCALL_MODES; do timed_loop syscall tracefs-event "$m" "$pair" "$state"; done
	done
	echo 0 >"$ev"
}

# floor_on KIND: bench_floor's KIND programs attached (FPID), or 1 with the reason said
floor_on() {
	local cg=
	[ "$1" != follow ] || cg=$CG_IN
	${PIN_GW[@]+"${PIN_GW[@]}"} "$WL_DIR/bench_floor" "$1" $cg >"$W/floor.out" 2>&1 &
	FPID=$!
	for _ in $(seq 300); do
		grep -q attached "$W/floor.out" 2>/dev/null && break
		kill -0 "$FPID" 2>/dev/null || break
		sleep 0.1
	done
	grep -q attached "$W/floor.out" && return 0
	say "bench_floor $1: $(cat "$W/floor.out")"
	kill "$FPID" 2>/dev/null
	wait "$FPID"
	FPID=
	return 1
}

# floor_off KIND: detached cleanly (and, for record and follow, records written)
floor_off() {
	kill -INT "$FPID"
	wait "$FPID" || die "bench_floor $1 did not detach cleanly: $(cat "$W/floor.out")"
	FPID=
	[ "$1" = empty ] || grep -q '^records [1-9]' "$W/floor.out" || die "bench_floor $1 recorded nothing: $(cat "$W/floor.out")"
}

# controls for (1): no gpuwatch, bench_floor's programs on drm_ioctl (bpf/bench_floor.bpf.c).
#   fentry-empty:  empty fentry and fexit programs: what the BPF trampoline alone costs each DRM
#                  ioctl, the floor under the fexit path's hooks;
#   fexit-record:  one fexit program (no fentry, as gpuwatch's path) that writes one record of
#                  gpuwatch's ioctl record size with the argument per DRM ioctl, drained by bench_floor:
#                  the floor of recording every ioctl, without gpuwatch's filters and join.
#   fexit-follow:  the same record only for the followed cgroup's DRM files, after gpuwatch's
#                  own followed test and DRM file test, with the syscall's fd: the floor of
#                  this design (follow one cgroup, record each DRM ioctl with its fd).
measure_floor() {
	local pair=$1 m state order="on off" kind row
	[ $((pair % 2)) = 1 ] || order="off on"
	for kind in empty record follow; do
		row=fexit-$kind
		[ $kind != empty ] || row=fentry-empty
		for state in $order; do
			if [ $state = on ]; then floor_on $kind || return 0; fi
			for m in $IOCTL_MODES; do timed_loop ioctl "$row" "$m" "$pair" "$state"; done
			[ $state = off ] || floor_off $kind
		done
	done
}

# prog_ns PREFIX: "NS_PER_RUN RUNS" of the loaded programs whose name starts with PREFIX (the
# kernel's run_time_ns summed, over the most runs of one of them: per ioctl when each runs once
# per DRM ioctl)
prog_ns() {
	bpftool prog show -j | python3 -c 'import json, sys
ps = [p for p in json.load(sys.stdin) if p.get("name", "").startswith(sys.argv[1]) and p.get("run_cnt")]
n = max((p["run_cnt"] for p in ps), default=0)
print("%.1f %d" % (sum(p["run_time_ns"] for p in ps) / n, n) if n else "0 0")' "$1"
}

# (1) the time inside the programs on drm_ioctl per DRM ioctl, from the kernel's BPF statistics:
# gpuwatch's one fexit program against bench_floor's empty pair, record and follow programs. The loops' wall
# time also carries the host's noise (other guests' CPU time on the same cores); this does not
# count time outside the programs. The statistics themselves add two clock reads per run, to
# every row alike.
measure_progtime() {
	local rep row m v
	[ "$PROG_REPS" -gt 0 ] 2>/dev/null || return 0
	command -v bpftool >/dev/null || { say "program time: no bpftool here, not measured"; return 0; }
	sysctl -qw kernel.bpf_stats_enabled=1 || { say "program time: kernel.bpf_stats_enabled refused"; return 0; }
	for rep in $(seq "$PROG_REPS"); do
		for row in fexit fentry-empty fexit-record fexit-follow; do
			for m in $IOCTL_MODES; do
				case $row in
				fexit) gw_on fexit ;;
				fentry-empty) floor_on empty || break 2 ;;
				fexit-*) floor_on "${row#fexit-}" || break 2 ;;
				esac
				${PIN_LOOP[@]+"${PIN_LOOP[@]}"} "$INCGROUP" "$CG_IN" "$WL_DIR/bench_ioctl" "$m" "${ITERS[ioctl_$m]}" >/dev/null ||
					die "bench_ioctl $m failed"
				case $row in
				fexit) v=$(prog_ns gw_fexit_drm) ;;
				*) v=$(prog_ns floor_) ;;
				esac
				raw progtime "$row" "$m" "$rep" ${v% *} ${v#* }
				case $row in
				fexit) gw_off ;;
				fentry-empty) floor_off empty ;;
				fexit-*) floor_off "${row#fexit-}" ;;
				esac
			done
		done
	done
	sysctl -qw kernel.bpf_stats_enabled=0
}

measure_on() {
	gw_on "$1"
	measure "$1" "$2" on
	gw_off
	raw gwstop "$1" "$2" "$GW_LOST" "$GW_COMPLETE"
}

section_hooks() {
	declare -gA ITERS
	local m pair path
	for m in $IOCTL_MODES; do ITERS[ioctl_$m]=$(calibrate "$CG_IN" bench_ioctl "$m" 1000); done
	for m in $SYSCALL_MODES; do ITERS[syscall_$m]=$(calibrate "$CG_OUT" bench_syscall "$m" 20000); done
	for m in "${!ITERS[@]}"; do
		[ "${ITERS[$m]}" != 0 ] || die "calibration of $m failed"
		raw meta "iters_$m" "${ITERS[$m]}"
	done
	raw meta pin_cpus "${PIN_CPUS:-}"
	say "hooks: $PAIRS pairs per path ($HOOK_PATHS); iterations: $(for m in "${!ITERS[@]}"; do printf '%s=%s ' "$m" "${ITERS[$m]}"; done)"
	for pair in $(seq "$PAIRS"); do
		for path in $HOOK_PATHS; do
			if [ $((pair % 2)) = 1 ]; then
				measure_on "$path" "$pair"
				measure "$path" "$pair" off
			else
				measure "$path" "$pair" off
				measure_on "$path" "$pair"
			fi
		done
		measure_tracefs "$pair"
		measure_floor "$pair"
		say "hooks: pair $pair done"
	done
	measure_progtime
}

# (2b) realistic neighbours: each job of neighbour.sh run whole in CG_OUT, gpuwatch following
# CG_IN (each hook path) or not running; on and off alternate as in section_hooks
section_neighbour() {
	local pair path state order j ms
	nb_prepare "$W/nb" || die "neighbour: the jobs cannot run here"
	raw meta nb_files "$(nb_sources | wc -l)"
	raw meta nb_frames "$NB_FRAMES"
	say "neighbour: $NB_PAIRS pairs per path ($HOOK_PATHS), compile of $(nb_sources | wc -l) files, transcode of $NB_FRAMES frames"
	for pair in $(seq "$NB_PAIRS"); do
		for path in $HOOK_PATHS; do
			order="on off"
			[ $((pair % 2)) = 1 ] || order="off on"
			for state in $order; do
				[ "$state" = off ] || gw_on "$path"
				for j in compile transcode; do
					ms=$(echo "$BASHPID" >"$CG_OUT/cgroup.procs" && nb_run "$j" "$W/nb") || die "neighbour $j failed"
					raw neighbour "$path" "$j" "$pair" "$state" "$ms"
				done
				[ "$state" = off ] || gw_off
			done
		done
		say "neighbour: pair $pair done"
	done
}

section_burst() {
	local path ring line iters=$(((BURST_IOCTLS + 5) / 6)) # 3 ioctls per op, 2 processes
	for path in $HOOK_PATHS; do
		for ring in default "$SMALL_RING"; do
			gw_on "$path" "$([ "$ring" = default ] || echo "$ring")"
			line=$("$INCGROUP" "$CG_IN" "$WL_DIR/bench_ioctl" dumb "$iters" 2) || die "burst failed"
			sleep 1
			gw_off
			raw burst "$path" "$ring" "$(echo "$line" | awk '{ print $5 }')" "$(echo "$line" | awk '{ print $7 }')" \
				"$GW_LOST" "$GW_COMPLETE" "$GW_RECORDS" "$GW_REASONS"
			cp "$W/manifest.json" "$OUT/burst-$path-$ring.manifest.json"
			say "burst $path ring $ring: $line; lost $GW_LOST, complete $GW_COMPLETE, records $GW_RECORDS"
		done
	done
}

# the daemon's CPU time so far, ms (utime + stime of every thread; 0 when none runs)
gw_cpu_ms() {
	local f
	[ -n "$GW_PID" ] && read -r -a f <"/proc/$GW_PID/stat" 2>/dev/null || { echo 0; return; }
	# fields after "(comm)": state is f[2] when comm has no space (gpuwatch's has none)
	echo $(((f[13] + f[14]) * 1000 / CLK_TCK))
}
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

# perf_wrap NAME CMD...: runs CMD, under `perf record` when CRIU_PERF is set (NAME: the
# report's name in OUT/perf/); CMD's exit status
perf_wrap() {
	local name=$1 rc
	shift
	[ -n "${CRIU_PERF:-}" ] || { "$@"; return; }
	mkdir -p "$OUT/perf"
	local rec=(-F 1999) rep=()
	[ "$CRIU_PERF" != graph ] || rec=(-F 999 -g) rep=(-G --call-graph=caller,0.5)
	perf record -q "${rec[@]}" -o "$W/perf.data" -- "$@"
	rc=$?
	[ "$CRIU_PERF" != graph ] || perf report -i "$W/perf.data" --stdio --children --sort dso,symbol -g none \
		--percent-limit 0.5 >"$OUT/perf/$name-inclusive.txt" 2>&1
	perf report -i "$W/perf.data" --stdio --no-children --sort dso,symbol --percent-limit 0.3 ${rep[@]+"${rep[@]}"} \
		>"$OUT/perf/$name.txt" 2>&1
	rm -f "$W/perf.data"
	return $rc
}

# the workload kind of bench_hold for a run kind: the control and the other plugin build run
# the anon and gpu workloads
hold_kind() {
	case $1 in floor) echo anon ;; gpub) echo gpu ;; *) echo "$1" ;; esac
}

# criu_one KIND N MIB PAIR [single|iterative]: the workload holds MIB in N pieces; dump,
# restore, verify (a "criu" row). With a fifth argument (section iterative) the workload keeps
# writing ITER_WRITE_KIB of it, and the row is an "iter" one: single is one dump as above;
# iterative is `criu pre-dump` first (timed on its own), then the final dump with
# --prev-images-dir and --track-mem
criu_one() {
	local kind=$1 n=$2 mib=$3 pair=$4 iter=${5:-} d=$W/hold img pre cg=$CG_OUT t pid dump_ms restore_ms bytes imgb result rc
	local args=() write=() predump_ms=0 prev=() cpu0 dump_cpu=0 restore_cpu=0
	img=$([ "$IMAGES" = 9p ] && echo "$OUT/img" || echo "$W/img")
	pre=$img.pre
	rm -rf "$d" "$img" "$pre" && mkdir -p "$d" "$img"
	[ -z "$iter" ] || write=("$ITER_WRITE_KIB")
	local env=()
	if [ "$kind" != anon ] && [ "$kind" != floor ]; then
		cg=$CG_IN
		args=("${CRIU_GW_ARGS[@]}")
		gw_on fexit
	fi
	if [ "$kind" = gpub ]; then # the other plugin build: its directory for --libdir's value
		local i
		for i in "${!args[@]}"; do
			case ${args[$i]} in
			--libdir) args[i + 1]=$B_LIBDIR ;;
			--libdir=*) args[i]=--libdir=$B_LIBDIR ;;
			esac
		done
	fi
	[ "$kind" = stateless ] && env=(GPUWATCH_CHECKPOINT_MODE=stateless)
	[ "$kind" = floor ] && args=(--libdir "$FLOOR_LIBDIR" --action-script "$FLOOR_SCRIPT")
	(cd "$d" && exec setsid "$INCGROUP" "$cg" "$WL_DIR/bench_hold" "$d" "$(hold_kind "$kind")" "$n" "$mib" ${write[@]+"${write[@]}"} \
		</dev/null >"$d/stdout" 2>"$d/stderr") &
	pid=$!
	disown "$pid"   # no "Killed" job notice when criu dump kills it
	wait_file "$d/ready" 600 "$pid" || { cat "$d/stderr"; die "bench_hold $kind $n $mib not ready"; }
	bytes=$(cat "$d/ready")
	rc=0
	if [ "$iter" = iterative ]; then
		mkdir -p "$pre"
		t=$(date +%s%N)
		"$CRIU" pre-dump -t "$pid" -D "$pre" --shell-job ${CRIU_VERBOSE:+-v4} -o pre-dump.log "${args[@]}" >>"$W/criu.out" 2>&1
		rc=$?
		predump_ms=$(ms_since "$t")
		[ $rc = 0 ] || cp "$pre/pre-dump.log" "$OUT/predump-fail-$kind-$n-$mib-$pair.log"
		sleep "$ITER_GAP" # the workload goes on writing
		prev=(--prev-images-dir=../"$(basename "$pre")" --track-mem)
	fi
	if [ $rc = 0 ]; then
		cpu0=$(gw_cpu_ms)
		t=$(date +%s%N)
		perf_wrap "$kind-$n-$mib-$pair-dump" env ${env[@]+"${env[@]}"} "$CRIU" dump -t "$pid" -D "$img" --shell-job ${CRIU_VERBOSE:+-v4} -o dump.log \
			${prev[@]+"${prev[@]}"} "${args[@]}" >>"$W/criu.out" 2>&1
		rc=$?
		dump_ms=$(ms_since "$t")
		dump_cpu=$(($(gw_cpu_ms) - cpu0))
	fi
	for _ in $(seq 200); do [ -e "/proc/$pid" ] || break; sleep 0.05; done # bash reaps it: the restore needs the pid
	if [ $rc != 0 ]; then
		cp "$img/dump.log" "$OUT/dump-fail-$kind-$n-$mib-$pair.log"
		kill -9 "$pid" 2>/dev/null
		result="dump-failed-$rc"
		restore_ms=0 imgb=0
	else
		imgb=$(du -sb "$img" | cut -f1)
		cpu0=$(gw_cpu_ms)
		t=$(date +%s%N)
		perf_wrap "$kind-$n-$mib-$pair-restore" "$CRIU" restore -D "$img" --shell-job -d ${CRIU_VERBOSE:+-v4} -o restore.log "${args[@]}" >>"$W/criu.out" 2>&1
		rc=$?
		restore_ms=$(ms_since "$t")
		restore_cpu=$(($(gw_cpu_ms) - cpu0))
		if [ $rc != 0 ]; then
			cp "$img/restore.log" "$OUT/restore-fail-$kind-$n-$mib-$pair.log"
			result="restore-failed-$rc"
		else
			touch "$d/go"
			if wait_file "$d/result" 600 "$pid"; then result=$(head -n1 "$d/result" | tr ' ' _); else result=no-result; fi
		fi
		for _ in $(seq 100); do alive "$pid" || break; sleep 0.1; done
		kill -9 "$pid" 2>/dev/null
	fi
	if [ "$kind" != anon ] && [ "$kind" != floor ]; then
		gw_off
		[ -n "$iter" ] || raw gwcpu "$n" "$mib" "$pair" "$kind" "$dump_cpu" "$restore_cpu"
	fi
	if [ -n "$iter" ]; then
		raw iter "$n" "$mib" "$pair" "$kind" "$iter" "$bytes" "$predump_ms" "$dump_ms" "$restore_ms" "$imgb" "$result"
		say "iter $kind $iter N=$n ${mib}MiB pair $pair: pre-dump $predump_ms ms, dump $dump_ms ms, restore $restore_ms ms, image $imgb B, $result"
	else
		raw criu "$n" "$mib" "$pair" "$kind" "$bytes" "$dump_ms" "$restore_ms" "$imgb" "$result"
		say "criu $kind N=$n ${mib}MiB pair $pair: dump $dump_ms ms, restore $restore_ms ms, image $imgb B, $result"
	fi
	if [ -n "${CRIU_VERBOSE:-}" ]; then
		mkdir -p "$OUT/criu-logs"
		cp "$img/dump.log" "$OUT/criu-logs/$kind-$n-$mib-$pair-dump.log" 2>/dev/null
		cp "$img/restore.log" "$OUT/criu-logs/$kind-$n-$mib-$pair-restore.log" 2>/dev/null
	fi
	rm -rf "$img" "$pre"
}

criu_setup() {
	command -v "$CRIU" >/dev/null || return 1
	[ -z "${CRIU_GW_ARGS+x}" ] || return 0
	local out
	out=$("$GPUWATCH" criu-args) || die "gpuwatch criu-args: $out"
	read -r -a CRIU_GW_ARGS <<<"$out"
	raw meta criu_version "$("$CRIU" --version | head -n1)"
	# The first criu run of a boot probes the kernel (~10 s under TCG) and caches the answers
	# in /run/criu.kdat: not a cost of either side of a pair.
	"$CRIU" check >"$W/criu-check.out" 2>&1
	raw meta images "$IMAGES"
}

section_criu() {
	local cell n mib pair pairs
	criu_setup || { say "criu not installed: section skipped"; raw meta criu_skipped "no criu"; return; }
	# the floor: what the page faults of reading and filling a buffer through a mapping cost
	local sizes line f
	sizes=$(for cell in $CELLS; do echo "${cell#*:}"; done | sort -un)
	for mib in $sizes; do
		# the most buffers a cell splits these bytes into: bench_fault's per-buffer floor
		nmax=$(for cell in $CELLS; do [ "${cell#*:}" = "$mib" ] && echo "${cell%:*}"; done | sort -n | tail -n1)
		for pair in $(seq "$CRIU_PAIRS"); do
			line=$("$INCGROUP" "$CG_OUT" "$WL_DIR/bench_fault" "$mib" "$nmax") || die "bench_fault $mib $nmax failed"
			read -r -a f <<<"$line" # "pages N map_read_ms R ...": the values are fields 1, 3, ...
			local vals=() i
			for ((i = 1; i < ${#f[@]}; i += 2)); do vals+=("${f[i]}"); done
			raw fault "$mib" "$pair" "${vals[@]}"
		done
		say "fault floor ${mib} MiB: $line"
	done
	say "criu: cells $CELLS, $CRIU_PAIRS pairs each (the fixed-cost control's, $CRIU_FLOOR: $FIXED_PAIRS), images on $IMAGES"
	for cell in $CELLS; do
		n=${cell%:*} mib=${cell#*:} pairs=$CRIU_PAIRS
		case " $CRIU_FLOOR " in *" $cell "*) pairs=$FIXED_PAIRS ;; esac
		for pair in $(seq "$pairs"); do
			if [ $((pair % 2)) = 1 ]; then
				criu_one gpu "$n" "$mib" "$pair"
				criu_one anon "$n" "$mib" "$pair"
			else
				criu_one anon "$n" "$mib" "$pair"
				criu_one gpu "$n" "$mib" "$pair"
			fi
			[ -z "$CRIU_STATELESS" ] || criu_one stateless "$n" "$mib" "$pair"
			[ -z "$B_LIBDIR" ] || criu_one gpub "$n" "$mib" "$pair"
			case " $CRIU_FLOOR " in *" $cell "*) criu_one floor "$n" "$mib" "$pair" ;; esac
		done
	done
}

# (5c) iterative migration: the workload keeps writing ITER_WRITE_KIB of its bytes; the
# downtime (final dump + restore) after a pre-dump against one single dump, gpu and anon
section_iterative() {
	local cell n mib pair kind
	criu_setup || { say "criu not installed: section skipped"; raw meta iter_skipped "no criu"; return; }
	raw meta iter_write_kib "$ITER_WRITE_KIB"
	raw meta iter_gap_s "$ITER_GAP"
	say "iterative: cells $ITER_CELLS, $ITER_PAIRS pairs each, writing $ITER_WRITE_KIB KiB, ${ITER_GAP}s between pre-dump and dump"
	for cell in $ITER_CELLS; do
		n=${cell%:*} mib=${cell#*:}
		for pair in $(seq "$ITER_PAIRS"); do
			for kind in gpu anon; do
				if [ $((pair % 2)) = 1 ]; then
					criu_one "$kind" "$n" "$mib" "$pair" single
					criu_one "$kind" "$n" "$mib" "$pair" iterative
				else
					criu_one "$kind" "$n" "$mib" "$pair" iterative
					criu_one "$kind" "$n" "$mib" "$pair" single
				fi
			done
		done
	done
}

cleanup() {
	[ -n "$GW_PID" ] && kill -INT "$GW_PID" 2>/dev/null
	for cg in "$CG_IN" "$CG_OUT"; do
		for p in $(cat "$cg/cgroup.procs" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
	done
	sleep 0.5
	rmdir "$CG_IN" "$CG_OUT" 2>/dev/null
}
trap cleanup EXIT

guest_begin "$OUT" "${SECTION_TIMEOUT:-3600}" # the watchdog's bound is per section
mkdir -p "$W" "$OUT" && : >"$RAW"
# gpuwatch, its action script and its plugin run from a copy in the guest's tmpfs, in the build
# tree's layout (criu-args finds the others next to gpuwatch): the root filesystem is the host's
# over 9p without a page cache, where every exec of the action script read its pages again
# (about 170 ms a run under TCG against 17 ms from tmpfs), which a host with its binaries on a
# local disk does not pay. CRIU and the workloads stay on 9p, the same for both sides of a pair.
if [ "${BINARIES:-tmpfs}" = tmpfs ]; then
	gwbin=$(dirname "$GPUWATCH")
	mkdir -p "$W/bin" && cp "$GPUWATCH" "$gwbin/gpuwatch-criu-action" "$W/bin/" && cp -r "$gwbin/criu-plugin" "$W/bin/" ||
		die "cannot copy gpuwatch's binaries to $W/bin"
	GPUWATCH=$W/bin/gpuwatch
fi
# the fixed-cost control (kind floor): an empty plugin in a directory of its own and a static
# no-op (bench_action.c; static as gpuwatch's is) as the action script, where gpuwatch's own are
# (tmpfs, or the build tree on 9p)
FLOOR_LIBDIR=$W/bin/bench-plugin FLOOR_SCRIPT=$W/bin/floor-action
if [ -n "$CRIU_FLOOR" ]; then
	[ -x "$WL_DIR/bench_action" ] || die "$WL_DIR/bench_action missing: cmake --build"
	if [ "${BINARIES:-tmpfs}" = tmpfs ]; then
		mkdir -p "$W/bin" && cp -r "$WL_DIR/bench-plugin" "$W/bin/" && cp "$WL_DIR/bench_action" "$FLOOR_SCRIPT"
	else
		FLOOR_LIBDIR=$WL_DIR/bench-plugin FLOOR_SCRIPT=$WL_DIR/bench_action
	fi || die "cannot set up the fixed-cost control (bench-plugin)"
	[ -e "$FLOOR_LIBDIR/bench_plugin.so" ] || die "$FLOOR_LIBDIR/bench_plugin.so missing: cmake --build"
fi
# the other plugin build (kind gpub), copied where gpuwatch's own plugin is
B_LIBDIR=
if [ -n "${CRIU_B_PLUGIN:-}" ]; then
	[ -e "$CRIU_B_PLUGIN/gpuwatch_criu.so" ] || die "CRIU_B_PLUGIN: no gpuwatch_criu.so in $CRIU_B_PLUGIN"
	B_LIBDIR=$CRIU_B_PLUGIN
	if [ "${BINARIES:-tmpfs}" = tmpfs ]; then
		B_LIBDIR=$W/bin/plugin-b
		mkdir -p "$B_LIBDIR" && cp "$CRIU_B_PLUGIN/gpuwatch_criu.so" "$B_LIBDIR/" || die "cannot copy CRIU_B_PLUGIN"
	fi
	raw meta b_plugin "$CRIU_B_PLUGIN"
fi
raw meta binaries "${BINARIES:-tmpfs}"
if [ -n "${ASLR:-}" ]; then
	case $ASLR in 0 | 1 | 2) ;; *) die "ASLR=$ASLR: 0, 1 or 2" ;; esac
	echo "$ASLR" >/proc/sys/kernel/randomize_va_space || die "cannot set kernel.randomize_va_space"
fi
raw meta aslr "$(cat /proc/sys/kernel/randomize_va_space)"
grep -q '^cgroup2 /sys/fs/cgroup ' /proc/mounts || mount -t cgroup2 none /sys/fs/cgroup || die "no cgroup v2"
[ -e /dev/dri/card0 ] || modprobe vgem || die "modprobe vgem failed"
for _ in $(seq 50); do [ -e /dev/dri/card0 ] && break; sleep 0.1; done
[ -c /dev/dri/card0 ] || die "vgem loaded but no /dev/dri/card0"
mkdir -p "$CG_IN" "$CG_OUT" || die "cannot create cgroups"
raw meta kernel "$(uname -r)"
raw meta vcpus "$(nproc)"
raw meta mem_kib "$(awk '/MemTotal/ { print $2 }' /proc/meminfo)"
raw meta pairs "$PAIRS"
raw meta criu_pairs "$CRIU_PAIRS"
raw meta fixed_pairs "$FIXED_PAIRS"
raw meta check "$("$GPUWATCH" check 2>&1 | grep -E '^(ioctl|mmap|cloexec|syscalls|path):' | tr '\n' ';')"
say "kernel $(uname -r), $(nproc) vCPUs; sections: $SECTIONS"
start=$(date +%s)
for s in $SECTIONS; do
	t=$(date +%s)
	t_run "section_$s" "section_$s"
	raw meta "seconds_$s" $(($(date +%s) - t))
done
raw meta seconds_total $(($(date +%s) - start))
t_finish
