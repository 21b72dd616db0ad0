#include "restore_virtio_gpu.hpp"

#include <drm.h>
#include <virtgpu_drm.h>

#include "drm_ops.hpp"
#include "log.hpp"
#include "restore.hpp"

namespace gwcriu
{

uint32_t virtio_gpu_create(int fd, const HandleRec &h, bool *filled)
{
	const VirtioResource &v = *h.virtio;
	drm_virtgpu_resource_create rc{};
	rc.target = v.target;
	rc.format = v.format;
	rc.bind = v.bind;
	rc.width = v.width;
	rc.height = v.height;
	rc.depth = v.depth;
	rc.array_size = v.array_size;
	rc.last_level = v.last_level;
	rc.nr_samples = v.nr_samples;
	rc.flags = v.flags;
	rc.size = v.size;
	rc.stride = v.stride;
	if (int e = xioctl(fd, DRM_IOCTL_VIRTGPU_RESOURCE_CREATE, &rc); e != 0)
		throw Error("cannot recreate handle " + num(h.handle) + " (virtio_gpu RESOURCE_CREATE, " +
			    num(v.width) + "x" + num(v.height) + " format " + num(v.format) + ", " + num(v.size) +
			    " bytes): " + gw::errno_text(-e));
	if (rc.res_handle != v.res_handle)
		log_warn("handle %u: virtio_gpu resource id %u is now %u (RESOURCE_INFO answers the new one)", h.handle,
			 v.res_handle, rc.res_handle);
	*filled = fill_handle(fd, rc.bo_handle, h.size, h.object, h.saved);
	return rc.bo_handle;
}

bool virtio_gpu_upload(int fd, uint32_t handle, uint32_t width, uint32_t height)
{
	if (!width || !height) {
		log_warn("handle %u: its host copy is not written again: its size in pixels is not known", handle);
		return false;
	}
	drm_virtgpu_3d_transfer_to_host t{};
	t.bo_handle = handle;
	t.box.w = width;
	t.box.h = height;
	t.box.d = 1;
	if (int e = xioctl(fd, DRM_IOCTL_VIRTGPU_TRANSFER_TO_HOST, &t); e != 0)
		throw Error("cannot write the host copy of handle " + num(handle) +
			    " again (virtio_gpu TRANSFER_TO_HOST " + num(width) + "x" + num(height) +
			    "): " + gw::errno_text(-e));
	drm_virtgpu_3d_wait w{};
	w.handle = handle;
	if (int e = xioctl(fd, DRM_IOCTL_VIRTGPU_WAIT, &w); e != 0)
		throw Error("cannot wait for the host copy of handle " + num(handle) + ": " + gw::errno_text(-e));
	return true;
}

} // namespace gwcriu
