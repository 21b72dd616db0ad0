// The virtio_gpu part of the plugin's images, without a device: a RESOURCE_CREATE buffer's
// parameters and the host-upload mark survive the file image's round trip, and the restore
// refuses what would make it issue virtio_gpu ioctls elsewhere or with parameters missing.
#include <functional>
#include <gtest/gtest.h>

#include "images.hpp"
#include "image_test_util.hpp"

using gwcriu::FileImage;
using json = nlohmann::json;

namespace
{

FileImage virtio_file()
{
	FileImage f;
	f.criu_id = 8;
	f.device.path = "/dev/dri/card1";
	f.device.kind = "card";
	f.device.minor = 1;
	f.device.driver = "virtio_gpu";
	f.f_flags = 02;
	f.source = "manifest";
	f.handles_known = true;
	gwcriu::HandleRec r;
	r.handle = 1;
	r.size = 16384;
	r.origin = "virtio_gpu.resource_create";
	r.object = 3;
	r.saved = true;
	r.params = {{"target", 2},   {"format", 2},     {"bind", 2},       {"width", 64},     {"height", 48},
		    {"depth", 1},    {"array_size", 1}, {"last_level", 0}, {"nr_samples", 0}, {"flags", 0},
		    {"size", 12388}, {"stride", 256},   {"res_handle", 7}};
	r.host_uploaded = true;
	f.handles.push_back(r);
	gwcriu::HandleRec d;
	d.handle = 2;
	d.size = 4096;
	d.origin = "dumb";
	d.object = 4;
	d.params = {{"width", 32}, {"height", 32}, {"bpp", 32}, {"flags", 0}, {"pitch", 128}};
	f.handles.push_back(d);
	f.holders.push_back({300, 300, {5}});
	return f;
}

std::string file_error(const std::function<void(json &)> &damage)
{
	return file_image_error(virtio_file(), damage, "gpuwatch-file-8.json");
}

} // namespace

TEST(VirtioGpuImages, RoundTrip)
{
	FileImage a = virtio_file();
	FileImage b = gwcriu::parse_file_image(gwcriu::to_json(a, test_index()).dump(), "x", test_devices());
	ASSERT_TRUE(b.handles[0].virtio);
	EXPECT_EQ(b.handles[0].virtio->width, 64u);
	EXPECT_EQ(b.handles[0].virtio->size, 12388u);
	EXPECT_EQ(b.handles[0].virtio->res_handle, 7u);
	EXPECT_TRUE(b.handles[0].host_uploaded);
	EXPECT_FALSE(b.handles[1].virtio);
	EXPECT_FALSE(b.handles[1].host_uploaded);
	EXPECT_EQ(gwcriu::to_json(a, test_index()), gwcriu::to_json(b, test_index()));
}

TEST(VirtioGpuImages, RefusesDamage)
{
	EXPECT_EQ(file_error([](json &) {}), "");
	EXPECT_NE(file_error([](json &j) { j["handles"][0]["params"].erase("width"); }).find("width"),
		  std::string::npos);
	EXPECT_NE(file_error([](json &j) { j["handles"][0]["params"]["format"] = -1; }).find("format"),
		  std::string::npos);
	// virtio_gpu's private numbers mean something else on another driver: never issued there
	gwcriu::SavedDevice vgem = virtio_file().device;
	vgem.driver = "vgem";
	json other = test_index()(vgem);
	EXPECT_NE(file_error([&](json &j) { j["device"] = other; }).find("virtio_gpu resource on a vgem device"),
		  std::string::npos);
	EXPECT_NE(file_error([&](json &j) {
			  j["device"] = other;
			  j["handles"][0]["origin"] = "dumb";
		  }).find("virtio_gpu resource on a vgem device"),
		  std::string::npos); // host_uploaded alone
}
