// SPDX-License-Identifier: GPL-2.0
/*
 * gwi915 GEM objects: shmem-backed (drm_gem_shmem helpers) whatever placement was asked
 * for, with i915's fake-offset scheme (one offset per object and mmap type), its legacy
 * in-ioctl mmap, pread/pwrite, tiling and caching bookkeeping, and userptr objects that are
 * plain shmem objects of the requested size (the user's memory is never read).
 */
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/pagemap.h>
#include <linux/seq_file.h>
#include <linux/shmem_fs.h>
#include <linux/uaccess.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>

#include "gwi915.h"

static void gw_gem_free(struct drm_gem_object *obj)
{
	struct gw_bo *bo = to_gw_bo(obj);
	int i;

	for (i = 0; i < GW_MMAP_TYPES; i++) /* no-op for offsets never handed out */
		drm_vma_offset_remove(obj->dev->vma_offset_manager, &bo->mmo[i].node);
	drm_gem_shmem_free(&bo->base);
}

/* A handle is closed: this file may no longer mmap the object (i915_gem_close_object). */
static void gw_gem_close(struct drm_gem_object *obj, struct drm_file *file)
{
	struct gw_bo *bo = to_gw_bo(obj);
	int i;

	for (i = 0; i < GW_MMAP_TYPES; i++)
		drm_vma_node_revoke(&bo->mmo[i].node, file);
}

static const struct drm_gem_object_funcs gw_gem_funcs = {
	.free = gw_gem_free,
	.close = gw_gem_close,
	.print_info = drm_gem_shmem_object_print_info,
	.pin = drm_gem_shmem_object_pin,
	.unpin = drm_gem_shmem_object_unpin,
	.get_sg_table = drm_gem_shmem_object_get_sg_table,
	.vmap = drm_gem_shmem_object_vmap,
	.vunmap = drm_gem_shmem_object_vunmap,
	.mmap = drm_gem_shmem_object_mmap,
	.vm_ops = &drm_gem_shmem_vm_ops,
};

/* drm_driver.gem_create_object: every object (created or imported) is a gw_bo. */
struct drm_gem_object *gw_gem_create_object(struct drm_device *dev, size_t size)
{
	struct gw_bo *bo = kzalloc(sizeof(*bo), GFP_KERNEL);
	int i;

	if (!bo)
		return ERR_PTR(-ENOMEM);
	bo->base.base.funcs = &gw_gem_funcs;
	for (i = 0; i < GW_MMAP_TYPES; i++) {
		drm_vma_node_reset(&bo->mmo[i].node);
		bo->mmo[i].node.driver_private = &bo->mmo[i]; /* marks our nodes */
		bo->mmo[i].bo = bo;
		bo->mmo[i].type = i;
	}
	bo->caching = I915_CACHING_CACHED; /* LLC platform */
	bo->madv = I915_MADV_WILLNEED;
	bo->pat_index = ~0u;
	bo->regions[0] = I915_MEMORY_CLASS_SYSTEM;
	bo->n_regions = 1;
	return &bo->base.base;
}

static struct gw_bo *gw_bo_create(struct drm_device *dev, u64 size)
{
	struct drm_gem_shmem_object *shmem;
	struct file *filp;

	size = round_up(size, PAGE_SIZE);
	if (!size)
		return ERR_PTR(-EINVAL);
	if (size >> PAGE_SHIFT > INT_MAX) /* i915_gem_object_size_2big() */
		return ERR_PTR(-E2BIG);
	shmem = drm_gem_shmem_create(dev, size);
	if (IS_ERR(shmem))
		return ERR_CAST(shmem);
	shmem->pages_mark_dirty_on_put = true; /* writes through PFN mappings must stick */
	/* i915 names its shmem files "i915": a legacy GEM_MMAP shows "/i915 (deleted)" */
	filp = shmem_file_setup("i915", size, VM_NORESERVE);
	if (IS_ERR(filp)) {
		drm_gem_object_put(&shmem->base);
		return ERR_CAST(filp);
	}
	mapping_set_gfp_mask(filp->f_mapping, mapping_gfp_mask(shmem->base.filp->f_mapping));
	fput(shmem->base.filp);
	shmem->base.filp = filp;
	return container_of(shmem, struct gw_bo, base);
}

/* i915_gem_publish(): the handle takes over the creation reference. */
static int gw_bo_publish(struct drm_file *file, struct gw_bo *bo, u64 *size, u32 *handle)
{
	u64 sz = bo->base.base.size;
	int ret = drm_gem_handle_create(file, &bo->base.base, handle);

	drm_gem_object_put(&bo->base.base);
	if (!ret)
		*size = sz;
	return ret;
}

int gw_gem_create_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_i915_gem_create *args = data;
	struct gw_bo *bo = gw_bo_create(dev, args->size);

	if (IS_ERR(bo))
		return PTR_ERR(bo);
	return gw_bo_publish(file, bo, &args->size, &args->handle);
}

struct gw_create_ext {
	u8 regions[GW_MAX_REGIONS];
	unsigned int n_regions;
	u32 mask; /* BIT(memory class) */
	bool protected_content;
	u32 pat_index;
};

static int gw_ext_regions(struct i915_user_extension __user *base, void *data)
{
	struct drm_i915_gem_create_ext_memory_regions ext;
	struct drm_i915_gem_memory_class_instance __user *uregions;
	struct gw_create_ext *ce = data;
	u8 regions[GW_MAX_REGIONS];
	u32 mask = 0, i;

	if (copy_from_user(&ext, base, sizeof(ext)))
		return -EFAULT;
	if (ext.pad || !ext.num_regions || ext.num_regions > GW_MAX_REGIONS)
		return -EINVAL;
	uregions = u64_to_user_ptr(ext.regions);
	for (i = 0; i < ext.num_regions; i++) {
		struct drm_i915_gem_memory_class_instance r;

		if (copy_from_user(&r, &uregions[i], sizeof(r)))
			return -EFAULT;
		if ((r.memory_class != I915_MEMORY_CLASS_SYSTEM && r.memory_class != I915_MEMORY_CLASS_DEVICE) ||
		    r.memory_instance != 0)
			return -EINVAL; /* the device has no such region */
		if (mask & BIT(r.memory_class))
			return -EINVAL; /* duplicate placement */
		mask |= BIT(r.memory_class);
		regions[i] = r.memory_class;
	}
	if (ce->n_regions)
		return -EINVAL; /* placements given twice */
	memcpy(ce->regions, regions, ext.num_regions);
	ce->n_regions = ext.num_regions;
	ce->mask = mask;
	return 0;
}

static int gw_ext_protected(struct i915_user_extension __user *base, void *data)
{
	struct drm_i915_gem_create_ext_protected_content ext;
	struct gw_create_ext *ce = data;

	if (copy_from_user(&ext, base, sizeof(ext)))
		return -EFAULT;
	if (ext.flags)
		return -EINVAL;
	ce->protected_content = true; /* i915 6.1 without PXP would say -ENODEV */
	return 0;
}

static int gw_ext_set_pat(struct i915_user_extension __user *base, void *data)
{
	struct gw_gem_create_ext_set_pat ext;
	struct gw_create_ext *ce = data;

	if (copy_from_user(&ext, base, sizeof(ext)))
		return -EFAULT;
	if (ext.pat_index >= 32)
		return -EINVAL;
	ce->pat_index = ext.pat_index;
	return 0;
}

static const gw_ext_fn gw_create_exts[] = {
	[I915_GEM_CREATE_EXT_MEMORY_REGIONS] = gw_ext_regions,
	[I915_GEM_CREATE_EXT_PROTECTED_CONTENT] = gw_ext_protected,
	[GW_GEM_CREATE_EXT_SET_PAT] = gw_ext_set_pat,
};

int gw_gem_create_ext_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_i915_gem_create_ext *args = data;
	struct gw_create_ext ce = {.pat_index = ~0u};
	struct gw_bo *bo;
	int ret;

	if (args->flags & ~I915_GEM_CREATE_EXT_FLAG_NEEDS_CPU_ACCESS)
		return -EINVAL;
	ret = gw_user_extensions(args->extensions, gw_create_exts, ARRAY_SIZE(gw_create_exts), &ce);
	if (ret)
		return ret;
	if (!ce.n_regions) {
		ce.regions[0] = I915_MEMORY_CLASS_SYSTEM;
		ce.n_regions = 1;
		ce.mask = BIT(I915_MEMORY_CLASS_SYSTEM);
	}
	/* CPU access to local memory needs a system-memory fallback in the list */
	if ((args->flags & I915_GEM_CREATE_EXT_FLAG_NEEDS_CPU_ACCESS) &&
	    (ce.n_regions == 1 || !(ce.mask & BIT(I915_MEMORY_CLASS_SYSTEM))))
		return -EINVAL;
	bo = gw_bo_create(dev, args->size);
	if (IS_ERR(bo))
		return PTR_ERR(bo);
	memcpy(bo->regions, ce.regions, ce.n_regions);
	bo->n_regions = ce.n_regions;
	bo->protected_content = ce.protected_content;
	bo->pat_index = ce.pat_index;
	return gw_bo_publish(file, bo, &args->size, &args->handle);
}

int gw_dumb_create(struct drm_file *file, struct drm_device *dev, struct drm_mode_create_dumb *args)
{
	u32 cpp = DIV_ROUND_UP(args->bpp, 8);
	struct gw_bo *bo;

	if (cpp != 1 && cpp != 2 && cpp != 4)
		return -EINVAL;
	args->pitch = ALIGN(args->width * cpp, 64);
	if (args->pitch > min(8192 * cpp, 32768u)) /* gen9 linear plane stride limit */
		args->pitch = ALIGN(args->pitch, 4096);
	if (args->pitch < args->width)
		return -EINVAL;
	bo = gw_bo_create(dev, mul_u32_u32(args->pitch, args->height));
	if (IS_ERR(bo))
		return PTR_ERR(bo);
	return gw_bo_publish(file, bo, &args->size, &args->handle);
}

static int gw_probe_range(unsigned long addr, unsigned long len)
{
	struct mm_struct *mm = current->mm;
	const unsigned long end = addr + len;
	int ret = 0;

	mmap_read_lock(mm);
	while (addr < end) {
		struct vm_area_struct *vma = find_vma(mm, addr);

		if (!vma || vma->vm_start > addr || (vma->vm_flags & (VM_PFNMAP | VM_MIXEDMAP))) {
			ret = -EFAULT;
			break;
		}
		addr = vma->vm_end;
	}
	mmap_read_unlock(mm);
	return ret;
}

int gw_gem_userptr_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_i915_gem_userptr *args = data;
	struct gw_bo *bo;
	u64 ignored;
	int ret;

	if (args->flags & ~(I915_USERPTR_READ_ONLY | I915_USERPTR_UNSYNCHRONIZED | I915_USERPTR_PROBE))
		return -EINVAL;
	if (args->user_size >> PAGE_SHIFT > INT_MAX)
		return -E2BIG;
	if (!args->user_size || offset_in_page(args->user_ptr | args->user_size))
		return -EINVAL;
	if (!access_ok(u64_to_user_ptr(args->user_ptr), args->user_size))
		return -EFAULT;
	if (args->flags & I915_USERPTR_UNSYNCHRONIZED)
		return -ENODEV;
	if (args->flags & I915_USERPTR_PROBE) {
		ret = gw_probe_range(args->user_ptr, args->user_size);
		if (ret)
			return ret;
	}
	bo = gw_bo_create(dev, args->user_size);
	if (IS_ERR(bo))
		return PTR_ERR(bo);
	bo->userptr = true;
	bo->userptr_addr = args->user_ptr;
	bo->userptr_size = args->user_size;
	bo->userptr_flags = args->flags;
	bo->readonly = args->flags & I915_USERPTR_READ_ONLY;
	return gw_bo_publish(file, bo, &ignored, &args->handle);
}

/* Hand out the (object, type) fake offset, creating it on first use, and grant it to file. */
static int gw_assign_offset(struct drm_file *file, u32 handle, unsigned int type, u64 *offset)
{
	struct drm_gem_object *obj = drm_gem_object_lookup(file, handle);
	struct gw_mmo *mmo;
	int err;

	if (!obj)
		return -ENOENT;
	mmo = &to_gw_bo(obj)->mmo[type];
	if (to_gw_bo(obj)->userptr || obj->import_attach)
		err = -ENODEV; /* i915: userptr is never mmapped; imports have no pages of ours */
	else                   /* idempotent under the manager's lock */
		err = drm_vma_offset_add(obj->dev->vma_offset_manager, &mmo->node, obj->size >> PAGE_SHIFT);
	if (!err)
		err = drm_vma_node_allow_once(&mmo->node, file);
	if (!err)
		*offset = drm_vma_node_offset_addr(&mmo->node);
	drm_gem_object_put(obj);
	return err;
}

/* GEM_MMAP_OFFSET, and GEM_MMAP_GTT (same number, shorter struct: flags 0 = GTT). */
int gw_gem_mmap_offset_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_i915_gem_mmap_offset *args = data;
	int err;

	/* no extension is defined: any one is -EINVAL; pad is not checked (i915 ABI) */
	err = gw_user_extensions(args->extensions, NULL, 0, NULL);
	if (err)
		return err;
	if (args->flags >= GW_MMAP_TYPES)
		return -EINVAL;
	return gw_assign_offset(file, args->handle, args->flags, &args->offset);
}

int gw_dumb_map_offset(struct drm_file *file, struct drm_device *dev, u32 handle, u64 *offset)
{
	return gw_assign_offset(file, handle, I915_MMAP_OFFSET_WC, offset); /* as with PAT */
}

/* fops->mmap: the object (referenced) behind an exact (offset, length) this file may map. */
struct gw_bo *gw_mmap_lookup(struct drm_device *dev, struct drm_file *file, struct vm_area_struct *vma,
			     unsigned int *type, int *err)
{
	struct drm_vma_offset_manager *mgr = dev->vma_offset_manager;
	struct drm_vma_offset_node *node;
	struct gw_bo *bo = NULL;

	drm_vma_offset_lock_lookup(mgr);
	node = drm_vma_offset_exact_lookup_locked(mgr, vma->vm_pgoff, vma_pages(vma));
	if (node && node->driver_private && drm_vma_node_is_allowed(node, file)) {
		struct gw_mmo *mmo = node->driver_private;

		/* skip an object being freed: its node goes once we unlock */
		if (kref_get_unless_zero(&mmo->bo->base.base.refcount)) {
			bo = mmo->bo;
			*type = mmo->type;
		}
	}
	drm_vma_offset_unlock_lookup(mgr);
	if (!bo)
		*err = node ? -EACCES : -EINVAL;
	return bo;
}

/* Legacy GEM_MMAP: map the object's shmem file from inside the ioctl, like i915. */
int gw_gem_mmap_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_i915_gem_mmap *args = data;
	struct drm_gem_object *obj;
	unsigned long addr;

	if (args->flags & ~I915_MMAP_WC)
		return -EINVAL; /* I915_MMAP_WC itself is accepted and ignored */
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	if (!obj->filp || to_gw_bo(obj)->userptr)
		addr = -ENXIO; /* i915: no backing file to map */
	else if (args->offset >= obj->size || args->size > obj->size - args->offset)
		addr = -EINVAL;
	else
		addr = vm_mmap(obj->filp, 0, args->size, PROT_READ | PROT_WRITE, MAP_SHARED, args->offset);
	drm_gem_object_put(obj);
	if (IS_ERR_VALUE(addr))
		return (int)addr;
	args->addr_ptr = addr;
	return 0;
}

/* pread/pwrite: copy between user memory and the object's shmem pages. */
static int gw_bo_rw(struct gw_bo *bo, u64 offset, u64 size, char __user *user, bool write)
{
	struct address_space *mapping = bo->base.base.filp->f_mapping;

	while (size) {
		unsigned int in = offset_in_page(offset);
		unsigned int len = min_t(u64, size, PAGE_SIZE - in);
		struct page *page = shmem_read_mapping_page(mapping, offset >> PAGE_SHIFT);
		unsigned long left;
		void *vaddr;

		if (IS_ERR(page))
			return PTR_ERR(page);
		vaddr = kmap_local_page(page);
		if (write)
			left = copy_from_user(vaddr + in, user, len);
		else
			left = copy_to_user(user, vaddr + in, len);
		kunmap_local(vaddr);
		if (write)
			set_page_dirty_lock(page);
		mark_page_accessed(page);
		put_page(page);
		if (left)
			return -EFAULT;
		user += len;
		offset += len;
		size -= len;
	}
	return 0;
}

static int gw_rw_ioctl(struct drm_file *file, u32 handle, u64 offset, u64 size, u64 ptr, bool write)
{
	struct drm_gem_object *obj;
	int ret;

	if (size == 0)
		return 0;
	if (!access_ok(u64_to_user_ptr(ptr), size))
		return -EFAULT;
	obj = drm_gem_object_lookup(file, handle);
	if (!obj)
		return -ENOENT;
	if (offset >= obj->size || size > obj->size - offset)
		ret = -EINVAL;
	else if (write && to_gw_bo(obj)->readonly)
		ret = -EINVAL;
	else if (!obj->filp)
		ret = -ENODEV; /* an import: its pages are someone else's */
	else
		ret = gw_bo_rw(to_gw_bo(obj), offset, size, u64_to_user_ptr(ptr), write);
	drm_gem_object_put(obj);
	return ret;
}

int gw_gem_pread_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_i915_gem_pread *a = data;

	return gw_rw_ioctl(file, a->handle, a->offset, a->size, a->data_ptr, false);
}

int gw_gem_pwrite_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_i915_gem_pwrite *a = data;

	return gw_rw_ioctl(file, a->handle, a->offset, a->size, a->data_ptr, true);
}

/* i915_tiling_ok() for gen9: Y tiles are 128 bytes wide, X 512; pitch at most 256 KiB. */
static bool gw_tiling_ok(u32 tiling, u32 stride)
{
	u32 tile_width = tiling == I915_TILING_Y ? 128 : 512;

	if (tiling == I915_TILING_NONE)
		return true;
	if (tiling > I915_TILING_Y || stride / 128 > 0x800)
		return false;
	return stride && IS_ALIGNED(stride, tile_width);
}

int gw_gem_set_tiling_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_i915_gem_set_tiling *args = data;
	struct drm_gem_object *obj = drm_gem_object_lookup(file, args->handle);
	int err = 0;

	if (!obj)
		return -ENOENT;
	if (to_gw_bo(obj)->userptr) {
		err = -ENXIO; /* proxy object */
	} else if (!gw_tiling_ok(args->tiling_mode, args->stride)) {
		err = -EINVAL;
	} else {
		if (args->tiling_mode == I915_TILING_NONE)
			args->stride = 0;
		args->swizzle_mode = I915_BIT_6_SWIZZLE_NONE; /* gen8+: no swizzling */
		to_gw_bo(obj)->tiling = args->tiling_mode;
		to_gw_bo(obj)->stride = args->stride;
	}
	drm_gem_object_put(obj);
	return err;
}

int gw_gem_get_tiling_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_i915_gem_get_tiling *args = data;
	struct drm_gem_object *obj = drm_gem_object_lookup(file, args->handle);

	if (!obj)
		return -ENOENT;
	args->tiling_mode = to_gw_bo(obj)->tiling;
	args->swizzle_mode = I915_BIT_6_SWIZZLE_NONE;
	args->phys_swizzle_mode = I915_BIT_6_SWIZZLE_NONE;
	drm_gem_object_put(obj);
	return 0;
}

int gw_gem_set_caching_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_i915_gem_caching *args = data;
	struct drm_gem_object *obj;
	u32 caching;
	int err = 0;

	switch (args->caching) {
	case I915_CACHING_NONE:
	case I915_CACHING_DISPLAY: /* no WT on gen9: display means uncached */ caching = I915_CACHING_NONE; break;
	case I915_CACHING_CACHED: caching = I915_CACHING_CACHED; break;
	default: return -EINVAL;
	}
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	if (to_gw_bo(obj)->userptr) /* proxy: only "cached", which it already is */
		err = caching == I915_CACHING_CACHED ? 0 : -ENXIO;
	else
		to_gw_bo(obj)->caching = caching;
	drm_gem_object_put(obj);
	return err;
}

int gw_gem_get_caching_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_i915_gem_caching *args = data;
	struct drm_gem_object *obj = drm_gem_object_lookup(file, args->handle);

	if (!obj)
		return -ENOENT;
	args->caching = to_gw_bo(obj)->caching;
	drm_gem_object_put(obj);
	return 0;
}

/* The ioctls below only validate and look the handle up: nothing is ever busy. */
static int gw_check_handle(struct drm_file *file, u32 handle)
{
	struct drm_gem_object *obj = drm_gem_object_lookup(file, handle);

	if (!obj)
		return -ENOENT;
	drm_gem_object_put(obj);
	return 0;
}

int gw_gem_set_domain_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_i915_gem_set_domain *args = data;

	const u32 gpu_domains = I915_GEM_DOMAIN_RENDER | I915_GEM_DOMAIN_SAMPLER | I915_GEM_DOMAIN_COMMAND |
				I915_GEM_DOMAIN_INSTRUCTION | I915_GEM_DOMAIN_VERTEX;

	if ((args->write_domain | args->read_domains) & gpu_domains)
		return -EINVAL;
	if (args->write_domain && args->read_domains != args->write_domain)
		return -EINVAL;
	if (!args->read_domains)
		return 0;
	return gw_check_handle(file, args->handle);
}

int gw_gem_sw_finish_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	return gw_check_handle(file, ((struct drm_i915_gem_sw_finish *)data)->handle);
}

int gw_gem_madvise_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_i915_gem_madvise *args = data;
	struct drm_gem_object *obj;

	if (args->madv != I915_MADV_DONTNEED && args->madv != I915_MADV_WILLNEED)
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	to_gw_bo(obj)->madv = args->madv;
	args->retained = 1; /* never purged (i915 purges unbound DONTNEED objects) */
	drm_gem_object_put(obj);
	return 0;
}

int gw_gem_busy_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_i915_gem_busy *args = data;

	args->busy = 0;
	return gw_check_handle(file, args->handle);
}

int gw_gem_wait_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_i915_gem_wait *args = data;

	if (args->flags)
		return -EINVAL;
	return gw_check_handle(file, args->bo_handle);
}

static int gw_describe_one(int handle, void *ptr, void *data)
{
	static const char *const types[GW_MMAP_TYPES] = {"gtt", "wc", "wb", "uc", "fixed"};
	struct drm_gem_object *obj = ptr;
	struct seq_file *m = data;
	struct gw_bo *bo;
	int i;

	if (!obj)
		return 0;
	bo = to_gw_bo(obj);
	seq_printf(m, "  handle %d size %zu tiling %u stride %u caching %u madv %u regions", handle, obj->size,
		   bo->tiling, bo->stride, bo->caching, bo->madv);
	for (i = 0; i < bo->n_regions; i++)
		seq_printf(m, "%c%u:0", i ? ',' : ' ', bo->regions[i]);
	if (bo->protected_content)
		seq_puts(m, " protected");
	if (bo->pat_index != ~0u)
		seq_printf(m, " pat %u", bo->pat_index);
	if (bo->userptr)
		seq_printf(m, " userptr 0x%llx+0x%llx flags 0x%x", bo->userptr_addr, bo->userptr_size,
			   bo->userptr_flags);
	if (obj->import_attach)
		seq_puts(m, " imported");
	for (i = 0; i < GW_MMAP_TYPES; i++)
		if (drm_mm_node_allocated(&bo->mmo[i].node.vm_node))
			seq_printf(m, " %s=0x%llx", types[i], drm_vma_node_offset_addr(&bo->mmo[i].node));
	seq_putc(m, '\n');
	return 0;
}

void gw_gem_describe(struct seq_file *m, struct drm_file *file)
{
	spin_lock(&file->table_lock);
	idr_for_each(&file->object_idr, gw_describe_one, m);
	spin_unlock(&file->table_lock);
}
