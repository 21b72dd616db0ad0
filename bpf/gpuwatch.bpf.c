// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gpuwatch tracer: follows the processes of one cgroup v2 directory and its descendants
 * (bpf_current_task_under_cgroup on gw_cgroup) and reports, into the gw_events ring buffer,
 * every DRM or dma-buf fd they install or close, every state-changing DRM ioctl that
 * succeeds, every mapping of a DRM file, and fork/exec/exit. See gpuwatch.h for the records.
 *
 * Hooks, in two paths that emit the same records (the logic lives in handlers.bpf.h):
 * - tracepoint path: the syscall tracepoints (tp/syscalls/...), the only kind every kernel
 *   allows. They cost every syscall of every task a cgroup check while attached.
 * - fexit path (fexit.bpf.h): BPF trampolines on kernel functions, loaded per hook group
 *   only where they load and attach (user/hook_path_probe.cpp probes; never the kernel version):
 *     ioctl    fexit drm_ioctl                instead of sys_{enter,exit}_ioctl
 *     mmap     fexit mmap_region              instead of sys_{enter,exit}_mmap
 *     cloexec  fexit set_close_on_exec        instead of FIOCLEX/FIONCLEX in sys_*_ioctl
 *                                             and F_SETFD in sys_*_fcntl
 *     syscalls fentry/fexit __x64_sys_NAME    instead of sys_{enter,exit}_NAME for open,
 *                                             openat, openat2, close, close_range, dup,
 *                                             dup2, dup3, fcntl, munmap, mremap
 *   A tracepoint twin still loaded for another group skips what its fexit group covers
 *   (gw_ioctl_fexit, gw_cloexec_fexit). With every group on fexit no syscall tracepoint is
 *   attached, and tasks outside the followed cgroup pay nothing on syscalls they make.
 * sched_process_{fork,exec,exit} and cgroup_attach_task are BTF tracepoints (tp_btf),
 * which work on both paths. The task_file and task_vma iterators take the attach-time
 * snapshot of processes that already hold DRM state.
 */
#include "fexit.bpf.h"
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define TP_ENTER(name) SEC("tp/syscalls/sys_enter_" #name) int tp_enter_##name(struct trace_event_raw_sys_enter *ctx)
#define TP_EXIT(name)  SEC("tp/syscalls/sys_exit_" #name) int tp_exit_##name(struct trace_event_raw_sys_exit *ctx)
#define H              GW_HOOK_TRACEPOINT

/* open, openat, openat2: a new DRM fd (a new open can never replace an fd) */
TP_EXIT(open)
{
	if (gw_followed() && ctx->ret >= 0)
		gw_emit_fd(ctx->ret, GW_FD_OPEN, H);
	return 0;
}
TP_EXIT(openat)
{
	if (gw_followed() && ctx->ret >= 0)
		gw_emit_fd(ctx->ret, GW_FD_OPEN, H);
	return 0;
}
TP_EXIT(openat2)
{
	if (gw_followed() && ctx->ret >= 0)
		gw_emit_fd(ctx->ret, GW_FD_OPEN, H);
	return 0;
}

TP_ENTER(close)
{
	if (gw_followed())
		gw_close_enter(ctx->args[0], H);
	return 0;
}
TP_ENTER(close_range)
{
	if (gw_followed())
		gw_close_range_enter(ctx->args[0], ctx->args[1], ctx->args[2]);
	return 0;
}
TP_EXIT(close_range)
{
	if (gw_followed())
		gw_close_range_exit(ctx->ret, H);
	return 0;
}

TP_EXIT(dup)
{
	if (gw_followed())
		gw_dup_exit(ctx->ret, H);
	return 0;
}
TP_ENTER(dup2)
{
	if (gw_followed())
		gw_dup2_enter(ctx->args[1]);
	return 0;
}
TP_EXIT(dup2)
{
	if (gw_followed())
		gw_dup_exit(ctx->ret, H);
	return 0;
}
TP_ENTER(dup3)
{
	if (gw_followed())
		gw_dup2_enter(ctx->args[1]);
	return 0;
}
TP_EXIT(dup3)
{
	if (gw_followed())
		gw_dup_exit(ctx->ret, H);
	return 0;
}
TP_ENTER(fcntl)
{
	if (gw_cloexec_fexit && ctx->args[1] == GW_F_SETFD)
		return 0; /* set_close_on_exec's fexit sees it */
	if (gw_followed())
		gw_fcntl_enter(ctx->args[0], ctx->args[1]);
	return 0;
}
TP_EXIT(fcntl)
{
	if (gw_followed())
		gw_fcntl_exit(ctx->ret, H);
	return 0;
}

/* loaded unless both the ioctl and the cloexec groups are on the fexit path */
TP_ENTER(ioctl)
{
	u32 cmd = ctx->args[1];

	bool cloexec = cmd == GW_FIOCLEX || cmd == GW_FIONCLEX;

	if (cloexec ? gw_cloexec_fexit : gw_ioctl_fexit)
		return 0;
	/* every ioctl of every task comes here: the mask test first (see gw_fexit_drm_ioctl) */
	if ((cloexec || !gw_ioctl_core_skip(cmd)) && gw_followed())
		gw_ioctl_enter(ctx->args[0], cmd, ctx->args[2]);
	return 0;
}
TP_EXIT(ioctl)
{
	struct task_struct *t = gw_followed_task();

	if (t)
		gw_ioctl_exit(t, ctx->ret, H);
	return 0;
}

TP_ENTER(mmap)
{
	if (gw_followed())
		gw_mmap_enter(ctx->args[0], ctx->args[1], ctx->args[2], ctx->args[3], ctx->args[4], ctx->args[5]);
	return 0;
}
TP_EXIT(mmap)
{
	if (gw_followed())
		gw_mmap_exit(ctx->ret, H);
	return 0;
}
TP_ENTER(munmap)
{
	if (gw_followed())
		gw_munmap_enter(ctx->args[0], ctx->args[1]);
	return 0;
}
TP_EXIT(munmap)
{
	if (gw_followed())
		gw_munmap_exit(ctx->ret, H);
	return 0;
}
TP_ENTER(mremap)
{
	if (gw_followed())
		gw_mremap_enter(ctx->args[0], ctx->args[1], ctx->args[2], ctx->args[3]);
	return 0;
}
TP_EXIT(mremap)
{
	if (gw_followed())
		gw_mremap_exit(ctx->ret, H);
	return 0;
}

/* ---- the fexit path (fexit.bpf.h) ------------------------------------------------------ */
#define F GW_HOOK_FEXIT

/* One program after the call, none before it (gw_ioctl_after). A core ioctl gpuwatch skips
 * (GET_CAP, a query) costs it only a mask test, which depends on cmd alone and comes before the
 * cgroup test and the syscall's fd; its result is passed on, not read again. (A driver-private
 * nr needs the file's driver: read only for followed tasks.) */
SEC("fexit/drm_ioctl")
int BPF_PROG(gw_fexit_drm_ioctl, struct file *filp, unsigned int cmd, unsigned long arg, long ret)
{
	enum gw_ioctl_want by_cmd = gw_ioctl_cmd_want(cmd);
	struct task_struct *t;

	if (by_cmd != GW_IOCTL_SKIP && (t = gw_followed_task()))
		gw_ioctl_after(t, filp, cmd, arg, ret, by_cmd, F);
	return 0;
}

SEC("fexit/mmap_region")
int BPF_PROG(gw_fexit_mmap_region, struct file *file, unsigned long addr, unsigned long len, unsigned long vm_flags,
	     unsigned long pgoff, void *uf, unsigned long ret)
{
	struct task_struct *t = gw_followed_task();

	if (t)
		gw_mmap_region_exit(t, file, addr, len, vm_flags, pgoff, ret, F);
	return 0;
}

SEC("fexit/set_close_on_exec")
int BPF_PROG(gw_fexit_set_close_on_exec, unsigned int fd, int flag)
{
	if (gw_followed())
		gw_emit_fd(fd, GW_FD_FLAGS, F);
	return 0;
}

/* The syscalls group: the fd and unmap syscalls above, on fentry/fexit of their x86-64
 * entry points (__x64_sys_NAME(const struct pt_regs *regs)) instead of the syscall
 * tracepoints. The arguments are the user registers regs points to (di, si, dx, r10: the
 * syscall ABI), exactly what the tracepoints' args[] hold, so the records are the same. Only
 * the hooked syscalls pay for these programs: no task takes the syscall-tracing slow path. */
#define SYS_ARG1(r)     BPF_CORE_READ(r, di)
#define SYS_ARG2(r)     BPF_CORE_READ(r, si)
#define SYS_ARG3(r)     BPF_CORE_READ(r, dx)
#define SYS_ARG4(r)     BPF_CORE_READ(r, r10)
#define SYS_ENTER(name) SEC("fentry/__x64_sys_" #name) int BPF_PROG(fentry_sys_##name, const struct pt_regs *regs)
#define SYS_EXIT(name)                                                                                                 \
	SEC("fexit/__x64_sys_" #name) int BPF_PROG(fexit_sys_##name, const struct pt_regs *regs, long ret)

SYS_EXIT(open)
{
	if (gw_followed() && ret >= 0)
		gw_emit_fd(ret, GW_FD_OPEN, F);
	return 0;
}
SYS_EXIT(openat)
{
	if (gw_followed() && ret >= 0)
		gw_emit_fd(ret, GW_FD_OPEN, F);
	return 0;
}
SYS_EXIT(openat2)
{
	if (gw_followed() && ret >= 0)
		gw_emit_fd(ret, GW_FD_OPEN, F);
	return 0;
}
SYS_ENTER(close)
{
	if (gw_followed())
		gw_close_enter(SYS_ARG1(regs), F);
	return 0;
}
SYS_ENTER(close_range)
{
	if (gw_followed())
		gw_close_range_enter(SYS_ARG1(regs), SYS_ARG2(regs), SYS_ARG3(regs));
	return 0;
}
SYS_EXIT(close_range)
{
	if (gw_followed())
		gw_close_range_exit(ret, F);
	return 0;
}
SYS_EXIT(dup)
{
	if (gw_followed())
		gw_dup_exit(ret, F);
	return 0;
}
SYS_ENTER(dup2)
{
	if (gw_followed())
		gw_dup2_enter(SYS_ARG2(regs));
	return 0;
}
SYS_EXIT(dup2)
{
	if (gw_followed())
		gw_dup_exit(ret, F);
	return 0;
}
SYS_ENTER(dup3)
{
	if (gw_followed())
		gw_dup2_enter(SYS_ARG2(regs));
	return 0;
}
SYS_EXIT(dup3)
{
	if (gw_followed())
		gw_dup_exit(ret, F);
	return 0;
}
SYS_ENTER(fcntl)
{
	if (gw_cloexec_fexit && SYS_ARG2(regs) == GW_F_SETFD)
		return 0; /* set_close_on_exec's fexit sees it */
	if (gw_followed())
		gw_fcntl_enter(SYS_ARG1(regs), SYS_ARG2(regs));
	return 0;
}
SYS_EXIT(fcntl)
{
	if (gw_followed())
		gw_fcntl_exit(ret, F);
	return 0;
}
SYS_ENTER(munmap)
{
	if (gw_followed())
		gw_munmap_enter(SYS_ARG1(regs), SYS_ARG2(regs));
	return 0;
}
SYS_EXIT(munmap)
{
	if (gw_followed())
		gw_munmap_exit(ret, F);
	return 0;
}
SYS_ENTER(mremap)
{
	if (gw_followed())
		gw_mremap_enter(SYS_ARG1(regs), SYS_ARG2(regs), SYS_ARG3(regs), SYS_ARG4(regs));
	return 0;
}
SYS_EXIT(mremap)
{
	if (gw_followed())
		gw_mremap_exit(ret, F);
	return 0;
}

/* ---- processes ------------------------------------------------------------------------ */

SEC("tp_btf/sched_process_fork")
int BPF_PROG(gw_fork, struct task_struct *parent, struct task_struct *child)
{
	struct gw_ev_fork *e;
	u32 ptgid, ctgid;
	u8 one = 1;

	if (BPF_CORE_READ(child, pid) != BPF_CORE_READ(child, tgid) || !gw_followed())
		return 0; /* a thread, or not ours */
	ptgid = BPF_CORE_READ(parent, tgid);
	ctgid = BPF_CORE_READ(child, tgid);
	if (bpf_map_lookup_elem(&gw_has_maps, &ptgid))
		bpf_map_update_elem(&gw_has_maps, &ctgid, &one, BPF_ANY);
	e = GW_RESERVE(struct gw_ev_fork, GW_EV_FORK, GW_HOOK_TRACEPOINT);
	if (!e)
		return 0;
	e->hdr.tgid = ptgid;
	e->child_tgid = ctgid;
	e->pad0 = 0;
	gw_submit(e);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(gw_exec, struct task_struct *p)
{
	struct gw_ev_exec *e;
	u32 tgid;

	if (!gw_followed())
		return 0;
	tgid = bpf_get_current_pid_tgid() >> 32;
	bpf_map_delete_elem(&gw_has_maps, &tgid); /* a new mm: no DRM mappings left */
	e = GW_RESERVE(struct gw_ev_exec, GW_EV_EXEC, GW_HOOK_TRACEPOINT);
	if (!e)
		return 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	gw_submit(e);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(gw_exit, struct task_struct *p)
{
	u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct gw_ev_exit *e;

	/* signal->live reached 0 before this tracepoint: the whole process is gone */
	if (BPF_CORE_READ(p, signal, live.counter) != 0 || !gw_followed())
		return 0;
	bpf_map_delete_elem(&gw_has_maps, &tgid);
	e = GW_RESERVE(struct gw_ev_exit, GW_EV_EXIT, GW_HOOK_TRACEPOINT);
	if (e)
		gw_submit(e);
	return 0;
}

/* every migration, wherever to: rare, and only userspace knows the followed subtree's ids */
SEC("tp_btf/cgroup_attach_task")
int BPF_PROG(gw_cgroup_attach, struct cgroup *dst, const char *path, struct task_struct *task, bool threadgroup)
{
	struct gw_ev_cgroup_move *e = GW_RESERVE(struct gw_ev_cgroup_move, GW_EV_CGROUP_MOVE, GW_HOOK_TRACEPOINT);

	if (!e)
		return 0;
	e->hdr.tgid = BPF_CORE_READ(task, tgid);
	e->hdr.tid = BPF_CORE_READ(task, pid);
	e->dst_cgid = BPF_CORE_READ(dst, kn, id);
	e->threadgroup = threadgroup;
	__builtin_memset(e->pad0, 0, sizeof(e->pad0));
	gw_submit(e);
	return 0;
}

/* ---- attach-time snapshot ------------------------------------------------------------- */

static __always_inline void gw_snap_hdr(struct gw_hdr *h, u16 kind, u16 size, struct task_struct *t)
{
	h->kind = kind;
	h->size = size;
	h->hook = GW_HOOK_ITER;
	h->pad0[0] = h->pad0[1] = h->pad0[2] = 0;
	h->tgid = BPF_CORE_READ(t, tgid);
	h->tid = BPF_CORE_READ(t, pid);
	h->reserved = 0;
}

SEC("iter/task_file")
int gw_snap_files(struct bpf_iter__task_file *ctx)
{
	struct task_struct *t = ctx->task;
	struct file *f = ctx->file;
	struct gw_ev_fd e = {};
	u32 tgid, major = 0, minor = 0;
	bool cloexec = false;
	int type;

	if (!t || !f)
		return 0;
	tgid = BPF_CORE_READ(t, tgid);
	if (!bpf_map_lookup_elem(&gw_snap_pids, &tgid))
		return 0;
	type = gw_classify(f, &major, &minor);
	if (!type)
		return 0;
	gw_task_fd_file(t, ctx->fd, &cloexec);
	gw_snap_hdr(&e.hdr, GW_EV_FD, sizeof(e), t);
	gw_fill_fd(&e, f, ctx->fd, type, major, minor, cloexec, GW_FD_SNAPSHOT);
	bpf_seq_write(ctx->meta->seq, &e, sizeof(e));
	return 0;
}

#define GW_VM_READ   0x1
#define GW_VM_WRITE  0x2
#define GW_VM_EXEC   0x4
#define GW_VM_SHARED 0x8

SEC("iter/task_vma")
int gw_snap_vmas(struct bpf_iter__task_vma *ctx)
{
	struct task_struct *t = ctx->task;
	struct vm_area_struct *vma = ctx->vma;
	struct gw_ev_mmap e = {};
	unsigned long vm_flags;
	struct file *f;
	u32 tgid;

	if (!t || !vma)
		return 0;
	tgid = BPF_CORE_READ(t, tgid);
	if (!bpf_map_lookup_elem(&gw_snap_pids, &tgid))
		return 0;
	f = BPF_CORE_READ(vma, vm_file);
	if (gw_classify(f, NULL, NULL) == GW_FILE_DRM) {
		e.file = (u64)f;
		e.via = GW_VIA_FILE;
	} else if ((e.dev = (u64)gw_i915_gem_anon_dev(f))) {
		e.via = GW_VIA_I915_ANON; /* i915 swapped the DRM file out: userspace joins by device */
	} else if (gw_i915_shmem(f)) {
		e.via = GW_VIA_I915_SHMEM; /* a legacy GEM_MMAP made before attach */
	} else {
		return 0;
	}
	vm_flags = BPF_CORE_READ(vma, vm_flags);
	gw_snap_hdr(&e.hdr, GW_EV_MMAP, sizeof(e), t);
	e.start = BPF_CORE_READ(vma, vm_start);
	e.length = BPF_CORE_READ(vma, vm_end) - e.start;
	e.offset = BPF_CORE_READ(vma, vm_pgoff) << 12;
	e.fd = -1;
	e.prot = vm_flags & (GW_VM_READ | GW_VM_WRITE | GW_VM_EXEC);
	e.flags = 0;
	e.shared = !!(vm_flags & GW_VM_SHARED);
	bpf_seq_write(ctx->meta->seq, &e, sizeof(e));
	return 0;
}
