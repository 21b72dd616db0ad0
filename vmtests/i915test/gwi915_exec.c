// SPDX-License-Identifier: GPL-2.0
/*
 * gwi915 execbuf and perf: EXECBUFFER2(_WR) checks what i915 checks before it would run
 * anything, runs nothing and signals its out-fence at once; PERF_OPEN returns a stream fd
 * that never produces a report.
 */
#include <linux/anon_inodes.h>
#include <linux/dma-fence.h>
#include <linux/file.h>
#include <linux/mm.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sync_file.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>

#include "gwi915.h"

static const gw_ext_fn gw_execbuf_exts[] = {
	[DRM_I915_GEM_EXECBUFFER_EXT_TIMELINE_FENCES] = gw_accept_ext, /* not waited on */
};

static int gw_check_objects(struct drm_file *file, struct drm_i915_gem_execbuffer2 *args,
			    struct drm_i915_gem_exec_object2 *objs)
{
	u32 n = args->buffer_count, i, j;
	u32 batch = (args->flags & I915_EXEC_BATCH_FIRST) ? 0 : n - 1;
	int err = 0;

	for (i = 0; i < n && !err; i++) {
		struct drm_i915_gem_exec_object2 *o = &objs[i];
		struct drm_gem_object *obj;

		if (o->flags & (__EXEC_OBJECT_UNKNOWN_FLAGS | EXEC_OBJECT_NEEDS_GTT))
			return -EINVAL; /* NEEDS_GTT is invalid with full ppgtt */
		if ((o->flags & EXEC_OBJECT_PINNED) && o->offset != (u64)sign_extend64(o->offset & ~0xfffull, 47))
			return -EINVAL; /* softpin: page aligned, canonical 48-bit */
		if ((o->flags & EXEC_OBJECT_PAD_TO_SIZE) && (o->pad_to_size & 0xfff))
			return -EINVAL;
		for (j = 0; j < i; j++)
			if (objs[j].handle == o->handle)
				return -EINVAL;
		obj = drm_gem_object_lookup(file, o->handle);
		if (!obj)
			return -ENOENT;
		if (i == batch &&
		    (args->batch_start_offset >= obj->size || args->batch_len > obj->size - args->batch_start_offset))
			err = -EINVAL;
		drm_gem_object_put(obj);
	}
	return err;
}

/* EXECBUFFER2(_WR): check what i915 checks before running, run nothing, signal at once. */
int gw_execbuffer2_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_i915_gem_execbuffer2 *args = data;
	struct drm_i915_gem_exec_object2 *objs;
	struct dma_fence *in_fence = NULL;
	const u64 in_fences = I915_EXEC_FENCE_IN | I915_EXEC_FENCE_SUBMIT;
	int err;

	if (args->buffer_count < 1 || args->buffer_count > INT_MAX)
		return -EINVAL;
	if (args->flags & (__I915_EXEC_UNKNOWN_FLAGS | I915_EXEC_CONSTANTS_MASK | I915_EXEC_RESOURCE_STREAMER))
		return -EINVAL;
	if (!(args->flags & (I915_EXEC_FENCE_ARRAY | I915_EXEC_USE_EXTENSIONS)) &&
	    (args->num_cliprects || args->cliprects_ptr))
		return -EINVAL; /* cliprects were a DRI1 feature */
	if (args->DR4 == 0xffffffff)
		args->DR4 = 0;
	if (args->DR1 || args->DR4 || ((args->batch_start_offset | args->batch_len) & 7))
		return -EINVAL;
	objs = kvmalloc_array(args->buffer_count, sizeof(*objs), GFP_KERNEL | __GFP_NOWARN);
	if (!objs)
		return -ENOMEM;
	err = -EFAULT;
	if (copy_from_user(objs, u64_to_user_ptr(args->buffers_ptr), sizeof(*objs) * args->buffer_count))
		goto out;
	err = -EPERM; /* no secure batches after gen5 */
	if (args->flags & I915_EXEC_SECURE)
		goto out;
	err = 0;
	if (args->flags & I915_EXEC_USE_EXTENSIONS) /* the chain is in cliprects_ptr */
		err = gw_user_extensions(args->cliprects_ptr, gw_execbuf_exts, ARRAY_SIZE(gw_execbuf_exts), NULL);
	if (!err && (args->flags & in_fences) == in_fences)
		err = -EINVAL;
	if (!err && (args->flags & in_fences)) {
		in_fence = sync_file_get_fence(lower_32_bits(args->rsvd2));
		if (!in_fence)
			err = -EINVAL;
	}
	if (err)
		goto out;
	err = gw_ctx_select(dev, file, lower_32_bits(args->rsvd1), args->flags);
	if (!err)
		err = gw_check_objects(file, args, objs);
	if (!err && (args->flags & I915_EXEC_FENCE_OUT)) {
		/* an already signalled fence: the "work" is done. Plain EXECBUFFER2 does not
		 * copy rsvd2 back, so there the fd is installed but never told, as with i915. */
		int fd = get_unused_fd_flags(O_CLOEXEC);
		struct dma_fence *fence = fd < 0 ? NULL : dma_fence_allocate_private_stub(ktime_get());
		struct sync_file *sync = fence ? sync_file_create(fence) : NULL;

		if (fence)
			dma_fence_put(fence);
		if (sync) {
			fd_install(fd, sync->file);
			args->rsvd2 = lower_32_bits(args->rsvd2) | (u64)fd << 32;
		} else {
			if (fd >= 0)
				put_unused_fd(fd);
			err = fd < 0 ? fd : -ENOMEM;
		}
	}
out:
	if (in_fence)
		dma_fence_put(in_fence);
	kvfree(objs);
	return err;
}

struct gw_perf_stream {
	struct drm_device *dev;
	wait_queue_head_t wq; /* never woken: no report ever arrives */
	bool enabled;
	u64 metrics_set;
};

static ssize_t gw_perf_read(struct file *f, char __user *buf, size_t count, loff_t *ppos)
{
	struct gw_perf_stream *s = f->private_data;

	return s->enabled ? -EAGAIN : -EIO;
}

static __poll_t gw_perf_poll(struct file *f, poll_table *wait)
{
	struct gw_perf_stream *s = f->private_data;

	poll_wait(f, &s->wq, wait);
	return 0;
}

static long gw_perf_ioctl(struct file *f, unsigned int cmd, unsigned long arg)
{
	struct gw_perf_stream *s = f->private_data;
	long old;

	switch (cmd) {
	case I915_PERF_IOCTL_ENABLE: s->enabled = true; return 0;
	case I915_PERF_IOCTL_DISABLE: s->enabled = false; return 0;
	case I915_PERF_IOCTL_CONFIG: /* returns the previous metrics set */
		old = s->metrics_set;
		s->metrics_set = arg;
		return old;
	}
	return -EINVAL;
}

static int gw_perf_release(struct inode *inode, struct file *f)
{
	struct gw_perf_stream *s = f->private_data;

	drm_dev_put(s->dev);
	kfree(s);
	return 0;
}

static const struct file_operations gw_perf_fops = {
	.owner = THIS_MODULE,
	/* no .llseek: -ESPIPE, as i915's no_llseek (NULL since 6.0, gone in 6.12) */
	.release = gw_perf_release,
	.poll = gw_perf_poll,
	.read = gw_perf_read,
	.unlocked_ioctl = gw_perf_ioctl,
	.compat_ioctl = gw_perf_ioctl,
};

/* PERF_OPEN: an "[i915_perf]" anonymous fd, as i915_perf_open_ioctl() makes. */
int gw_perf_open_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_i915_perf_open_param *param = data;
	u64 __user *uprops = u64_to_user_ptr(param->properties_ptr);
	struct gw_perf_stream *s;
	bool has_ctx = false;
	u64 metrics_set = 0;
	int flags = 0, fd;
	u32 i;

	if (param->flags & ~(I915_PERF_FLAG_FD_CLOEXEC | I915_PERF_FLAG_FD_NONBLOCK | I915_PERF_FLAG_DISABLED))
		return -EINVAL;
	if (!param->num_properties || param->num_properties >= DRM_I915_PERF_PROP_MAX)
		return -EINVAL;
	for (i = 0; i < param->num_properties; i++) {
		u64 id, value;

		if (get_user(id, uprops + 2 * i) || get_user(value, uprops + 2 * i + 1))
			return -EFAULT;
		if (id == 0 || id >= DRM_I915_PERF_PROP_MAX)
			return -EINVAL;
		if (id == DRM_I915_PERF_PROP_OA_METRICS_SET)
			metrics_set = value;
		if (id == DRM_I915_PERF_PROP_CTX_HANDLE) {
			has_ctx = gw_ctx_exists(file, value);
			if (!has_ctx)
				return -ENOENT;
		}
	}
	if (!has_ctx && !perfmon_capable())
		return -EACCES; /* system-wide streams need CAP_PERFMON (paranoid default) */
	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	s->dev = dev;
	init_waitqueue_head(&s->wq);
	s->enabled = !(param->flags & I915_PERF_FLAG_DISABLED);
	s->metrics_set = metrics_set;
	if (param->flags & I915_PERF_FLAG_FD_CLOEXEC)
		flags |= O_CLOEXEC;
	if (param->flags & I915_PERF_FLAG_FD_NONBLOCK)
		flags |= O_NONBLOCK;
	drm_dev_get(dev); /* the stream's, put at release */
	fd = anon_inode_getfd("[i915_perf]", &gw_perf_fops, s, flags);
	if (fd < 0) {
		drm_dev_put(dev);
		kfree(s);
	}
	return fd;
}
