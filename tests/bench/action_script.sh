#!/usr/bin/env bash
# What gpuwatch's action script adds, in real time, to a checkpoint with no DRM state: CRIU
# runs it at every action (a dump: pre-dump, post-dump; a restore: pre-restore, post-restore,
# pre-resume, post-resume). Runs each action RUNS times against a tree of three idle processes
# (no gpuwatch daemon follows them: the common case on a host) and prints the mean per run, the
# exec floor (/bin/true, the same way) and the sums per dump and per restore. CRIU itself does
# not run on the host kernel; the VM's criu_citizen scenario gives whole dumps and restores
# under TCG.
#
#   tests/bench/action_script.sh BUILD [OUT.json]      env: RUNS (50)
set -uo pipefail
BUILD=${1:?usage: action_script.sh BUILD [OUT.json]}
OUT=${2:-}
RUNS=${RUNS:-50}
ACTION=$BUILD/gpuwatch-criu-action
[ -x "$ACTION" ] || { echo "action_script.sh: $ACTION not built" >&2; exit 1; }
img=$(mktemp -d) || exit 1
# a small tree: a shell with two sleeping children
bash -c 'sleep 600 & sleep 600 & wait' &
root=$!
trap 'kill "$root" $(pgrep -P "$root") 2>/dev/null; rm -rf "$img"' EXIT
sleep 0.2

# us_per_run CMD...: mean real time of one run, in microseconds
us_per_run() {
	local s e
	s=$(date +%s%N)
	for ((i = 0; i < RUNS; i++)); do "$@" >/dev/null 2>&1; done
	e=$(date +%s%N)
	echo $(((e - s) / RUNS / 1000))
}

floor=$(us_per_run env CRTOOLS_SCRIPT_ACTION=none /bin/true)
declare -A us
for a in pre-dump post-dump pre-restore post-restore pre-resume post-resume; do
	us[$a]=$(us_per_run env CRTOOLS_SCRIPT_ACTION=$a CRTOOLS_IMAGE_DIR="$img" CRTOOLS_INIT_PID="$root" "$ACTION")
done
dump=$((us[pre-dump] + us[post-dump]))
restore=$((us[pre-restore] + us[post-restore] + us[pre-resume] + us[post-resume]))
echo "gpuwatch-criu-action on a non-GPU tree, no daemon ($RUNS runs each, $(find /proc -maxdepth 1 -name "[0-9]*" | wc -l) tasks on the host):"
printf '  %-14s %6d us\n' "exec floor" "$floor"
for a in pre-dump post-dump pre-restore post-restore pre-resume post-resume; do
	printf '  %-14s %6d us  (%+d over the floor)\n' "$a" "${us[$a]}" $((us[$a] - floor))
done
printf '  %-14s %6d us per dump, %d us per restore (%d and %d over two and four runs of /bin/true)\n' \
	"sum" "$dump" "$restore" $((dump - 2 * floor)) $((restore - 4 * floor))
if [ -n "$OUT" ]; then
	printf '{"runs": %d, "floor_us": %d, "pre_dump_us": %d, "post_dump_us": %d, "pre_restore_us": %d, "post_restore_us": %d, "pre_resume_us": %d, "post_resume_us": %d, "dump_us": %d, "restore_us": %d}\n' \
		"$RUNS" "$floor" "${us[pre-dump]}" "${us[post-dump]}" "${us[pre-restore]}" "${us[post-restore]}" \
		"${us[pre-resume]}" "${us[post-resume]}" "$dump" "$restore" >"$OUT"
fi
