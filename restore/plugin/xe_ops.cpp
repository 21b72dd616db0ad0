#include "xe_ops.hpp"

#include <cerrno>
#include <cstring>
#include <sys/ioctl.h>

#include "drm_ops.hpp"
#include "uapi/xe_uapi.h"

namespace gwcriu::xe
{
namespace
{

uint64_t ptr(const void *p)
{
	return reinterpret_cast<uintptr_t>(p);
}

} // namespace

bool is_xe(int fd)
{
	return gw::drm_driver_name(fd) == "xe";
}

int gem_create(int fd, uint64_t size, uint32_t placement, uint32_t flags, uint32_t vm_id, uint16_t cpu_caching,
	       uint32_t *handle)
{
	gw_xe_gem_create c = {};
	c.size = size;
	c.placement = placement;
	c.flags = flags;
	c.vm_id = vm_id;
	c.cpu_caching = cpu_caching;
	int r = xioctl(fd, GW_XE_IOCTL_GEM_CREATE, &c);
	if (r == 0)
		*handle = c.handle;
	return r;
}

int mmap_offset(int fd, uint32_t handle, uint64_t *offset)
{
	gw_xe_gem_mmap_offset m = {};
	m.handle = handle;
	int r = xioctl(fd, GW_XE_IOCTL_GEM_MMAP_OFFSET, &m);
	if (r == 0)
		*offset = m.offset;
	return r;
}

int vm_create(int fd, uint32_t flags, uint32_t *id)
{
	gw_xe_vm_create c = {};
	c.flags = flags;
	int r = xioctl(fd, GW_XE_IOCTL_VM_CREATE, &c);
	if (r == 0)
		*id = c.vm_id;
	return r;
}

int vm_destroy(int fd, uint32_t id)
{
	gw_xe_vm_destroy d = {};
	d.vm_id = id;
	return xioctl(fd, GW_XE_IOCTL_VM_DESTROY, &d);
}

int bind(int fd, uint32_t vm, uint32_t op, uint32_t obj, uint64_t offset, uint64_t addr, uint64_t range,
	 uint16_t pat_index, uint32_t flags)
{
	gw_xe_vm_bind b = {};
	b.vm_id = vm;
	b.num_binds = 1;
	b.bind.obj = obj;
	b.bind.obj_offset = offset;
	b.bind.addr = addr;
	b.bind.range = range;
	b.bind.op = op;
	b.bind.flags = flags;
	b.bind.pat_index = pat_index;
	return xioctl(fd, GW_XE_IOCTL_VM_BIND, &b);
}

int queue_create(int fd, uint32_t vm, uint32_t flags, uint16_t width, uint16_t num_placements,
		 const std::vector<Engine> &instances, const Properties &props, uint32_t *id)
{
	std::vector<gw_xe_engine_class_instance> eci;
	for (const Engine &e : instances)
		eci.push_back({e.engine_class, e.instance, e.gt, 0});
	std::vector<gw_xe_ext_set_property> ext(props.size());
	for (std::size_t i = 0; i < props.size(); ++i) {
		ext[i].base.name = GW_XE_EXEC_QUEUE_EXTENSION_SET_PROPERTY;
		ext[i].base.next_extension = i + 1 < props.size() ? ptr(&ext[i + 1]) : 0;
		ext[i].property = props[i].first;
		ext[i].value = props[i].second;
	}
	gw_xe_exec_queue_create c = {};
	c.extensions = ext.empty() ? 0 : ptr(ext.data());
	c.width = width;
	c.num_placements = num_placements;
	c.vm_id = vm;
	c.flags = flags;
	c.instances = ptr(eci.data());
	int r = xioctl(fd, GW_XE_IOCTL_EXEC_QUEUE_CREATE, &c);
	if (r == 0)
		*id = c.exec_queue_id;
	return r;
}

int queue_destroy(int fd, uint32_t id)
{
	gw_xe_exec_queue_destroy d = {};
	d.exec_queue_id = id;
	return xioctl(fd, GW_XE_IOCTL_EXEC_QUEUE_DESTROY, &d);
}

} // namespace gwcriu::xe
