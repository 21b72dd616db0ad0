# shellcheck shell=bash
# A restore into a container whose device policy denies its DRM device (sourced by
# scenarios.sh). The plugin opens DRM nodes, and creates the missing ones, as root but from
# inside the restored task, which CRIU has put in its cgroup by then: the cgroup's device
# program (gw_devdeny: bpf/devdeny.bpf.c, the kind container runtimes attach) must refuse
# both, and the restore must fail in one gpuwatch line, leave no process and change no image
# file. Once the policy is lifted the same images restore, verify and work.

# devdeny_on CG: a device program refusing DRM's major (226) attached to CG, held by
# gw_devdeny until devdeny_off
devdeny_on() {
	local deadline=$((SECONDS + 30))
	rm -f "$WORK/devdeny.out"
	exec {DEVDENY_FD}> >(exec "$WL_DIR/gw_devdeny" "$1" 226 >"$WORK/devdeny.out" 2>&1)
	DEVDENY_PID=$!
	CLEANUP_PIDS+=("$DEVDENY_PID")
	until grep -q '^attached$' "$WORK/devdeny.out" 2>/dev/null; do
		kill -0 "$DEVDENY_PID" 2>/dev/null && [ $SECONDS -lt $deadline ] && { sleep 0.05; continue; }
		fail "no denying device policy on $1: $(tail -n1 "$WORK/devdeny.out" 2>/dev/null)"
		return 1
	done
}

# devdeny_off: closes gw_devdeny's stdin; it detaches the program and exits
devdeny_off() {
	local deadline=$((SECONDS + 30))
	exec {DEVDENY_FD}>&-
	while kill -0 "$DEVDENY_PID" 2>/dev/null; do
		[ $SECONDS -lt $deadline ] || { fail "gw_devdeny did not exit once its stdin closed"; return 1; }
		sleep 0.05
	done
}

# devdeny_refused DIR IMG CG [CRIU ARGS...]: with the policy on CG, criu restore of IMG fails
# cleanly: a gpuwatch line says the node was refused (EPERM: the device program's answer), no
# process of the workload DIR is left, and no file of IMG changed. The policy is lifted after.
devdeny_refused() {
	local dir=$1 img=$2 cg=$3 p line
	shift 3
	img_sums "$img" || return 1
	devdeny_on "$cg" || return 1
	criu_run "restore (policy denies 226)" "$WORK/restore-denied.log" restore -D "$img" --shell-job -d "$@"
	devdeny_off || return 1
	line=$(grep -m1 -E 'gpuwatch: .*(Operation not permitted|EPERM)' "$WORK/restore-denied.log" | sed 's/^([0-9. ]*) *[0-9]*: //')
	echo "    restore with the policy denying 226: exit $CRIU_RC; ${line:-no gpuwatch line}"
	[ "$CRIU_RC" != 0 ] || { fail "the restore succeeded though the cgroup's device policy denies DRM"; return 1; }
	[ -n "$line" ] || { criu_show "$WORK/restore-denied.log"; fail "the refused restore has no gpuwatch line saying the device was refused$(criu_why "$WORK/restore-denied.log")"; return 1; }
	# shellcheck disable=SC2046 # one pid per word
	pids_gone $(crwl_pids "$dir") || { REASON="after the refused restore: $REASON"; return 1; }
	img_unchanged "$img" "the refused restore" || return 1
	for p in "$img"/gpuwatch-*.tmp*; do
		[ ! -e "$p" ] || { fail "the refused restore left $p"; return 1; }
	done
}

# criu_devdeny: wl_criu in a followed cgroup, dumped; restored into the same cgroup with a
# policy denying DRM (the plugin's open refused), then without it
sc_criu_devdeny() {
	local cg dir=$WORK/wl img=$WORK/img
	fault_begin "$dir" || return $?
	crwl_dump "$dir" "$img" "${CRIU_GW_ARGS[@]}" || return 1
	devdeny_refused "$dir" "$img" "$cg" "${CRIU_GW_ARGS[@]}" || return 1
	crwl_restore "$dir" "$img" "$WORK/restore.log" "${CRIU_GW_ARGS[@]}" || { REASON="once the policy was lifted: $REASON"; return 1; }
	crwl_in_cgroup "$dir" "$cg" || return 1
	crwl_run_rest "$dir" 1 --cgroup "$cg" || return 1
	criu_keep_images "$img"
	final_check --cgroup "$cg"
}

# devdeny_post_restore IMG CG NODE: the action script's post-restore creates the nodes the
# restored tasks saw and lack (IMG's gpuwatch-devices.json) as root, but from the restored
# init's cgroup. Its init here: a stand-in in CG with a private, empty /dev (the workload keeps
# its own nodes: a node it holds open cannot be removed and made again unnoticed). With the
# policy on CG post-restore must create no node and say the policy refused; without, NODE.
devdeny_post_restore() {
	local img=$1 cg=$2 node=$3 action='' i out=$WORK/post-restore pid deadline=$((SECONDS + 30))
	for ((i = 0; i < ${#CRIU_GW_ARGS[@]}; i++)); do
		[ "${CRIU_GW_ARGS[i]}" != --action-script ] || action=${CRIU_GW_ARGS[i + 1]}
	done
	[ -x "$action" ] || { fail "no action script in gpuwatch's CRIU options (${CRIU_GW_ARGS[*]})"; return 1; }
	"$VMTESTS/guest/incgroup" "$cg" unshare --mount --propagation private \
		sh -c 'mount -t tmpfs -o mode=755 gwtdev /dev && touch /dev/.ready && exec sleep 600' \
		</dev/null >"$out.standin" 2>&1 3>&- 4>&- 5>&- &
	pid=$!
	CLEANUP_PIDS+=("$pid")
	until [ -e "/proc/$pid/root/dev/.ready" ]; do
		kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ] && { sleep 0.05; continue; }
		fail "no stand-in process with a private /dev: $(tail -n1 "$out.standin")"
		return 1
	done
	# the action as CRIU runs it at post-restore, for the stand-in
	post_restore() { CRTOOLS_SCRIPT_ACTION=post-restore CRTOOLS_IMAGE_DIR=$img CRTOOLS_INIT_PID=$pid "$action"; }
	devdeny_on "$cg" || return 1
	post_restore >"$out.denied" 2>&1
	devdeny_off || return 1
	echo "    post-restore with the policy on: $(grep -m1 "$node" "$out.denied" | cut -c1-200)"
	[ ! -e "/proc/$pid/root$node" ] || { fail "post-restore created $node though the cgroup's device policy denies DRM"; return 1; }
	grep -q "$node.*Operation not permitted" "$out.denied" ||
		{ indent "$out.denied"; fail "post-restore did not say the policy refused $node"; return 1; }
	post_restore >"$out.allowed" 2>&1
	[ -c "/proc/$pid/root$node" ] ||
		{ indent "$out.allowed"; fail "post-restore did not create $node once the policy was lifted"; return 1; }
	kill -KILL "$pid"
}
