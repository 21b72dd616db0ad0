/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The fast path: what the fentry/fexit programs (BPF trampolines on kernel functions) in
 * gpuwatch.bpf.c need beyond the hook-independent handlers. Userspace loads them only where
 * they load and attach (feature probing, user/hook_path_probe.cpp), else their tracepoint twins.
 *
 * - drm_ioctl(filp, cmd, arg), drm.ko: every ioctl on a DRM file, for every driver (drivers'
 *   own unlocked_ioctl wrappers and drm_compat_ioctl end in it). fentry stores the argument
 *   as read at entry in gw_pending_map, fexit emits the record, as the tracepoints do.
 * - mmap_region(file, addr, len, vm_flags, pgoff, uf): every mapping do_mmap creates (mmap,
 *   shmat, the ELF loader, a driver's vm_mmap); returns the address. The DRM file is the
 *   `file` argument, never vma->vm_file: i915 swaps that for an anonymous inode inside its
 *   f_op->mmap. (do_mmap itself has 8 arguments: 6.1's x86 trampolines take at most 6.)
 * - set_close_on_exec(fd, flag), fs/file.c: fcntl(F_SETFD) and ioctl(FIOCLEX/FIONCLEX).
 *
 * The syscall's own arguments stay in the task's saved user registers (bpf_task_pt_regs).
 * When the current syscall is the expected one, the fd, prot and flags come from there, so
 * the records equal the tracepoint path's (hdr.hook and ts_ns aside). Otherwise (another
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

static __always_inline struct pt_regs *gw_user_regs(void)
{
	return (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
}

/* the fd argument of the ioctl syscall in progress (vfs_ioctl hands drm_ioctl that fd's
 * file: the tracepoint path records the same number), or -1 when drm_ioctl was reached
 * otherwise (a 32-bit task). Two reads: this runs for every DRM ioctl of a followed task. */
static __always_inline int gw_ioctl_syscall_fd(void)
{
	struct pt_regs *r = gw_user_regs();

	if (BPF_CORE_READ(r, orig_ax) != GW_NR_IOCTL)
		return -1;
	return BPF_CORE_READ(r, di);
}

/* mmap_region(file, addr, len, vm_flags, pgoff) returned ret */
static __always_inline void gw_mmap_region_exit(struct file *file, u64 addr, u64 len, u64 vm_flags, u64 pgoff, u64 ret,
						u8 hook)
{
	struct pt_regs *r = gw_user_regs();
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
