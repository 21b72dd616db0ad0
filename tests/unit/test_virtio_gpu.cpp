// virtio_gpu's private ioctls: decoding (on libdrm's <virtgpu_drm.h> layouts), the model's
// buffers with resource parameters, mmap grants and host uploads, and the manifest's round
// trip. The VM suite runs them on QEMU's virtio-gpu (vmtests/guest/kms.sh, criu_virtio_gpu).
#include <virtgpu_drm.h>

#include "intel_world.hpp"

namespace
{

using namespace gwtest;
using namespace gwtest::intel;
using namespace gw::drm;
using json = nlohmann::json;

constexpr uint64_t kVirtio = 0xffff888000b1b000; // a virtio_gpu DRM file

struct Virtio {
	World &w;
	UserMem mem;
	template <class T> ApplyStatus call(uint32_t cmd, const T &in, const T &out)
	{
		return w.intel(mem, 100, kVirtio, GW_DRV_VIRTIO_GPU, cmd, kArg, in, out, 0, 3);
	}
	static drm_virtgpu_resource_create create_arg(uint32_t handle, uint32_t res)
	{
		drm_virtgpu_resource_create rc{};
		rc.target = 2;
		rc.format = 2; // VIRTIO_GPU_FORMAT_B8G8R8X8_UNORM
		rc.bind = 2;   // render target
		rc.width = 64;
		rc.height = 48;
		rc.depth = 1;
		rc.array_size = 1;
		rc.size = 64 * 48 * 4 + 100;
		rc.stride = 256;
		rc.bo_handle = handle;
		rc.res_handle = res;
		return rc;
	}
	ApplyStatus create(uint32_t handle, uint32_t res)
	{
		drm_virtgpu_resource_create out = create_arg(handle, res), in = out;
		in.bo_handle = in.res_handle = 0;
		return call(DRM_IOCTL_VIRTGPU_RESOURCE_CREATE, in, out);
	}
	ApplyStatus map(uint32_t handle, uint64_t offset)
	{
		drm_virtgpu_map in{0, handle, 0}, out{offset, handle, 0};
		return call(DRM_IOCTL_VIRTGPU_MAP, in, out);
	}
	ApplyStatus upload(uint32_t handle)
	{
		drm_virtgpu_3d_transfer_to_host t{};
		t.bo_handle = handle;
		t.box.w = 64;
		t.box.h = 8;
		t.box.d = 1;
		return call(DRM_IOCTL_VIRTGPU_TRANSFER_TO_HOST, t, t);
	}
};

World virtio_world()
{
	World w;
	w.proc(100);
	w.open_drv(100, 3, kVirtio, "virtio_gpu", kDev2);
	return w;
}

TEST(DecodeVirtioGpu, ResourceCreateMapAndTransfer)
{
	drm_virtgpu_resource_create out = Virtio::create_arg(5, 9), in = out;
	in.bo_handle = in.res_handle = 0;
	auto rc = as<VirtioResourceCreate>(
		decode_ioctl("virtio_gpu", ioctl_rec(1, 3, kVirtio, DRM_IOCTL_VIRTGPU_RESOURCE_CREATE, in, out)));
	EXPECT_EQ(rc.handle, 5u);
	EXPECT_EQ(rc.res_handle, 9u);
	EXPECT_EQ(rc.width, 64u);
	EXPECT_EQ(rc.height, 48u);
	EXPECT_EQ(rc.size, 64u * 48 * 4 + 100);
	EXPECT_EQ(rc.stride, 256u);
	drm_virtgpu_map m{0x10000, 5, 0};
	auto g = as<MapDumb>(decode_ioctl("virtio_gpu", ioctl_rec(1, 3, kVirtio, DRM_IOCTL_VIRTGPU_MAP, m, m)));
	EXPECT_EQ(g.handle, 5u);
	EXPECT_EQ(g.offset, 0x10000u);
	drm_virtgpu_3d_transfer_to_host t{};
	t.bo_handle = 5;
	auto u = as<VirtioTransferToHost>(
		decode_ioctl("virtio_gpu", ioctl_rec(1, 3, kVirtio, DRM_IOCTL_VIRTGPU_TRANSFER_TO_HOST, t, t)));
	EXPECT_EQ(u.handle, 5u);
	// the same numbers on another driver are that driver's (here: none known)
	EXPECT_TRUE(std::holds_alternative<Ignored>(
		decode_ioctl("vgem", ioctl_rec(1, 3, kVirtio, DRM_IOCTL_VIRTGPU_MAP, m, m))));
	EXPECT_EQ(driver_name(GW_DRV_VIRTIO_GPU), "virtio_gpu");
}

// Queries, waits and the host-to-guest transfer change nothing a restore brings back; 3D
// submissions, blob resources and context capsets make host state that is not restored.
TEST(DecodeVirtioGpu, WhatIsQuietAndWhatIsNoted)
{
	for (uint32_t cmd : {DRM_IOCTL_VIRTGPU_GETPARAM, DRM_IOCTL_VIRTGPU_RESOURCE_INFO, DRM_IOCTL_VIRTGPU_WAIT,
			     DRM_IOCTL_VIRTGPU_GET_CAPS, DRM_IOCTL_VIRTGPU_TRANSFER_FROM_HOST})
		EXPECT_TRUE(is_quiet("virtio_gpu", _IOC_NR(cmd))) << ioctl_name("virtio_gpu", cmd);
	for (uint32_t nr : {0x42u, 0x4au, 0x4bu}) {
		EXPECT_FALSE(is_quiet("virtio_gpu", nr) || is_decoded("virtio_gpu", nr)) << nr;
	}
	EXPECT_EQ(ioctl_name("virtio_gpu", DRM_IOWR(0x4a, drm_virtgpu_map)), "RESOURCE_CREATE_BLOB");
	EXPECT_EQ(ioctl_name("virtio_gpu", DRM_IOWR(0x4b, drm_virtgpu_map)), "CONTEXT_INIT");
	EXPECT_EQ(ioctl_name("virtio_gpu", DRM_IOCTL_VIRTGPU_EXECBUFFER), "EXECBUFFER");
}

TEST(ModelVirtioGpu, ResourceWithParamsGrantAndUpload)
{
	World w = virtio_world();
	Virtio v{w};
	ASSERT_EQ(v.create(1, 3), ApplyStatus::ok);
	ASSERT_EQ(v.map(1, kOff), ApplyStatus::ok);
	ASSERT_EQ(w.mmap(100, kVirtio, A, 0x4000, kOff), ApplyStatus::ok);
	json m = w.manifest();
	json h = m["files"][0]["handles"][0];
	EXPECT_EQ(h["origin"], "virtio_gpu.resource_create");
	EXPECT_EQ(h["size"], 0x4000); // 12388 bytes, rounded up to pages
	EXPECT_EQ(h["params"]["res_handle"], 3);
	EXPECT_EQ(h["params"]["format"], 2);
	EXPECT_EQ(h["params"]["width"], 64);
	EXPECT_EQ(h["mmap_offsets"], json::array({kOff}));
	EXPECT_FALSE(h.contains("host_uploaded"));
	EXPECT_EQ(m["processes"][0]["mmaps"][0]["handle"], 1);
	EXPECT_EQ(m["complete"], true);

	ASSERT_EQ(v.upload(1), ApplyStatus::ok);
	m = w.manifest();
	EXPECT_EQ(m["files"][0]["handles"][0]["host_uploaded"], true);
	// round trip through the typed manifest
	gw::manifest::Manifest back = gw::manifest::from_json(m);
	EXPECT_TRUE(back.files.at(0).handles.at(0).host_uploaded);
	EXPECT_EQ(gw::manifest::to_json(back)["files"][0]["handles"][0]["host_uploaded"], true);
	std::string shown = gw::manifest::format_summary(back);
	EXPECT_NE(shown.find("handle 1: 16384 bytes, virtio_gpu.resource_create, object 1, resource 3 64x48 format 2, "
			     "host copy written"),
		  std::string::npos)
		<< shown;
}

TEST(ModelVirtioGpu, UploadOfAnUnseenHandleMakesTheTableUnknown)
{
	World w = virtio_world();
	Virtio v{w};
	ASSERT_EQ(v.upload(4), ApplyStatus::ok);
	json m = w.manifest();
	EXPECT_EQ(m["complete"], false);
	EXPECT_EQ(m["files"][0]["handles"][0]["origin"], "unknown");
	EXPECT_EQ(m["files"][0]["handles"][0]["host_uploaded"], true);
}

} // namespace
