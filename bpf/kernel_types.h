/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The kernel types gpuwatch's BPF programs read, declared by hand with only the fields
 * used, all under preserve_access_index: libbpf relocates every field access against the
 * target kernel's BTF (vmlinux and module BTF, e.g. drm.ko) at load time. This replaces a
 * vmlinux.h dumped from some build host, which would tie the object to that host's kernel
 * and, for DRM types that live in modules, would not even contain them (see README).
 * Layouts here do not have to match any kernel: only the field names and types do.
 */
#ifndef GPUWATCH_KERNEL_TYPES_H
#define GPUWATCH_KERNEL_TYPES_H

#include <linux/types.h>
#include <linux/bpf.h>

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s32 s32;
typedef __s64 s64;
typedef _Bool bool; /* vmlinux.h's bool: keeps the generated skeleton valid C++ */
#define true 1
#define false 0
typedef int pid_t;
typedef u32 dev_t; /* kernel-internal: MAJOR = dev >> 20 */
typedef struct {
	int counter;
} atomic_t;

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct super_block {
	unsigned long s_magic;
};
struct inode {
	unsigned short i_mode;
	dev_t i_rdev;
	struct super_block *i_sb;
};
struct qstr {
	const unsigned char *name;
};
struct dentry {
	struct qstr d_name;
};
struct path {
	struct dentry *dentry;
};
struct file {
	struct inode *f_inode;
	struct path f_path;
	unsigned int f_flags;
	void *private_data;
};
struct fdtable {
	unsigned int max_fds;
	struct file **fd;
	unsigned long *close_on_exec;
};
struct files_struct {
	struct fdtable *fdt;
};
struct signal_struct {
	atomic_t live;
};
struct task_struct {
	pid_t pid;
	pid_t tgid;
	struct task_struct *real_parent;
	struct files_struct *files;
	struct signal_struct *signal;
};
struct kernfs_node {
	u64 id;
};
struct cgroup {
	struct kernfs_node *kn;
};
struct vm_area_struct {
	unsigned long vm_start;
	unsigned long vm_end;
	unsigned long vm_flags;
	unsigned long vm_pgoff;
	struct file *vm_file;
};

/* DRM core (drm.ko): drm_file -> minor -> dev -> driver -> name */
struct drm_driver {
	const char *name;
};
struct drm_device {
	const struct drm_driver *driver;
};
struct drm_minor {
	int index;
	int type;
	struct drm_device *dev;
};
struct drm_file {
	struct drm_minor *minor;
};

/* a task's saved user registers (bpf_task_pt_regs): x86_64 names, the only arch built for */
struct pt_regs {
	unsigned long r10;
	unsigned long r8;
	unsigned long dx;
	unsigned long si;
	unsigned long di;
	unsigned long orig_ax;
};

/* syscall tracepoint contexts (tp/syscalls/sys_{enter,exit}_*) */
struct trace_entry {
	unsigned short type;
	unsigned char flags;
	unsigned char preempt_count;
	int pid;
};
struct trace_event_raw_sys_enter {
	struct trace_entry ent;
	long id;
	unsigned long args[6];
};
struct trace_event_raw_sys_exit {
	struct trace_entry ent;
	long id;
	long ret;
};

/* BPF iterator contexts */
struct seq_file;
struct bpf_iter_meta {
	struct seq_file *seq;
	u64 session_id;
	u64 seq_num;
};
struct bpf_iter__task_file {
	union {
		struct bpf_iter_meta *meta;
	};
	union {
		struct task_struct *task;
	};
	u32 fd;
	union {
		struct file *file;
	};
};
struct bpf_iter__task_vma {
	union {
		struct bpf_iter_meta *meta;
	};
	union {
		struct task_struct *task;
	};
	union {
		struct vm_area_struct *vma;
	};
};

#pragma clang attribute pop

#endif /* GPUWATCH_KERNEL_TYPES_H */
