// i915's private ioctls (numbers 0x40-0x9f on a file whose driver is "i915"): the table and
// the decoders. Structs from libdrm's i915_drm.h, plus user/uapi/i915_uapi_extra.h for what
// that header is too old to have. Extension chains and the arrays they point to come from
// the GW_EV_IOCTL_EXT record the BPF side captured at the ioctl's exit (bpf/handlers.bpf.h,
// gw_ext_*): a chain node is i915_user_extension {next_extension, name, flags, rsvd[4]}
// (32 bytes) followed by the extension's own fields. The offsets the BPF side hard-codes
// are static_asserted below.
#include "drm_decode.hpp"

#include <fcntl.h>

#include <drm.h>
#include <i915_drm.h>

#include "uapi/i915_uapi_extra.h"

namespace gw::drm
{
namespace
{

using detail::ExtView;
using detail::load_at;

template <class T> T in_as(const gw_ev_ioctl &ev)
{
	static_assert(sizeof(T) <= GW_IOCTL_ARG_MAX);
	T v{};
	std::memcpy(&v, ev.in, sizeof v);
	return v;
}
template <class T> T out_as(const gw_ev_ioctl &ev)
{
	static_assert(sizeof(T) <= GW_IOCTL_ARG_MAX);
	T v{};
	std::memcpy(&v, ev.out, sizeof v);
	return v;
}

// Offsets inside a captured chain node (bpf/handlers.bpf.h reads the same ones).
static_assert(sizeof(i915_user_extension) == 32 && offsetof(i915_user_extension, name) == 8);
constexpr std::size_t kExtBody = sizeof(i915_user_extension);
static_assert(offsetof(drm_i915_gem_create_ext_memory_regions, num_regions) == 36);
static_assert(offsetof(drm_i915_gem_create_ext_memory_regions, regions) == 40);
static_assert(sizeof(drm_i915_gem_create_ext_memory_regions) <= GW_EXT_NODE_SIZE);
static_assert(offsetof(drm_i915_gem_context_create_ext_setparam, param) == kExtBody);
static_assert(kExtBody + offsetof(drm_i915_gem_context_param, size) == 36);
static_assert(kExtBody + offsetof(drm_i915_gem_context_param, value) == 48);
static_assert(sizeof(gw_drm_i915_gem_create_ext_set_pat) <= GW_EXT_NODE_SIZE);
static_assert(sizeof(drm_i915_gem_context_create_ext_setparam) <= GW_EXT_NODE_SIZE);
static_assert(sizeof(drm_i915_gem_memory_class_instance) == 4);

Op dec_gem_create(const IoctlRecord &r)
{
	auto out = out_as<drm_i915_gem_create>(r.ev);
	I915GemCreate op;
	op.size = out.size;
	op.handle = out.handle;
	return op;
}

Op dec_gem_create_ext(const IoctlRecord &r)
{
	auto out = out_as<drm_i915_gem_create_ext>(r.ev);
	I915GemCreate op;
	op.size = out.size;
	op.handle = out.handle;
	op.ext = true;
	op.flags = out.flags;
	ExtView v{r.ext};
	if (in_as<drm_i915_gem_create_ext>(r.ev).extensions != 0 && !r.ext)
		op.truncated = true; // the chain was not captured
	op.truncated = op.truncated || v.truncated();
	for (std::size_t i = 0; i < v.nodes(); ++i) {
		const uint8_t *n = v.node(i);
		switch (v.name(i)) {
		case I915_GEM_CREATE_EXT_MEMORY_REGIONS: {
			drm_i915_gem_create_ext_memory_regions mr{};
			load_at(n, GW_EXT_NODE_SIZE, 0, mr);
			const gw_ext_blob *b = v.blob(static_cast<uint16_t>(i), mr.regions);
			for (uint32_t k = 0; k < mr.num_regions; ++k) {
				drm_i915_gem_memory_class_instance ci{};
				if (!b || !load_at(b->data, b->len, k * sizeof ci, ci)) {
					op.truncated = true;
					break;
				}
				op.placements.push_back({ci.memory_class, ci.memory_instance});
			}
			break;
		}
		case I915_GEM_CREATE_EXT_PROTECTED_CONTENT: op.protected_content = true; break;
		case I915_GEM_CREATE_EXT_SET_PAT: {
			gw_drm_i915_gem_create_ext_set_pat pat{};
			load_at(n, GW_EXT_NODE_SIZE, 0, pat);
			op.pat_index = pat.pat_index;
			break;
		}
		default: op.unknown_exts.push_back(v.name(i));
		}
	}
	return op;
}

Op dec_mmap_gtt(const IoctlRecord &r)
{
	I915MmapOffset op;
	op.handle = in_as<drm_i915_gem_mmap_gtt>(r.ev).handle;
	op.offset = out_as<drm_i915_gem_mmap_gtt>(r.ev).offset;
	op.type = I915_MMAP_OFFSET_GTT;
	op.legacy_gtt = true;
	return op;
}

Op dec_mmap_offset(const IoctlRecord &r)
{
	I915MmapOffset op;
	auto in = in_as<drm_i915_gem_mmap_offset>(r.ev);
	op.handle = in.handle;
	op.type = in.flags;
	op.offset = out_as<drm_i915_gem_mmap_offset>(r.ev).offset;
	return op;
}

Op dec_mmap_legacy(const IoctlRecord &r)
{
	auto in = in_as<drm_i915_gem_mmap>(r.ev);
	I915MmapLegacy op{in.handle, in.offset, in.size, out_as<drm_i915_gem_mmap>(r.ev).addr_ptr, in.flags};
	if (op.addr == 0 || op.size == 0)
		return Malformed{"GEM_MMAP returned no address"};
	return op;
}

Op dec_userptr(const IoctlRecord &r)
{
	auto in = in_as<drm_i915_gem_userptr>(r.ev);
	return I915Userptr{in.user_ptr, in.user_size, in.flags, out_as<drm_i915_gem_userptr>(r.ev).handle};
}

Op dec_set_tiling(const IoctlRecord &r)
{
	auto in = in_as<drm_i915_gem_set_tiling>(r.ev);
	auto out = out_as<drm_i915_gem_set_tiling>(r.ev);
	// the kernel writes back the mode and stride it applied (and the swizzle)
	return I915SetTiling{in.handle, out.tiling_mode, out.stride, out.swizzle_mode};
}

Op dec_set_caching(const IoctlRecord &r)
{
	auto in = in_as<drm_i915_gem_caching>(r.ev);
	return I915SetCaching{in.handle, in.caching};
}

// A context parameter whose value may point to `size` bytes captured as the blob at `value`.
I915CtxParam ctx_param(const drm_i915_gem_context_param &p, const ExtView &v, uint16_t owner, bool &truncated)
{
	I915CtxParam out{p.ctx_id, p.size, p.param, p.value, std::nullopt};
	if (p.size == 0)
		return out;
	const gw_ext_blob *b = v.blob(owner, p.value);
	if (!b || b->len < p.size) {
		truncated = true;
		return out;
	}
	out.data = std::vector<uint8_t>(b->data, b->data + p.size);
	return out;
}

Op dec_context_create(const IoctlRecord &r)
{
	I915ContextCreate op;
	op.id = out_as<drm_i915_gem_context_create>(r.ev).ctx_id;
	return op;
}

Op dec_context_create_ext(const IoctlRecord &r)
{
	auto in = in_as<drm_i915_gem_context_create_ext>(r.ev);
	I915ContextCreate op;
	op.id = out_as<drm_i915_gem_context_create_ext>(r.ev).ctx_id;
	op.flags = in.flags;
	op.ext = true;
	bool chain = (in.flags & I915_CONTEXT_CREATE_FLAGS_USE_EXTENSIONS) && in.extensions != 0;
	ExtView v{r.ext};
	op.truncated = (chain && !r.ext) || v.truncated();
	for (std::size_t i = 0; chain && i < v.nodes(); ++i) {
		if (v.name(i) != I915_CONTEXT_CREATE_EXT_SETPARAM) {
			op.unknown_exts.push_back(v.name(i));
			continue;
		}
		drm_i915_gem_context_param p{};
		load_at(v.node(i), GW_EXT_NODE_SIZE, kExtBody, p);
		op.params.push_back(ctx_param(p, v, static_cast<uint16_t>(i), op.truncated));
	}
	return op;
}

Op dec_context_destroy(const IoctlRecord &r)
{
	return I915ContextDestroy{in_as<drm_i915_gem_context_destroy>(r.ev).ctx_id};
}

Op dec_context_setparam(const IoctlRecord &r)
{
	I915ContextSetParam op;
	op.p = ctx_param(in_as<drm_i915_gem_context_param>(r.ev), ExtView{r.ext}, GW_EXT_OWNER_ARG, op.truncated);
	return op;
}

// Only GETPARAM(VM) changes state (a new VM id); other parameters are reads.
Op dec_context_getparam(const IoctlRecord &r)
{
	auto out = out_as<drm_i915_gem_context_param>(r.ev);
	if (out.param != I915_CONTEXT_PARAM_VM)
		return Ignored{_IOC_NR(r.ev.cmd)};
	return I915ContextVmId{out.ctx_id, static_cast<uint32_t>(out.value)};
}

Op dec_vm_create(const IoctlRecord &r)
{
	auto in = in_as<drm_i915_gem_vm_control>(r.ev);
	return I915VmCreate{out_as<drm_i915_gem_vm_control>(r.ev).vm_id, in.flags, in.extensions != 0};
}

Op dec_vm_destroy(const IoctlRecord &r)
{
	return I915VmDestroy{in_as<drm_i915_gem_vm_control>(r.ev).vm_id};
}

Op dec_perf_open(const IoctlRecord &r)
{
	auto in = in_as<drm_i915_perf_open_param>(r.ev);
	I915PerfOpen op;
	op.fd = r.ev.ret;
	op.flags = in.flags;
	if (op.fd < 0)
		return Malformed{"PERF_OPEN without the stream's fd"};
	const gw_ext_blob *b = ExtView{r.ext}.blob(GW_EXT_OWNER_ARG, in.properties_ptr);
	for (uint32_t k = 0; k < in.num_properties; ++k) {
		uint64_t kv[2];
		if (!b || !load_at(b->data, b->len, k * sizeof kv, kv)) {
			op.truncated = true;
			break;
		}
		op.properties.emplace_back(kv[0], kv[1]);
	}
	return op;
}

Op dec_execbuf2_wr(const IoctlRecord &r)
{
	auto in = in_as<drm_i915_gem_execbuffer2>(r.ev);
	auto out = out_as<drm_i915_gem_execbuffer2>(r.ev);
	if (!(in.flags & I915_EXEC_FENCE_OUT))
		return Ignored{_IOC_NR(r.ev.cmd)};
	return I915ExecFence{static_cast<int32_t>(out.rsvd2 >> 32), static_cast<uint32_t>(in.rsvd1), in.flags};
}

#define GW_I915(name, type, fn)                                                                                        \
	{                                                                                                              \
		_IOC_NR(DRM_IOCTL_I915_##name), #name, sizeof(type), fn, DRM_IOCTL_I915_##name                         \
	}
constexpr IoctlDesc kI915[] = {
	GW_I915(GEM_CREATE, drm_i915_gem_create, dec_gem_create),
	GW_I915(GEM_CREATE_EXT, drm_i915_gem_create_ext, dec_gem_create_ext),
	GW_I915(GEM_MMAP_GTT, drm_i915_gem_mmap_gtt, dec_mmap_gtt),
	GW_I915(GEM_MMAP_OFFSET, drm_i915_gem_mmap_offset, dec_mmap_offset),
	GW_I915(GEM_MMAP, drm_i915_gem_mmap, dec_mmap_legacy),
	GW_I915(GEM_USERPTR, drm_i915_gem_userptr, dec_userptr),
	GW_I915(GEM_SET_TILING, drm_i915_gem_set_tiling, dec_set_tiling),
	GW_I915(GEM_SET_CACHING, drm_i915_gem_caching, dec_set_caching),
	GW_I915(GEM_CONTEXT_CREATE, drm_i915_gem_context_create, dec_context_create),
	GW_I915(GEM_CONTEXT_CREATE_EXT, drm_i915_gem_context_create_ext, dec_context_create_ext),
	GW_I915(GEM_CONTEXT_DESTROY, drm_i915_gem_context_destroy, dec_context_destroy),
	GW_I915(GEM_CONTEXT_SETPARAM, drm_i915_gem_context_param, dec_context_setparam),
	GW_I915(GEM_CONTEXT_GETPARAM, drm_i915_gem_context_param, dec_context_getparam),
	GW_I915(GEM_VM_CREATE, drm_i915_gem_vm_control, dec_vm_create),
	GW_I915(GEM_VM_DESTROY, drm_i915_gem_vm_control, dec_vm_destroy),
	GW_I915(PERF_OPEN, drm_i915_perf_open_param, dec_perf_open),
	GW_I915(GEM_EXECBUFFER2_WR, drm_i915_gem_execbuffer2, dec_execbuf2_wr),
};
#undef GW_I915

// The numbers the BPF side hard-codes (bpf/handlers.bpf.h GW_I915_NR_*) and the shared ones.
static_assert(_IOC_NR(DRM_IOCTL_I915_GEM_MMAP) == 0x40 + 0x1e);
static_assert(_IOC_NR(DRM_IOCTL_I915_GEM_CONTEXT_CREATE_EXT) == 0x40 + 0x2d);
static_assert(_IOC_NR(DRM_IOCTL_I915_GEM_CONTEXT_SETPARAM) == 0x40 + 0x35);
static_assert(_IOC_NR(DRM_IOCTL_I915_PERF_OPEN) == 0x40 + 0x36);
static_assert(_IOC_NR(DRM_IOCTL_I915_GEM_VM_CREATE) == 0x40 + 0x3a);
static_assert(_IOC_NR(DRM_IOCTL_I915_GEM_CREATE_EXT) == 0x40 + 0x3c);
static_assert(_IOC_NR(DRM_IOCTL_I915_GEM_EXECBUFFER2_WR) == 0x40 + 0x29);
static_assert(_IOC_NR(DRM_IOCTL_I915_GEM_MMAP_GTT) == _IOC_NR(DRM_IOCTL_I915_GEM_MMAP_OFFSET));
static_assert(I915_EXEC_FENCE_OUT == (1 << 17));
static_assert(offsetof(drm_i915_gem_execbuffer2, flags) == 40 && offsetof(drm_i915_gem_execbuffer2, rsvd2) == 56);
static_assert(offsetof(drm_i915_gem_create_ext, extensions) == 16);
static_assert(offsetof(drm_i915_gem_context_create_ext, extensions) == 8);
static_assert(offsetof(drm_i915_gem_context_param, size) == 4 && offsetof(drm_i915_gem_context_param, value) == 16);
static_assert(offsetof(drm_i915_perf_open_param, properties_ptr) == 8);

// i915 numbers without a decoder (i915_drm.h). Quiet: queries, waits, submissions (engine
// state) and the CPU's reads and writes of contents (a dump saves the contents anyway).
#define GW_I915_K(name, quiet)                                                                                         \
	{                                                                                                              \
		DRM_COMMAND_BASE + DRM_I915_##name, #name, quiet                                                       \
	}
constexpr KnownIoctl kI915Known[] = {
	GW_I915_K(GETPARAM, true),
	GW_I915_K(SETPARAM, false),
	GW_I915_K(GEM_EXECBUFFER, true),
	GW_I915_K(GEM_BUSY, true),
	GW_I915_K(GEM_THROTTLE, true),
	GW_I915_K(GEM_PREAD, true),
	GW_I915_K(GEM_PWRITE, true),
	GW_I915_K(GEM_SET_DOMAIN, true),
	GW_I915_K(GEM_SW_FINISH, true),
	GW_I915_K(GEM_GET_TILING, true),
	GW_I915_K(GEM_GET_APERTURE, true),
	GW_I915_K(GET_PIPE_FROM_CRTC_ID, true),
	GW_I915_K(GEM_MADVISE, false),
	GW_I915_K(OVERLAY_PUT_IMAGE, false),
	GW_I915_K(OVERLAY_ATTRS, false),
	GW_I915_K(GET_SPRITE_COLORKEY, true),
	GW_I915_K(SET_SPRITE_COLORKEY, false),
	GW_I915_K(GEM_WAIT, true),
	GW_I915_K(GEM_GET_CACHING, true),
	GW_I915_K(REG_READ, true),
	GW_I915_K(GET_RESET_STATS, true),
	GW_I915_K(PERF_ADD_CONFIG, false),
	GW_I915_K(PERF_REMOVE_CONFIG, false),
	GW_I915_K(QUERY, true),
};
#undef GW_I915_K

} // namespace

std::span<const IoctlDesc> i915_ioctls()
{
	return kI915;
}

std::span<const KnownIoctl> i915_known_ioctls()
{
	return kI915Known;
}

} // namespace gw::drm
