// SPDX-License-Identifier: GPL-2.0
/*
 * gwdummy: a DRM device without features (no GEM, no render node): it only takes a minor.
 *
 * The VM suite's criu_minor_changed scenario (vmtests/guest/criu_dummydrm.sh) loads it before
 * vgem, so that it takes card0 and vgem comes back as card1 (vgem keeps renderD128). Debian's
 * kernels have no vkms and the VM has no display device, so vgem would otherwise be the only
 * DRM driver there. A platform device "gwdummy" with no platform driver is its parent
 * (/sys/class/drm/card0/device -> .../gwdummy).
 */
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/version.h>
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
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
	.fop_flags = FOP_UNSIGNED_OFFSET, /* drm_open() set FMODE_UNSIGNED_OFFSET before 6.12 */
#endif
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
