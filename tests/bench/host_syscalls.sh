#!/usr/bin/env bash
# What gpuwatch costs everything else on the host: a syscall-heavy loop (build/bench/syscall_loop:
# getpid, and read of 4 KiB from /dev/zero) run by a process outside the followed cgroup,
# A = gpuwatch not running, B = `gpuwatch attach` running on an empty cgroup of its own; and,
# in the same pairs, realistic neighbours (tests/bench/neighbour.sh: a gcc compile and a
# GStreamer MJPEG -> MPEG-2 transcode), timed as wholes.
# A and B alternate (A B A B ...), PAIRS pairs; each figure is the median of the per-pair
# ratios B/A, with their min and max. Needs root (attach does). Prints a table; with a second
# argument writes the figures as JSON.
#
#   tests/bench/host_syscalls.sh [BUILD_DIR] [OUT.json]
#   env: PAIRS (7, at least 5), GETPID_ITERS (2000000), READ_ITERS (1000000),
#        GPUWATCH_HOOKS (auto: what attach picks on this kernel),
#        NEIGHBOURS ("compile transcode"; empty: none), NB_FILES (100: every workload source),
#        NB_FRAMES (60)
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
BUILD=${1:-build}
OUT=${2:-}
PAIRS=${PAIRS:-7}
[ "$PAIRS" -ge 5 ] || PAIRS=5
GETPID_ITERS=${GETPID_ITERS:-2000000}
READ_ITERS=${READ_ITERS:-1000000}
NEIGHBOURS=${NEIGHBOURS-compile transcode}
export NB_FILES=${NB_FILES:-100} NB_FRAMES=${NB_FRAMES:-60}
. tests/bench/neighbour.sh
GW=$BUILD/gpuwatch
LOOP=$BUILD/bench/syscall_loop

die() { echo "host_syscalls: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "SKIP host_syscalls: needs root (gpuwatch attach)"; exit 77; }
[ -x "$GW" ] && [ -x "$LOOP" ] || die "build first: $GW and $LOOP are missing"

cgroot=
for d in /sys/fs/cgroup/unified /sys/fs/cgroup; do
	if [ "$(stat -f -c %T "$d" 2>/dev/null)" = cgroup2fs ]; then cgroot=$d; break; fi
done
[ -n "$cgroot" ] || die "no cgroup v2 mount at /sys/fs/cgroup/unified or /sys/fs/cgroup"
cg=$cgroot/gw-bench-$$
tmp=$(mktemp -d /tmp/gw-bench.XXXXXX)
daemon=
cleanup() {
	[ -n "$daemon" ] && kill -TERM "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
	rmdir "$cg" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
mkdir "$cg" || die "cannot create $cg"
if [ -n "$NEIGHBOURS" ]; then
	nb_prepare "$tmp/nb" || die "the neighbours cannot run (NEIGHBOURS= skips them)"
fi

start_daemon() {
	rm -f "$tmp/m.json"
	"$GW" attach --cgroup "$cg" --manifest "$tmp/m.json" 2>"$tmp/attach.log" &
	daemon=$!
	for _ in $(seq 300); do
		[ -s "$tmp/m.json" ] && break
		kill -0 "$daemon" 2>/dev/null || die "gpuwatch attach failed: $(tail -n 1 "$tmp/attach.log")"
		sleep 0.1
	done
	[ -s "$tmp/m.json" ] || die "gpuwatch attach wrote no manifest in 30 s"
	sleep 0.5 # let the attach-time work settle
}
stop_daemon() {
	kill -TERM "$daemon"
	wait "$daemon" 2>/dev/null
	daemon=
}
measure() { # prints "getpid_ns read_ns"
	echo "$("$LOOP" getpid "$GETPID_ITERS") $("$LOOP" read "$READ_ITERS")"
}
declare -A NB_MS # job -> "A_ms B_ms" of the current pair
neighbours() { # neighbours A|B: each job once
	local j ms
	for j in $NEIGHBOURS; do
		ms=$(nb_run "$j" "$tmp/nb") || die "neighbour $j failed"
		NB_MS[$j]="${NB_MS[$j]:-} $ms"
	done
}

rows=()
nbrows=() # "pair job A_ms B_ms"
hooks=
for i in $(seq "$PAIRS"); do
	NB_MS=()
	read -r ga ra <<<"$(measure)"
	neighbours A
	start_daemon
	[ -n "$hooks" ] || hooks=$(grep -o '"hooks":{[^}]*}' "$tmp/m.json" | sed 's/^"hooks"://')
	read -r gb rb <<<"$(measure)"
	neighbours B
	stop_daemon
	rows+=("$i $ga $gb $ra $rb")
	for j in $NEIGHBOURS; do nbrows+=("$i $j ${NB_MS[$j]}"); done
done

# median, min and max of a column of numbers on stdin
stats() { sort -g | awk '{v[NR]=$1} END {m = NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2; printf "%.4f %.4f %.4f", m, v[1], v[NR]}'; }
col() { printf '%s\n' "${rows[@]}" | awk -v c="$1" '{print $c}'; }
ratio() { printf '%s\n' "${rows[@]}" | awk -v a="$1" -v b="$2" '{printf "%.4f\n", $b / $a}'; }

kernel=$(uname -r)
echo "host_syscalls: a loop outside the followed cgroup; A = no gpuwatch, B = gpuwatch attach on an empty cgroup"
echo "kernel $kernel, $(nproc) CPUs, hooks ${hooks:-?}; getpid x $GETPID_ITERS, read(/dev/zero, 4 KiB) x $READ_ITERS"
printf '%-5s %12s %12s %8s %12s %12s %8s\n' pair "getpid A ns" "getpid B ns" "B/A" "read A ns" "read B ns" "B/A"
for r in "${rows[@]}"; do
	set -- $r
	awk -v p="$1" -v ga="$2" -v gb="$3" -v ra="$4" -v rb="$5" \
		'BEGIN {printf "%-5s %12s %12s %8.3f %12s %12s %8.3f\n", p, ga, gb, gb / ga, ra, rb, rb / ra}'
done
read -r g_med g_min g_max <<<"$(ratio 2 3 | stats)"
read -r r_med r_min r_max <<<"$(ratio 4 5 | stats)"
read -r ga_med _ _ <<<"$(col 2 | stats)"
read -r gb_med _ _ <<<"$(col 3 | stats)"
read -r ra_med _ _ <<<"$(col 4 | stats)"
read -r rb_med _ _ <<<"$(col 5 | stats)"
printf 'getpid: B/A median %.3f (min %.3f, max %.3f); %.1f ns -> %.1f ns per call\n' "$g_med" "$g_min" "$g_max" "$ga_med" "$gb_med"
printf 'read:   B/A median %.3f (min %.3f, max %.3f); %.1f ns -> %.1f ns per call\n' "$r_med" "$r_min" "$r_max" "$ra_med" "$rb_med"
nbjson=
if [ -n "$NEIGHBOURS" ]; then
	echo "neighbours (wall ms of the whole job; compile: $(nb_sources | wc -l) files, gcc -O2; transcode: $NB_FRAMES frames)"
	printf '%-5s %-10s %10s %10s %8s\n' pair job "A ms" "B ms" "B/A"
	for r in "${nbrows[@]}"; do
		set -- $r
		awk -v p="$1" -v j="$2" -v a="$3" -v b="$4" 'BEGIN {printf "%-5s %-10s %10s %10s %8.3f\n", p, j, a, b, b / a}'
	done
	for j in $NEIGHBOURS; do
		sel=$(printf '%s\n' "${nbrows[@]}" | awk -v j="$j" '$2 == j')
		read -r n_med n_min n_max <<<"$(echo "$sel" | awk '{printf "%.4f\n", $4 / $3}' | stats)"
		read -r na_med _ _ <<<"$(echo "$sel" | awk '{print $3}' | stats)"
		read -r nb_med _ _ <<<"$(echo "$sel" | awk '{print $4}' | stats)"
		printf '%-9s B/A median %.3f (min %.3f, max %.3f); %.0f ms -> %.0f ms\n' "$j:" "$n_med" "$n_min" "$n_max" "$na_med" "$nb_med"
		nbjson+="$(printf '%s"%s": {"a_ms_median": %s, "b_ms_median": %s, "ratio": {"median": %s, "min": %s, "max": %s}}' \
			"${nbjson:+, }" "$j" "$na_med" "$nb_med" "$n_med" "$n_min" "$n_max")"
	done
fi

if [ -n "$OUT" ]; then
	{
		printf '{"bench": "host_syscalls", "date": "%s", "kernel": "%s", "nproc": %s, "hooks": %s,\n' \
			"$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$kernel" "$(nproc)" "${hooks:-null}"
		printf ' "pairs": %s, "getpid_iterations": %s, "read_iterations": %s,\n' "$PAIRS" "$GETPID_ITERS" "$READ_ITERS"
		printf ' "getpid": {"a_ns_median": %s, "b_ns_median": %s, "ratio": {"median": %s, "min": %s, "max": %s}},\n' \
			"$ga_med" "$gb_med" "$g_med" "$g_min" "$g_max"
		printf ' "read": {"a_ns_median": %s, "b_ns_median": %s, "ratio": {"median": %s, "min": %s, "max": %s}},\n' \
			"$ra_med" "$rb_med" "$r_med" "$r_min" "$r_max"
		printf ' "neighbours": {%s}, "compile_files": %s, "transcode_frames": %s,\n' "$nbjson" "$(nb_sources | wc -l)" "$NB_FRAMES"
		printf ' "runs": ['
		sep=
		for r in "${rows[@]}"; do
			set -- $r
			printf '%s\n   {"pair": %s, "getpid_a_ns": %s, "getpid_b_ns": %s, "read_a_ns": %s, "read_b_ns": %s}' "$sep" "$@"
			sep=,
		done
		printf ']}\n'
	} >"$OUT" || die "cannot write $OUT"
fi
