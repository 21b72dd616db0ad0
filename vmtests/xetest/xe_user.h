/* SPDX-License-Identifier: MIT */
/*
 * Userspace helpers for xe ioctls, shared by the gwxe smoke test and the wl_xe_criu workload:
 * thin wrappers over gpuwatch's user/uapi/xe_uapi.h returning 0 or -errno.
 */
#ifndef XE_USER_H
#define XE_USER_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "xe_uapi.h"

static inline int xe_ioctl(int fd, unsigned long req, void *arg)
{
	int r;

	do
		r = ioctl(fd, req, arg);
	while (r < 0 && (errno == EINTR || errno == EAGAIN));
	return r < 0 ? -errno : 0;
}

static inline int xe_gem_create(int fd, uint64_t size, uint32_t placement, uint32_t flags, uint32_t vm_id,
				uint16_t cpu_caching, uint32_t *handle)
{
	struct gw_xe_gem_create c;

	memset(&c, 0, sizeof(c));
	c.size = size;
	c.placement = placement;
	c.flags = flags;
	c.vm_id = vm_id;
	c.cpu_caching = cpu_caching;
	int r = xe_ioctl(fd, GW_XE_IOCTL_GEM_CREATE, &c);
	if (r == 0)
		*handle = c.handle;
	return r;
}

static inline int xe_mmap_offset(int fd, uint32_t handle, uint64_t *offset)
{
	struct gw_xe_gem_mmap_offset m;

	memset(&m, 0, sizeof(m));
	m.handle = handle;
	int r = xe_ioctl(fd, GW_XE_IOCTL_GEM_MMAP_OFFSET, &m);
	if (r == 0)
		*offset = m.offset;
	return r;
}

static inline int xe_vm_create(int fd, uint32_t flags, uint32_t *id)
{
	struct gw_xe_vm_create c;

	memset(&c, 0, sizeof(c));
	c.flags = flags;
	int r = xe_ioctl(fd, GW_XE_IOCTL_VM_CREATE, &c);
	if (r == 0)
		*id = c.vm_id;
	return r;
}

static inline int xe_vm_destroy(int fd, uint32_t id)
{
	struct gw_xe_vm_destroy d;

	memset(&d, 0, sizeof(d));
	d.vm_id = id;
	return xe_ioctl(fd, GW_XE_IOCTL_VM_DESTROY, &d);
}

/* One bind op, inline (num_binds 1), no syncs. */
static inline int xe_bind(int fd, uint32_t vm, uint32_t op, uint32_t obj, uint64_t offset, uint64_t addr,
			  uint64_t range, uint16_t pat_index, uint32_t flags)
{
	struct gw_xe_vm_bind b;

	memset(&b, 0, sizeof(b));
	b.vm_id = vm;
	b.num_binds = 1;
	b.bind.obj = obj;
	b.bind.obj_offset = offset;
	b.bind.addr = addr;
	b.bind.range = range;
	b.bind.op = op;
	b.bind.flags = flags;
	b.bind.pat_index = pat_index;
	return xe_ioctl(fd, GW_XE_IOCTL_VM_BIND, &b);
}

/* An exec queue with optional priority / timeslice (< 0: not set) properties. */
static inline int xe_queue_create(int fd, uint32_t vm, uint16_t width, uint16_t num_placements,
				  const struct gw_xe_engine_class_instance *inst, int64_t priority, int64_t timeslice,
				  uint32_t *id)
{
	struct gw_xe_ext_set_property p[2];
	struct gw_xe_exec_queue_create c;
	uint64_t chain = 0;

	memset(p, 0, sizeof(p));
	memset(&c, 0, sizeof(c));
	if (timeslice >= 0) {
		p[1].base.name = GW_XE_EXEC_QUEUE_EXTENSION_SET_PROPERTY;
		p[1].property = GW_XE_EXEC_QUEUE_SET_PROPERTY_TIMESLICE;
		p[1].value = (uint64_t)timeslice;
		chain = (uintptr_t)&p[1];
	}
	if (priority >= 0) {
		p[0].base.name = GW_XE_EXEC_QUEUE_EXTENSION_SET_PROPERTY;
		p[0].base.next_extension = chain;
		p[0].property = GW_XE_EXEC_QUEUE_SET_PROPERTY_PRIORITY;
		p[0].value = (uint64_t)priority;
		chain = (uintptr_t)&p[0];
	}
	c.extensions = chain;
	c.width = width;
	c.num_placements = num_placements;
	c.vm_id = vm;
	c.instances = (uintptr_t)inst;
	int r = xe_ioctl(fd, GW_XE_IOCTL_EXEC_QUEUE_CREATE, &c);
	if (r == 0)
		*id = c.exec_queue_id;
	return r;
}

static inline int xe_queue_destroy(int fd, uint32_t id)
{
	struct gw_xe_exec_queue_destroy d;

	memset(&d, 0, sizeof(d));
	d.exec_queue_id = id;
	return xe_ioctl(fd, GW_XE_IOCTL_EXEC_QUEUE_DESTROY, &d);
}

/* DEVICE_QUERY's two calls; *buf is malloc'ed (caller frees). */
static inline int xe_query(int fd, uint32_t query, void **buf, uint32_t *size)
{
	struct gw_xe_device_query q;

	memset(&q, 0, sizeof(q));
	q.query = query;
	int r = xe_ioctl(fd, GW_XE_IOCTL_DEVICE_QUERY, &q);
	if (r)
		return r;
	*buf = calloc(1, q.size);
	if (!*buf)
		return -ENOMEM;
	q.data = (uintptr_t)*buf;
	*size = q.size;
	return xe_ioctl(fd, GW_XE_IOCTL_DEVICE_QUERY, &q);
}

#endif
