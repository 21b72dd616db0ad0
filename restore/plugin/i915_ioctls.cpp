#include "i915_ioctls.hpp"
#include "drm_ops.hpp"

#include <cerrno>
#include <cstring>
#include <sys/ioctl.h>
#include <xf86drm.h>

#include "uapi/i915_uapi_extra.h"

namespace gwcriu::i915
{
namespace
{

uint64_t ptr(const void *p)
{
	return reinterpret_cast<uintptr_t>(p);
}

} // namespace

int gem_create(int fd, uint64_t size, uint32_t *handle)
{
	drm_i915_gem_create c = {};
	c.size = size;
	int r = xioctl(fd, DRM_IOCTL_I915_GEM_CREATE, &c);
	if (r == 0)
		*handle = c.handle;
	return r;
}

int gem_create_ext(int fd, uint64_t size, uint32_t flags, const std::vector<Region> &placements, bool protected_content,
		   std::optional<uint32_t> pat, uint32_t *handle)
{
	std::vector<drm_i915_gem_memory_class_instance> regions;
	for (const Region &r : placements)
		regions.push_back({r.mem_class, r.instance});
	drm_i915_gem_create_ext_memory_regions mr = {};
	drm_i915_gem_create_ext_protected_content pc = {};
	gw_drm_i915_gem_create_ext_set_pat sp = {};
	uint64_t next = 0;
	if (pat) {
		sp.base.name = I915_GEM_CREATE_EXT_SET_PAT;
		sp.pat_index = *pat;
		sp.base.next_extension = next;
		next = ptr(&sp);
	}
	if (protected_content) {
		pc.base.name = I915_GEM_CREATE_EXT_PROTECTED_CONTENT;
		pc.base.next_extension = next;
		next = ptr(&pc);
	}
	if (!regions.empty()) {
		mr.base.name = I915_GEM_CREATE_EXT_MEMORY_REGIONS;
		mr.num_regions = static_cast<uint32_t>(regions.size());
		mr.regions = ptr(regions.data());
		mr.base.next_extension = next;
		next = ptr(&mr);
	}
	drm_i915_gem_create_ext c = {};
	c.size = size;
	c.flags = flags;
	c.extensions = next;
	int r = xioctl(fd, DRM_IOCTL_I915_GEM_CREATE_EXT, &c);
	if (r == 0)
		*handle = c.handle;
	return r;
}

int userptr(int fd, uint64_t addr, uint64_t size, uint32_t flags, uint32_t *handle)
{
	drm_i915_gem_userptr u = {};
	u.user_ptr = addr;
	u.user_size = size;
	u.flags = flags;
	int r = xioctl(fd, DRM_IOCTL_I915_GEM_USERPTR, &u);
	if (r == 0)
		*handle = u.handle;
	return r;
}

int set_tiling(int fd, uint32_t handle, uint32_t mode, uint32_t stride)
{
	drm_i915_gem_set_tiling t = {};
	t.handle = handle;
	t.tiling_mode = mode;
	t.stride = stride;
	return xioctl(fd, DRM_IOCTL_I915_GEM_SET_TILING, &t);
}

int set_caching(int fd, uint32_t handle, uint32_t caching)
{
	drm_i915_gem_caching c = {};
	c.handle = handle;
	c.caching = caching;
	return xioctl(fd, DRM_IOCTL_I915_GEM_SET_CACHING, &c);
}

int busy(int fd, uint32_t handle)
{
	drm_i915_gem_busy b = {};
	b.handle = handle;
	return xioctl(fd, DRM_IOCTL_I915_GEM_BUSY, &b);
}

int mmap_offset(int fd, uint32_t handle, uint32_t type, uint64_t *offset)
{
	drm_i915_gem_mmap_offset m = {};
	m.handle = handle;
	m.flags = type;
	int r = xioctl(fd, DRM_IOCTL_I915_GEM_MMAP_OFFSET, &m);
	if (r == 0)
		*offset = m.offset;
	return r;
}

std::vector<Region> memory_regions(int fd, int *err)
{
	drm_i915_query_item item = {};
	item.query_id = DRM_I915_QUERY_MEMORY_REGIONS;
	drm_i915_query q = {};
	q.num_items = 1;
	q.items_ptr = ptr(&item);
	*err = xioctl(fd, DRM_IOCTL_I915_QUERY, &q);
	if (*err == 0 && item.length <= 0)
		*err = item.length < 0 ? item.length : -EINVAL;
	if (*err)
		return {};
	std::vector<uint8_t> buf(static_cast<std::size_t>(item.length));
	item.data_ptr = ptr(buf.data());
	*err = xioctl(fd, DRM_IOCTL_I915_QUERY, &q);
	if (*err == 0 && item.length < static_cast<int32_t>(sizeof(drm_i915_query_memory_regions)))
		*err = item.length < 0 ? item.length : -EINVAL;
	if (*err)
		return {};
	auto *mr = reinterpret_cast<const drm_i915_query_memory_regions *>(buf.data());
	std::size_t fit = (buf.size() - sizeof(*mr)) / sizeof(mr->regions[0]);
	std::vector<Region> out;
	for (uint32_t i = 0; i < mr->num_regions && i < fit; ++i)
		out.push_back({mr->regions[i].region.memory_class, mr->regions[i].region.memory_instance});
	return out;
}

int vm_create(int fd, uint32_t *id)
{
	drm_i915_gem_vm_control v = {};
	int r = xioctl(fd, DRM_IOCTL_I915_GEM_VM_CREATE, &v);
	if (r == 0)
		*id = v.vm_id;
	return r;
}

int vm_destroy(int fd, uint32_t id)
{
	drm_i915_gem_vm_control v = {};
	v.vm_id = id;
	return xioctl(fd, DRM_IOCTL_I915_GEM_VM_DESTROY, &v);
}

namespace
{

void fill_param(drm_i915_gem_context_param &out, uint32_t ctx, const CtxParam &p)
{
	out.ctx_id = ctx;
	out.param = p.param;
	if (p.data.empty()) {
		out.value = p.value;
	} else {
		out.size = static_cast<uint32_t>(p.data.size());
		out.value = ptr(p.data.data());
	}
}

} // namespace

int context_create(int fd, uint32_t flags, std::optional<uint32_t> vm, const std::optional<EngineList> &engines,
		   const std::vector<CtxParam> &params, uint32_t *id)
{
	std::vector<CtxParam> all;
	if (vm)
		all.push_back({I915_CONTEXT_PARAM_VM, *vm, {}});
	if (engines) {
		// struct i915_context_param_engines: u64 extensions, then the engine map
		std::vector<uint8_t> map(8 + 4 * engines->size(), 0);
		for (std::size_t i = 0; i < engines->size(); ++i) {
			i915_engine_class_instance ci = {(*engines)[i].first, (*engines)[i].second};
			std::memcpy(map.data() + 8 + 4 * i, &ci, sizeof ci);
		}
		all.push_back({I915_CONTEXT_PARAM_ENGINES, 0, std::move(map)});
	}
	all.insert(all.end(), params.begin(), params.end());
	std::vector<drm_i915_gem_context_create_ext_setparam> ext(all.size());
	for (std::size_t i = 0; i < all.size(); ++i) {
		ext[i] = {};
		ext[i].base.name = I915_CONTEXT_CREATE_EXT_SETPARAM;
		ext[i].base.next_extension = i + 1 < all.size() ? ptr(&ext[i + 1]) : 0;
		fill_param(ext[i].param, 0, all[i]);
	}
	drm_i915_gem_context_create_ext c = {};
	c.flags = flags | (ext.empty() ? 0 : I915_CONTEXT_CREATE_FLAGS_USE_EXTENSIONS);
	c.extensions = ext.empty() ? 0 : ptr(ext.data());
	int r = xioctl(fd, DRM_IOCTL_I915_GEM_CONTEXT_CREATE_EXT, &c);
	if (r == 0)
		*id = c.ctx_id;
	return r;
}

int context_destroy(int fd, uint32_t id)
{
	drm_i915_gem_context_destroy d = {};
	d.ctx_id = id;
	return xioctl(fd, DRM_IOCTL_I915_GEM_CONTEXT_DESTROY, &d);
}

int context_setparam(int fd, uint32_t ctx, const CtxParam &p)
{
	drm_i915_gem_context_param a = {};
	fill_param(a, ctx, p);
	return xioctl(fd, DRM_IOCTL_I915_GEM_CONTEXT_SETPARAM, &a);
}

std::optional<uint64_t> context_param_number(const std::string &name)
{
	static const std::pair<const char *, uint64_t> names[] = {
		{"ban_period", I915_CONTEXT_PARAM_BAN_PERIOD},
		{"no_zeromap", I915_CONTEXT_PARAM_NO_ZEROMAP},
		{"gtt_size", I915_CONTEXT_PARAM_GTT_SIZE},
		{"no_error_capture", I915_CONTEXT_PARAM_NO_ERROR_CAPTURE},
		{"bannable", I915_CONTEXT_PARAM_BANNABLE},
		{"priority", I915_CONTEXT_PARAM_PRIORITY},
		{"sseu", I915_CONTEXT_PARAM_SSEU},
		{"recoverable", I915_CONTEXT_PARAM_RECOVERABLE},
		{"vm", I915_CONTEXT_PARAM_VM},
		{"engines", I915_CONTEXT_PARAM_ENGINES},
		{"persistence", I915_CONTEXT_PARAM_PERSISTENCE},
		{"ringsize", I915_CONTEXT_PARAM_RINGSIZE},
		{"protected_content", I915_CONTEXT_PARAM_PROTECTED_CONTENT},
	};
	for (const auto &[n, v] : names)
		if (name == n)
			return v;
	if (name.rfind("param_", 0) == 0 && name.size() > 6 && name.size() <= 16 &&
	    name.find_first_not_of("0123456789", 6) == std::string::npos)
		return std::stoull(name.substr(6));
	return std::nullopt;
}

std::optional<uint32_t> mmap_type_number(const std::string &name)
{
	static const std::pair<const char *, uint32_t> names[] = {
		{"gtt", I915_MMAP_OFFSET_GTT},
		{"wc", I915_MMAP_OFFSET_WC},
		{"wb", I915_MMAP_OFFSET_WB},
		{"uc", I915_MMAP_OFFSET_UC},
		{"fixed", 4 /* I915_MMAP_OFFSET_FIXED */},
	};
	for (const auto &[n, v] : names)
		if (name == n)
			return v;
	return std::nullopt;
}

std::optional<uint32_t> tiling_number(const std::string &name)
{
	if (name == "none")
		return I915_TILING_NONE;
	if (name == "X")
		return I915_TILING_X;
	if (name == "Y")
		return I915_TILING_Y;
	return std::nullopt;
}

std::optional<uint16_t> mem_class_number(const std::string &name)
{
	if (name == "system")
		return I915_MEMORY_CLASS_SYSTEM;
	if (name == "device")
		return I915_MEMORY_CLASS_DEVICE;
	return std::nullopt;
}

} // namespace gwcriu::i915
