# shellcheck shell=bash
# A featureless DRM device to move vgem off card0 (sourced by scenarios.sh, used by
# criu_minor_changed). Debian's kernel has no vkms, and the VM has no display device, so
# vgem is the only DRM driver that can load: this tiny out-of-tree module ("gwdummy", a
# platform device with a primary node and no features) is built against the running kernel's
# headers, once per boot, inside the VM (35 s to 2 min under TCG; a gwdummy.ko for this kernel
# in WL_DIR is used instead if there is one). Loaded before vgem, it takes
# card0 and vgem gets card1 (vgem keeps renderD128: gwdummy has no render node).

GWDUMMY_DIR=/run/gpuwatch-vmtests-gwdummy

# criu_dummydrm_build: 0 (GWDUMMY_KO set), 2 (skip: no headers or compiler), 1 (fail)
criu_dummydrm_build() {
	local kdir t0
	kdir=/lib/modules/$(uname -r)/build
	GWDUMMY_KO=$WL_DIR/gwdummy.ko           # built on the host beforehand (faster), if it fits
	[ -e "$GWDUMMY_KO" ] && [ "$(modinfo -F vermagic "$GWDUMMY_KO" 2>/dev/null | cut -d' ' -f1)" = "$(uname -r)" ] &&
		return 0
	GWDUMMY_KO=$GWDUMMY_DIR/gwdummy.ko
	[ -e "$GWDUMMY_KO" ] && return 0
	[ -e "$kdir/Makefile" ] ||
		{ REASON="no kernel headers for $(uname -r) at $kdir (apt-get install linux-headers-amd64): cannot build the dummy DRM module that moves vgem to card1"; return 2; }
	{ command -v make && command -v gcc; } >/dev/null ||
		{ REASON="make or gcc missing: cannot build the dummy DRM module that moves vgem to card1"; return 2; }
	mkdir -p "$GWDUMMY_DIR"
	echo 'obj-m := gwdummy.o' >"$GWDUMMY_DIR/Kbuild"
	cat >"$GWDUMMY_DIR/gwdummy.c" <<-'EOF'
		// SPDX-License-Identifier: GPL-2.0
		/* gwdummy: a DRM device without features (no GEM, no render node): it only takes a minor. */
		#include <linux/module.h>
		#include <linux/platform_device.h>
		#include <drm/drm_drv.h>
		#include <drm/drm_file.h>
		#include <drm/drm_ioctl.h>

		static const struct file_operations gwdummy_fops = {
			.owner = THIS_MODULE,
			.open = drm_open,
			.release = drm_release,
			.unlocked_ioctl = drm_ioctl,
			.compat_ioctl = drm_compat_ioctl,
			.poll = drm_poll,
			.read = drm_read,
			.llseek = noop_llseek,
		};

		static const struct drm_driver gwdummy_driver = {
			.fops = &gwdummy_fops,
			.name = "gwdummy",
			.desc = "gpuwatch VM suite: a DRM device that only takes a minor",
			.date = "20240101",
			.major = 1,
		};

		static struct platform_device *gwdummy_pdev;
		static struct drm_device *gwdummy_ddev;

		static int __init gwdummy_init(void)
		{
			int ret;

			gwdummy_pdev = platform_device_register_simple("gwdummy", -1, NULL, 0);
			if (IS_ERR(gwdummy_pdev))
				return PTR_ERR(gwdummy_pdev);
			gwdummy_ddev = drm_dev_alloc(&gwdummy_driver, &gwdummy_pdev->dev);
			if (IS_ERR(gwdummy_ddev)) {
				platform_device_unregister(gwdummy_pdev);
				return PTR_ERR(gwdummy_ddev);
			}
			ret = drm_dev_register(gwdummy_ddev, 0);
			if (ret) {
				drm_dev_put(gwdummy_ddev);
				platform_device_unregister(gwdummy_pdev);
			}
			return ret;
		}

		static void __exit gwdummy_exit(void)
		{
			drm_dev_unregister(gwdummy_ddev);
			drm_dev_put(gwdummy_ddev);
			platform_device_unregister(gwdummy_pdev);
		}

		module_init(gwdummy_init);
		module_exit(gwdummy_exit);
		MODULE_LICENSE("GPL");
		MODULE_DESCRIPTION("gpuwatch VM suite: a featureless DRM device");
	EOF
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
