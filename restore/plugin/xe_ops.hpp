// xe ioctls the plugin needs to rebuild a file's state (6.8+ uapi, user/uapi/xe_uapi.h):
// buffers (GEM_CREATE with placement, flags, VM, CPU caching), their fake offsets, VMs, VM_BIND
// MAP / MAP_USERPTR, exec queues with SET_PROPERTY extensions. Functions return 0 or -errno and
// never log.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace gwcriu::xe
{

struct Engine {
	uint16_t engine_class = 0, instance = 0, gt = 0;
};
using Properties = std::vector<std::pair<uint32_t, uint64_t>>; // (SET_PROPERTY id, value), in order

bool is_xe(int fd); // DRM_IOCTL_VERSION says "xe"
int gem_create(int fd, uint64_t size, uint32_t placement, uint32_t flags, uint32_t vm_id, uint16_t cpu_caching,
	       uint32_t *handle);
int mmap_offset(int fd, uint32_t handle, uint64_t *offset); // -ENOENT when the handle does not exist
int vm_create(int fd, uint32_t flags, uint32_t *id);
int vm_destroy(int fd, uint32_t id);
// One VM_BIND op, inline, on the VM's default bind queue, without syncs (synchronous).
int bind(int fd, uint32_t vm, uint32_t op, uint32_t obj, uint64_t offset, uint64_t addr, uint64_t range,
	 uint16_t pat_index, uint32_t flags);
int queue_create(int fd, uint32_t vm, uint32_t flags, uint16_t width, uint16_t num_placements,
		 const std::vector<Engine> &instances, const Properties &props, uint32_t *id);
int queue_destroy(int fd, uint32_t id);

} // namespace gwcriu::xe
