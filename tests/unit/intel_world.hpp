// Shared by the i915 and xe model tests: fake kernel addresses, and builders that issue
// i915/xe ioctls as the tracer records them (records.hpp intel_call: the GW_EV_IOCTL_EXT,
// then the GW_EV_IOCTL).
#pragma once

#include <gtest/gtest.h>

#include <i915_drm.h>
#include <sys/mman.h>

#include "records.hpp"
#include "uapi/i915_uapi_extra.h"
#include "uapi/xe_uapi.h"

namespace gwtest::intel
{

using namespace gwtest;
using json = nlohmann::json;

constexpr uint64_t kDev = 0xffff888010000000;  // struct drm_device * of the i915 device
constexpr uint64_t kDev2 = 0xffff888020000000; // another device
constexpr uint64_t kI915 = 0xffff888000a15000; // i915 DRM files
constexpr uint64_t kI915b = 0xffff888000a16000;
constexpr uint64_t kXe = 0xffff888000e0e000;   // an xe DRM file
constexpr uint64_t kPerf = 0xffff888000f01000; // anon_inode:[i915_perf]
constexpr uint64_t kSync = 0xffff888000f02000; // anon_inode:sync_file
constexpr uint64_t kArg = 0x7ffd00001000;      // ioctl arguments
constexpr uint64_t kNode0 = 0x555500010000;    // extension nodes, 0x1000 apart
constexpr uint64_t kArray = 0x555500020000;    // arrays behind pointers
constexpr uint64_t kArray2 = 0x555500030000;
constexpr uint64_t A = 0x7f0000000000; // mapping addresses
constexpr uint64_t kOff = 0x100000000; // fake offsets

inline uint64_t node(int i)
{
	return kNode0 + 0x1000 * uint64_t(i);
}

// --- i915 calls --------------------------------------------------------------------------
struct I915 {
	World &w;
	UserMem mem;
	uint64_t file = kI915;
	int fd = 3;
	uint32_t pid = 100;

	template <class T> ApplyStatus call(uint32_t cmd, const T &in, const T &out, int32_t ret = 0)
	{
		return w.intel(mem, pid, file, GW_DRV_I915, cmd, kArg, in, out, ret, fd);
	}
	ApplyStatus gem_create(uint32_t handle, uint64_t size)
	{
		drm_i915_gem_create in{size, 0, 0}, out{size, handle, 0};
		return call(DRM_IOCTL_I915_GEM_CREATE, in, out);
	}
	// handle 7, 64 KiB: memory regions [device 0, system 0] -> protected -> PAT 3
	IntelCall create_ext_call(uint32_t handle = 7, bool regions_readable = true)
	{
		put_i915_full_chain(mem, {node(0), node(1), node(2)}, kArray, regions_readable ? kArray : 0xdead0000);
		drm_i915_gem_create_ext in{}, out{};
		in.size = 65000;
		in.flags = I915_GEM_CREATE_EXT_FLAG_NEEDS_CPU_ACCESS;
		in.extensions = node(0);
		out = in;
		out.size = 65536;
		out.handle = handle;
		return intel_call(mem, pid, fd, file, GW_DRV_I915, DRM_IOCTL_I915_GEM_CREATE_EXT, kArg, in, out);
	}
	ApplyStatus mmap_gtt(uint32_t handle, uint64_t offset)
	{
		drm_i915_gem_mmap_gtt in{handle, 0, 0}, out{handle, 0, offset};
		return call(DRM_IOCTL_I915_GEM_MMAP_GTT, in, out);
	}
	ApplyStatus mmap_offset(uint32_t handle, uint64_t type, uint64_t offset)
	{
		drm_i915_gem_mmap_offset in{}, out{};
		in.handle = handle;
		in.flags = type;
		out = in;
		out.offset = offset;
		return call(DRM_IOCTL_I915_GEM_MMAP_OFFSET, in, out);
	}
	ApplyStatus vm_create(uint32_t id)
	{
		drm_i915_gem_vm_control in{}, out{};
		out.vm_id = id;
		return call(DRM_IOCTL_I915_GEM_VM_CREATE, in, out);
	}
	ApplyStatus vm_destroy(uint32_t id)
	{
		drm_i915_gem_vm_control in{};
		in.vm_id = id;
		return call(DRM_IOCTL_I915_GEM_VM_DESTROY, in, in);
	}
	ApplyStatus context_create(uint32_t id)
	{
		drm_i915_gem_context_create in{0, 0}, out{id, 0};
		return call(DRM_IOCTL_I915_GEM_CONTEXT_CREATE, in, out);
	}
	// CONTEXT_CREATE_EXT: VM vm -> priority -512 -> engines [render 0, copy 0]
	ApplyStatus context_create_ext(uint32_t id, uint32_t vm)
	{
		auto sp = [](uint64_t next, uint64_t param, uint64_t value, uint32_t size) {
			drm_i915_gem_context_create_ext_setparam s{};
			s.base.next_extension = next;
			s.base.name = I915_CONTEXT_CREATE_EXT_SETPARAM;
			s.param.param = param;
			s.param.value = value;
			s.param.size = size;
			return s;
		};
		I915_DEFINE_CONTEXT_PARAM_ENGINES(engines, 2);
		engines.extensions = 0;
		engines.engines[0] = {I915_ENGINE_CLASS_RENDER, 0};
		engines.engines[1] = {I915_ENGINE_CLASS_COPY, 0};
		mem.put(kArray2, engines);
		mem.put(node(0), sp(node(1), I915_CONTEXT_PARAM_VM, vm, 0));
		mem.put(node(1), sp(node(2), I915_CONTEXT_PARAM_PRIORITY, static_cast<uint64_t>(int64_t{-512}), 0));
		mem.put(node(2), sp(0, I915_CONTEXT_PARAM_ENGINES, kArray2, sizeof engines));
		drm_i915_gem_context_create_ext in{}, out{};
		in.flags = I915_CONTEXT_CREATE_FLAGS_USE_EXTENSIONS;
		in.extensions = node(0);
		out = in;
		out.ctx_id = id;
		return call(DRM_IOCTL_I915_GEM_CONTEXT_CREATE_EXT, in, out);
	}
	ApplyStatus context_destroy(uint32_t id)
	{
		drm_i915_gem_context_destroy in{id, 0};
		return call(DRM_IOCTL_I915_GEM_CONTEXT_DESTROY, in, in);
	}
	ApplyStatus context_set_vm(uint32_t id, uint32_t vm)
	{
		drm_i915_gem_context_param p{};
		p.ctx_id = id;
		p.param = I915_CONTEXT_PARAM_VM;
		p.value = vm;
		return call(DRM_IOCTL_I915_GEM_CONTEXT_SETPARAM, p, p);
	}
	ApplyStatus set_tiling(uint32_t handle)
	{
		drm_i915_gem_set_tiling in{handle, I915_TILING_X, 512, 0},
			out{handle, I915_TILING_X, 512, I915_BIT_6_SWIZZLE_9_10};
		return call(DRM_IOCTL_I915_GEM_SET_TILING, in, out);
	}
	ApplyStatus userptr(uint32_t handle, uint64_t ptr, uint64_t size)
	{
		drm_i915_gem_userptr in{ptr, size, 0, 0}, out{ptr, size, 0, handle};
		return call(DRM_IOCTL_I915_GEM_USERPTR, in, out);
	}
	ApplyStatus gem_mmap(uint32_t handle, uint64_t size, uint64_t addr)
	{
		drm_i915_gem_mmap in{}, out{};
		in.handle = handle;
		in.size = size;
		out = in;
		out.addr_ptr = addr;
		return call(DRM_IOCTL_I915_GEM_MMAP, in, out);
	}
	ApplyStatus perf_open(int32_t new_fd)
	{
		uint64_t props[2][2] = {{DRM_I915_PERF_PROP_SAMPLE_OA, 1}, {DRM_I915_PERF_PROP_OA_METRICS_SET, 42}};
		mem.put(kArray2, props);
		drm_i915_perf_open_param in{I915_PERF_FLAG_FD_CLOEXEC, 2, kArray2};
		return call(DRM_IOCTL_I915_PERF_OPEN, in, in, new_fd);
	}
	ApplyStatus execbuf(uint32_t cmd, uint32_t ctx, uint64_t flags, int32_t fence_fd)
	{
		drm_i915_gem_execbuffer2 in{}, out{};
		in.buffer_count = 1;
		in.flags = flags;
		in.rsvd1 = ctx;
		out = in;
		out.rsvd2 = uint64_t(uint32_t(fence_fd)) << 32;
		return call(cmd, in, out);
	}
};

// A mapping the attach-time snapshot found: an anon_inode:i915.gem VMA of device `dev`.
inline gw_ev_mmap anon_map(uint32_t pid, uint64_t dev, uint64_t start, uint64_t length, uint64_t offset)
{
	auto r = mmap_rec(pid, 0, start, length, offset, PROT_READ | PROT_WRITE, true, -1);
	r.via = GW_VIA_I915_ANON;
	r.dev = dev;
	r.flags = 0;
	return r;
}

inline World i915_world()
{
	World w;
	w.proc(100);
	w.open_drv(100, 3, kI915, "i915", kDev);
	return w;
}

inline const json *find_id(const json &list, uint64_t id)
{
	for (const json &e : list)
		if (e["id"] == id)
			return &e;
	return nullptr;
}

inline bool has_reason(const json &m, const std::string &part)
{
	for (const json &r : m["incomplete_reasons"])
		if (r.get<std::string>().find(part) != std::string::npos)
			return true;
	return false;
}

// --- xe calls ----------------------------------------------------------------------------
struct Xe {
	World &w;
	UserMem mem;
	uint64_t file = kXe;
	int fd = 3;
	uint32_t pid = 100;

	template <class T> ApplyStatus call(uint32_t cmd, const T &in, const T &out)
	{
		return w.intel(mem, pid, file, GW_DRV_XE, cmd, kArg, in, out, 0, fd);
	}
	ApplyStatus gem_create(uint32_t handle, uint64_t size, bool pxp = false)
	{
		gw_xe_gem_create in{}, out{};
		if (pxp) {
			gw_xe_ext_set_property sp{};
			sp.base.name = GW_XE_GEM_CREATE_EXTENSION_SET_PROPERTY;
			sp.property = GW_XE_GEM_CREATE_SET_PROPERTY_PXP_TYPE;
			sp.value = GW_XE_PXP_TYPE_HWDRM;
			in.extensions = mem.put(node(0), sp);
		}
		in.size = size;
		in.placement = GW_XE_GEM_PLACEMENT_BIT(0) | GW_XE_GEM_PLACEMENT_BIT(1);
		in.flags = GW_XE_GEM_CREATE_FLAG_SCANOUT;
		in.cpu_caching = GW_XE_GEM_CPU_CACHING_WC;
		out = in;
		out.handle = handle;
		return call(GW_XE_IOCTL_GEM_CREATE, in, out);
	}
	ApplyStatus mmap_offset(uint32_t handle, uint64_t offset, uint32_t flags = 0)
	{
		gw_xe_gem_mmap_offset in{}, out{};
		in.handle = handle;
		in.flags = flags;
		out = in;
		out.offset = offset;
		return call(GW_XE_IOCTL_GEM_MMAP_OFFSET, in, out);
	}
	ApplyStatus vm_create(uint32_t id, uint32_t flags = 0)
	{
		gw_xe_vm_create in{}, out{};
		in.flags = flags;
		out = in;
		out.vm_id = id;
		return call(GW_XE_IOCTL_VM_CREATE, in, out);
	}
	ApplyStatus vm_destroy(uint32_t id)
	{
		gw_xe_vm_destroy in{};
		in.vm_id = id;
		return call(GW_XE_IOCTL_VM_DESTROY, in, in);
	}
	// width 2 x 2 placements; instances unreadable when `readable` is false
	ApplyStatus exec_queue_create(uint32_t id, uint32_t vm, bool readable = true)
	{
		mem.put_array(kArray2, std::vector<gw_xe_engine_class_instance>{{GW_XE_ENGINE_CLASS_RENDER, 0, 0, 0},
										{GW_XE_ENGINE_CLASS_RENDER, 1, 0, 0},
										{GW_XE_ENGINE_CLASS_COMPUTE, 0, 1, 0},
										{GW_XE_ENGINE_CLASS_COMPUTE, 1, 1, 0}});
		gw_xe_exec_queue_create in{}, out{};
		in.width = 2;
		in.num_placements = 2;
		in.vm_id = vm;
		in.instances = readable ? kArray2 : 0xdead0000;
		out = in;
		out.exec_queue_id = id;
		return call(GW_XE_IOCTL_EXEC_QUEUE_CREATE, in, out);
	}
	ApplyStatus exec_queue_destroy(uint32_t id)
	{
		gw_xe_exec_queue_destroy in{};
		in.exec_queue_id = id;
		return call(GW_XE_IOCTL_EXEC_QUEUE_DESTROY, in, in);
	}
	IntelCall bind_call(uint32_t vm, const std::vector<gw_xe_vm_bind_op> &ops)
	{
		gw_xe_vm_bind in{};
		in.vm_id = vm;
		in.num_binds = static_cast<uint32_t>(ops.size());
		if (ops.size() == 1)
			in.bind = ops[0];
		else
			in.vector_of_binds = mem.put_array(kArray, ops);
		return intel_call(mem, pid, fd, file, GW_DRV_XE, GW_XE_IOCTL_VM_BIND, kArg, in, in);
	}
	ApplyStatus bind(uint32_t vm, const std::vector<gw_xe_vm_bind_op> &ops) { return w.call(bind_call(vm, ops)); }
};

inline World xe_world()
{
	World w;
	w.proc(100);
	w.open_drv(100, 3, kXe, "xe", kDev2);
	return w;
}

// the manifest's bindings of VM `vm` of the first file, or null
inline json bindings(const World &w, uint32_t vm)
{
	json m = w.manifest();
	const json *v = find_id(m["files"][0]["vms"], vm);
	return v ? (*v)["bindings"] : json(nullptr);
}

} // namespace gwtest::intel
