/* SPDX-License-Identifier: MIT */
/*
 * gpuwatch: hand-written description of the Intel xe DRM ioctl ABI.
 *
 * Written for gpuwatch from the public kernel documentation of
 * include/uapi/drm/xe_drm.h; it is NOT a copy of that file.  It describes
 * only the argument blocks gpuwatch decodes from captured bytes, using
 * fixed-width types, explicit padding and compile-time checks of every
 * struct size and of the offsets a decoder reads.
 *
 * Why it exists: Debian 12 (libdrm 2.4.114, linux-libc-dev 6.1) ships no xe
 * uapi header.  Every name carries a gw_xe_ / GW_XE_ prefix so this file can
 * coexist with a real <drm/xe_drm.h> should a distro ship one later.
 *
 * Naming: upstream DRM_XE_<X> -> GW_XE_<X>, upstream DRM_IOCTL_XE_<X> ->
 * GW_XE_IOCTL_<X>, upstream ioctl number DRM_XE_<IOCTL> -> GW_XE_NR_<IOCTL>,
 * upstream struct drm_xe_<s> -> struct gw_xe_<s>.  Field names are the
 * upstream ones so the two can be read side by side.
 *
 * Baseline: the xe uapi was first released in Linux 6.8 and is ABI-stable
 * since then: later kernels only add ioctls, flag bits, property ids and
 * union aliases of existing fields; no struct described here changed size or
 * field offset between 6.8 and current upstream (checked against the
 * installed headers of 6.8 ... 6.17 and drm-next as of 2026-04).  Items newer
 * than 6.8 are marked "(since X)" or with the drm-next snapshot date when no
 * release containing them was checked.  The pre-merge development uapi
 * (2023, other names and numbering) is not described.
 *
 * Fields are in host byte order; __u64 user pointers are plain integers (no
 * compat variant exists: the layouts are padded so i386 and x86-64 agree).
 */
#pragma once

#include <linux/ioctl.h>
#include <linux/types.h>
#include <stddef.h> /* offsetof */

#ifdef __cplusplus
#define GW_XE_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define GW_XE_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

#define GW_XE_CHECK_SIZE(type, bytes) \
	GW_XE_STATIC_ASSERT(sizeof(struct type) == (bytes), #type " size")
#define GW_XE_CHECK_OFFSET(type, field, off) \
	GW_XE_STATIC_ASSERT(offsetof(struct type, field) == (off), #type "." #field " offset")

/* ------------------------------------------------------------------------ */
/* ioctl numbers                                                             */
/* ------------------------------------------------------------------------ */

/*
 * Driver ioctls live at DRM_COMMAND_BASE (0x40) + nr, with the DRM ioctl
 * type letter 'd' (DRM_IOCTL_BASE).  Defined locally so this header does not
 * depend on drm.h.
 */
#define GW_XE_DRM_IOCTL_TYPE    'd'
#define GW_XE_DRM_COMMAND_BASE  0x40

/* Present in 6.8 (the full 6.8 set; upstream keeps the list without holes). */
#define GW_XE_NR_DEVICE_QUERY            0x00
#define GW_XE_NR_GEM_CREATE              0x01
#define GW_XE_NR_GEM_MMAP_OFFSET         0x02
#define GW_XE_NR_VM_CREATE               0x03
#define GW_XE_NR_VM_DESTROY              0x04
#define GW_XE_NR_VM_BIND                 0x05
#define GW_XE_NR_EXEC_QUEUE_CREATE       0x06
#define GW_XE_NR_EXEC_QUEUE_DESTROY      0x07
#define GW_XE_NR_EXEC_QUEUE_GET_PROPERTY 0x08
#define GW_XE_NR_EXEC                    0x09
#define GW_XE_NR_WAIT_USER_FENCE         0x0a
/* Added after 6.8; argument layouts not described here, sizes given below. */
#define GW_XE_NR_OBSERVATION             0x0b /* since 6.11 (OA / EU-stall streams) */
#define GW_XE_NR_MADVISE                 0x0c /* after 6.17 (drm-next 2025-09) */
#define GW_XE_NR_VM_QUERY_MEM_RANGE_ATTRS 0x0d /* after 6.17 (drm-next 2025-09) */
#define GW_XE_NR_EXEC_QUEUE_SET_PROPERTY 0x0e /* drm-next 2026-01 */
#define GW_XE_NR_VM_GET_PROPERTY         0x0f /* drm-next 2026-04 */

/* Sizes of argument blocks of the post-6.8 ioctls (needed for the cmd value). */
#define GW_XE_SIZEOF_OBSERVATION_PARAM        32
#define GW_XE_SIZEOF_MADVISE                  64
#define GW_XE_SIZEOF_VM_QUERY_MEM_RANGE_ATTR  64
#define GW_XE_SIZEOF_EXEC_QUEUE_SET_PROPERTY  40
#define GW_XE_SIZEOF_VM_GET_PROPERTY          56

/* ------------------------------------------------------------------------ */
/* Extension chain (generic)                                                 */
/* ------------------------------------------------------------------------ */

/*
 * Follows struct drm_xe_user_extension, include/uapi/drm/xe_drm.h, Linux 6.8+
 * (unchanged in current upstream).
 * Every xe argument block has a __u64 'extensions' user pointer to the first
 * of a singly linked list of these headers; 'name' is scoped to the ioctl
 * (and struct) that carries the chain.
 */
struct gw_xe_user_extension {
	__u64 next_extension; /* user pointer to the next header, 0 ends the list */
	__u32 name;           /* extension id, meaning depends on the carrier ioctl */
	__u32 pad;            /* must be zero */
};
GW_XE_CHECK_SIZE(gw_xe_user_extension, 16);
GW_XE_CHECK_OFFSET(gw_xe_user_extension, next_extension, 0);
GW_XE_CHECK_OFFSET(gw_xe_user_extension, name, 8);

/*
 * Follows struct drm_xe_ext_set_property, include/uapi/drm/xe_drm.h, Linux
 * 6.8+.  The one generic extension: "set property <property> to <value>".
 * Current upstream (drm-next 2026-01+) turns 'value' into a union with a
 * __u64 'ptr' (user pointer for properties whose value is out of line);
 * same offset, same size.
 */
struct gw_xe_ext_set_property {
	struct gw_xe_user_extension base;
	__u32 property; /* property id, meaning depends on base.name's scope */
	__u32 pad;      /* must be zero */
	union {
		__u64 value;
		__u64 ptr; /* (drm-next 2026-01) alias of value */
	};
	__u64 reserved[2];
};
GW_XE_CHECK_SIZE(gw_xe_ext_set_property, 48);
GW_XE_CHECK_OFFSET(gw_xe_ext_set_property, base, 0);
GW_XE_CHECK_OFFSET(gw_xe_ext_set_property, property, 16);
GW_XE_CHECK_OFFSET(gw_xe_ext_set_property, value, 24);
GW_XE_CHECK_OFFSET(gw_xe_ext_set_property, ptr, 24);

/* ------------------------------------------------------------------------ */
/* Engines                                                                   */
/* ------------------------------------------------------------------------ */

/*
 * Follows struct drm_xe_engine_class_instance, include/uapi/drm/xe_drm.h,
 * Linux 6.8+ (unchanged).  Used in the exec-queue 'instances' array.
 */
struct gw_xe_engine_class_instance {
	__u16 engine_class;    /* GW_XE_ENGINE_CLASS_* */
	__u16 engine_instance;
	__u16 gt_id;
	__u16 pad;
};
GW_XE_CHECK_SIZE(gw_xe_engine_class_instance, 8);
GW_XE_CHECK_OFFSET(gw_xe_engine_class_instance, engine_class, 0);
GW_XE_CHECK_OFFSET(gw_xe_engine_class_instance, engine_instance, 2);
GW_XE_CHECK_OFFSET(gw_xe_engine_class_instance, gt_id, 4);

#define GW_XE_ENGINE_CLASS_RENDER        0
#define GW_XE_ENGINE_CLASS_COPY          1
#define GW_XE_ENGINE_CLASS_VIDEO_DECODE  2
#define GW_XE_ENGINE_CLASS_VIDEO_ENHANCE 3
#define GW_XE_ENGINE_CLASS_COMPUTE       4
#define GW_XE_ENGINE_CLASS_VM_BIND       5 /* software class: ordered VM_BIND queue */

/* ------------------------------------------------------------------------ */
/* DRM_IOCTL_XE_DEVICE_QUERY                                                 */
/* ------------------------------------------------------------------------ */

/*
 * Follows struct drm_xe_device_query, include/uapi/drm/xe_drm.h, Linux 6.8+
 * (unchanged).  Two-call protocol: size==0 asks for the needed size.
 */
struct gw_xe_device_query {
	__u64 extensions;
	__u32 query; /* GW_XE_DEVICE_QUERY_* */
	__u32 size;  /* in: buffer size (0 = ask); out: needed size */
	__u64 data;  /* user pointer to the reply buffer */
	__u64 reserved[2];
};
GW_XE_CHECK_SIZE(gw_xe_device_query, 40);
GW_XE_CHECK_OFFSET(gw_xe_device_query, query, 8);
GW_XE_CHECK_OFFSET(gw_xe_device_query, size, 12);
GW_XE_CHECK_OFFSET(gw_xe_device_query, data, 16);

#define GW_XE_DEVICE_QUERY_ENGINES       0
#define GW_XE_DEVICE_QUERY_MEM_REGIONS   1
#define GW_XE_DEVICE_QUERY_CONFIG        2
#define GW_XE_DEVICE_QUERY_GT_LIST       3
#define GW_XE_DEVICE_QUERY_HWCONFIG      4
#define GW_XE_DEVICE_QUERY_GT_TOPOLOGY   5
#define GW_XE_DEVICE_QUERY_ENGINE_CYCLES 6
#define GW_XE_DEVICE_QUERY_UC_FW_VERSION 7  /* since 6.9 */
#define GW_XE_DEVICE_QUERY_OA_UNITS      8  /* since 6.11 */
#define GW_XE_DEVICE_QUERY_PXP_STATUS    9  /* since 6.15 */
#define GW_XE_DEVICE_QUERY_EU_STALL      10 /* since 6.15 */

/* Memory region classes reported by GW_XE_DEVICE_QUERY_MEM_REGIONS. */
#define GW_XE_MEM_REGION_CLASS_SYSMEM 0
#define GW_XE_MEM_REGION_CLASS_VRAM   1

/* ------------------------------------------------------------------------ */
/* DRM_IOCTL_XE_GEM_CREATE                                                   */
/* ------------------------------------------------------------------------ */

/*
 * Follows struct drm_xe_gem_create, include/uapi/drm/xe_drm.h, Linux 6.8+.
 * cpu_caching is part of the 6.8 layout (it predates the first release);
 * layout unchanged in current upstream.
 *
 * placement: bit N set = the BO may live in the memory region whose
 * 'instance' (from GW_XE_DEVICE_QUERY_MEM_REGIONS) is N.  It is a bitmask of
 * instances, not of classes; the class of each instance (sysmem / VRAM) is
 * only known from that query, so do not assume "bit 0 = sysmem".
 */
struct gw_xe_gem_create {
	__u64 extensions;  /* chain; names GW_XE_GEM_CREATE_EXTENSION_* */
	__u64 size;        /* bytes, aligned to the region's min_page_size */
	__u32 placement;   /* bitmask of memory region instances, see above */
	__u32 flags;       /* GW_XE_GEM_CREATE_FLAG_* */
	__u32 vm_id;       /* 0, or the only VM this BO may be bound to (not exportable) */
	__u32 handle;      /* out: GEM handle, nonzero */
	__u16 cpu_caching; /* GW_XE_GEM_CPU_CACHING_* */
	__u16 pad[3];
	__u64 reserved[2];
};
GW_XE_CHECK_SIZE(gw_xe_gem_create, 56);
GW_XE_CHECK_OFFSET(gw_xe_gem_create, extensions, 0);
GW_XE_CHECK_OFFSET(gw_xe_gem_create, size, 8);
GW_XE_CHECK_OFFSET(gw_xe_gem_create, placement, 16);
GW_XE_CHECK_OFFSET(gw_xe_gem_create, flags, 20);
GW_XE_CHECK_OFFSET(gw_xe_gem_create, vm_id, 24);
GW_XE_CHECK_OFFSET(gw_xe_gem_create, handle, 28);
GW_XE_CHECK_OFFSET(gw_xe_gem_create, cpu_caching, 32);

#define GW_XE_GEM_PLACEMENT_BIT(instance) (1u << (instance))

#define GW_XE_GEM_CREATE_FLAG_DEFER_BACKING     (1u << 0)
#define GW_XE_GEM_CREATE_FLAG_SCANOUT           (1u << 1)
#define GW_XE_GEM_CREATE_FLAG_NEEDS_VISIBLE_VRAM (1u << 2)
#define GW_XE_GEM_CREATE_FLAG_NO_COMPRESSION    (1u << 3) /* drm-next 2026-01 */

/* cpu_caching: upstream defines no meaning for 0. */
#define GW_XE_GEM_CPU_CACHING_WB 1
#define GW_XE_GEM_CPU_CACHING_WC 2

/* Extension names / properties on GEM_CREATE (since 6.15). */
#define GW_XE_GEM_CREATE_EXTENSION_SET_PROPERTY 0
#define GW_XE_GEM_CREATE_SET_PROPERTY_PXP_TYPE  0 /* value: GW_XE_PXP_TYPE_* */

#define GW_XE_PXP_TYPE_NONE  0
#define GW_XE_PXP_TYPE_HWDRM 1

/* ------------------------------------------------------------------------ */
/* DRM_IOCTL_XE_GEM_MMAP_OFFSET                                              */
/* ------------------------------------------------------------------------ */

/*
 * Follows struct drm_xe_gem_mmap_offset, include/uapi/drm/xe_drm.h, Linux
 * 6.8+ (unchanged).  'offset' is the fake offset for mmap() on the DRM fd.
 */
struct gw_xe_gem_mmap_offset {
	__u64 extensions;
	__u32 handle; /* GEM handle (0 with GW_XE_MMAP_OFFSET_FLAG_PCI_BARRIER) */
	__u32 flags;  /* 6.8: must be zero; GW_XE_MMAP_OFFSET_FLAG_* later */
	__u64 offset; /* out */
	__u64 reserved[2];
};
GW_XE_CHECK_SIZE(gw_xe_gem_mmap_offset, 40);
GW_XE_CHECK_OFFSET(gw_xe_gem_mmap_offset, handle, 8);
GW_XE_CHECK_OFFSET(gw_xe_gem_mmap_offset, flags, 12);
GW_XE_CHECK_OFFSET(gw_xe_gem_mmap_offset, offset, 16);

/* Offset of a 4 KiB page whose writes act as a PCI barrier (since 6.15). */
#define GW_XE_MMAP_OFFSET_FLAG_PCI_BARRIER (1u << 0)

/* ------------------------------------------------------------------------ */
/* DRM_IOCTL_XE_VM_CREATE / DRM_IOCTL_XE_VM_DESTROY                          */
/* ------------------------------------------------------------------------ */

/* Follows struct drm_xe_vm_create, include/uapi/drm/xe_drm.h, Linux 6.8+ (unchanged). */
struct gw_xe_vm_create {
	__u64 extensions;
	__u32 flags; /* GW_XE_VM_CREATE_FLAG_* */
	__u32 vm_id; /* out */
	__u64 reserved[2];
};
GW_XE_CHECK_SIZE(gw_xe_vm_create, 32);
GW_XE_CHECK_OFFSET(gw_xe_vm_create, flags, 8);
GW_XE_CHECK_OFFSET(gw_xe_vm_create, vm_id, 12);

#define GW_XE_VM_CREATE_FLAG_SCRATCH_PAGE     (1u << 0)
#define GW_XE_VM_CREATE_FLAG_LR_MODE          (1u << 1) /* long-running, no job timeout */
#define GW_XE_VM_CREATE_FLAG_FAULT_MODE       (1u << 2) /* needs LR_MODE; recoverable faults */
#define GW_XE_VM_CREATE_FLAG_NO_VM_OVERCOMMIT (1u << 3) /* drm-next 2026-03 */

/* Follows struct drm_xe_vm_destroy, include/uapi/drm/xe_drm.h, Linux 6.8+ (unchanged). */
struct gw_xe_vm_destroy {
	__u32 vm_id;
	__u32 pad;
	__u64 reserved[2];
};
GW_XE_CHECK_SIZE(gw_xe_vm_destroy, 24);
GW_XE_CHECK_OFFSET(gw_xe_vm_destroy, vm_id, 0);

/* ------------------------------------------------------------------------ */
/* DRM_IOCTL_XE_VM_BIND                                                      */
/* ------------------------------------------------------------------------ */

/*
 * Follows struct drm_xe_vm_bind_op, include/uapi/drm/xe_drm.h, Linux 6.8+.
 * pat_index is part of the 6.8 layout.  6.15 added a third member to the
 * obj_offset union (signed cpu_addr_mirror_offset, same 8 bytes); otherwise
 * unchanged in current upstream.
 */
struct gw_xe_vm_bind_op {
	__u64 extensions;
	__u32 obj;       /* GEM handle for MAP / UNMAP_ALL; 0 for MAP_USERPTR, UNMAP, NULL binds */
	__u16 pat_index; /* platform PAT table index, encoded into the PTEs */
	__u16 pad;
	union {
		__u64 obj_offset;             /* MAP: byte offset into obj */
		__u64 userptr;                /* MAP_USERPTR: CPU address */
		__s64 cpu_addr_mirror_offset; /* (since 6.15) FLAG_CPU_ADDR_MIRROR: must be 0 */
	};
	__u64 range;     /* bytes; 0 for UNMAP_ALL */
	__u64 addr;      /* GPU virtual address; 0 for UNMAP_ALL */
	__u32 op;        /* GW_XE_VM_BIND_OP_* */
	__u32 flags;     /* GW_XE_VM_BIND_FLAG_* */
	__u32 prefetch_mem_region_instance; /* PREFETCH only: region instance (not a mask) */
	__u32 pad2;
	__u64 reserved[3];
};
GW_XE_CHECK_SIZE(gw_xe_vm_bind_op, 80);
GW_XE_CHECK_OFFSET(gw_xe_vm_bind_op, extensions, 0);
GW_XE_CHECK_OFFSET(gw_xe_vm_bind_op, obj, 8);
GW_XE_CHECK_OFFSET(gw_xe_vm_bind_op, pat_index, 12);
GW_XE_CHECK_OFFSET(gw_xe_vm_bind_op, obj_offset, 16);
GW_XE_CHECK_OFFSET(gw_xe_vm_bind_op, userptr, 16);
GW_XE_CHECK_OFFSET(gw_xe_vm_bind_op, range, 24);
GW_XE_CHECK_OFFSET(gw_xe_vm_bind_op, addr, 32);
GW_XE_CHECK_OFFSET(gw_xe_vm_bind_op, op, 40);
GW_XE_CHECK_OFFSET(gw_xe_vm_bind_op, flags, 44);
GW_XE_CHECK_OFFSET(gw_xe_vm_bind_op, prefetch_mem_region_instance, 48);

#define GW_XE_VM_BIND_OP_MAP         0x0
#define GW_XE_VM_BIND_OP_UNMAP       0x1
#define GW_XE_VM_BIND_OP_MAP_USERPTR 0x2
#define GW_XE_VM_BIND_OP_UNMAP_ALL   0x3 /* unmap everything bound from obj */
#define GW_XE_VM_BIND_OP_PREFETCH    0x4

/*
 * Bind flags.  6.8 and 6.9 headers define only NULL and DUMPABLE; READONLY
 * and IMMEDIATE (same bit values as in the pre-release uapi) were re-added in
 * 6.10.
 */
#define GW_XE_VM_BIND_FLAG_READONLY          (1u << 0) /* since 6.10 */
#define GW_XE_VM_BIND_FLAG_IMMEDIATE         (1u << 1) /* since 6.10 */
#define GW_XE_VM_BIND_FLAG_NULL              (1u << 2) /* sparse: reads 0, writes dropped */
#define GW_XE_VM_BIND_FLAG_DUMPABLE          (1u << 3) /* include in devcoredump */
#define GW_XE_VM_BIND_FLAG_CHECK_PXP         (1u << 4) /* since 6.15 */
#define GW_XE_VM_BIND_FLAG_CPU_ADDR_MIRROR   (1u << 5) /* since 6.15 (SVM) */
#define GW_XE_VM_BIND_FLAG_MADVISE_AUTORESET (1u << 6) /* after 6.17 (drm-next 2025-10) */
#define GW_XE_VM_BIND_FLAG_DECOMPRESS        (1u << 7) /* drm-next 2026-03 */

/* prefetch_mem_region_instance: "use the madvise'd location" (after 6.17, drm-next 2025-09). */
#define GW_XE_CONSULT_MEM_ADVISE_PREF_LOC 0xffffffffu /* upstream spells it -1 */

/*
 * Follows struct drm_xe_vm_bind, include/uapi/drm/xe_drm.h, Linux 6.8+
 * (unchanged).  num_binds == 1: the op is inline in 'bind'.  num_binds > 1:
 * the first 8 bytes of that same slot are 'vector_of_binds', a user pointer
 * to num_binds consecutive struct gw_xe_vm_bind_op (80 bytes each); the rest
 * of the 80-byte slot is then unused.
 */
struct gw_xe_vm_bind {
	__u64 extensions;
	__u32 vm_id;
	__u32 exec_queue_id; /* 0 = default bind queue, else a VM_BIND-class queue */
	__u32 pad;
	__u32 num_binds;
	union {
		struct gw_xe_vm_bind_op bind; /* num_binds == 1 */
		__u64 vector_of_binds;        /* num_binds > 1 */
	};
	__u32 pad2;
	__u32 num_syncs;
	__u64 syncs; /* user pointer to num_syncs struct gw_xe_sync */
	__u64 reserved[2];
};
GW_XE_CHECK_SIZE(gw_xe_vm_bind, 136);
GW_XE_CHECK_OFFSET(gw_xe_vm_bind, extensions, 0);
GW_XE_CHECK_OFFSET(gw_xe_vm_bind, vm_id, 8);
GW_XE_CHECK_OFFSET(gw_xe_vm_bind, exec_queue_id, 12);
GW_XE_CHECK_OFFSET(gw_xe_vm_bind, num_binds, 20);
GW_XE_CHECK_OFFSET(gw_xe_vm_bind, bind, 24);
GW_XE_CHECK_OFFSET(gw_xe_vm_bind, vector_of_binds, 24);
GW_XE_CHECK_OFFSET(gw_xe_vm_bind, num_syncs, 108);
GW_XE_CHECK_OFFSET(gw_xe_vm_bind, syncs, 112);

/* ------------------------------------------------------------------------ */
/* DRM_IOCTL_XE_EXEC_QUEUE_CREATE / _DESTROY / _GET_PROPERTY                 */
/* ------------------------------------------------------------------------ */

/*
 * Follows struct drm_xe_exec_queue_create, include/uapi/drm/xe_drm.h, Linux
 * 6.8+ (unchanged; 'flags' was MBZ in 6.8, LOW_LATENCY_HINT since 6.15).
 * 'instances' points to width * num_placements struct
 * gw_xe_engine_class_instance (8 bytes each).
 */
struct gw_xe_exec_queue_create {
	__u64 extensions;     /* chain; names GW_XE_EXEC_QUEUE_EXTENSION_* */
	__u16 width;          /* batch buffers per exec (parallel submission) */
	__u16 num_placements; /* engines the queue may be scheduled on */
	__u32 vm_id;
	__u32 flags;          /* GW_XE_EXEC_QUEUE_LOW_LATENCY_HINT */
	__u32 exec_queue_id;  /* out */
	__u64 instances;      /* user pointer, see above */
	__u64 reserved[2];
};
GW_XE_CHECK_SIZE(gw_xe_exec_queue_create, 48);
GW_XE_CHECK_OFFSET(gw_xe_exec_queue_create, extensions, 0);
GW_XE_CHECK_OFFSET(gw_xe_exec_queue_create, width, 8);
GW_XE_CHECK_OFFSET(gw_xe_exec_queue_create, num_placements, 10);
GW_XE_CHECK_OFFSET(gw_xe_exec_queue_create, vm_id, 12);
GW_XE_CHECK_OFFSET(gw_xe_exec_queue_create, flags, 16);
GW_XE_CHECK_OFFSET(gw_xe_exec_queue_create, exec_queue_id, 20);
GW_XE_CHECK_OFFSET(gw_xe_exec_queue_create, instances, 24);

#define GW_XE_EXEC_QUEUE_LOW_LATENCY_HINT (1u << 0) /* since 6.15 */

/* Extension name on EXEC_QUEUE_CREATE: a struct gw_xe_ext_set_property. */
#define GW_XE_EXEC_QUEUE_EXTENSION_SET_PROPERTY 0
/*
 * Property ids for that extension.  6.8-rc1 had more (2 = PREEMPTION_TIMEOUT,
 * 3 = PERSISTENCE, 4 = JOB_TIMEOUT, 5..7 = ACC_*); all were dropped before
 * 6.8 was released, and 2 was reused for PXP_TYPE in 6.15.
 */
#define GW_XE_EXEC_QUEUE_SET_PROPERTY_PRIORITY   0
#define GW_XE_EXEC_QUEUE_SET_PROPERTY_TIMESLICE  1 /* microseconds */
#define GW_XE_EXEC_QUEUE_SET_PROPERTY_PXP_TYPE   2 /* since 6.15; GW_XE_PXP_TYPE_* */
#define GW_XE_EXEC_QUEUE_SET_HANG_REPLAY_STATE   3 /* drm-next 2026-01 (upstream name has no _PROPERTY) */
#define GW_XE_EXEC_QUEUE_SET_PROPERTY_MULTI_GROUP 4 /* drm-next 2026-01 */
#define GW_XE_EXEC_QUEUE_SET_PROPERTY_MULTI_QUEUE_PRIORITY 5 /* drm-next 2026-01 */
#define GW_XE_EXEC_QUEUE_SET_DISABLE_STATE_CACHE_PERF_FIX 6 /* drm-next 2026-03 */
/* MULTI_GROUP value: this bit = create a group with this queue as primary,
 * otherwise the low 32 bits name the primary queue to join. */
#define GW_XE_MULTI_GROUP_CREATE (1ull << 63)

/* Follows struct drm_xe_exec_queue_destroy, include/uapi/drm/xe_drm.h, Linux 6.8+ (unchanged). */
struct gw_xe_exec_queue_destroy {
	__u32 exec_queue_id;
	__u32 pad;
	__u64 reserved[2];
};
GW_XE_CHECK_SIZE(gw_xe_exec_queue_destroy, 24);
GW_XE_CHECK_OFFSET(gw_xe_exec_queue_destroy, exec_queue_id, 0);

/* Follows struct drm_xe_exec_queue_get_property, include/uapi/drm/xe_drm.h, Linux 6.8+ (unchanged). */
struct gw_xe_exec_queue_get_property {
	__u64 extensions;
	__u32 exec_queue_id;
	__u32 property; /* GW_XE_EXEC_QUEUE_GET_PROPERTY_* */
	__u64 value;    /* out */
	__u64 reserved[2];
};
GW_XE_CHECK_SIZE(gw_xe_exec_queue_get_property, 40);
GW_XE_CHECK_OFFSET(gw_xe_exec_queue_get_property, exec_queue_id, 8);
GW_XE_CHECK_OFFSET(gw_xe_exec_queue_get_property, property, 12);
GW_XE_CHECK_OFFSET(gw_xe_exec_queue_get_property, value, 16);

#define GW_XE_EXEC_QUEUE_GET_PROPERTY_BAN 0

/* ------------------------------------------------------------------------ */
/* Syncs, DRM_IOCTL_XE_EXEC, DRM_IOCTL_XE_WAIT_USER_FENCE                    */
/* ------------------------------------------------------------------------ */

/*
 * Follows struct drm_xe_sync, include/uapi/drm/xe_drm.h, Linux 6.8+
 * (unchanged).  Elements of the 'syncs' arrays of VM_BIND and EXEC.
 */
struct gw_xe_sync {
	__u64 extensions;
	__u32 type;  /* GW_XE_SYNC_TYPE_* */
	__u32 flags; /* GW_XE_SYNC_FLAG_* */
	union {
		__u32 handle; /* syncobj handle */
		__u64 addr;   /* user fence: GPU VA (exec) or CPU pointer (bind), 8-aligned */
	};
	__u64 timeline_value;
	__u64 reserved[2];
};
GW_XE_CHECK_SIZE(gw_xe_sync, 48);
GW_XE_CHECK_OFFSET(gw_xe_sync, type, 8);
GW_XE_CHECK_OFFSET(gw_xe_sync, flags, 12);
GW_XE_CHECK_OFFSET(gw_xe_sync, handle, 16);
GW_XE_CHECK_OFFSET(gw_xe_sync, addr, 16);
GW_XE_CHECK_OFFSET(gw_xe_sync, timeline_value, 24);

#define GW_XE_SYNC_TYPE_SYNCOBJ          0x0
#define GW_XE_SYNC_TYPE_TIMELINE_SYNCOBJ 0x1
#define GW_XE_SYNC_TYPE_USER_FENCE       0x2
#define GW_XE_SYNC_FLAG_SIGNAL           (1u << 0) /* out-fence; otherwise wait */
/* Upper bound on num_syncs, published in the uapi since drm-next 2026-01
 * (older kernels need not enforce it); only a sanity cap for a decoder. */
#define GW_XE_MAX_SYNCS 1024

/* Follows struct drm_xe_exec, include/uapi/drm/xe_drm.h, Linux 6.8+ (unchanged). */
struct gw_xe_exec {
	__u64 extensions;
	__u32 exec_queue_id;
	__u32 num_syncs;
	__u64 syncs;   /* user pointer to num_syncs struct gw_xe_sync */
	__u64 address; /* batch GPU VA, or (num_batch_buffer > 1) user pointer to an array of VAs */
	__u16 num_batch_buffer; /* must equal the queue's width */
	__u16 pad[3];
	__u64 reserved[2];
};
GW_XE_CHECK_SIZE(gw_xe_exec, 56);
GW_XE_CHECK_OFFSET(gw_xe_exec, exec_queue_id, 8);
GW_XE_CHECK_OFFSET(gw_xe_exec, num_syncs, 12);
GW_XE_CHECK_OFFSET(gw_xe_exec, syncs, 16);
GW_XE_CHECK_OFFSET(gw_xe_exec, address, 24);
GW_XE_CHECK_OFFSET(gw_xe_exec, num_batch_buffer, 32);

/* Follows struct drm_xe_wait_user_fence, include/uapi/drm/xe_drm.h, Linux 6.8+ (unchanged). */
struct gw_xe_wait_user_fence {
	__u64 extensions;
	__u64 addr;    /* CPU pointer to the fence qword */
	__u16 op;      /* GW_XE_UFENCE_WAIT_OP_* */
	__u16 flags;   /* GW_XE_UFENCE_WAIT_FLAG_* */
	__u32 pad;
	__u64 value;
	__u64 mask;
	__s64 timeout; /* ns; relative unless ABSTIME; negative = forever */
	__u32 exec_queue_id;
	__u32 pad2;
	__u64 reserved[2];
};
GW_XE_CHECK_SIZE(gw_xe_wait_user_fence, 72);
GW_XE_CHECK_OFFSET(gw_xe_wait_user_fence, addr, 8);
GW_XE_CHECK_OFFSET(gw_xe_wait_user_fence, op, 16);
GW_XE_CHECK_OFFSET(gw_xe_wait_user_fence, flags, 18);
GW_XE_CHECK_OFFSET(gw_xe_wait_user_fence, value, 24);
GW_XE_CHECK_OFFSET(gw_xe_wait_user_fence, mask, 32);
GW_XE_CHECK_OFFSET(gw_xe_wait_user_fence, timeout, 40);
GW_XE_CHECK_OFFSET(gw_xe_wait_user_fence, exec_queue_id, 48);

#define GW_XE_UFENCE_WAIT_OP_EQ  0x0
#define GW_XE_UFENCE_WAIT_OP_NEQ 0x1
#define GW_XE_UFENCE_WAIT_OP_GT  0x2
#define GW_XE_UFENCE_WAIT_OP_GTE 0x3
#define GW_XE_UFENCE_WAIT_OP_LT  0x4
#define GW_XE_UFENCE_WAIT_OP_LTE 0x5
#define GW_XE_UFENCE_WAIT_FLAG_ABSTIME (1u << 0)

/* ------------------------------------------------------------------------ */
/* Full ioctl command values                                                 */
/* ------------------------------------------------------------------------ */

/*
 * Same encoding as upstream's DRM_IOWR / DRM_IOW.  The direction is part of
 * the value and differs per ioctl: VM_DESTROY, VM_BIND, EXEC_QUEUE_DESTROY,
 * EXEC, OBSERVATION, MADVISE and EXEC_QUEUE_SET_PROPERTY are write-only (IOW).
 */
#define GW_XE_IOCTL_DEVICE_QUERY \
	_IOWR(GW_XE_DRM_IOCTL_TYPE, GW_XE_DRM_COMMAND_BASE + GW_XE_NR_DEVICE_QUERY, struct gw_xe_device_query)
#define GW_XE_IOCTL_GEM_CREATE \
	_IOWR(GW_XE_DRM_IOCTL_TYPE, GW_XE_DRM_COMMAND_BASE + GW_XE_NR_GEM_CREATE, struct gw_xe_gem_create)
#define GW_XE_IOCTL_GEM_MMAP_OFFSET \
	_IOWR(GW_XE_DRM_IOCTL_TYPE, GW_XE_DRM_COMMAND_BASE + GW_XE_NR_GEM_MMAP_OFFSET, struct gw_xe_gem_mmap_offset)
#define GW_XE_IOCTL_VM_CREATE \
	_IOWR(GW_XE_DRM_IOCTL_TYPE, GW_XE_DRM_COMMAND_BASE + GW_XE_NR_VM_CREATE, struct gw_xe_vm_create)
#define GW_XE_IOCTL_VM_DESTROY \
	_IOW(GW_XE_DRM_IOCTL_TYPE, GW_XE_DRM_COMMAND_BASE + GW_XE_NR_VM_DESTROY, struct gw_xe_vm_destroy)
#define GW_XE_IOCTL_VM_BIND \
	_IOW(GW_XE_DRM_IOCTL_TYPE, GW_XE_DRM_COMMAND_BASE + GW_XE_NR_VM_BIND, struct gw_xe_vm_bind)
#define GW_XE_IOCTL_EXEC_QUEUE_CREATE \
	_IOWR(GW_XE_DRM_IOCTL_TYPE, GW_XE_DRM_COMMAND_BASE + GW_XE_NR_EXEC_QUEUE_CREATE, struct gw_xe_exec_queue_create)
#define GW_XE_IOCTL_EXEC_QUEUE_DESTROY \
	_IOW(GW_XE_DRM_IOCTL_TYPE, GW_XE_DRM_COMMAND_BASE + GW_XE_NR_EXEC_QUEUE_DESTROY, struct gw_xe_exec_queue_destroy)
#define GW_XE_IOCTL_EXEC_QUEUE_GET_PROPERTY \
	_IOWR(GW_XE_DRM_IOCTL_TYPE, GW_XE_DRM_COMMAND_BASE + GW_XE_NR_EXEC_QUEUE_GET_PROPERTY, struct gw_xe_exec_queue_get_property)
#define GW_XE_IOCTL_EXEC \
	_IOW(GW_XE_DRM_IOCTL_TYPE, GW_XE_DRM_COMMAND_BASE + GW_XE_NR_EXEC, struct gw_xe_exec)
#define GW_XE_IOCTL_WAIT_USER_FENCE \
	_IOWR(GW_XE_DRM_IOCTL_TYPE, GW_XE_DRM_COMMAND_BASE + GW_XE_NR_WAIT_USER_FENCE, struct gw_xe_wait_user_fence)

/* Post-6.8 ioctls, encoded from the sizes above (layouts not described). */
#define GW_XE_IOCTL_OBSERVATION \
	_IOC(_IOC_WRITE, GW_XE_DRM_IOCTL_TYPE, GW_XE_DRM_COMMAND_BASE + GW_XE_NR_OBSERVATION, GW_XE_SIZEOF_OBSERVATION_PARAM)
#define GW_XE_IOCTL_MADVISE \
	_IOC(_IOC_WRITE, GW_XE_DRM_IOCTL_TYPE, GW_XE_DRM_COMMAND_BASE + GW_XE_NR_MADVISE, GW_XE_SIZEOF_MADVISE)
#define GW_XE_IOCTL_VM_QUERY_MEM_RANGE_ATTRS \
	_IOC(_IOC_READ | _IOC_WRITE, GW_XE_DRM_IOCTL_TYPE, GW_XE_DRM_COMMAND_BASE + GW_XE_NR_VM_QUERY_MEM_RANGE_ATTRS, GW_XE_SIZEOF_VM_QUERY_MEM_RANGE_ATTR)
#define GW_XE_IOCTL_EXEC_QUEUE_SET_PROPERTY \
	_IOC(_IOC_WRITE, GW_XE_DRM_IOCTL_TYPE, GW_XE_DRM_COMMAND_BASE + GW_XE_NR_EXEC_QUEUE_SET_PROPERTY, GW_XE_SIZEOF_EXEC_QUEUE_SET_PROPERTY)
#define GW_XE_IOCTL_VM_GET_PROPERTY \
	_IOC(_IOC_READ | _IOC_WRITE, GW_XE_DRM_IOCTL_TYPE, GW_XE_DRM_COMMAND_BASE + GW_XE_NR_VM_GET_PROPERTY, GW_XE_SIZEOF_VM_GET_PROPERTY)

/* The expected values where the generic _IOC layout applies (x86, arm64,
 * riscv, ...; not powerpc/mips/sparc/alpha), as a cross-check. */
#if _IOC_DIRBITS == 2 && _IOC_SIZEBITS == 14 && _IOC_WRITE == 1U
GW_XE_STATIC_ASSERT(GW_XE_IOCTL_DEVICE_QUERY == 0xc0286440u, "DEVICE_QUERY cmd");
GW_XE_STATIC_ASSERT(GW_XE_IOCTL_GEM_CREATE == 0xc0386441u, "GEM_CREATE cmd");
GW_XE_STATIC_ASSERT(GW_XE_IOCTL_GEM_MMAP_OFFSET == 0xc0286442u, "GEM_MMAP_OFFSET cmd");
GW_XE_STATIC_ASSERT(GW_XE_IOCTL_VM_CREATE == 0xc0206443u, "VM_CREATE cmd");
GW_XE_STATIC_ASSERT(GW_XE_IOCTL_VM_DESTROY == 0x40186444u, "VM_DESTROY cmd");
GW_XE_STATIC_ASSERT(GW_XE_IOCTL_VM_BIND == 0x40886445u, "VM_BIND cmd");
GW_XE_STATIC_ASSERT(GW_XE_IOCTL_EXEC_QUEUE_CREATE == 0xc0306446u, "EXEC_QUEUE_CREATE cmd");
GW_XE_STATIC_ASSERT(GW_XE_IOCTL_EXEC_QUEUE_DESTROY == 0x40186447u, "EXEC_QUEUE_DESTROY cmd");
GW_XE_STATIC_ASSERT(GW_XE_IOCTL_EXEC_QUEUE_GET_PROPERTY == 0xc0286448u, "EXEC_QUEUE_GET_PROPERTY cmd");
GW_XE_STATIC_ASSERT(GW_XE_IOCTL_EXEC == 0x40386449u, "EXEC cmd");
GW_XE_STATIC_ASSERT(GW_XE_IOCTL_WAIT_USER_FENCE == 0xc048644au, "WAIT_USER_FENCE cmd");
GW_XE_STATIC_ASSERT(GW_XE_IOCTL_OBSERVATION == 0x4020644bu, "OBSERVATION cmd");
GW_XE_STATIC_ASSERT(GW_XE_IOCTL_MADVISE == 0x4040644cu, "MADVISE cmd");
GW_XE_STATIC_ASSERT(GW_XE_IOCTL_VM_QUERY_MEM_RANGE_ATTRS == 0xc040644du, "VM_QUERY_MEM_RANGE_ATTRS cmd");
GW_XE_STATIC_ASSERT(GW_XE_IOCTL_EXEC_QUEUE_SET_PROPERTY == 0x4028644eu, "EXEC_QUEUE_SET_PROPERTY cmd");
GW_XE_STATIC_ASSERT(GW_XE_IOCTL_VM_GET_PROPERTY == 0xc038644fu, "VM_GET_PROPERTY cmd");
#endif /* generic _IOC layout */
