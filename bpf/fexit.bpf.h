/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The fast path: what the fentry/fexit programs (BPF trampolines on kernel functions) in
 * gpuwatch.bpf.c need beyond the hook-independent handlers. Userspace loads them only where
 * they load and attach (feature probing, user/hook_path_probe.cpp), else their tracepoint twins.
 *
 * - drm_ioctl(filp, cmd, arg), drm.ko: every ioctl on a DRM file, for every driver (drivers'
 *   own unlocked_ioctl wrappers and drm_compat_ioctl end in it). One fexit program reads the
 *   argument after the call and emits the record the tracepoints' entry/exit pair emits
 *   (gw_ioctl_after).
 * - mmap_region(file, addr, len, vm_flags, pgoff, uf): every mapping do_mmap creates (mmap,
 *   shmat, the ELF loader, a driver's vm_mmap); returns the address. The DRM file is the
 *   `file` argument, never vma->vm_file: i915 swaps that for an anonymous inode inside its
 *   f_op->mmap. (do_mmap itself has 8 arguments: 6.1's x86 trampolines take at most 6.)
 * - set_close_on_exec(fd, flag), fs/file.c: fcntl(F_SETFD) and ioctl(FIOCLEX/FIONCLEX).
 *
 * The syscall's own arguments stay in the task's saved user registers (bpf_task_pt_regs).
 * When the current syscall is the expected one, the fd, prot and flags come from there, so
 * the records equal the tracepoint path's (hdr.hook aside; a DRM ioctl's is the shorter
 * GW_EV_IOCTL_AFTER, read as the same GW_EV_IOCTL). Otherwise (another
 * caller, a 32-bit task) they come from the function's arguments: fd -1, prot from the vm
 * flags, MAP_SHARED or MAP_PRIVATE from VM_MAYSHARE, and MAP_FIXED assumed (the range may have
 * replaced a DRM mapping; an extra GW_EV_MUNMAP of a free range changes nothing). Mappings
 * the ELF loader makes inside execve are skipped: the new mm holds no DRM mapping to replace.
 */
#ifndef GPUWATCH_FEXIT_BPF_H
#define GPUWATCH_FEXIT_BPF_H

#include "handlers.bpf.h"

#define GW_NR_MMAP     9 /* x86_64 syscall numbers, as in the saved orig_ax */
#define GW_NR_IOCTL    16
#define GW_NR_EXECVE   59
#define GW_NR_EXECVEAT 322
#define GW_VM_RWX      0x7  /* VM_READ|VM_WRITE|VM_EXEC, the same bits as PROT_READ|WRITE|EXEC */
#define GW_VM_MAYSHARE 0x80 /* every MAP_SHARED mapping (VM_SHARED is dropped for read-only files) */
#define GW_MAP_PRIVATE 0x02

/* the fd argument of the ioctl syscall in progress (vfs_ioctl hands drm_ioctl that fd's
 * file: the tracepoint path records the same number), or -1 when drm_ioctl was reached
 * otherwise (a 32-bit task). This runs for every DRM ioctl of a followed task: bpf_task_pt_regs
 * gives a BTF pointer, read with plain loads (CO-RE relocated), not bpf_probe_read_kernel. */
static __always_inline int gw_ioctl_syscall_fd(struct task_struct *t)
{
	struct pt_regs *r = (struct pt_regs *)bpf_task_pt_regs(t);

	if (r->orig_ax != GW_NR_IOCTL)
		return -1;
	return r->di;
}

/* gw_classify(f) == GW_FILE_DRM for a BTF pointer (a trampoline's argument): the same test
 * with plain loads instead of five bpf_probe_read_kernel calls (the ioctl fast path) */
static __always_inline bool gw_is_drm_file_btf(struct file *f)
{
	struct inode *ino = f->f_inode;

	return ino && (ino->i_mode & GW_S_IFMT) == GW_S_IFCHR && (ino->i_rdev >> 20) == GW_DRM_MAJOR &&
	       !(f->f_flags & GW_O_PATH);
}

/* the record of a decoded ioctl with no user memory beyond its argument (most of them): the
 * argument read once, after the call, straight into the record, a GW_EV_IOCTL_AFTER (in[]
 * only: no copy to out[], no zeroes after the argument). An i915 execbuf (the hot path of an
 * i915 client) is recorded only with an out-fence: its flags are read first, 8 bytes, and
 * nothing more without one. */
static __always_inline void gw_ioctl_emit_direct(struct task_struct *t, struct file *f, u32 cmd, u64 arg, u8 drv,
						 long ret, u8 hook)
{
	u32 size = gw_ioctl_arg_size(cmd);
	struct gw_ev_ioctl *e;

	if (gw_is_execbuf(cmd, drv)) {
		u64 flags;

		if (!((cmd >> 30) & GW_IOC_READ)) /* not _WR: not wanted, whatever its flags */
			return;
		if (bpf_probe_read_user(&flags, sizeof(flags), (void *)(arg + GW_I915_EXEC_FLAGS_OFF))) {
			GW_COUNT(failed_reads);
			return;
		}
		if (!gw_execbuf_wanted(cmd, flags))
			return;
	}
	if (!gw_ioctl_succeeded(t, cmd, drv, ret))
		return;
	e = gw_ioctl_record(t, true, (u64)f, cmd, size, drv, ret, hook);
	if (!e)
		return;
	/* the argument's bytes alone: what follows them in in[] is not written (userspace
	 * zero-pads a GW_EV_IOCTL_AFTER past arg_size: gw::abi::read_ioctl) */
	if (!gw_ioctl_read_bytes(e->in, size, arg)) {
		bpf_ringbuf_discard(e, 0);
		return;
	}
	e->fd = gw_ioctl_syscall_fd(t);
	e->aux_file = gw_ioctl_import_file(cmd, e->in);
	gw_ioctl_submit(e, e->in, cmd, drv, ret, hook);
}

/* gw_ioctl_after for an ioctl that is followed (want: DECODE or NOTE) on a file of driver drv */
static __always_inline void gw_ioctl_after_as(struct task_struct *t, struct file *f, u32 cmd, u64 arg, long ret,
					      enum gw_ioctl_want want, u8 drv, u8 hook)
{
	u64 in[GW_IOCTL_ARG_MAX / 8]; /* 8-aligned: gw_copy_arg */
	u64 aux_file = 0;

	if (want == GW_IOCTL_NOTE) {
		gw_ioctl_emit_note((u64)f, gw_ioctl_syscall_fd(t), cmd, drv, ret, hook);
		return;
	}
	if (!gw_ioctl_ret_ok(cmd, drv, ret))
		return;
	if (!gw_ext_possible(drv, cmd)) {
		gw_ioctl_emit_direct(t, f, cmd, arg, drv, ret, hook);
		return;
	}
	if (!gw_ioctl_read_arg(cmd, arg, drv, (u8 *)in, &aux_file))
		return;
	gw_ioctl_emit(t, (u64)f, aux_file, gw_ioctl_syscall_fd(t), cmd, arg, drv, (u8 *)in, ret, hook, true);
}

/* drm_ioctl returned ret: one program after the call, no entry program. The argument is
 * read once, after the call: the kernel has written its outputs back (an _IOWR argument) and
 * left its inputs as they were, which is all the decoders read of in[] (user/drm_decode*.cpp:
 * no decoded ioctl has a field that is input and output whose input the model needs). A
 * failed ioctl costs no read at all. t: the current task (followed); f: drm_ioctl's filp;
 * by_cmd: gw_ioctl_cmd_want(cmd), not SKIP. An ioctl whose argument points to more user
 * memory reads it to the stack first: that record (GW_EV_IOCTL_EXT) precedes the ioctl's own.
 * A core nr's file needs no driver: its path is compiled with GW_DRV_OTHER, which drops every
 * driver's special case (execbuf, PERF_OPEN, the legacy GEM_MMAP) from it. */
static __always_inline void gw_ioctl_after(struct task_struct *t, struct file *f, u32 cmd, u64 arg, long ret,
					   enum gw_ioctl_want by_cmd, u8 hook)
{
	enum gw_ioctl_want want;
	u8 drv;

	if (ret < 0 || !gw_is_drm_file_btf(f))
		return;
	if (!GW_IS_DRIVER_NR(GW_IOC_NR(cmd))) {
		gw_ioctl_after_as(t, f, cmd, arg, ret, by_cmd, GW_DRV_OTHER, hook);
		return;
	}
	want = gw_ioctl_wanted_as(f, cmd, by_cmd, &drv);
	if (want != GW_IOCTL_SKIP)
		gw_ioctl_after_as(t, f, cmd, arg, ret, want, drv, hook);
}

/* mmap_region(file, addr, len, vm_flags, pgoff) returned ret; t: the current task (followed) */
static __always_inline void gw_mmap_region_exit(struct task_struct *t, struct file *file, u64 addr, u64 len,
						u64 vm_flags, u64 pgoff, u64 ret, u8 hook)
{
	struct pt_regs *r = (struct pt_regs *)bpf_task_pt_regs(t);
	long nr = BPF_CORE_READ(r, orig_ax);
	u64 prot, flags;
	int fd = -1;

	if (GW_IS_ERR_ADDR(ret) || nr == GW_NR_EXECVE || nr == GW_NR_EXECVEAT)
		return;
	if (nr == GW_NR_MMAP) {
		prot = BPF_CORE_READ(r, dx);
		flags = BPF_CORE_READ(r, r10);
		fd = BPF_CORE_READ(r, r8);
	} else {
		prot = vm_flags & GW_VM_RWX;
		flags = (vm_flags & GW_VM_MAYSHARE ? GW_MAP_SHARED : GW_MAP_PRIVATE) | GW_MAP_FIXED;
	}
	gw_mmap_emit(gw_mmap_args(file, addr, len, prot, flags, fd, pgoff << 12), ret, hook);
}

#endif
