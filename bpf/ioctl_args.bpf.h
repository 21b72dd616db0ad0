/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Which DRM ioctls are followed, and the user memory their arguments point to.
 *
 * Core numbers (below 0x40 and from 0xa0) are followed when the decoder knows them
 * (gw_ioctl_nr_mask); driver-private numbers (0x40-0x9f) only for the drivers userspace named
 * (gw_drv_names), because i915 and xe give one number different meanings. Every other DRM
 * ioctl that is not a known query (gw_ioctl_note_mask, gw_drv_note_mask; every private nr
 * of a driver without a table) has its success recorded without its argument, so that the
 * manifest never claims state it did not see. Creation
 * parameters of i915 and xe objects live behind user pointers: an extension chain (each node
 * starts with the address of the next) and arrays (memory regions, a context parameter's
 * value, xe placements and bind ops). gw_ioctl_ext() reads them at the ioctl's successful
 * exit into a GW_EV_IOCTL_EXT record that precedes the ioctl's own record; the offsets read
 * here are static_asserted against the uapi structs in user/drm_decode_i915.cpp and
 * user/drm_decode_xe.cpp.
 */
#ifndef GPUWATCH_IOCTL_ARGS_BPF_H
#define GPUWATCH_IOCTL_ARGS_BPF_H

#include "files.bpf.h"

#define GW_IOC_NR(cmd)   ((cmd)&0xff)
#define GW_IOC_TYPE(cmd) (((cmd) >> 8) & 0xff)
#define GW_IOC_SIZE(cmd) (((cmd) >> 16) & 0x3fff)

#define GW_DRM_COMMAND_BASE 0x40
#define GW_DRM_COMMAND_END  0xa0
#define GW_IS_DRIVER_NR(nr) ((nr) >= GW_DRM_COMMAND_BASE && (nr) < GW_DRM_COMMAND_END)

/* i915 and xe private ioctl nrs whose argument points to more user memory (i915_drm.h,
 * xe_drm.h); the layouts read here are spelled out in user/drm_decode_*.cpp */
#define GW_I915_NR_GEM_MMAP         (0x40 + 0x1e) /* legacy: maps inside the ioctl */
#define GW_I915_NR_CONTEXT_CREATE   (0x40 + 0x2d) /* _EXT when the argument is 16 bytes */
#define GW_I915_NR_CONTEXT_SETPARAM (0x40 + 0x35)
#define GW_I915_NR_PERF_OPEN        (0x40 + 0x36)
#define GW_I915_NR_VM_CREATE        (0x40 + 0x3a)
#define GW_I915_NR_GEM_CREATE_EXT   (0x40 + 0x3c)
#define GW_XE_NR_GEM_CREATE         (0x40 + 0x01)
#define GW_XE_NR_VM_CREATE          (0x40 + 0x03)
#define GW_XE_NR_VM_BIND            (0x40 + 0x05)
#define GW_XE_NR_EXEC_QUEUE_CREATE  (0x40 + 0x06)
#define GW_I915_NR_EXECBUFFER2      (0x40 + 0x29) /* followed only for _WR with FENCE_OUT */
#define GW_I915_EXEC_FENCE_OUT      (1ULL << 17)
#define GW_I915_EXEC_FLAGS_OFF      40 /* drm_i915_gem_execbuffer2.flags */
#define GW_IOC_READ                 2U /* _IOC_READ: the kernel writes the argument back */
#define GW_XE_BIND_OP_SIZE          80 /* struct drm_xe_vm_bind_op */
#define GW_XE_VM_BIND_OP_OFF        24 /* drm_xe_vm_bind: inline op / vector_of_binds */
#define GW_DRM_NR_MODE_ADDFB2       0xb8
#define GW_ADDFB2_SIZE              104 /* struct drm_mode_fb_cmd2: its tail (offsets[3], modifier[]) */

static __always_inline u64 gw_u64_at(const u8 *buf, u32 off)
{
	return *(const u64 *)(buf + (off & 63 & ~7));
}
static __always_inline u32 gw_u32_at(const u8 *buf, u32 off)
{
	return *(const u32 *)(buf + (off & 63 & ~3));
}
static __always_inline u16 gw_u16_at(const u8 *buf, u32 off)
{
	return *(const u16 *)(buf + (off & 63 & ~1));
}

enum gw_ioctl_want {
	GW_IOCTL_SKIP = 0,   /* not DRM's, or a known query */
	GW_IOCTL_DECODE = 1, /* decoded: its argument is recorded */
	GW_IOCTL_NOTE = 2,   /* not decoded and may change state: its success is recorded */
};

static __always_inline enum gw_ioctl_want gw_mask_want(u64 decode, u64 note, u32 bit)
{
	if ((decode >> (bit & 63)) & 1)
		return GW_IOCTL_DECODE;
	return (note >> (bit & 63)) & 1 ? GW_IOCTL_NOTE : GW_IOCTL_SKIP;
}

/* how a core nr (0..255, not a driver's) is followed: by gw_ioctl_nr_mask / gw_ioctl_note_mask */
static __always_inline enum gw_ioctl_want gw_core_want(u32 nr)
{
	u32 w = (nr >> 6) & 3;

	return gw_mask_want(gw_ioctl_nr_mask[w], gw_ioctl_note_mask[w], nr);
}

/* what cmd alone says of how the ioctl is followed: SKIP when it is not DRM's; a core nr's
 * want (gw_core_want); DECODE for a private nr, for which only the file's driver decides
 * (gw_ioctl_wanted_as) */
static __always_inline enum gw_ioctl_want gw_ioctl_cmd_want(u32 cmd)
{
	u32 nr = GW_IOC_NR(cmd);

	if (GW_IOC_TYPE(cmd) != 'd')
		return GW_IOCTL_SKIP;
	return GW_IS_DRIVER_NR(nr) ? GW_IOCTL_DECODE : gw_core_want(nr);
}

/* true when gw_ioctl_wanted would say SKIP without reading the file: not DRM's, or a core nr
 * neither mask names (a driver-private nr needs the file's driver: false) */
static __always_inline bool gw_ioctl_core_skip(u32 cmd)
{
	return gw_ioctl_cmd_want(cmd) == GW_IOCTL_SKIP;
}

/* how the ioctl is followed, given what cmd alone says (gw_ioctl_cmd_want: a caller that
 * tested it already passes it on instead of reading the masks again): a core nr by that, a
 * private nr by its driver's masks (GW_DRV_OTHER: drivers without a table); *drv gets the
 * driver */
static __always_inline enum gw_ioctl_want gw_ioctl_wanted_as(struct file *f, u32 cmd, enum gw_ioctl_want by_cmd,
							     u8 *drv)
{
	u32 nr = GW_IOC_NR(cmd), bit, w;
	u8 d;

	*drv = GW_DRV_OTHER;
	if (by_cmd == GW_IOCTL_SKIP || !GW_IS_DRIVER_NR(nr))
		return by_cmd;
	d = gw_driver_id(f);
	if (d >= GW_DRV_MAX)
		return GW_IOCTL_SKIP;
	*drv = d;
	bit = nr - GW_DRM_COMMAND_BASE;
	w = (bit >> 6) & 1;
	return gw_mask_want(gw_drv_nr_mask[d][w], gw_drv_note_mask[d][w], bit);
}

static __always_inline enum gw_ioctl_want gw_ioctl_wanted(struct file *f, u32 cmd, u8 *drv)
{
	return gw_ioctl_wanted_as(f, cmd, gw_ioctl_cmd_want(cmd), drv);
}

/* ---- user memory behind an ioctl argument (GW_EV_IOCTL_EXT) ----------------------------- */

static __always_inline void gw_ext_chain(struct gw_ev_ioctl_ext *x, u64 next)
{
	u8 n = 0;

	for (int i = 0; i < GW_EXT_NODES_MAX && next; i++) {
		if (bpf_probe_read_user(x->nodes[i].data, GW_EXT_NODE_SIZE, (void *)next)) {
			x->truncated = 1;
			GW_COUNT(failed_reads);
			break;
		}
		x->nodes[i].uaddr = next;
		next = *(u64 *)x->nodes[i].data; /* i915_user_extension.next_extension / xe's */
		n = i + 1;
	}
	if (next && n == GW_EXT_NODES_MAX)
		x->truncated = 1;
	x->n_nodes = n;
}

static __always_inline void gw_ext_blob(struct gw_ev_ioctl_ext *x, u16 owner, u64 uaddr, u64 len)
{
	u8 i = x->n_blobs;

	if (!uaddr || !len)
		return;
	if (i >= GW_EXT_BLOBS_MAX) {
		x->truncated = 1;
		return;
	}
	if (len > GW_EXT_BLOB_SIZE) {
		len = GW_EXT_BLOB_SIZE;
		x->truncated = 1;
	}
	/* the index masked in a register the compiler cannot drop (older verifiers lose the
	 * i < GW_EXT_BLOBS_MAX bound otherwise), 1 <= len <= GW_EXT_BLOB_SIZE (a power of two) */
	u64 idx = i;
	asm volatile("%0 &= 1" : "+r"(idx));
	struct gw_ext_blob *b = &x->blobs[idx];
	if (bpf_probe_read_user(b->data, ((len - 1) & (GW_EXT_BLOB_SIZE - 1)) + 1, (void *)uaddr)) {
		x->truncated = 1;
		GW_COUNT(failed_reads);
		return;
	}
	b->uaddr = uaddr;
	b->len = len;
	b->owner = owner;
	x->n_blobs = i + 1;
}

/* which ioctls carry more user memory: 1 = chain at in[off], 2 = no chain (arrays only).
 * in NULL: whether the command may (the argument not read yet): non-zero where a field of the
 * argument decides */
static __always_inline int gw_ext_wanted(u8 drv, u32 cmd, const u8 *in, u32 *chain_off)
{
	u32 nr = GW_IOC_NR(cmd), size = GW_IOC_SIZE(cmd);

	*chain_off = 0;
	if (nr == GW_DRM_NR_MODE_ADDFB2 && size >= GW_ADDFB2_SIZE)
		return 2; /* a core ioctl: any driver */
	if (drv == GW_DRV_I915) {
		switch (nr) {
		case GW_I915_NR_GEM_CREATE_EXT:
			*chain_off = 16; /* drm_i915_gem_create_ext.extensions */
			return 1;
		case GW_I915_NR_CONTEXT_CREATE: /* _EXT with I915_CONTEXT_CREATE_FLAGS_USE_EXTENSIONS */
			if (size < 16 || (in && !(gw_u32_at(in, 4) & 1)))
				return 0;
			*chain_off = 8;
			return 1;
		case GW_I915_NR_VM_CREATE: return 1; /* drm_i915_gem_vm_control.extensions at 0 */
		case GW_I915_NR_CONTEXT_SETPARAM:
			return !in || gw_u32_at(in, 4) ? 2 : 0; /* param.size != 0: value points to size bytes */
		case GW_I915_NR_PERF_OPEN: return 2;
		}
		return 0;
	}
	if (drv == GW_DRV_XE) {
		switch (nr) {
		case GW_XE_NR_GEM_CREATE:
		case GW_XE_NR_VM_CREATE:
		case GW_XE_NR_VM_BIND:
		case GW_XE_NR_EXEC_QUEUE_CREATE: return 1; /* extensions at 0 */
		}
	}
	return 0;
}

static __always_inline void gw_ext_arrays(struct gw_ev_ioctl_ext *x, u8 drv, u32 nr, const u8 *in, u64 arg)
{
	if (nr == GW_DRM_NR_MODE_ADDFB2) { /* the argument past what in[] holds */
		gw_ext_blob(x, GW_EXT_OWNER_ARG, arg + GW_IOCTL_ARG_MAX, GW_ADDFB2_SIZE - GW_IOCTL_ARG_MAX);
		return;
	}
	if (drv == GW_DRV_I915) {
		if (nr == GW_I915_NR_CONTEXT_SETPARAM) /* drm_i915_gem_context_param: size @4, value @16 */
			gw_ext_blob(x, GW_EXT_OWNER_ARG, gw_u64_at(in, 16), gw_u32_at(in, 4));
		if (nr == GW_I915_NR_PERF_OPEN) /* drm_i915_perf_open_param: num_properties @4, properties_ptr @8 */
			gw_ext_blob(x, GW_EXT_OWNER_ARG, gw_u64_at(in, 8), (u64)gw_u32_at(in, 4) * 16);
		for (int i = 0; i < GW_EXT_NODES_MAX; i++) {
			const u8 *d = x->nodes[i].data;
			if (i >= x->n_nodes)
				break;
			/* after the 32-byte i915_user_extension header:
			 * GEM_CREATE_EXT_MEMORY_REGIONS (name 0): num_regions @36, regions @40, 4 bytes each */
			if (nr == GW_I915_NR_GEM_CREATE_EXT && gw_u32_at(d, 8) == 0)
				gw_ext_blob(x, i, gw_u64_at(d, 40), (u64)gw_u32_at(d, 36) * 4);
			/* CONTEXT_CREATE_EXT_SETPARAM (name 0): param.size @36, param.value @48 */
			if (nr == GW_I915_NR_CONTEXT_CREATE && gw_u32_at(d, 8) == 0 && gw_u32_at(d, 36))
				gw_ext_blob(x, i, gw_u64_at(d, 48), gw_u32_at(d, 36));
		}
		return;
	}
	if (drv == GW_DRV_XE) {
		/* drm_xe_exec_queue_create: width @8, num_placements @10, instances @24, 8 bytes each */
		if (nr == GW_XE_NR_EXEC_QUEUE_CREATE)
			gw_ext_blob(x, GW_EXT_OWNER_ARG, gw_u64_at(in, 24),
				    (u64)gw_u16_at(in, 8) * gw_u16_at(in, 10) * 8);
		/* drm_xe_vm_bind: num_binds @20; one op inline @24, else vector_of_binds @24 */
		if (nr == GW_XE_NR_VM_BIND) {
			u32 n = gw_u32_at(in, 20);
			if (n == 1)
				gw_ext_blob(x, GW_EXT_OWNER_ARG, arg + GW_XE_VM_BIND_OP_OFF, GW_XE_BIND_OP_SIZE);
			else
				gw_ext_blob(x, GW_EXT_OWNER_ARG, gw_u64_at(in, GW_XE_VM_BIND_OP_OFF),
					    (u64)n * GW_XE_BIND_OP_SIZE);
		}
	}
}

/* whether an ioctl may carry user memory beyond its argument (gw_ext_wanted), by its command */
static __always_inline bool gw_ext_possible(u8 drv, u32 cmd)
{
	u32 chain_off;

	return gw_ext_wanted(drv, cmd, NULL, &chain_off) != 0;
}

static __always_inline void gw_ioctl_ext(u64 file, u32 cmd, u8 drv, const u8 *in, u64 arg, u8 hook)
{
	u32 chain_off;
	int how = gw_ext_wanted(drv, cmd, in, &chain_off);
	struct gw_ev_ioctl_ext *x;

	if (!how)
		return;
	x = GW_RESERVE(struct gw_ev_ioctl_ext, GW_EV_IOCTL_EXT, hook);
	if (!x)
		return;
	x->file = file;
	x->cmd = cmd;
	/* nodes and blobs past n_nodes / n_blobs (and blob bytes past len) are not written:
	 * userspace reads only what the counts cover */
	x->n_nodes = 0;
	x->n_blobs = 0;
	x->truncated = 0;
	x->pad0 = 0;
	if (how == 1)
		gw_ext_chain(x, gw_u64_at(in, chain_off));
	gw_ext_arrays(x, drv, GW_IOC_NR(cmd), in, arg);
	gw_submit(x);
}

#endif
