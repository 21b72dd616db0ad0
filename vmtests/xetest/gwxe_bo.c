// SPDX-License-Identifier: GPL-2.0
/*
 * gwxe buffer objects: shmem-backed whatever placement was asked for, with xe's creation
 * checks (xe_gem_create_ioctl, Linux 6.8), VM-private objects that hold their VM and refuse
 * PRIME export, one fake offset per object made at creation (TTM's), and xe's dumb buffers.
 */
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_prime.h>

#include "gwxe.h"

static void gwxe_gem_free(struct drm_gem_object *obj)
{
	struct gwxe_bo *bo = to_gwxe_bo(obj);

	gwxe_vm_put(bo->vm);
	drm_gem_shmem_free(&bo->base);
}

/* xe_gem_prime_export(): a VM-private object cannot leave its VM. */
static struct dma_buf *gwxe_gem_export(struct drm_gem_object *obj, int flags)
{
	if (to_gwxe_bo(obj)->vm)
		return ERR_PTR(-EPERM);
	return drm_gem_prime_export(obj, flags);
}

static const struct drm_gem_object_funcs gwxe_gem_funcs = {
	.free = gwxe_gem_free,
	.export = gwxe_gem_export,
	.print_info = drm_gem_shmem_object_print_info,
	.pin = drm_gem_shmem_object_pin,
	.unpin = drm_gem_shmem_object_unpin,
	.get_sg_table = drm_gem_shmem_object_get_sg_table,
	.vmap = drm_gem_shmem_object_vmap,
	.vunmap = drm_gem_shmem_object_vunmap,
	.mmap = drm_gem_shmem_object_mmap,
	.vm_ops = &drm_gem_shmem_vm_ops,
};

/* drm_driver.gem_create_object: every object (created or imported) is a gwxe_bo. */
struct drm_gem_object *gwxe_gem_create_object(struct drm_device *dev, size_t size)
{
	struct gwxe_bo *bo = kzalloc(sizeof(*bo), GFP_KERNEL);

	if (!bo)
		return ERR_PTR(-ENOMEM);
	bo->base.base.funcs = &gwxe_gem_funcs;
	bo->placement = BIT(0);
	bo->cpu_caching = GW_XE_GEM_CPU_CACHING_WB;
	return &bo->base.base;
}

static struct gwxe_bo *gwxe_bo_create(struct drm_device *dev, u64 size)
{
	struct drm_gem_shmem_object *shmem;
	int err;

	shmem = drm_gem_shmem_create(dev, size);
	if (IS_ERR(shmem))
		return ERR_CAST(shmem);
	shmem->pages_mark_dirty_on_put = true;
	/* TTM gives every object its fake offset at creation */
	err = drm_gem_create_mmap_offset(&shmem->base);
	if (err) {
		drm_gem_object_put(&shmem->base);
		return ERR_PTR(err);
	}
	return container_of(shmem, struct gwxe_bo, base);
}

static int gwxe_bo_publish(struct drm_file *file, struct gwxe_bo *bo, u32 *handle)
{
	int ret = drm_gem_handle_create(file, &bo->base.base, handle);

	drm_gem_object_put(&bo->base.base); /* the handle holds it now */
	return ret;
}

int gwxe_gem_create_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct gw_xe_gem_create *args = data;
	struct gwxe_vm *vm = NULL;
	struct gwxe_bo *bo;
	bool vram = args->placement & BIT(1);

	if (args->extensions) /* 6.8 knows no GEM_CREATE extension (PXP came in 6.15) */
		return -EINVAL;
	if (args->pad[0] || args->pad[1] || args->pad[2] || args->reserved[0] || args->reserved[1])
		return -EINVAL;
	if ((args->placement & ~GWXE_MEM_REGION_MASK) || !args->placement)
		return -EINVAL;
	if (args->flags & ~(GW_XE_GEM_CREATE_FLAG_DEFER_BACKING | GW_XE_GEM_CREATE_FLAG_SCANOUT |
			    GW_XE_GEM_CREATE_FLAG_NEEDS_VISIBLE_VRAM))
		return -EINVAL;
	if (args->handle || !args->size || args->size > SIZE_MAX || (args->size & ~PAGE_MASK))
		return -EINVAL;
	if ((args->flags & GW_XE_GEM_CREATE_FLAG_NEEDS_VISIBLE_VRAM) && !vram)
		return -EINVAL;
	if (!args->cpu_caching || args->cpu_caching > GW_XE_GEM_CPU_CACHING_WC)
		return -EINVAL;
	if (vram && args->cpu_caching != GW_XE_GEM_CPU_CACHING_WC)
		return -EINVAL;
	if ((args->flags & GW_XE_GEM_CREATE_FLAG_SCANOUT) && args->cpu_caching == GW_XE_GEM_CPU_CACHING_WB)
		return -EINVAL;
	if (args->vm_id) {
		vm = gwxe_vm_lookup(file, args->vm_id);
		if (!vm)
			return -ENOENT;
	}
	bo = gwxe_bo_create(dev, args->size);
	if (IS_ERR(bo)) {
		gwxe_vm_put(vm);
		return PTR_ERR(bo);
	}
	bo->placement = args->placement;
	bo->flags = args->flags;
	bo->cpu_caching = args->cpu_caching;
	bo->vm_id = args->vm_id;
	bo->vm = vm; /* the object's reference */
	return gwxe_bo_publish(file, bo, &args->handle);
}

int gwxe_gem_mmap_offset_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct gw_xe_gem_mmap_offset *args = data;
	struct drm_gem_object *obj;

	if (args->extensions || args->reserved[0] || args->reserved[1])
		return -EINVAL;
	if (args->flags) /* 6.8: MBZ (PCI_BARRIER came in 6.15) */
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	/* made at creation; an imported object gets one now */
	if (drm_gem_create_mmap_offset(obj)) {
		drm_gem_object_put(obj);
		return -ENOMEM;
	}
	args->offset = drm_vma_node_offset_addr(&obj->vma_node);
	drm_gem_object_put(obj);
	return 0;
}

/* xe_bo_dumb_create(): 64-byte aligned pitch, system + VRAM, write-combined, scanout. */
int gwxe_dumb_create(struct drm_file *file, struct drm_device *dev, struct drm_mode_create_dumb *args)
{
	struct gwxe_bo *bo;
	u32 cpp = DIV_ROUND_UP(args->bpp, 8);

	if (!args->width || !args->height || !cpp)
		return -EINVAL;
	args->pitch = ALIGN(args->width * cpp, 64);
	args->size = round_up((u64)args->pitch * args->height, PAGE_SIZE);
	bo = gwxe_bo_create(dev, args->size);
	if (IS_ERR(bo))
		return PTR_ERR(bo);
	bo->placement = GWXE_MEM_REGION_MASK;
	bo->flags = GW_XE_GEM_CREATE_FLAG_SCANOUT;
	bo->cpu_caching = GW_XE_GEM_CPU_CACHING_WC;
	return gwxe_bo_publish(file, bo, &args->handle);
}

static int gwxe_bo_line(int id, void *ptr, void *data)
{
	struct gwxe_bo *bo = to_gwxe_bo(ptr);
	struct seq_file *m = data;

	seq_printf(m, "  handle %d size %zu placement 0x%x flags 0x%x vm %u caching %u%s\n", id, bo->base.base.size,
		   bo->placement, bo->flags, bo->vm_id, bo->cpu_caching,
		   bo->base.base.import_attach ? " imported" : "");
	return 0;
}

void gwxe_bo_describe(struct seq_file *m, struct drm_file *file)
{
	spin_lock(&file->table_lock);
	idr_for_each(&file->object_idr, gwxe_bo_line, m);
	spin_unlock(&file->table_lock);
}
