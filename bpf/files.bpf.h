/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * From an fd number to the struct file behind it, and what kind of file that is.
 * A DRM file is a character device of major 226 (not an O_PATH handle on one); a dma-buf
 * is any file whose superblock is the dma-buf pseudo filesystem. Out-fences (sync_file) and
 * i915 perf streams are anonymous inodes recognised by their name, as is i915's
 * "i915.gem" inode, which i915 puts in place of the DRM file in the VMAs of GEM mappings
 * (its private_data is the device: i915's drm_i915_private starts with its drm_device).
 */
#ifndef GPUWATCH_FILES_BPF_H
#define GPUWATCH_FILES_BPF_H

#include "maps.bpf.h"
#include <bpf/bpf_core_read.h>

#define GW_S_IFMT              00170000
#define GW_S_IFCHR             0020000
#define GW_O_PATH              010000000
#define GW_ANON_INODE_FS_MAGIC 0x09041934

/* the name of an anonymous inode file (anon_inode:NAME), zero-padded; false if not one */
static __always_inline bool gw_anon_name(struct file *f, u64 name[2])
{
	const unsigned char *s;

	name[0] = name[1] = 0;
	if (BPF_CORE_READ(f, f_inode, i_sb, s_magic) != GW_ANON_INODE_FS_MAGIC)
		return false;
	s = BPF_CORE_READ(f, f_path.dentry, d_name.name);
	if (!s || bpf_probe_read_kernel_str(name, 2 * sizeof(u64), s) < 0) {
		GW_COUNT(failed_reads);
		return false;
	}
	return true;
}

/* little-endian u64 words of zero-padded names */
#define GW_W(a, b, c, d, e, f, g, h)                                                                                   \
	((u64)(a) | (u64)(b) << 8 | (u64)(c) << 16 | (u64)(d) << 24 | (u64)(e) << 32 | (u64)(f) << 40 |                \
	 (u64)(g) << 48 | (u64)(h) << 56)
#define GW_NAME_SYNC_FILE_0 GW_W('s', 'y', 'n', 'c', '_', 'f', 'i', 'l')
#define GW_NAME_SYNC_FILE_1 GW_W('e', 0, 0, 0, 0, 0, 0, 0)
#define GW_NAME_I915_PERF_0 GW_W('[', 'i', '9', '1', '5', '_', 'p', 'e')
#define GW_NAME_I915_PERF_1 GW_W('r', 'f', ']', 0, 0, 0, 0, 0)
#define GW_NAME_I915_GEM_0  GW_W('i', '9', '1', '5', '.', 'g', 'e', 'm')
#define GW_NAME_I915_GEM_1  0ULL

#define GW_TMPFS_MAGIC 0x01021994

/* a GEM object's shmem file as i915 names it ("i915"): what a legacy GEM_MMAP maps */
static __always_inline bool gw_i915_shmem(struct file *f)
{
	const unsigned char *s;
	u64 n[2] = {};

	if (!f || BPF_CORE_READ(f, f_inode, i_sb, s_magic) != GW_TMPFS_MAGIC)
		return false;
	s = BPF_CORE_READ(f, f_path.dentry, d_name.name);
	if (!s || bpf_probe_read_kernel_str(n, sizeof(n), s) < 0)
		return false;
	return n[0] == GW_W('i', '9', '1', '5', 0, 0, 0, 0) && n[1] == 0;
}

/* the device behind an anon_inode:i915.gem file, or NULL */
static __always_inline void *gw_i915_gem_anon_dev(struct file *f)
{
	u64 n[2];

	if (!f || !gw_anon_name(f, n) || n[0] != GW_NAME_I915_GEM_0 || n[1] != GW_NAME_I915_GEM_1)
		return NULL;
	return BPF_CORE_READ(f, private_data);
}

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
	{
		u64 n[2];
		if (gw_anon_name(f, n)) {
			if (n[0] == GW_NAME_SYNC_FILE_0 && n[1] == GW_NAME_SYNC_FILE_1)
				return GW_FILE_SYNC;
			if (n[0] == GW_NAME_I915_PERF_0 && n[1] == GW_NAME_I915_PERF_1)
				return GW_FILE_PERF;
		}
	}
	return 0;
}

/* the drm_device of a DRM file, and its driver's name into out[GW_NAME_LEN] (zeroed by the caller) */
static __always_inline void *gw_drm_dev(struct file *f, char *out)
{
	/* drm.ko may not be loaded at all (the build host, CI): then this branch is dead code
	 * and libbpf's poisoned relocations inside it are never reached. */
	if (bpf_core_type_exists(struct drm_file)) {
		struct drm_file *df = (struct drm_file *)BPF_CORE_READ(f, private_data);
		struct drm_device *dev = BPF_CORE_READ(df, minor, dev);
		const char *name = BPF_CORE_READ(dev, driver, name);
		if (!name || bpf_probe_read_kernel_str(out, GW_NAME_LEN, name) < 0)
			GW_COUNT(failed_reads);
		return dev;
	}
	return NULL;
}

/* enum gw_driver of a DRM file: its driver's name against the names userspace filled in */
static __always_inline u8 gw_driver_id(struct file *f)
{
	u64 name[2] = {};

	gw_drm_dev(f, (char *)name);
	for (int i = 1; i < GW_DRV_MAX; i++)
		if (name[0] == gw_drv_names[i][0] && name[1] == gw_drv_names[i][1])
			return i;
	return GW_DRV_OTHER;
}

/* fill a GW_EV_FD record for a followed file (type from gw_classify) */
static __always_inline void gw_fill_fd(struct gw_ev_fd *e, struct file *f, int fd, int type, u32 major, u32 minor,
				       bool cloexec, u8 source)
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
	e->dev = 0;
	if (type == GW_FILE_DRM)
		e->dev = (u64)gw_drm_dev(f, e->driver);
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
	gw_submit(e);
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
	gw_submit(e);
}

#endif
