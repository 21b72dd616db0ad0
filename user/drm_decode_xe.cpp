// xe's private ioctls (numbers 0x40-0x9f on a file whose driver is "xe"): the table and the
// decoders. Debian 12 ships no xe uapi header: the layouts are in user/uapi/xe_uapi.h
// (hand-written from the 6.8+ uapi, sizes and offsets static_asserted there). VM_BIND's
// argument (136 bytes) is larger than the captured argument buffer: its bind ops come from
// the GW_EV_IOCTL_EXT record (bpf/handlers.bpf.h), inline op or vector_of_binds alike.
#include "drm_decode.hpp"

#include <drm.h>

#include "uapi/xe_uapi.h"

namespace gw::drm
{
namespace
{

using detail::ExtView;
using detail::load_at;

// The first n bytes of an argument larger than the capture buffer: only its head is read.
template <class T, std::size_t N = sizeof(T)> T head_of(const __u8 (&buf)[GW_IOCTL_ARG_MAX])
{
	static_assert(N <= GW_IOCTL_ARG_MAX && N <= sizeof(T));
	T v{};
	std::memcpy(&v, buf, N);
	return v;
}

// SET_PROPERTY extensions of a chain (every xe extension so far is one).
std::vector<XeExt> set_properties(const ExtView &v)
{
	std::vector<XeExt> out;
	for (std::size_t i = 0; i < v.nodes(); ++i) {
		gw_xe_ext_set_property sp{};
		load_at(v.node(i), GW_EXT_NODE_SIZE, 0, sp);
		out.push_back({sp.base.name, sp.property, sp.value});
	}
	return out;
}

// Whether a chain the argument announces was captured whole.
bool chain_truncated(uint64_t extensions, const IoctlRecord &r)
{
	return (extensions != 0 && !r.ext) || ExtView{r.ext}.truncated();
}

Op dec_gem_create(const IoctlRecord &r)
{
	auto in = head_of<gw_xe_gem_create>(r.ev.in);
	auto out = head_of<gw_xe_gem_create>(r.ev.out);
	XeGemCreate op;
	op.size = in.size;
	op.placement = in.placement;
	op.flags = in.flags;
	op.vm_id = in.vm_id;
	op.handle = out.handle;
	op.cpu_caching = in.cpu_caching;
	op.exts = set_properties(ExtView{r.ext});
	op.truncated = chain_truncated(in.extensions, r);
	return op;
}

Op dec_mmap_offset(const IoctlRecord &r)
{
	auto in = head_of<gw_xe_gem_mmap_offset>(r.ev.in);
	return XeMmapOffset{in.handle, in.flags, head_of<gw_xe_gem_mmap_offset>(r.ev.out).offset};
}

Op dec_vm_create(const IoctlRecord &r)
{
	auto in = head_of<gw_xe_vm_create>(r.ev.in);
	XeVmCreate op;
	op.flags = in.flags;
	op.id = head_of<gw_xe_vm_create>(r.ev.out).vm_id;
	op.exts = set_properties(ExtView{r.ext});
	op.truncated = chain_truncated(in.extensions, r);
	return op;
}

Op dec_vm_destroy(const IoctlRecord &r)
{
	return XeVmDestroy{head_of<gw_xe_vm_destroy>(r.ev.in).vm_id};
}

Op dec_exec_queue_create(const IoctlRecord &r)
{
	auto in = head_of<gw_xe_exec_queue_create>(r.ev.in);
	XeExecQueueCreate op;
	op.width = in.width;
	op.num_placements = in.num_placements;
	op.vm_id = in.vm_id;
	op.flags = in.flags;
	op.id = head_of<gw_xe_exec_queue_create>(r.ev.out).exec_queue_id;
	ExtView v{r.ext};
	op.exts = set_properties(v);
	op.truncated = chain_truncated(in.extensions, r);
	std::size_t n = std::size_t{in.width} * in.num_placements;
	const gw_ext_blob *b = v.blob(GW_EXT_OWNER_ARG, in.instances);
	for (std::size_t k = 0; k < n; ++k) {
		gw_xe_engine_class_instance e{};
		if (!b || !load_at(b->data, b->len, k * sizeof e, e)) {
			op.truncated = true;
			break;
		}
		op.instances.push_back({e.engine_class, e.engine_instance, e.gt_id});
	}
	return op;
}

Op dec_exec_queue_destroy(const IoctlRecord &r)
{
	return XeExecQueueDestroy{head_of<gw_xe_exec_queue_destroy>(r.ev.in).exec_queue_id};
}

// The head of drm_xe_vm_bind that fits the capture buffer: up to and including num_binds
// and the first 8 bytes of the op slot (vector_of_binds).
constexpr std::size_t kBindHead = offsetof(gw_xe_vm_bind, bind) + 8;
static_assert(kBindHead <= GW_IOCTL_ARG_MAX);

Op dec_vm_bind(const IoctlRecord &r)
{
	auto in = head_of<gw_xe_vm_bind, kBindHead>(r.ev.in);
	XeVmBind op;
	op.vm_id = in.vm_id;
	op.exec_queue_id = in.exec_queue_id;
	op.num_binds = in.num_binds;
	op.truncated = chain_truncated(in.extensions, r);
	uint64_t uaddr = in.num_binds == 1 ? 0 : in.vector_of_binds;
	const gw_ext_blob *b = nullptr;
	if (r.ext) // the inline op is captured from the argument's own address
		for (std::size_t i = 0; i < std::min<std::size_t>(r.ext->n_blobs, GW_EXT_BLOBS_MAX) && !b; ++i)
			if (r.ext->blobs[i].owner == GW_EXT_OWNER_ARG &&
			    (in.num_binds == 1 || r.ext->blobs[i].uaddr == uaddr))
				b = &r.ext->blobs[i];
	for (uint32_t k = 0; k < in.num_binds; ++k) {
		gw_xe_vm_bind_op bo{};
		if (!b || b->len > GW_EXT_BLOB_SIZE || !load_at(b->data, b->len, k * sizeof bo, bo)) {
			op.truncated = true;
			break;
		}
		op.binds.push_back({bo.obj, bo.pat_index, bo.obj_offset, bo.range, bo.addr, bo.op, bo.flags});
	}
	return op;
}

#define GW_XE(name, type, fn, size)                                                                                    \
	{                                                                                                              \
		GW_XE_NR_##name + DRM_COMMAND_BASE, #name, size, fn, GW_XE_IOCTL_##name                                \
	}
constexpr IoctlDesc kXe[] = {
	GW_XE(GEM_CREATE, gw_xe_gem_create, dec_gem_create, sizeof(gw_xe_gem_create)),
	GW_XE(GEM_MMAP_OFFSET, gw_xe_gem_mmap_offset, dec_mmap_offset, sizeof(gw_xe_gem_mmap_offset)),
	GW_XE(VM_CREATE, gw_xe_vm_create, dec_vm_create, sizeof(gw_xe_vm_create)),
	GW_XE(VM_DESTROY, gw_xe_vm_destroy, dec_vm_destroy, sizeof(gw_xe_vm_destroy)),
	GW_XE(VM_BIND, gw_xe_vm_bind, dec_vm_bind, GW_IOCTL_ARG_MAX),
	GW_XE(EXEC_QUEUE_CREATE, gw_xe_exec_queue_create, dec_exec_queue_create, sizeof(gw_xe_exec_queue_create)),
	GW_XE(EXEC_QUEUE_DESTROY, gw_xe_exec_queue_destroy, dec_exec_queue_destroy, sizeof(gw_xe_exec_queue_destroy)),
};
#undef GW_XE

// The numbers and offsets the BPF side hard-codes (bpf/handlers.bpf.h GW_XE_*).
static_assert(GW_XE_NR_GEM_CREATE == 0x01 && GW_XE_NR_VM_CREATE == 0x03);
static_assert(GW_XE_NR_VM_BIND == 0x05 && GW_XE_NR_EXEC_QUEUE_CREATE == 0x06);
static_assert(sizeof(gw_xe_vm_bind_op) == 80 && offsetof(gw_xe_vm_bind, bind) == 24);
static_assert(offsetof(gw_xe_exec_queue_create, instances) == 24);
static_assert(sizeof(gw_xe_ext_set_property) <= GW_EXT_NODE_SIZE);

// xe numbers without a decoder (xe_uapi.h). Quiet: queries, submissions and waits.
#define GW_XE_K(name, quiet)                                                                                           \
	{                                                                                                              \
		DRM_COMMAND_BASE + GW_XE_NR_##name, #name, quiet                                                       \
	}
constexpr KnownIoctl kXeKnown[] = {
	GW_XE_K(DEVICE_QUERY, true),
	GW_XE_K(EXEC_QUEUE_GET_PROPERTY, true),
	GW_XE_K(EXEC, true),
	GW_XE_K(WAIT_USER_FENCE, true),
	GW_XE_K(OBSERVATION, false),
	GW_XE_K(MADVISE, false),
	GW_XE_K(VM_QUERY_MEM_RANGE_ATTRS, true),
	GW_XE_K(EXEC_QUEUE_SET_PROPERTY, false),
	GW_XE_K(VM_GET_PROPERTY, true),
};
#undef GW_XE_K

} // namespace

std::span<const IoctlDesc> xe_ioctls()
{
	return kXe;
}

std::span<const KnownIoctl> xe_known_ioctls()
{
	return kXeKnown;
}

} // namespace gw::drm
