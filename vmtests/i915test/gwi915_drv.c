// SPDX-License-Identifier: GPL-2.0
/*
 * gwi915 - the gpuwatch VM suite's stand-in for an Intel GPU.
 *
 * WHAT IT IS: a small DRM driver whose drm_driver.name is "i915", so that the gpuwatch
 * tracer, its CRIU plugin and libdrm_intel meet the i915 uapi inside a VM that has no Intel
 * GPU. It registers a platform device ("gwi915", bound to a platform driver named "i915")
 * with a primary and a render node, keeps every GEM object in shmem, and answers the part
 * of the i915 uapi a media or GL client uses to build state: GEM create/create_ext/userptr,
 * the four mmap paths, tiling, domains, pread/pwrite, contexts, VMs, the memory-region
 * query, getparam, perf open and execbuf (which runs nothing).
 *
 * WHAT IT IS NOT: Intel's driver, or anything that ever ran on Intel hardware. Its answers
 * were written from the uapi header and from reading the i915 source of Debian's 6.1 kernel;
 * nothing here was compared with a real GPU. No command is ever executed, no GTT exists,
 * no page is ever tiled or swizzled.
 *
 * WHERE IT MIRRORS i915 (what the tracer relies on): GEM handles from drm core (lowest free
 * from 1); context ids lowest free from 1 with 0 the default context made at open;
 * proto-contexts (VM and ENGINES settable until first use); VM ids lowest free from 1, and
 * GETPARAM(VM) allocating a new id for the context's VM; one fake mmap offset per (object,
 * mmap type), granted to the asking file; mmap through the device fd swaps the VMA's file to
 * one per-device anonymous inode "i915.gem" whose private_data is the struct drm_device
 * (the first member of the device struct, as drm is of drm_i915_private); legacy GEM_MMAP
 * maps the object's shmem file ("i915") from inside the ioctl; PERF_OPEN returns an
 * "[i915_perf]" anon fd; EXECBUFFER2_WR with FENCE_OUT returns a sync_file fd in rsvd2's
 * upper half.
 *
 * WHERE IT DIFFERS: see README.md (the fake device is a Skylake GT2 that also claims a
 * local-memory region; MMAP_OFFSET accepts FIXED; PROTECTED_CONTENT and SET_PAT are
 * accepted; userptr memory is never read; madvise always retains; no KMS, no GuC/HuC).
 * Fixture-only extra: debugfs dri/N/gwi915_state prints every client's contexts, VMs and
 * objects, as ground truth for tests.
 */
#include <linux/anon_inodes.h>
#include <linux/dma-mapping.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mod_devicetable.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/nospec.h>
#include <linux/platform_device.h>
#include <linux/seq_file.h>
#include <linux/version.h>
#include <drm/drm_debugfs.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_prime.h>

#include "gwi915.h"

int gw_user_extensions(u64 chain, const gw_ext_fn *tbl, unsigned int count, void *data)
{
	unsigned int depth = 512; /* i915's bound on a chain */

	while (chain) {
		struct i915_user_extension __user *uext = u64_to_user_ptr(chain);
		struct i915_user_extension ext;
		int i, err = -EINVAL;

		if (!depth--)
			return -E2BIG;
		if (copy_from_user(&ext, uext, sizeof(ext)))
			return -EFAULT;
		if (ext.flags)
			return -EINVAL;
		for (i = 0; i < ARRAY_SIZE(ext.rsvd); i++)
			if (ext.rsvd[i])
				return -EINVAL;
		if (ext.name < count && tbl[array_index_nospec(ext.name, count)])
			err = tbl[array_index_nospec(ext.name, count)](uext, data);
		if (err)
			return err;
		if (get_user(chain, &uext->next_extension))
			return -EFAULT;
	}
	return 0;
}

int gw_accept_ext(struct i915_user_extension __user *ext, void *data)
{
	return 0;
}

/* The values a Skylake GT2 with i915 6.1 defaults (execlists, no GuC/HuC) reports. */
static int gw_getparam_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	drm_i915_getparam_t *param = data;
	int value;

	switch (param->param) {
	case I915_PARAM_IRQ_ACTIVE:
	case I915_PARAM_ALLOW_BATCHBUFFER:
	case I915_PARAM_LAST_DISPATCH:
	case I915_PARAM_HAS_EXEC_CONSTANTS: return -ENODEV; /* old UMS/DRI1 params, rejected by i915 too */
	case I915_PARAM_CHIPSET_ID: value = GW_CHIPSET_ID; break;
	case I915_PARAM_REVISION: value = GW_REVISION; break;
	case I915_PARAM_NUM_FENCES_AVAIL: value = 32; break;
	case I915_PARAM_HAS_BSD:
	case I915_PARAM_HAS_BLT:
	case I915_PARAM_HAS_VEBOX:
	case I915_PARAM_HAS_LLC:
	case I915_PARAM_HAS_SEMAPHORES:
	case I915_PARAM_SLICE_MASK:
	case I915_PARAM_MMAP_GTT_COHERENT: value = 1; break;
	case I915_PARAM_HAS_OVERLAY:
	case I915_PARAM_HAS_BSD2:
	case I915_PARAM_HAS_WT:
	case I915_PARAM_HAS_SECURE_BATCHES:
	case I915_PARAM_HAS_RESOURCE_STREAMER:
	case I915_PARAM_HAS_POOLED_EU:
	case I915_PARAM_MIN_EU_IN_POOL: value = 0; break;
	case I915_PARAM_HAS_ALIASING_PPGTT:
		value = 2; /* INTEL_PPGTT_FULL */
		break;
	case I915_PARAM_CMD_PARSER_VERSION: value = 10; break;
	case I915_PARAM_SUBSLICE_TOTAL: value = 3; break;
	case I915_PARAM_EU_TOTAL: value = 24; break;
	case I915_PARAM_SUBSLICE_MASK: value = 0x7; break;
	case I915_PARAM_HAS_GPU_RESET:
		value = 2; /* engine reset */
		break;
	case I915_PARAM_HUC_STATUS: return -EOPNOTSUPP; /* HuC disabled: gen9's default enable_guc=0 */
	case I915_PARAM_MMAP_GTT_VERSION: value = 4; break;
	case I915_PARAM_HAS_SCHEDULER:
		value = I915_SCHEDULER_CAP_ENABLED | I915_SCHEDULER_CAP_PRIORITY | I915_SCHEDULER_CAP_PREEMPTION |
			I915_SCHEDULER_CAP_SEMAPHORES | I915_SCHEDULER_CAP_ENGINE_BUSY_STATS;
		break;
	case I915_PARAM_HAS_CONTEXT_ISOLATION:
		value = 0xf; /* render, copy, video, video-enhance */
		break;
	case I915_PARAM_CS_TIMESTAMP_FREQUENCY: value = 12000000; break;
	case I915_PARAM_PERF_REVISION: value = 5; break;
	case I915_PARAM_MMAP_VERSION:
	case I915_PARAM_HAS_GEM:
	case I915_PARAM_HAS_PAGEFLIPPING:
	case I915_PARAM_HAS_EXECBUF2:
	case I915_PARAM_HAS_RELAXED_FENCING:
	case I915_PARAM_HAS_COHERENT_RINGS:
	case I915_PARAM_HAS_RELAXED_DELTA:
	case I915_PARAM_HAS_GEN7_SOL_RESET:
	case I915_PARAM_HAS_WAIT_TIMEOUT:
	case I915_PARAM_HAS_PRIME_VMAP_FLUSH:
	case I915_PARAM_HAS_PINNED_BATCHES:
	case I915_PARAM_HAS_EXEC_NO_RELOC:
	case I915_PARAM_HAS_EXEC_HANDLE_LUT:
	case I915_PARAM_HAS_COHERENT_PHYS_GTT:
	case I915_PARAM_HAS_EXEC_SOFTPIN:
	case I915_PARAM_HAS_EXEC_ASYNC:
	case I915_PARAM_HAS_EXEC_FENCE:
	case I915_PARAM_HAS_EXEC_CAPTURE:
	case I915_PARAM_HAS_EXEC_BATCH_FIRST:
	case I915_PARAM_HAS_EXEC_FENCE_ARRAY:
	case I915_PARAM_HAS_EXEC_SUBMIT_FENCE:
	case I915_PARAM_HAS_EXEC_TIMELINE_FENCES:
	case I915_PARAM_HAS_USERPTR_PROBE:
		value = 1; /* always true in i915 6.1 */
		break;
	default: return -EINVAL;
	}
	if (put_user(value, param->value))
		return -EFAULT;
	return 0;
}

/* DRM_I915_QUERY_MEMORY_REGIONS: SYSTEM 0 (all RAM) and a pretend DEVICE 0 of 4 GiB. */
static int gw_query_regions(struct drm_i915_query_item *item)
{
	struct drm_i915_query_memory_regions __user *uq = u64_to_user_ptr(item->data_ptr);
	const u32 total = sizeof(struct drm_i915_query_memory_regions) +
			  GW_MAX_REGIONS * sizeof(struct drm_i915_memory_region_info);
	struct drm_i915_query_memory_regions q;
	int i;

	if (item->flags)
		return -EINVAL;
	if (item->length == 0)
		return total;
	if (item->length < total)
		return -EINVAL;
	if (copy_from_user(&q, uq, sizeof(q)))
		return -EFAULT;
	if (q.num_regions)
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(q.rsvd); i++)
		if (q.rsvd[i])
			return -EINVAL;
	for (i = 0; i < GW_MAX_REGIONS; i++) {
		struct drm_i915_memory_region_info info = {};

		info.region.memory_class = i ? I915_MEMORY_CLASS_DEVICE : I915_MEMORY_CLASS_SYSTEM;
		info.region.memory_instance = 0;
		info.probed_size = i ? SZ_4G : (u64)totalram_pages() << PAGE_SHIFT;
		info.unallocated_size = info.probed_size;
		info.probed_cpu_visible_size = info.probed_size;
		info.unallocated_cpu_visible_size = info.probed_size;
		if (copy_to_user(&uq->regions[i], &info, sizeof(info)))
			return -EFAULT;
	}
	q.num_regions = GW_MAX_REGIONS;
	if (copy_to_user(uq, &q, sizeof(q)))
		return -EFAULT;
	return total;
}

static int gw_query_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_i915_query *args = data;
	struct drm_i915_query_item __user *uitem = u64_to_user_ptr(args->items_ptr);
	u32 i;

	if (args->flags)
		return -EINVAL;
	for (i = 0; i < args->num_items; i++, uitem++) {
		struct drm_i915_query_item item;
		int ret = -EINVAL; /* topology, engine info, perf config: not answered */

		if (copy_from_user(&item, uitem, sizeof(item)))
			return -EFAULT;
		if (item.query_id == 0)
			return -EINVAL;
		if (item.query_id == DRM_I915_QUERY_MEMORY_REGIONS)
			ret = gw_query_regions(&item);
		/* like i915: the answer (length or -errno) goes to item.length */
		if (ret != item.length && put_user(ret, &uitem->length))
			return -EFAULT;
	}
	return 0;
}

static int gw_get_aperture_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_i915_gem_get_aperture *args = data;

	args->aper_size = SZ_4G; /* gen8+ GGTT */
	args->aper_available_size = args->aper_size;
	return 0;
}

static const struct drm_ioctl_desc gw_ioctls[] = {
	DRM_IOCTL_DEF_DRV(I915_GETPARAM, gw_getparam_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(I915_GEM_EXECBUFFER2_WR, gw_execbuffer2_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(I915_GEM_BUSY, gw_gem_busy_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(I915_GEM_SET_CACHING, gw_gem_set_caching_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(I915_GEM_GET_CACHING, gw_gem_get_caching_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(I915_GEM_CREATE, gw_gem_create_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(I915_GEM_CREATE_EXT, gw_gem_create_ext_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(I915_GEM_PREAD, gw_gem_pread_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(I915_GEM_PWRITE, gw_gem_pwrite_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(I915_GEM_MMAP, gw_gem_mmap_ioctl, DRM_RENDER_ALLOW),
	/* same number as GEM_MMAP_GTT, whose shorter struct arrives with flags 0 = GTT */
	DRM_IOCTL_DEF_DRV(I915_GEM_MMAP_OFFSET, gw_gem_mmap_offset_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(I915_GEM_SET_DOMAIN, gw_gem_set_domain_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(I915_GEM_SW_FINISH, gw_gem_sw_finish_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(I915_GEM_SET_TILING, gw_gem_set_tiling_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(I915_GEM_GET_TILING, gw_gem_get_tiling_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(I915_GEM_GET_APERTURE, gw_get_aperture_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(I915_GEM_MADVISE, gw_gem_madvise_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(I915_GEM_WAIT, gw_gem_wait_ioctl, DRM_RENDER_ALLOW),
	/* same number as GEM_CONTEXT_CREATE (its pad is read as flags, as in i915) */
	DRM_IOCTL_DEF_DRV(I915_GEM_CONTEXT_CREATE_EXT, gw_context_create_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(I915_GEM_CONTEXT_DESTROY, gw_context_destroy_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(I915_GEM_USERPTR, gw_gem_userptr_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(I915_GEM_CONTEXT_GETPARAM, gw_context_getparam_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(I915_GEM_CONTEXT_SETPARAM, gw_context_setparam_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(I915_PERF_OPEN, gw_perf_open_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(I915_QUERY, gw_query_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(I915_GEM_VM_CREATE, gw_vm_create_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(I915_GEM_VM_DESTROY, gw_vm_destroy_ioctl, DRM_RENDER_ALLOW),
};

/*
 * The "i915.gem" anonymous file every mapping made through the device fd ends up on, as in
 * i915's mmap_singleton(): one per device while any such mapping exists, its f_mapping the
 * device's address space (for unmap_mapping_range), its private_data the drm_device.
 */
static int gw_singleton_release(struct inode *inode, struct file *file)
{
	struct drm_device *dev = file->private_data;
	struct gw_device *gw = to_gw(dev);

	mutex_lock(&gw->singleton_lock);
	if (gw->mmap_singleton == file)
		gw->mmap_singleton = NULL;
	mutex_unlock(&gw->singleton_lock);
	drm_dev_put(dev);
	return 0;
}

static const struct file_operations gw_singleton_fops = {
	.owner = THIS_MODULE,
	.release = gw_singleton_release,
};

static struct file *gw_mmap_singleton(struct gw_device *gw)
{
	struct file *file;

	mutex_lock(&gw->singleton_lock);
	file = gw->mmap_singleton;
	if (file && !atomic_long_inc_not_zero(&file->f_count))
		file = NULL; /* its last reference is going: make a new one */
	if (!file) {
		file = anon_inode_getfile("i915.gem", &gw_singleton_fops, &gw->drm, O_RDWR);
		if (!IS_ERR(file)) {
			file->f_mapping = gw->drm.anon_inode->i_mapping;
			gw->mmap_singleton = file;
			drm_dev_get(&gw->drm);
		}
	}
	mutex_unlock(&gw->singleton_lock);
	return file;
}

static int gw_mmap(struct file *filp, struct vm_area_struct *vma)
{
	struct drm_file *priv = filp->private_data;
	struct drm_device *dev = priv->minor->dev;
	struct file *anon;
	struct gw_bo *bo;
	unsigned int type;
	int err;

	if (drm_dev_is_unplugged(dev))
		return -ENODEV;
	bo = gw_mmap_lookup(dev, priv, vma, &type, &err);
	if (!bo)
		return err;
	anon = gw_mmap_singleton(to_gw(dev));
	if (IS_ERR(anon)) {
		drm_gem_object_put(&bo->base.base);
		return PTR_ERR(anon);
	}
	/* the shmem helper pins the pages and installs its PFN fault handler */
	err = drm_gem_mmap_obj(&bo->base.base, bo->base.base.size, vma);
	if (!err) {
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
		vm_flags_set(vma, VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP | VM_IO);
#else
		vma->vm_flags |= VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP | VM_IO;
#endif
		vma->vm_page_prot = vm_get_page_prot(vma->vm_flags);
		if (type == I915_MMAP_OFFSET_GTT || type == I915_MMAP_OFFSET_WC)
			vma->vm_page_prot = pgprot_writecombine(vma->vm_page_prot);
		else if (type == I915_MMAP_OFFSET_UC)
			vma->vm_page_prot = pgprot_noncached(vma->vm_page_prot);
		vma_set_file(vma, anon); /* vm_pgoff keeps the fake offset */
	}
	fput(anon);
	drm_gem_object_put(&bo->base.base);
	return err;
}

/* /proc/PID/fdinfo of a DRM fd, in the format i915 6.1 uses (no time is ever spent). */
static void gw_show_fdinfo(struct seq_file *m, struct file *f)
{
	static const char *const engines[] = {"render", "copy", "video", "video-enhance"};
	struct drm_file *file = f->private_data;
	int i;

	seq_printf(m, "drm-driver:\t%s\n", file->minor->dev->driver->name);
	seq_puts(m, "drm-pdev:\t0000:00:02.0\n"); /* where an Intel iGPU sits */
	seq_printf(m, "drm-client-id:\t%u\n", to_gw_file(file)->client_id);
	for (i = 0; i < ARRAY_SIZE(engines); i++)
		seq_printf(m, "drm-engine-%s:\t0 ns\n", engines[i]);
}

static const struct file_operations gw_fops = {
	.owner = THIS_MODULE,
	.open = drm_open,
	.release = drm_release,
	.unlocked_ioctl = drm_ioctl,
	.compat_ioctl = drm_compat_ioctl,
	.poll = drm_poll,
	.read = drm_read,
	.llseek = noop_llseek,
	.mmap = gw_mmap,
	.show_fdinfo = gw_show_fdinfo,
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
	.fop_flags = FOP_UNSIGNED_OFFSET, /* drm_open() set FMODE_UNSIGNED_OFFSET before 6.12 */
#endif
};

/*
 * The pid of the task that opened a file: what drm_file.pid was until 6.7. Since then drm core
 * moves drm_file.pid to the last task that used the file (not a master), which after a
 * restore can be criu (its plugin's ioctls on the task's fd): the checkers pair files by
 * opener, as on 6.1.
 */
static pid_t gw_file_pid(struct drm_file *file)
{
	return pid_vnr(to_gw_file(file)->opener);
}

/* Fixture-only ground truth: every open file's contexts, VMs and objects. */
static int gw_state_show(struct seq_file *m, void *unused)
{
	struct drm_info_node *node = m->private;
	struct drm_device *dev = node->minor->dev;
	struct drm_file *file;

	mutex_lock(&dev->filelist_mutex);
	list_for_each_entry(file, &dev->filelist, lhead)
	{
		seq_printf(m, "client %u pid %d minor %d\n", to_gw_file(file)->client_id, gw_file_pid(file),
			   file->minor->index);
		gw_ctx_describe(m, file);
		gw_gem_describe(m, file);
	}
	mutex_unlock(&dev->filelist_mutex);
	return 0;
}

static const struct drm_info_list gw_debugfs_list[] = {
	{"gwi915_state", gw_state_show, 0},
};

static void gw_debugfs_init(struct drm_minor *minor)
{
	drm_debugfs_create_files(gw_debugfs_list, ARRAY_SIZE(gw_debugfs_list), minor->debugfs_root, minor);
}

static const struct drm_driver gw_driver = {
	.driver_features = DRIVER_GEM | DRIVER_RENDER | DRIVER_SYNCOBJ | DRIVER_SYNCOBJ_TIMELINE,
	.open = gw_file_open,
	.postclose = gw_file_postclose,
	.gem_create_object = gw_gem_create_object,
	.prime_handle_to_fd = drm_gem_prime_handle_to_fd,
	.prime_fd_to_handle = drm_gem_prime_fd_to_handle,
	.gem_prime_import_sg_table = drm_gem_shmem_prime_import_sg_table,
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 6, 0)
	.gem_prime_mmap = drm_gem_prime_mmap, /* 6.6+: what drm core does for every driver */
#endif
	.dumb_create = gw_dumb_create,
	.dumb_map_offset = gw_dumb_map_offset,
	.debugfs_init = gw_debugfs_init,
	.ioctls = gw_ioctls,
	.num_ioctls = ARRAY_SIZE(gw_ioctls),
	.fops = &gw_fops,
	.name = "i915",
	.desc = "gpuwatch test fixture (gwi915), not Intel's i915 driver",
	.date = "20201103", /* i915's DRIVER_DATE, version 1.6.0 as i915 */
	.major = 1,
	.minor = 6,
	.patchlevel = 0,
};

static int gw_probe(struct platform_device *pdev)
{
	struct gw_device *gw;
	int ret;

	ret = dma_coerce_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		return ret;
	gw = devm_drm_dev_alloc(&pdev->dev, &gw_driver, struct gw_device, drm);
	if (IS_ERR(gw))
		return PTR_ERR(gw);
	mutex_init(&gw->singleton_lock);
	platform_set_drvdata(pdev, gw);
	return drm_dev_register(&gw->drm, 0);
}

/* platform_driver.remove returns void since 6.11 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
static void gw_remove(struct platform_device *pdev)
#else
static int gw_remove(struct platform_device *pdev)
#endif
{
	struct gw_device *gw = platform_get_drvdata(pdev);

	drm_dev_unregister(&gw->drm);
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 11, 0)
	return 0;
#endif
}

static const struct platform_device_id gw_platform_ids[] = {{"gwi915"}, {}};

static struct platform_driver gw_platform_driver = {
	.probe = gw_probe,
	.remove = gw_remove,
	.id_table = gw_platform_ids,
	.driver = {.name = "i915"}, /* sysfs: .../gwi915/driver -> .../drivers/i915 */
};

static struct platform_device *gw_pdev;

static int __init gw_init(void)
{
	int ret;

	ret = platform_driver_register(&gw_platform_driver);
	if (ret)
		return ret;
	gw_pdev = platform_device_register_simple("gwi915", -1, NULL, 0);
	if (IS_ERR(gw_pdev)) {
		platform_driver_unregister(&gw_platform_driver);
		return PTR_ERR(gw_pdev);
	}
	if (!gw_pdev->dev.driver) { /* probe failed (logged by the driver core) */
		platform_device_unregister(gw_pdev);
		platform_driver_unregister(&gw_platform_driver);
		return -ENODEV;
	}
	return 0;
}

static void __exit gw_exit(void)
{
	platform_device_unregister(gw_pdev);
	platform_driver_unregister(&gw_platform_driver);
}

module_init(gw_init);
module_exit(gw_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("gpuwatch VM suite: i915-compatible test fixture (not Intel's driver)");
