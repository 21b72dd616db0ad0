// virtio_gpu's private ioctls (numbers 0x40-0x9f on a file whose driver is "virtio_gpu"):
// the table and the decoders, on the layouts of libdrm's <virtgpu_drm.h>. That header (libdrm
// 2.4.114) predates RESOURCE_CREATE_BLOB and CONTEXT_INIT and the stride fields of the
// transfers: the decoders read only fields every version has, and the table matches any
// argument size.
//
// Decoded: RESOURCE_CREATE (a handle with its resource parameters), MAP (a fake mmap offset,
// as MODE_MAP_DUMB grants one) and TRANSFER_TO_HOST (the host copy now holds data). The
// rest is named in kVirtioKnown: queries, waits and the host-to-guest transfer are quiet;
// EXECBUFFER, RESOURCE_CREATE_BLOB and CONTEXT_INIT make host state gpuwatch cannot
// restore (virgl command streams, blob resources, context capsets; QEMU's virtio-gpu
// without virgl offers none of them), so their success marks the file's state unknown.
#include "drm_decode.hpp"

#include <drm.h>
#include <virtgpu_drm.h>

namespace gw::drm
{
namespace
{

// numbers libdrm 2.4.114's header lacks (Linux 5.16+ uapi)
constexpr uint32_t kResourceCreateBlob = 0x0a, kContextInit = 0x0b;

Op dec_map(const IoctlRecord &r)
{
	drm_virtgpu_map in{}, out{};
	std::memcpy(&in, r.ev.in, sizeof in);
	std::memcpy(&out, r.ev.out, sizeof out);
	return MapDumb{in.handle, out.offset}; // the same grant as MODE_MAP_DUMB's
}

Op dec_resource_create(const IoctlRecord &r)
{
	drm_virtgpu_resource_create in{}, out{};
	std::memcpy(&in, r.ev.in, sizeof in);
	std::memcpy(&out, r.ev.out, sizeof out);
	VirtioResourceCreate op;
	op.target = in.target;
	op.format = in.format;
	op.bind = in.bind;
	op.width = in.width;
	op.height = in.height;
	op.depth = in.depth;
	op.array_size = in.array_size;
	op.last_level = in.last_level;
	op.nr_samples = in.nr_samples;
	op.flags = in.flags;
	op.size = in.size;
	op.stride = in.stride;
	op.handle = out.bo_handle;
	op.res_handle = out.res_handle;
	return op;
}

Op dec_transfer_to_host(const IoctlRecord &r)
{
	uint32_t handle = 0; // bo_handle, first in every version of the struct
	std::memcpy(&handle, r.ev.in, sizeof handle);
	return VirtioTransferToHost{handle};
}

#define GW_VG(name, type, fn, size)                                                                                    \
	{                                                                                                              \
		DRM_COMMAND_BASE + DRM_VIRTGPU_##name, #name, size, fn, 0                                              \
	}
constexpr IoctlDesc kVirtio[] = {
	GW_VG(MAP, drm_virtgpu_map, dec_map, sizeof(drm_virtgpu_map)),
	GW_VG(RESOURCE_CREATE, drm_virtgpu_resource_create, dec_resource_create, sizeof(drm_virtgpu_resource_create)),
	GW_VG(TRANSFER_TO_HOST, drm_virtgpu_3d_transfer_to_host, dec_transfer_to_host, sizeof(uint32_t)),
};
#undef GW_VG
static_assert(sizeof(drm_virtgpu_resource_create) <= GW_IOCTL_ARG_MAX);

#define GW_VG_K(nr, name, quiet)                                                                                       \
	{                                                                                                              \
		DRM_COMMAND_BASE + (nr), name, quiet                                                                   \
	}
constexpr KnownIoctl kVirtioKnown[] = {
	GW_VG_K(DRM_VIRTGPU_EXECBUFFER, "EXECBUFFER", false),
	GW_VG_K(DRM_VIRTGPU_GETPARAM, "GETPARAM", true),
	GW_VG_K(DRM_VIRTGPU_RESOURCE_INFO, "RESOURCE_INFO", true),
	GW_VG_K(DRM_VIRTGPU_TRANSFER_FROM_HOST, "TRANSFER_FROM_HOST", true), // writes guest pages only
	GW_VG_K(DRM_VIRTGPU_WAIT, "WAIT", true),
	GW_VG_K(DRM_VIRTGPU_GET_CAPS, "GET_CAPS", true),
	GW_VG_K(kResourceCreateBlob, "RESOURCE_CREATE_BLOB", false),
	GW_VG_K(kContextInit, "CONTEXT_INIT", false),
};
#undef GW_VG_K

} // namespace

std::span<const IoctlDesc> virtio_gpu_ioctls()
{
	return kVirtio;
}

std::span<const KnownIoctl> virtio_gpu_known_ioctls()
{
	return kVirtioKnown;
}

} // namespace gw::drm
