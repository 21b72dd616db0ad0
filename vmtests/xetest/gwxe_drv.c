// SPDX-License-Identifier: GPL-2.0
/*
 * gwxe - the gpuwatch VM suite's stand-in for an Intel GPU driven by xe.
 *
 * WHAT IT IS: a small DRM driver whose drm_driver.name is "xe", so that the gpuwatch tracer
 * and its CRIU plugin meet the xe uapi (Linux 6.8+) inside a VM running Debian's 6.1 kernel,
 * which has no xe driver, and has no Intel GPU. It registers a platform device ("gwxe", bound
 * to a platform driver named "xe") with a primary and a render node, keeps every buffer in
 * shmem, and answers the ioctls a client uses to build xe state: DEVICE_QUERY (engines, memory
 * regions, config, GT list), GEM_CREATE, GEM_MMAP_OFFSET, VM_CREATE/DESTROY, VM_BIND
 * (bookkeeping only), EXEC_QUEUE_CREATE/DESTROY/GET_PROPERTY.
 *
 * WHAT IT IS NOT: Intel's driver. Its checks were written from the uapi and from reading
 * drivers/gpu/drm/xe (xe_bo.c, xe_vm.c, xe_exec_queue.c, xe_query.c) of Linux 6.8; nothing
 * here was compared with a real GPU. No page table exists, no job ever runs (EXEC and
 * WAIT_USER_FENCE are not implemented).
 *
 * WHERE IT MIRRORS xe (what gpuwatch relies on): handles from drm core (lowest free from 1);
 * VM and exec queue ids from per-file xarrays with XA_FLAGS_ALLOC1 (lowest free from 1); one
 * fake offset per buffer made at creation, the same for GEM_MMAP_OFFSET and MODE_MAP_DUMB;
 * mmap through the DRM fd keeps the device file (no anon-inode swap, unlike i915);
 * VM-private buffers hold their VM and refuse PRIME export; exec queues keep their VM
 * after VM_DESTROY. Fixture-only extra: debugfs dri/N/gwxe_state, every client's VMs with
 * their bindings, exec queues and handles, as ground truth for tests. See README.md.
 */
#include <linux/dma-mapping.h>
#include <linux/mm.h>
#include <linux/mod_devicetable.h>
#include <linux/module.h>
#include <linux/nospec.h>
#include <linux/platform_device.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>
#include <linux/version.h>
#include <drm/drm_debugfs.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_prime.h>

#include "gwxe.h"

/* The engines of the fake GT 0: one render, one copy, two video decode, one video
 * enhance, one compute (a DG2-like set). */
static const struct gw_xe_engine_class_instance gwxe_engines[] = {
	{GW_XE_ENGINE_CLASS_RENDER, 0, 0},        {GW_XE_ENGINE_CLASS_COPY, 0, 0},
	{GW_XE_ENGINE_CLASS_VIDEO_DECODE, 0, 0},  {GW_XE_ENGINE_CLASS_VIDEO_DECODE, 1, 0},
	{GW_XE_ENGINE_CLASS_VIDEO_ENHANCE, 0, 0}, {GW_XE_ENGINE_CLASS_COMPUTE, 0, 0},
};

bool gwxe_engine_exists(const struct gw_xe_engine_class_instance *e)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(gwxe_engines); i++)
		if (gwxe_engines[i].engine_class == e->engine_class &&
		    gwxe_engines[i].engine_instance == e->engine_instance && gwxe_engines[i].gt_id == e->gt_id)
			return true;
	return false;
}

/* The two-call protocol of xe_query.c: size 0 asks for the size; any other size must match. */
static int gwxe_query_reply(struct gw_xe_device_query *q, const void *reply, u32 size)
{
	if (q->size == 0) {
		q->size = size;
		return 0;
	}
	if (q->size != size)
		return -EINVAL;
	return copy_to_user(u64_to_user_ptr(q->data), reply, size) ? -EFAULT : 0;
}

static int gwxe_query_engines(struct gw_xe_device_query *q)
{
	u32 size = struct_size((struct gwxe_query_engines *)NULL, engines, ARRAY_SIZE(gwxe_engines));
	struct gwxe_query_engines *r = kzalloc(size, GFP_KERNEL);
	int i, err;

	if (!r)
		return -ENOMEM;
	r->num_engines = ARRAY_SIZE(gwxe_engines);
	for (i = 0; i < ARRAY_SIZE(gwxe_engines); i++)
		r->engines[i].instance = gwxe_engines[i];
	err = gwxe_query_reply(q, r, size);
	kfree(r);
	return err;
}

static int gwxe_query_mem_regions(struct gw_xe_device_query *q)
{
	u32 size = struct_size((struct gwxe_query_mem_regions *)NULL, mem_regions, 2);
	struct gwxe_query_mem_regions *r = kzalloc(size, GFP_KERNEL);
	int err;

	if (!r)
		return -ENOMEM;
	r->num_mem_regions = 2;
	r->mem_regions[0].mem_class = GW_XE_MEM_REGION_CLASS_SYSMEM;
	r->mem_regions[0].instance = 0;
	r->mem_regions[0].min_page_size = PAGE_SIZE;
	r->mem_regions[0].total_size = (u64)totalram_pages() << PAGE_SHIFT;
	r->mem_regions[1].mem_class = GW_XE_MEM_REGION_CLASS_VRAM;
	r->mem_regions[1].instance = 1; /* xe: VRAM of tile t is instance 1 + t */
	r->mem_regions[1].min_page_size = PAGE_SIZE;
	r->mem_regions[1].total_size = GWXE_VRAM_SIZE;
	r->mem_regions[1].cpu_visible_size = GWXE_VRAM_SIZE;
	err = gwxe_query_reply(q, r, size);
	kfree(r);
	return err;
}

static int gwxe_query_config(struct gw_xe_device_query *q)
{
	u32 size = struct_size((struct gwxe_query_config *)NULL, info, GWXE_CONFIG_NUM);
	struct gwxe_query_config *r = kzalloc(size, GFP_KERNEL);
	int err;

	if (!r)
		return -ENOMEM;
	r->num_params = GWXE_CONFIG_NUM;
	r->info[GWXE_CONFIG_REV_AND_DEVICE_ID] = (GWXE_REVISION << 16) | GWXE_DEVICE_ID;
	r->info[GWXE_CONFIG_FLAGS] = GWXE_CONFIG_FLAG_HAS_VRAM;
	r->info[GWXE_CONFIG_MIN_ALIGNMENT] = PAGE_SIZE;
	r->info[GWXE_CONFIG_VA_BITS] = GWXE_VA_BITS;
	r->info[GWXE_CONFIG_MAX_EXEC_QUEUE_PRIORITY] =
		capable(CAP_SYS_NICE) ? GWXE_PRIORITY_HIGH : GWXE_PRIORITY_NORMAL;
	err = gwxe_query_reply(q, r, size);
	kfree(r);
	return err;
}

static int gwxe_query_gt_list(struct gw_xe_device_query *q)
{
	u32 size = struct_size((struct gwxe_query_gt_list *)NULL, gt_list, 1);
	struct gwxe_query_gt_list *r = kzalloc(size, GFP_KERNEL);
	int err;

	if (!r)
		return -ENOMEM;
	r->num_gt = 1;
	r->gt_list[0].type = 0; /* DRM_XE_QUERY_GT_TYPE_MAIN */
	r->gt_list[0].reference_clock = 19200000;
	r->gt_list[0].near_mem_regions = BIT(1);
	r->gt_list[0].far_mem_regions = BIT(0);
	err = gwxe_query_reply(q, r, size);
	kfree(r);
	return err;
}

static int gwxe_device_query_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct gw_xe_device_query *q = data;

	if (q->extensions || q->reserved[0] || q->reserved[1])
		return -EINVAL;
	switch (q->query) {
	case GW_XE_DEVICE_QUERY_ENGINES: return gwxe_query_engines(q);
	case GW_XE_DEVICE_QUERY_MEM_REGIONS: return gwxe_query_mem_regions(q);
	case GW_XE_DEVICE_QUERY_CONFIG: return gwxe_query_config(q);
	case GW_XE_DEVICE_QUERY_GT_LIST: return gwxe_query_gt_list(q);
	default: /* HWCONFIG, GT_TOPOLOGY, ENGINE_CYCLES: not answered by the fixture */ return -EINVAL;
	}
}

/* xe's ioctl numbers (DRM_COMMAND_BASE + 0x00..) with the uapi's command values. */
#define GWXE_IOCTL(nr, fn)                                                                                             \
	[GW_XE_NR_##nr] = {.cmd = GW_XE_IOCTL_##nr, .func = fn, .flags = DRM_RENDER_ALLOW, .name = "XE_" #nr}
static const struct drm_ioctl_desc gwxe_ioctls[] = {
	GWXE_IOCTL(DEVICE_QUERY, gwxe_device_query_ioctl),
	GWXE_IOCTL(GEM_CREATE, gwxe_gem_create_ioctl),
	GWXE_IOCTL(GEM_MMAP_OFFSET, gwxe_gem_mmap_offset_ioctl),
	GWXE_IOCTL(VM_CREATE, gwxe_vm_create_ioctl),
	GWXE_IOCTL(VM_DESTROY, gwxe_vm_destroy_ioctl),
	GWXE_IOCTL(VM_BIND, gwxe_vm_bind_ioctl),
	GWXE_IOCTL(EXEC_QUEUE_CREATE, gwxe_exec_queue_create_ioctl),
	GWXE_IOCTL(EXEC_QUEUE_DESTROY, gwxe_exec_queue_destroy_ioctl),
	GWXE_IOCTL(EXEC_QUEUE_GET_PROPERTY, gwxe_exec_queue_get_property_ioctl),
};

/* /proc/PID/fdinfo: the common drm-* keys xe prints (no memory or engine statistics). */
static void gwxe_show_fdinfo(struct seq_file *m, struct file *f)
{
	struct drm_file *file = f->private_data;

	seq_printf(m, "drm-driver:\t%s\n", file->minor->dev->driver->name);
	seq_puts(m, "drm-pdev:\t0000:03:00.0\n"); /* made up: where a discrete card sits */
	seq_printf(m, "drm-client-id:\t%u\n", to_gwxe_file(file)->client_id);
}

static const struct file_operations gwxe_fops = {
	.owner = THIS_MODULE,
	.open = drm_open,
	.release = drm_release,
	.unlocked_ioctl = drm_ioctl,
	.compat_ioctl = drm_compat_ioctl,
	.poll = drm_poll,
	.read = drm_read,
	.llseek = noop_llseek,
	.mmap = drm_gem_mmap, /* the VMA keeps the device file, as with xe */
	.show_fdinfo = gwxe_show_fdinfo,
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
	.fop_flags = FOP_UNSIGNED_OFFSET, /* drm_open() set FMODE_UNSIGNED_OFFSET before 6.12 */
#endif
};

/*
 * The pid of the task that opened a file: what drm_file.pid was until 6.7 (since then drm core
 * moves it to the last task that used the file, criu's plugin after a restore).
 */
static pid_t gwxe_file_pid(struct drm_file *file)
{
	return pid_vnr(to_gwxe_file(file)->opener);
}

/* Fixture-only ground truth: every open file's VMs, bindings, exec queues and handles. */
static int gwxe_state_show(struct seq_file *m, void *unused)
{
	struct drm_info_node *node = m->private;
	struct drm_device *dev = node->minor->dev;
	struct drm_file *file;

	mutex_lock(&dev->filelist_mutex);
	list_for_each_entry(file, &dev->filelist, lhead)
	{
		seq_printf(m, "client %u pid %d minor %d\n", to_gwxe_file(file)->client_id, gwxe_file_pid(file),
			   file->minor->index);
		gwxe_vm_describe(m, file);
		gwxe_bo_describe(m, file);
	}
	mutex_unlock(&dev->filelist_mutex);
	return 0;
}

static const struct drm_info_list gwxe_debugfs_list[] = {
	{"gwxe_state", gwxe_state_show, 0},
};

static void gwxe_debugfs_init(struct drm_minor *minor)
{
	drm_debugfs_create_files(gwxe_debugfs_list, ARRAY_SIZE(gwxe_debugfs_list), minor->debugfs_root, minor);
}

static const struct drm_driver gwxe_driver = {
	.driver_features = DRIVER_GEM | DRIVER_RENDER | DRIVER_SYNCOBJ | DRIVER_SYNCOBJ_TIMELINE,
	.open = gwxe_file_open,
	.postclose = gwxe_file_postclose,
	.gem_create_object = gwxe_gem_create_object,
	.prime_handle_to_fd = drm_gem_prime_handle_to_fd,
	.prime_fd_to_handle = drm_gem_prime_fd_to_handle,
	.gem_prime_import_sg_table = drm_gem_shmem_prime_import_sg_table,
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 6, 0)
	.gem_prime_mmap = drm_gem_prime_mmap, /* 6.6+: what drm core does for every driver */
#endif
	.dumb_create = gwxe_dumb_create,
	.debugfs_init = gwxe_debugfs_init,
	.ioctls = gwxe_ioctls,
	.num_ioctls = ARRAY_SIZE(gwxe_ioctls),
	.fops = &gwxe_fops,
	.name = "xe",
	.desc = "gpuwatch test fixture (gwxe), not Intel's xe driver",
	.date = "20201111", /* xe's DRIVER_DATE, version 1.1.0 as xe */
	.major = 1,
	.minor = 1,
	.patchlevel = 0,
};

static int gwxe_probe(struct platform_device *pdev)
{
	struct gwxe_device *gx;
	int ret;

	ret = dma_coerce_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		return ret;
	gx = devm_drm_dev_alloc(&pdev->dev, &gwxe_driver, struct gwxe_device, drm);
	if (IS_ERR(gx))
		return PTR_ERR(gx);
	platform_set_drvdata(pdev, gx);
	return drm_dev_register(&gx->drm, 0);
}

/* platform_driver.remove returns void since 6.11 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
static void gwxe_remove(struct platform_device *pdev)
#else
static int gwxe_remove(struct platform_device *pdev)
#endif
{
	struct gwxe_device *gx = platform_get_drvdata(pdev);

	drm_dev_unregister(&gx->drm);
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 11, 0)
	return 0;
#endif
}

static const struct platform_device_id gwxe_platform_ids[] = {{"gwxe"}, {}};

static struct platform_driver gwxe_platform_driver = {
	.probe = gwxe_probe,
	.remove = gwxe_remove,
	.id_table = gwxe_platform_ids,
	.driver = {.name = "xe"}, /* sysfs: .../gwxe/driver -> .../drivers/xe */
};

static struct platform_device *gwxe_pdev;

static int __init gwxe_init(void)
{
	int ret = platform_driver_register(&gwxe_platform_driver);

	if (ret)
		return ret;
	gwxe_pdev = platform_device_register_simple("gwxe", -1, NULL, 0);
	if (IS_ERR(gwxe_pdev)) {
		platform_driver_unregister(&gwxe_platform_driver);
		return PTR_ERR(gwxe_pdev);
	}
	if (!gwxe_pdev->dev.driver) {
		platform_device_unregister(gwxe_pdev);
		platform_driver_unregister(&gwxe_platform_driver);
		return -ENODEV;
	}
	return 0;
}

static void __exit gwxe_exit(void)
{
	platform_device_unregister(gwxe_pdev);
	platform_driver_unregister(&gwxe_platform_driver);
}

module_init(gwxe_init);
module_exit(gwxe_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("gpuwatch VM suite: xe-compatible test fixture (not Intel's driver)");
