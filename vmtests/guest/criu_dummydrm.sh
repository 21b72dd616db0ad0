# shellcheck shell=bash
# A featureless DRM device to move vgem off card0 (sourced by scenarios.sh, used by
# criu_minor_changed). Debian's kernel has no vkms, and the VM has no display device, so
# vgem is the only DRM driver that can load: this tiny out-of-tree module ("gwdummy",
# vmtests/kmod/gwdummy/, a platform device with a primary node and no features) is built on the
# host for the lane's kernel (CMake for 6.1, lanes/build-modules.sh for another lane) and found
# in KO_DIR. Only when KO_DIR has none for the running kernel is it built here, against the
# running kernel's headers, once per boot (35 s to 2 min under TCG). Loaded before vgem, it
# takes card0 and vgem gets card1 (vgem keeps renderD128: gwdummy has no render node).

GWDUMMY_DIR=/run/gpuwatch-vmtests-gwdummy

# criu_dummydrm_build: 0 (GWDUMMY_KO set), 2 (skip: no module, and no headers or compiler to
# build one), 1 (fail)
criu_dummydrm_build() {
	local kdir t0 kodir=${KO_DIR:-$WL_DIR}
	kdir=/lib/modules/$(uname -r)/build
	GWDUMMY_KO=$kodir/gwdummy.ko           # built on the host beforehand, if it fits
	[ -e "$GWDUMMY_KO" ] && [ "$(modinfo -F vermagic "$GWDUMMY_KO" 2>/dev/null | cut -d' ' -f1)" = "$(uname -r)" ] &&
		return 0
	GWDUMMY_KO=$GWDUMMY_DIR/gwdummy.ko
	[ -e "$GWDUMMY_KO" ] && return 0
	[ -e "$kdir/Makefile" ] ||
		{ REASON="no gwdummy.ko for $(uname -r) in $kodir ($(cat "$kodir/gwdummy.skip" 2>/dev/null || echo 'see vmtests/kmod/gwdummy/build.sh')), and no kernel headers at $kdir to build it here: cannot move vgem to card1"; return 2; }
	{ command -v make && command -v gcc; } >/dev/null ||
		{ REASON="no gwdummy.ko for $(uname -r) in $kodir, and make or gcc missing to build it here: cannot move vgem to card1"; return 2; }
	mkdir -p "$GWDUMMY_DIR"
	cp "$VMTESTS/kmod/gwdummy/Kbuild" "$VMTESTS/kmod/gwdummy/gwdummy.c" "$GWDUMMY_DIR"/ ||
		{ fail "cannot copy vmtests/kmod/gwdummy to $GWDUMMY_DIR"; return 1; }
	t0=$SECONDS
	if ! make -s -C "$kdir" M="$GWDUMMY_DIR" modules >"$GWDUMMY_DIR/build.log" 2>&1 || [ ! -e "$GWDUMMY_KO" ]; then
		cp "$GWDUMMY_DIR/build.log" "$WORK/gwdummy-build.log"
		indent "$GWDUMMY_DIR/build.log"
		fail "building the dummy DRM module failed$(last_line "$GWDUMMY_DIR/build.log")"
		return 1
	fi
	echo "gwdummy.ko built in $((SECONDS - t0)) s" >>"$WORK/timings.txt"
}

# drm_node_driver NODE: the platform device behind /dev/dri/NODE (vgem, gwdummy), or ""
drm_node_driver() { basename "$(readlink "/sys/class/drm/$1/device" 2>/dev/null)" 2>/dev/null; }

# drm_wait_nodes NODE...: until every /dev/dri/NODE exists (10 s at most)
drm_wait_nodes() {
	local n ok
	for _ in $(seq 100); do
		ok=1
		for n in "$@"; do [ -c "/dev/dri/$n" ] || ok=0; done
		[ $ok = 1 ] && return 0
		sleep 0.1
	done
	return 1
}

# criu_swap_minor: vgem (card0) → gwdummy takes card0, vgem comes back as card1
criu_swap_minor() {
	# the i915 scenarios leave gwi915 loaded on card1, where vgem must come back: unload it
	# (an i915 scenario after this one loads it again)
	if [ -d /sys/module/gwi915 ]; then
		rmmod gwi915 2>"$WORK/rmmod.err" || { fail "rmmod gwi915 failed$(last_line "$WORK/rmmod.err")"; return 1; }
	fi
	rmmod vgem 2>"$WORK/rmmod.err" || { fail "rmmod vgem failed$(last_line "$WORK/rmmod.err")"; return 1; }
	if ! insmod "$GWDUMMY_KO" 2>"$WORK/insmod.err"; then
		modprobe vgem
		fail "insmod gwdummy.ko failed$(last_line "$WORK/insmod.err")"
		return 1
	fi
	modprobe vgem || { fail "modprobe vgem failed after gwdummy"; return 1; }
	drm_wait_nodes card0 card1 renderD128 || { fail "no card0, card1 and renderD128 after loading gwdummy then vgem"; return 1; }
	ls -l /dev/dri >"$WORK/nodes-at-restore.txt"
	if [ "$(drm_node_driver card0)" != gwdummy ] || [ "$(drm_node_driver card1)" != vgem ] ||
		[ "$(drm_node_driver renderD128)" != vgem ]; then
		fail "expected card0=gwdummy card1=vgem renderD128=vgem, got card0=$(drm_node_driver card0) card1=$(drm_node_driver card1) renderD128=$(drm_node_driver renderD128)"
		return 1
	fi
	echo "    card0 is now gwdummy, vgem is card1 (and still renderD128)"
}

# criu_unswap_minor: back to vgem alone on card0 (for the scenarios after this one)
criu_unswap_minor() {
	if [ -d /sys/module/gwdummy ]; then
		rmmod vgem 2>/dev/null
		rmmod gwdummy 2>"$WORK/rmmod.err" ||
			{ REASON="${REASON:+$REASON; }cannot unload gwdummy$(last_line "$WORK/rmmod.err")"; return 1; }
	fi
	[ -d /sys/module/vgem ] || modprobe vgem
	{ drm_wait_nodes card0 renderD128 && [ "$(drm_node_driver card0)" = vgem ]; } ||
		{ REASON="${REASON:+$REASON; }vgem is not back on card0"; return 1; }
}
