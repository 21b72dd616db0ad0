/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * From an fd number to the struct file behind it, and what kind of file that is.
 * A DRM file is a character device of major 226 (not an O_PATH handle on one); a dma-buf
 * is any file whose superblock is the dma-buf pseudo filesystem.
 */
#ifndef GPUWATCH_FILES_BPF_H
#define GPUWATCH_FILES_BPF_H

#include "maps.bpf.h"
#include <bpf/bpf_core_read.h>

#define GW_S_IFMT 00170000
#define GW_S_IFCHR 0020000
#define GW_O_PATH 010000000

static __always_inline struct file *gw_task_fd_file(struct task_struct *t, int fd, bool *cloexec)
{
	struct fdtable *fdt = BPF_CORE_READ(t, files, fdt);
	struct file **arr;
	struct file *f = NULL;

	if (!fdt || fd < 0 || (unsigned int)fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	arr = BPF_CORE_READ(fdt, fd);
	if (bpf_probe_read_kernel(&f, sizeof(f), &arr[fd])) {
		GW_COUNT(failed_reads);
		return NULL;
	}
	if (f && cloexec) {
		unsigned long *coe = BPF_CORE_READ(fdt, close_on_exec);
		unsigned long word = 0;
		if (bpf_probe_read_kernel(&word, sizeof(word), &coe[fd / 64]))
			GW_COUNT(failed_reads);
		*cloexec = (word >> (fd % 64)) & 1;
	}
	return f;
}

static __always_inline struct file *gw_fd_file(int fd, bool *cloexec)
{
	return gw_task_fd_file((struct task_struct *)bpf_get_current_task(), fd, cloexec);
}

/* enum gw_file_type, or 0 for files gpuwatch does not follow */
static __always_inline int gw_classify(struct file *f, u32 *major, u32 *minor)
{
	struct inode *ino;
	unsigned short mode;

	if (!f)
		return 0;
	ino = BPF_CORE_READ(f, f_inode);
	mode = BPF_CORE_READ(ino, i_mode);
	if ((mode & GW_S_IFMT) == GW_S_IFCHR) {
		dev_t rdev = BPF_CORE_READ(ino, i_rdev);
		if ((rdev >> 20) != GW_DRM_MAJOR || (BPF_CORE_READ(f, f_flags) & GW_O_PATH))
			return 0;
		if (major)
			*major = rdev >> 20;
		if (minor)
			*minor = rdev & 0xfffff;
		return GW_FILE_DRM;
	}
	if (BPF_CORE_READ(ino, i_sb, s_magic) == GW_DMA_BUF_MAGIC)
		return GW_FILE_DMABUF;
	return 0;
}

static __always_inline void gw_driver_name(struct file *f, char *out)
{
	/* drm.ko may not be loaded at all (the build host, CI): then this branch is dead code
	 * and libbpf's poisoned relocations inside it are never reached. */
	if (bpf_core_type_exists(struct drm_file)) {
		struct drm_file *df = (struct drm_file *)BPF_CORE_READ(f, private_data);
		const char *name = BPF_CORE_READ(df, minor, dev, driver, name);
		if (!name || bpf_probe_read_kernel_str(out, GW_NAME_LEN, name) < 0)
			GW_COUNT(failed_reads);
	}
}

/* fill a GW_EV_FD record for a followed file (type from gw_classify) */
static __always_inline void gw_fill_fd(struct gw_ev_fd *e, struct file *f, int fd, int type, u32 major,
				       u32 minor, bool cloexec, u8 source)
{
	e->file = (u64)f;
	e->fd = fd;
	e->f_flags = BPF_CORE_READ(f, f_flags);
	e->major = major;
	e->minor = minor;
	e->type = type;
	e->source = source;
	e->cloexec = cloexec;
	__builtin_memset(e->pad0, 0, sizeof(e->pad0));
	__builtin_memset(e->driver, 0, sizeof(e->driver));
	if (type == GW_FILE_DRM)
		gw_driver_name(f, e->driver);
}

/* emit a GW_EV_FD for an fd of the current task if it refers to a followed file;
 * returns whether it does */
static __always_inline bool gw_emit_fd(int fd, u8 source, u8 hook)
{
	bool cloexec = false;
	struct file *f = gw_fd_file(fd, &cloexec);
	u32 major = 0, minor = 0;
	int type = gw_classify(f, &major, &minor);
	struct gw_ev_fd *e;

	if (!type)
		return false;
	e = GW_RESERVE(struct gw_ev_fd, GW_EV_FD, hook);
	if (!e)
		return true;
	gw_fill_fd(e, f, fd, type, major, minor, cloexec, source);
	bpf_ringbuf_submit(e, 0);
	return true;
}

static __always_inline void gw_emit_close(int fd, struct file *f, u8 hook)
{
	struct gw_ev_close *e = GW_RESERVE(struct gw_ev_close, GW_EV_CLOSE, hook);
	if (!e)
		return;
	e->file = (u64)f;
	e->fd = fd;
	e->pad0 = 0;
	bpf_ringbuf_submit(e, 0);
}

#endif
