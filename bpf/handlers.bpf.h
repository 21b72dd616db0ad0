/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Hook-independent handlers: what happens at the entry and at the exit of each syscall
 * gpuwatch follows, given plain arguments. The tracepoint programs in gpuwatch.bpf.c call
 * these; the fentry/fexit programs of the fast path (fexit.bpf.h) call the same functions
 * with the same arguments (the DRM file already known: gw_mmap_args), so both paths emit
 * identical records, but for a DRM ioctl's. That has no entry program on the fast path:
 * gw_ioctl_after reads its argument after the call, straight into the record
 * (gw_ioctl_emit_direct), or for an ioctl with an extension record through the same
 * gw_ioctl_emit; both fill and submit the record with gw_ioctl_record and gw_ioctl_submit. It
 * is a GW_EV_IOCTL_AFTER, the argument once, which userspace reads as the tracepoint path's
 * GW_EV_IOCTL with out[] = in[].
 *
 * Join: entry -> gw_pending_map (the thread's task storage) -> exit -> one record. Only
 * successful syscalls emit.
 */
#ifndef GPUWATCH_HANDLERS_BPF_H
#define GPUWATCH_HANDLERS_BPF_H

#include "ioctl_args.bpf.h"

#define GW_PAGE_ALIGN(x)  (((x) + 4095) & ~4095ULL)
#define GW_IS_ERR_ADDR(x) ((unsigned long)(x) >= (unsigned long)-4095)

#define GW_DRM_NR_PRIME_HANDLE_TO_FD    0x2d
#define GW_DRM_NR_PRIME_FD_TO_HANDLE    0x2e
/* SYNCOBJ_HANDLE_TO_FD with DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE: a sync_file fd
 * (struct drm_syncobj_handle: handle, flags, fd at byte 8) */
#define GW_DRM_NR_SYNCOBJ_HANDLE_TO_FD  0xc1
#define GW_DRM_SYNCOBJ_EXPORT_SYNC_FILE 1
#define GW_DRM_PRIME_FD_OFFSET          8 /* struct drm_prime_handle { u32 handle; u32 flags; s32 fd; } */
#define GW_FIONCLEX                     0x5450
#define GW_FIOCLEX                      0x5451
#define GW_F_DUPFD                      0
#define GW_F_SETFD                      2
#define GW_F_DUPFD_CLOEXEC              1030
#define GW_MAP_SHARED                   0x01
#define GW_MAP_SHARED_VALIDATE          0x03
#define GW_MAP_FIXED                    0x10
#define GW_MAP_ANONYMOUS                0x20

/* this thread's scratch (NULL, counted as a lost record, when the kernel cannot give it: no
 * memory, or its storage lock is held by a program this one interrupted) */
static __always_inline struct gw_pending *gw_thread_scratch(void)
{
	struct gw_pending *p =
		bpf_task_storage_get(&gw_scratch, bpf_get_current_task_btf(), NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!p)
		GW_COUNT(pending_full);
	return p;
}

static __always_inline struct gw_pending *gw_scratch_get(u32 sc)
{
	struct gw_pending *p = gw_thread_scratch();
	if (p)
		p->sc = sc;
	return p;
}

static __always_inline void gw_pending_put(struct gw_pending *p)
{
	struct gw_pending *q =
		bpf_task_storage_get(&gw_pending_map, bpf_get_current_task_btf(), NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!q) {
		GW_COUNT(pending_full);
		return;
	}
	__builtin_memcpy(q, p, sizeof(*q));
}

/* takes this thread's pending entry (whatever its kind) into the scratch and clears it;
 * returns it only if it is of kind sc (a stale entry of another kind is dropped) */
static __always_inline struct gw_pending *gw_pending_take2(u32 sc, u32 sc2)
{
	struct gw_pending *p = bpf_task_storage_get(&gw_pending_map, bpf_get_current_task_btf(), NULL, 0);
	struct gw_pending *s;

	if (!p || !p->sc)
		return NULL;
	s = gw_thread_scratch();
	if (s)
		__builtin_memcpy(s, p, sizeof(*s));
	p->sc = 0;
	if (s && s->sc != sc && s->sc != sc2)
		return NULL;
	return s;
}

#define gw_pending_take(sc) gw_pending_take2(sc, sc)

static __always_inline bool gw_tgid_has_maps(void)
{
	u32 tgid = bpf_get_current_pid_tgid() >> 32;
	return bpf_map_lookup_elem(&gw_has_maps, &tgid) != NULL;
}

/* ---- close, close_range, dup*, fcntl ------------------------------------------------ */

static __always_inline void gw_close_enter(int fd, u8 hook)
{
	struct file *f = gw_fd_file(fd, NULL);
	if (gw_classify(f, NULL, NULL))
		gw_emit_close(fd, f, hook);
}

static __always_inline void gw_close_range_enter(u64 first, u64 last, u64 flags)
{
	struct gw_pending *p = gw_scratch_get(GW_SC_CLOSE_RANGE);
	if (!p)
		return;
	p->args[0] = first;
	p->args[1] = last;
	p->args[2] = flags;
	gw_pending_put(p);
}

static __always_inline void gw_close_range_exit(long ret, u8 hook)
{
	struct gw_pending *p = gw_pending_take(GW_SC_CLOSE_RANGE);
	struct gw_ev_close_range *e;

	if (!p || ret != 0)
		return;
	e = GW_RESERVE(struct gw_ev_close_range, GW_EV_CLOSE_RANGE, hook);
	if (!e)
		return;
	e->first = p->args[0] > 0xffffffffULL ? 0xffffffffU : p->args[0];
	e->last = p->args[1] > 0xffffffffULL ? 0xffffffffU : p->args[1];
	e->flags = p->args[2];
	e->pad0 = 0;
	gw_submit(e);
}

/* dup2/dup3 may replace an fd that referred to a followed file */
static __always_inline void gw_dup2_enter(int newfd)
{
	struct file *f = gw_fd_file(newfd, NULL);
	struct gw_pending *p;

	if (!gw_classify(f, NULL, NULL))
		return;
	p = gw_scratch_get(GW_SC_DUP2);
	if (!p)
		return;
	p->args[0] = newfd;
	p->file = (u64)f;
	gw_pending_put(p);
}

static __always_inline void gw_dup_exit(long ret, u8 hook)
{
	struct gw_pending *p = gw_pending_take(GW_SC_DUP2);

	if (ret < 0)
		return;
	if (!gw_emit_fd(ret, GW_FD_DUP, hook) && p && (long)p->args[0] == ret)
		gw_emit_close(ret, (struct file *)p->file, hook);
}

static __always_inline void gw_fcntl_enter(int fd, u64 cmd)
{
	struct gw_pending *p;

	if (cmd != GW_F_DUPFD && cmd != GW_F_DUPFD_CLOEXEC && cmd != GW_F_SETFD)
		return;
	p = gw_scratch_get(GW_SC_FCNTL);
	if (!p)
		return;
	p->args[0] = fd;
	p->args[1] = cmd;
	gw_pending_put(p);
}

static __always_inline void gw_fcntl_exit(long ret, u8 hook)
{
	struct gw_pending *p = gw_pending_take(GW_SC_FCNTL);

	if (!p || ret < 0)
		return;
	if (p->args[1] == GW_F_SETFD)
		gw_emit_fd(p->args[0], GW_FD_FLAGS, hook);
	else
		gw_emit_fd(ret, GW_FD_DUP, hook);
}

/* ---- ioctl ---------------------------------------------------------------------------- */

/* the bytes of an ioctl's argument a record holds. The barrier makes clang keep the clamped
 * value, not spill the raw one before the compare: 6.1's verifier does not carry a bound the
 * compare finds to a copy spilled before it, and refuses the read */
static __always_inline u32 gw_ioctl_arg_size(u32 cmd)
{
	u32 size = GW_IOC_SIZE(cmd);

	if (size > GW_IOCTL_ARG_MAX)
		size = GW_IOCTL_ARG_MAX;
	asm volatile("" : "+r"(size));
	return size;
}

/* size bytes (gw_ioctl_arg_size) of a decoded ioctl's argument into dst, nothing after them;
 * false, counted, when the read failed */
static __always_inline bool gw_ioctl_read_bytes(u8 *dst, u32 size, u64 arg)
{
	if (size && bpf_probe_read_user(dst, size, (void *)arg)) {
		GW_COUNT(failed_reads);
		return false;
	}
	return true;
}

/* gw_ioctl_read_bytes into dst (GW_IOCTL_ARG_MAX bytes, 8-aligned: a stack array of u64, the
 * scratch's in[] or a record's in[] or out[]), zero-padded */
static __always_inline bool gw_ioctl_read_into(u8 *dst, u32 size, u64 arg)
{
	u64 *d = (u64 *)dst;

#pragma unroll
	for (int i = 0; i < GW_IOCTL_ARG_MAX / 8; i++)
		d[i] = 0; /* 8-byte stores: see gw_copy_arg */
	return gw_ioctl_read_bytes(dst, size, arg);
}

static __always_inline bool gw_is_execbuf(u32 cmd, u8 drv)
{
	return drv == GW_DRV_I915 && GW_IOC_NR(cmd) == GW_I915_NR_EXECBUFFER2;
}

/* execbuf is the hot path: it is recorded only as EXECBUFFER2_WR (the kernel writes rsvd2
 * back) with an out-fence in its flags (a new fd) */
static __always_inline bool gw_execbuf_wanted(u32 cmd, u64 flags)
{
	return ((cmd >> 30) & GW_IOC_READ) && (flags & GW_I915_EXEC_FENCE_OUT);
}

/* the dma-buf file a PRIME import names, from its argument (0 for other ioctls) */
static __always_inline u64 gw_ioctl_import_file(u32 cmd, const u8 *in)
{
	if (GW_IOC_NR(cmd) != GW_DRM_NR_PRIME_FD_TO_HANDLE)
		return 0;
	return (u64)gw_fd_file(*(const int *)&in[GW_DRM_PRIME_FD_OFFSET], NULL);
}

/* a decoded ioctl's argument into in[GW_IOCTL_ARG_MAX] (8-aligned), zero-padded (before the
 * call on the tracepoint path; after it on the fexit path, for an ioctl with an extension
 * record); false when it is not to be recorded: the read failed, or an execbuf without an
 * out-fence. *aux_file: the dma-buf file a PRIME import names (0 for other ioctls). */
static __always_inline bool gw_ioctl_read_arg(u32 cmd, u64 arg, u8 drv, u8 *in, u64 *aux_file)
{
	if (!gw_ioctl_read_into(in, gw_ioctl_arg_size(cmd), arg))
		return false;
	if (gw_is_execbuf(cmd, drv) && !gw_execbuf_wanted(cmd, gw_u64_at(in, GW_I915_EXEC_FLAGS_OFF)))
		return false;
	*aux_file = gw_ioctl_import_file(cmd, in);
	return true;
}

/* the tracepoint path's entry: the file looked up from fd once the command is known to matter;
 * the argument as read before the call kept for the exit (the fexit path: gw_ioctl_after) */
static __always_inline void gw_ioctl_enter(int fd, u32 cmd, u64 arg)
{
	struct file *f;
	struct gw_pending *p;
	enum gw_ioctl_want want;
	u8 drv;

	if (cmd == GW_FIOCLEX || cmd == GW_FIONCLEX) {
		p = gw_scratch_get(GW_SC_FDFLAGS_IOCTL);
		if (!p)
			return;
		p->args[0] = fd;
		gw_pending_put(p);
		return;
	}
	if (GW_IOC_TYPE(cmd) != 'd')
		return;
	f = gw_fd_file(fd, NULL);
	if (gw_classify(f, NULL, NULL) != GW_FILE_DRM)
		return;
	want = gw_ioctl_wanted(f, cmd, &drv);
	if (want == GW_IOCTL_SKIP)
		return;
	p = gw_scratch_get(GW_SC_IOCTL);
	if (!p)
		return;
	p->args[0] = fd;
	p->args[1] = cmd;
	p->args[2] = arg;
	p->args[3] = drv;
	p->note = want == GW_IOCTL_NOTE;
	p->file = (u64)f;
	p->aux_file = 0;
	if (p->note) {
		gw_pending_put(p);
		return;
	}
	if (!gw_ioctl_read_arg(cmd, arg, drv, p->in, &p->aux_file))
		return;
	gw_pending_put(p);
}

/* the record of an ioctl that is not decoded and may change state: that it succeeded */
static __always_inline void gw_ioctl_emit_note(u64 file, int fd, u32 cmd, u8 drv, long ret, u8 hook)
{
	struct gw_ev_ioctl *e;

	if (ret < 0)
		return;
	e = GW_RESERVE(struct gw_ev_ioctl, GW_EV_IOCTL, hook);
	if (!e)
		return;
	e->file = file;
	e->aux_file = 0;
	e->cmd = cmd;
	e->fd = fd;
	e->arg_size = 0;
	e->drv = drv;
	e->undecoded = 1;
	e->ret = ret;
	__builtin_memset(e->in, 0, sizeof(e->in));
	__builtin_memset(e->out, 0, sizeof(e->out));
	gw_submit(e);
}

/* a decoded ioctl's argument, 64 bytes, as eight 8-byte moves (dst and src 8-aligned): a
 * memcpy through u8 pointers compiles to 64 one-byte stores, clang not knowing the alignment */
static __always_inline void gw_copy_arg(u8 *dst, const u8 *src)
{
	u64 *d = (u64 *)dst;
	const u64 *s = (const u64 *)src;

#pragma unroll
	for (int i = 0; i < GW_IOCTL_ARG_MAX / 8; i++)
		d[i] = s[i];
}

/* whether a decoded ioctl that returned ret succeeded (i915 PERF_OPEN returns its new fd) */
static __always_inline bool gw_ioctl_ret_ok(u32 cmd, u8 drv, long ret)
{
	if (drv == GW_DRV_I915 && GW_IOC_NR(cmd) == GW_I915_NR_PERF_OPEN)
		return ret >= 0;
	return ret == 0;
}

/* gw_ioctl_ret_ok; a legacy i915 GEM_MMAP that succeeded marks the process as mapping DRM
 * memory (it maps without mmap()) */
static __always_inline bool gw_ioctl_succeeded(struct task_struct *t, u32 cmd, u8 drv, long ret)
{
	if (!gw_ioctl_ret_ok(cmd, drv, ret))
		return false;
	if (drv == GW_DRV_I915 && GW_IOC_NR(cmd) == GW_I915_NR_GEM_MMAP) {
		u32 tgid = t->tgid;
		u8 one = 1;
		bpf_map_update_elem(&gw_has_maps, &tgid, &one, BPF_ANY);
	}
	return true;
}

/* a decoded ioctl's record, reserved, everything but in[], out[], fd and aux_file filled
 * (size: gw_ioctl_arg_size(cmd), which the caller holds). after: a GW_EV_IOCTL_AFTER (the
 * argument read once, after the call: a gw_ev_ioctl without out[], which must not be touched;
 * the verifier holds us to it), else a GW_EV_IOCTL */
static __always_inline struct gw_ev_ioctl *gw_ioctl_record(struct task_struct *t, bool after, u64 file, u32 cmd,
							   u32 size, u8 drv, long ret, u8 hook)
{
	struct gw_ev_ioctl *e =
		after ? (struct gw_ev_ioctl *)GW_RESERVE_FROM(t, struct gw_ev_ioctl_after, GW_EV_IOCTL_AFTER, hook)
		      : GW_RESERVE_FROM(t, struct gw_ev_ioctl, GW_EV_IOCTL, hook);

	if (!e)
		return NULL;
	e->file = file;
	e->cmd = cmd;
	e->arg_size = size;
	e->drv = drv;
	e->undecoded = 0;
	e->ret = ret;
	return e;
}

/* submit e, its argument after the call in out (e->out, or e->in for a GW_EV_IOCTL_AFTER)
 * filled, and record the fd the ioctl installed, if any: the perf stream, out-fence or
 * sync_file (a PRIME export's dma-buf is aux_file, its fd comes with the record) */
static __always_inline void gw_ioctl_submit(struct gw_ev_ioctl *e, const u8 *out, u32 cmd, u8 drv, long ret, u8 hook)
{
	u32 nr = GW_IOC_NR(cmd);
	int new_fd = -1;

	if (nr == GW_DRM_NR_PRIME_HANDLE_TO_FD)
		e->aux_file = (u64)gw_fd_file(gw_u32_at(out, GW_DRM_PRIME_FD_OFFSET), NULL);
	if (drv == GW_DRV_I915 && nr == GW_I915_NR_PERF_OPEN)
		new_fd = ret;
	else if (drv == GW_DRV_I915 && nr == GW_I915_NR_EXECBUFFER2)
		new_fd = gw_u32_at(out, 60); /* upper half of rsvd2 */
	else if (nr == GW_DRM_NR_SYNCOBJ_HANDLE_TO_FD && (gw_u32_at(e->in, 4) & GW_DRM_SYNCOBJ_EXPORT_SYNC_FILE))
		new_fd = gw_u32_at(out, 8);
	gw_submit(e);
	if (new_fd >= 0)
		gw_emit_fd(new_fd, GW_FD_OPEN, hook);
}

/* the records of a decoded ioctl that returned ret: in = the argument as the hook read it
 * before the call (tracepoint path) or after it (the fexit path's ioctls with user memory
 * beyond the argument: gw_ioctl_after); out_is_in: read after the call, so the argument is
 * not read again for out, and the record is a GW_EV_IOCTL_AFTER */
static __always_inline void gw_ioctl_emit(struct task_struct *t, u64 file, u64 aux_file, int fd, u32 cmd, u64 arg,
					  u8 drv, const u8 *in, long ret, u8 hook, bool out_is_in)
{
	u32 size = gw_ioctl_arg_size(cmd);
	struct gw_ev_ioctl *e;

	if (!gw_ioctl_succeeded(t, cmd, drv, ret))
		return;
	gw_ioctl_ext(file, cmd, drv, in, arg, hook);
	e = gw_ioctl_record(t, out_is_in, file, cmd, size, drv, ret, hook);
	if (!e)
		return;
	e->aux_file = aux_file;
	e->fd = fd;
	gw_copy_arg(e->in, in);
	if (out_is_in) {
		gw_ioctl_submit(e, e->in, cmd, drv, ret, hook);
		return;
	}
	if (!gw_ioctl_read_into(e->out, size, arg)) {
		bpf_ringbuf_discard(e, 0);
		return;
	}
	gw_ioctl_submit(e, e->out, cmd, drv, ret, hook);
}

/* the tracepoint path's exit: the entry's pending argument, the argument now, one record
 * (t: the current task) */
static __always_inline void gw_ioctl_exit(struct task_struct *t, long ret, u8 hook)
{
	struct gw_pending *p = gw_pending_take2(GW_SC_IOCTL, GW_SC_FDFLAGS_IOCTL);

	if (!p)
		return;
	if (p->sc == GW_SC_FDFLAGS_IOCTL) {
		if (ret == 0)
			gw_emit_fd(p->args[0], GW_FD_FLAGS, hook);
		return;
	}
	if (p->note)
		gw_ioctl_emit_note(p->file, p->args[0], p->args[1], p->args[3], ret, hook);
	else
		gw_ioctl_emit(t, p->file, p->aux_file, p->args[0], p->args[1], p->args[2], p->args[3], p->in, ret, hook,
			      false);
}

/* ---- mmap, munmap, mremap ------------------------------------------------------------ */

/* the arguments of an mmap of f (any file, or NULL), in the scratch entry gw_mmap_emit reads;
 * NULL when the mapping cannot matter */
static __always_inline struct gw_pending *gw_mmap_args(struct file *f, u64 addr, u64 len, u64 prot, u64 flags, int fd,
						       u64 off)
{
	struct gw_pending *p;

	if (gw_classify(f, NULL, NULL) != GW_FILE_DRM)
		f = NULL;
	/* a non-DRM mapping matters only if MAP_FIXED may replace a DRM mapping */
	if (!f && (!(flags & GW_MAP_FIXED) || !gw_tgid_has_maps()))
		return NULL;
	p = gw_scratch_get(GW_SC_MMAP);
	if (!p)
		return NULL;
	p->args[0] = addr;
	p->args[1] = len;
	p->args[2] = prot;
	p->args[3] = flags;
	p->args[4] = fd;
	p->args[5] = off;
	p->file = (u64)f;
	return p;
}

static __always_inline void gw_mmap_enter(u64 addr, u64 len, u64 prot, u64 flags, int fd, u64 off)
{
	struct file *f = NULL;
	struct gw_pending *p;

	if (!(flags & GW_MAP_ANONYMOUS) && fd >= 0)
		f = gw_fd_file(fd, NULL);
	p = gw_mmap_args(f, addr, len, prot, flags, fd, off);
	if (p)
		gw_pending_put(p);
}

/* the record of an mmap (p from gw_mmap_args, NULL: none) that returned ret */
static __always_inline void gw_mmap_emit(struct gw_pending *p, long ret, u8 hook)
{
	u32 tgid = bpf_get_current_pid_tgid() >> 32;
	u8 one = 1;

	if (!p || GW_IS_ERR_ADDR(ret))
		return;
	if (!p->file) {
		struct gw_ev_munmap *u = GW_RESERVE(struct gw_ev_munmap, GW_EV_MUNMAP, hook);
		if (!u)
			return;
		u->start = ret;
		u->length = GW_PAGE_ALIGN(p->args[1]);
		gw_submit(u);
		return;
	}
	bpf_map_update_elem(&gw_has_maps, &tgid, &one, BPF_ANY);
	struct gw_ev_mmap *e = GW_RESERVE(struct gw_ev_mmap, GW_EV_MMAP, hook);
	if (!e)
		return;
	e->file = p->file;
	e->start = ret;
	e->length = GW_PAGE_ALIGN(p->args[1]);
	e->offset = p->args[5];
	e->fd = p->args[4];
	e->prot = p->args[2];
	e->flags = p->args[3];
	e->shared = (p->args[3] & 3) == GW_MAP_SHARED || (p->args[3] & 3) == GW_MAP_SHARED_VALIDATE;
	e->via = GW_VIA_FILE;
	__builtin_memset(e->pad0, 0, sizeof(e->pad0));
	e->dev = 0;
	gw_submit(e);
}

static __always_inline void gw_mmap_exit(long ret, u8 hook)
{
	gw_mmap_emit(gw_pending_take(GW_SC_MMAP), ret, hook);
}

static __always_inline void gw_munmap_enter(u64 addr, u64 len)
{
	struct gw_pending *p;

	if (!gw_tgid_has_maps())
		return;
	p = gw_scratch_get(GW_SC_MUNMAP);
	if (!p)
		return;
	p->args[0] = addr;
	p->args[1] = len;
	gw_pending_put(p);
}

static __always_inline void gw_munmap_exit(long ret, u8 hook)
{
	struct gw_pending *p = gw_pending_take(GW_SC_MUNMAP);
	struct gw_ev_munmap *e;

	if (!p || ret != 0)
		return;
	e = GW_RESERVE(struct gw_ev_munmap, GW_EV_MUNMAP, hook);
	if (!e)
		return;
	e->start = p->args[0];
	e->length = GW_PAGE_ALIGN(p->args[1]);
	gw_submit(e);
}

static __always_inline void gw_mremap_enter(u64 old_addr, u64 old_len, u64 new_len, u64 flags)
{
	struct gw_pending *p;

	if (!gw_tgid_has_maps())
		return;
	p = gw_scratch_get(GW_SC_MREMAP);
	if (!p)
		return;
	p->args[0] = old_addr;
	p->args[1] = old_len;
	p->args[2] = new_len;
	p->args[3] = flags;
	gw_pending_put(p);
}

static __always_inline void gw_mremap_exit(long ret, u8 hook)
{
	struct gw_pending *p = gw_pending_take(GW_SC_MREMAP);
	struct gw_ev_mremap *e;

	if (!p || GW_IS_ERR_ADDR(ret))
		return;
	e = GW_RESERVE(struct gw_ev_mremap, GW_EV_MREMAP, hook);
	if (!e)
		return;
	e->old_start = p->args[0];
	e->old_length = GW_PAGE_ALIGN(p->args[1]);
	e->new_start = ret;
	e->new_length = GW_PAGE_ALIGN(p->args[2]);
	e->flags = p->args[3];
	e->pad0 = 0;
	gw_submit(e);
}

#endif
