/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gwxe: a test fixture for the gpuwatch VM suite that answers a subset of the xe uapi
 * (Linux 6.8+) on Debian's 6.1 kernel, which has no xe driver. Not Intel's driver; see
 * gwxe_drv.c for what it is and is not.
 *
 * The ioctl layouts and numbers come from gpuwatch's own user/uapi/xe_uapi.h (copied next to
 * this file by build.sh), whose sizes and command values are static_asserted there against
 * the upstream encoding. The query reply layouts below are not in that header.
 */
#ifndef GWXE_H
#define GWXE_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/xarray.h>
#include <drm/drm_device.h>
#include <drm/drm_gem_shmem_helper.h>

#include "xe_uapi.h"

/* --- DEVICE_QUERY replies (struct drm_xe_query_*, include/uapi/drm/xe_drm.h, 6.8) -------- */
struct gwxe_engine { /* struct drm_xe_engine */
	struct gw_xe_engine_class_instance instance;
	__u64 reserved[3];
};
struct gwxe_query_engines { /* struct drm_xe_query_engines */
	__u32 num_engines;
	__u32 pad;
	struct gwxe_engine engines[];
};
struct gwxe_mem_region { /* struct drm_xe_mem_region */
	__u16 mem_class;
	__u16 instance;
	__u32 min_page_size;
	__u64 total_size;
	__u64 used;
	__u64 cpu_visible_size;
	__u64 cpu_visible_used;
	__u64 reserved[6];
};
struct gwxe_query_mem_regions { /* struct drm_xe_query_mem_regions */
	__u32 num_mem_regions;
	__u32 pad;
	struct gwxe_mem_region mem_regions[];
};
struct gwxe_query_config { /* struct drm_xe_query_config */
	__u32 num_params;
	__u32 pad;
	__u64 info[];
};
#define GWXE_CONFIG_REV_AND_DEVICE_ID       0
#define GWXE_CONFIG_FLAGS                   1
#define GWXE_CONFIG_FLAG_HAS_VRAM           (1 << 0)
#define GWXE_CONFIG_MIN_ALIGNMENT           2
#define GWXE_CONFIG_VA_BITS                 3
#define GWXE_CONFIG_MAX_EXEC_QUEUE_PRIORITY 4
#define GWXE_CONFIG_NUM                     5
struct gwxe_gt { /* struct drm_xe_gt */
	__u16 type;
	__u16 tile_id;
	__u16 gt_id;
	__u16 pad[3];
	__u32 reference_clock;
	__u64 near_mem_regions;
	__u64 far_mem_regions;
	__u64 reserved[8];
};
struct gwxe_query_gt_list { /* struct drm_xe_query_gt_list */
	__u32 num_gt;
	__u32 pad;
	struct gwxe_gt gt_list[];
};

/* --- the fake device: a DG2-like discrete part, one tile, one GT ------------------------ */
#define GWXE_DEVICE_ID         0x56a0 /* DG2-G10 (Arc A770) */
#define GWXE_REVISION          0x08
#define GWXE_VA_BITS           48
#define GWXE_MEM_REGION_MASK   0x3 /* instance 0 = system memory, 1 = VRAM of tile 0 */
#define GWXE_VRAM_SIZE         SZ_4G
#define GWXE_PAT_ENTRIES       4 /* xe's xelp_pat_table (DG2): 0 WB (1-way coherent), 1 WC, 2 WT, 3 UC */
#define GWXE_PRIORITY_LOW      0
#define GWXE_PRIORITY_NORMAL   1
#define GWXE_PRIORITY_HIGH     2
#define GWXE_TIMESLICE_DEFAULT 1000 /* us, XE_HW_ENGINE_TIMESLICE */
#define GWXE_TIMESLICE_MIN     1
#define GWXE_TIMESLICE_MAX     10000000
#define GWXE_MAX_INSTANCES     64 /* XE_HW_ENGINE_MAX_INSTANCE */

struct gwxe_device {
	struct drm_device drm;
	atomic_t next_client_id;
};

static inline struct gwxe_device *to_gwxe(struct drm_device *dev)
{
	return container_of(dev, struct gwxe_device, drm);
}

struct gwxe_vm;

struct gwxe_bo {
	struct drm_gem_shmem_object base; /* first: drm_gem_shmem_free() kfrees it */
	u32 placement, flags;
	u32 vm_id;          /* as asked at creation (0: not VM-private) */
	struct gwxe_vm *vm; /* VM-private: holds a reference, as xe's bo->vm */
	u16 cpu_caching;
};

static inline struct gwxe_bo *to_gwxe_bo(struct drm_gem_object *obj)
{
	return container_of(obj, struct gwxe_bo, base.base);
}

/* One VM_BIND mapping of a VM: bookkeeping only, no page table exists. */
struct gwxe_binding {
	struct list_head link; /* in gwxe_vm.bindings, ascending addr */
	u64 addr, range;
	struct drm_gem_object *obj; /* holds a reference; NULL for userptr and NULL binds */
	u64 offset;                 /* into obj, or the CPU address (userptr) */
	bool userptr;
	u16 pat_index;
	u32 flags;
};

struct gwxe_vm {
	struct kref ref; /* the id, private BOs and exec queues hold it */
	u32 id;
	u32 flags;
	bool closed; /* VM_DESTROY'd or the file closed: bindings dropped */
	struct list_head bindings;
	int num_lr_queues; /* xe: vm->preempt.num_exec_queues (LR mode) */
};

struct gwxe_queue {
	u32 id;
	struct gwxe_vm *vm; /* holds a reference (NULL for a VM_BIND-class queue) */
	u32 vm_id;          /* as given */
	u32 flags;
	u16 width, num_placements;
	struct gw_xe_engine_class_instance *instances; /* width * num_placements */
	u32 priority, timeslice_us;
};

struct gwxe_file {
	struct pid *opener;   /* the opener (drm_file.pid moves to the last user since 6.7) */
	struct mutex lock;    /* vms, queues, bindings */
	struct xarray vms;    /* XA_FLAGS_ALLOC1: ids from 1, lowest free */
	struct xarray queues; /* XA_FLAGS_ALLOC1 */
	u32 client_id;
};

static inline struct gwxe_file *to_gwxe_file(struct drm_file *file)
{
	return file->driver_priv;
}

/* gwxe_bo.c */
struct drm_gem_object *gwxe_gem_create_object(struct drm_device *dev, size_t size);
int gwxe_dumb_create(struct drm_file *file, struct drm_device *dev, struct drm_mode_create_dumb *args);
int gwxe_gem_create_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int gwxe_gem_mmap_offset_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
void gwxe_bo_describe(struct seq_file *m, struct drm_file *file);

/* gwxe_vm.c */
int gwxe_file_open(struct drm_device *dev, struct drm_file *file);
void gwxe_file_postclose(struct drm_device *dev, struct drm_file *file);
struct gwxe_vm *gwxe_vm_lookup(struct drm_file *file, u32 id); /* a reference, or NULL */
void gwxe_vm_put(struct gwxe_vm *vm);
int gwxe_vm_create_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int gwxe_vm_destroy_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int gwxe_vm_bind_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int gwxe_exec_queue_create_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int gwxe_exec_queue_destroy_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int gwxe_exec_queue_get_property_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
void gwxe_vm_describe(struct seq_file *m, struct drm_file *file);

/* gwxe_drv.c: the engines the fake GT has */
bool gwxe_engine_exists(const struct gw_xe_engine_class_instance *e);

#endif
