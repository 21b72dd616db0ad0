/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gwi915: a test fixture for the gpuwatch VM suite that answers a subset of the i915
 * uapi. Not Intel's driver; see gwi915_drv.c for what it is and is not.
 */
#ifndef GWI915_H
#define GWI915_H

#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/xarray.h>
#include <drm/drm_device.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_vma_manager.h>
#include <uapi/drm/i915_drm.h>

/* The fake device: a Skylake GT2 desktop part (gen9, LLC, full 48-bit ppgtt). */
#define GW_CHIPSET_ID 0x1912
#define GW_REVISION   0x07

/* I915_GEM_CREATE_EXT_SET_PAT is newer than the 6.1 uapi and libdrm 2.4.114. */
#define GW_GEM_CREATE_EXT_SET_PAT 2
struct gw_gem_create_ext_set_pat {
	struct i915_user_extension base;
	__u32 pat_index;
	__u32 rsvd;
};

#define GW_MMAP_TYPES  5 /* I915_MMAP_OFFSET_GTT, WC, WB, UC, FIXED */
#define GW_MAX_REGIONS 2 /* SYSTEM 0, DEVICE 0 */

struct gw_device {
	struct drm_device drm; /* first, as in i915: the mmap anon file's private_data */
	struct mutex singleton_lock;
	struct file *mmap_singleton; /* "i915.gem", alive while a mapping uses it */
	atomic_t next_client_id;
	atomic_t next_vm_serial;
};

static inline struct gw_device *to_gw(struct drm_device *dev)
{
	return container_of(dev, struct gw_device, drm);
}

struct gw_bo;

/* One fake mmap offset of an object: i915 keeps one per (object, mmap type). */
struct gw_mmo {
	struct drm_vma_offset_node node; /* node.driver_private == this when added */
	struct gw_bo *bo;
	unsigned int type;
};

struct gw_bo {
	struct drm_gem_shmem_object base; /* first: drm_gem_shmem_free() kfrees it */
	struct gw_mmo mmo[GW_MMAP_TYPES];
	u32 tiling, stride;
	u32 caching;
	u32 madv;
	u32 pat_index;              /* ~0u when not set */
	u8 regions[GW_MAX_REGIONS]; /* memory classes, in placement order */
	u8 n_regions;
	bool protected_content;
	bool userptr, readonly;
	u64 userptr_addr, userptr_size;
	u32 userptr_flags;
};

static inline struct gw_bo *to_gw_bo(struct drm_gem_object *obj)
{
	return container_of(obj, struct gw_bo, base.base);
}

/* An address space: nothing behind it, only identity (serial) and references. */
struct gw_vm {
	struct kref ref;
	u32 serial;
};

struct gw_ctx {
	struct gw_vm *vm; /* NULL until finalized, unless set while a proto-context */
	bool finalized;   /* i915 <= gen12: proto-context until first use */
	s64 priority;
	bool bannable, recoverable, persistent, no_error_capture, single_timeline;
	bool protected_content;
	int num_engines; /* -1: the legacy engine map */
	struct i915_engine_class_instance *engines;
};

struct gw_file {
	struct pid *opener;     /* the task that opened it (drm_file.pid moves to the last user since 6.7) */
	struct mutex lock;      /* contexts and vms */
	struct xarray contexts; /* id 0 = default context, new ids lowest free from 1 */
	struct xarray vms;      /* ids lowest free from 1, each holds a gw_vm reference */
	u32 client_id;
};

static inline struct gw_file *to_gw_file(struct drm_file *file)
{
	return file->driver_priv;
}

/* i915_user_extensions(): walk a user chain, dispatching on name. */
typedef int (*gw_ext_fn)(struct i915_user_extension __user *ext, void *data);
int gw_user_extensions(u64 chain, const gw_ext_fn *tbl, unsigned int count, void *data);
int gw_accept_ext(struct i915_user_extension __user *ext, void *data); /* accept, unread */

/* gwi915_gem.c */
struct drm_gem_object *gw_gem_create_object(struct drm_device *dev, size_t size);
int gw_dumb_create(struct drm_file *file, struct drm_device *dev, struct drm_mode_create_dumb *args);
int gw_dumb_map_offset(struct drm_file *file, struct drm_device *dev, u32 handle, u64 *offset);
struct gw_bo *gw_mmap_lookup(struct drm_device *dev, struct drm_file *file, struct vm_area_struct *vma,
			     unsigned int *type, int *err);
int gw_gem_create_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int gw_gem_create_ext_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int gw_gem_userptr_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int gw_gem_mmap_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int gw_gem_mmap_offset_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int gw_gem_pread_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int gw_gem_pwrite_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int gw_gem_set_tiling_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int gw_gem_get_tiling_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int gw_gem_set_caching_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int gw_gem_get_caching_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int gw_gem_set_domain_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int gw_gem_sw_finish_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int gw_gem_madvise_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int gw_gem_busy_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int gw_gem_wait_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
void gw_gem_describe(struct seq_file *m, struct drm_file *file);

/* gwi915_ctx.c */
int gw_file_open(struct drm_device *dev, struct drm_file *file);
void gw_file_postclose(struct drm_device *dev, struct drm_file *file);
int gw_context_create_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int gw_context_destroy_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int gw_context_getparam_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int gw_context_setparam_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int gw_vm_create_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int gw_vm_destroy_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int gw_ctx_select(struct drm_device *dev, struct drm_file *file, u32 id, u64 flags);
bool gw_ctx_exists(struct drm_file *file, u64 id);
void gw_ctx_describe(struct seq_file *m, struct drm_file *file);

/* gwi915_exec.c */
int gw_execbuffer2_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int gw_perf_open_ioctl(struct drm_device *dev, void *data, struct drm_file *file);

#endif
