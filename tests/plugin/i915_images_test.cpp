// The i915 part of the plugin's images, without a device: what the dump takes from the
// manifest (contexts, VMs, buffer creation, tiling, caching), its round trip through the file
// image, and the damage the restore must refuse.
#include <functional>
#include <gtest/gtest.h>
#include <i915_drm.h>

#include "dump_i915.hpp"
#include "images.hpp"
#include "image_test_util.hpp"
#include "manifest_entry.hpp"

using gwcriu::FileImage;
using gwcriu::ImageError;
using json = nlohmann::json;

namespace
{

// A manifest file entry shaped like the daemon writes it for wl_i915_va's parent.
json manifest_file()
{
	return json::parse(R"({
	  "id": 1, "driver": "i915", "handles_known": true,
	  "vms": [{"id": 3, "flags": 0, "params": {}, "bindings": []}, {"id": 1, "flags": 0, "params": {}, "bindings": []}],
	  "contexts": [
	    {"id": 0, "flags": 0, "vm": null, "params": {}},
	    {"id": 1, "flags": 3, "vm": 1, "params": {"engines": {"engines": [{"class": 2, "instance": 0}, {"class": 0, "instance": 0}]}, "priority": -100}},
	    {"id": 4, "flags": 1, "vm": 2, "vm_destroyed": true, "params": {"priority": 10, "sseu": {"size": 4, "bytes": "0a0b0c0d"}}},
	    {"id": 2, "flags": 0, "vm": null, "params": {"recoverable": 0, "param_99": {"size": 8, "captured": false}}}
	  ],
	  "handles": [
	    {"handle": 1, "size": 65536, "origin": "i915.gem_create", "object": 1, "params": {}, "tiling": {"mode": "X", "stride": 1024, "swizzle": 0}},
	    {"handle": 2, "size": 65536, "origin": "i915.gem_create_ext", "object": 8, "caching": 1,
	     "params": {"flags": 0, "pat_index": 3, "protected": false, "placements": [{"class": "device", "instance": 0}, {"class": "system", "instance": 0}]}},
	    {"handle": 6, "size": 65536, "origin": "i915.userptr", "object": 7, "params": {"flags": 0, "user_ptr": 94824881692672}}
	  ]})");
}

FileImage i915_file()
{
	gw::manifest::File mf = typed_manifest_file(manifest_file());
	FileImage f;
	f.criu_id = 4;
	f.device.path = "/dev/dri/renderD129";
	f.device.kind = "render";
	f.device.minor = 129;
	f.device.driver = "i915";
	f.f_flags = 02;
	f.source = "manifest";
	f.handles_known = true;
	for (const gw::manifest::Handle &h : mf.handles) {
		gwcriu::HandleRec r;
		r.handle = static_cast<uint32_t>(h.handle);
		r.size = h.size;
		r.origin = h.origin;
		r.object = h.object;
		r.saved = r.origin != "i915.userptr";
		r.i915 = gwcriu::i915_buffer_of(h, &f.degraded);
		f.handles.push_back(r);
	}
	f.i915 = gwcriu::i915_state_of(mf, &f.degraded);
	f.holders.push_back({300, 300, {7}});
	return f;
}

std::string file_error(const std::function<void(json &)> &damage)
{
	return file_image_error(i915_file(), damage, "gpuwatch-file-4.json");
}

} // namespace

TEST(I915Images, FromTheManifest)
{
	FileImage f = i915_file();
	ASSERT_TRUE(f.i915);
	EXPECT_EQ(f.i915->vms, (std::vector<uint32_t>{1, 3}));
	ASSERT_EQ(f.i915->contexts.size(), 4u);
	EXPECT_EQ(f.i915->contexts[1].id, 1u);
	EXPECT_EQ(*f.i915->contexts[1].vm, 1u);
	ASSERT_TRUE(f.i915->contexts[1].engines);
	EXPECT_EQ(*f.i915->contexts[1].engines, (gwcriu::i915::EngineList{{2, 0}, {0, 0}}));
	ASSERT_EQ(f.i915->contexts[1].params.size(), 1u);
	EXPECT_EQ(f.i915->contexts[1].params[0].param, uint64_t{I915_CONTEXT_PARAM_PRIORITY});
	EXPECT_EQ(static_cast<int64_t>(f.i915->contexts[1].params[0].value), -100);
	EXPECT_EQ(f.i915->contexts[2].id, 2u); // sorted by id
	EXPECT_TRUE(f.i915->contexts[3].vm_destroyed);
	ASSERT_EQ(f.i915->contexts[3].params.size(), 2u);
	EXPECT_EQ(f.i915->contexts[3].params[1].data, (std::vector<uint8_t>{10, 11, 12, 13}));
	// the uncaptured parameter is named as what will not come back
	ASSERT_EQ(f.degraded.size(), 1u);
	EXPECT_NE(f.degraded[0].find("context 2: param_99"), std::string::npos) << f.degraded[0];

	EXPECT_EQ(f.handles[0].i915->kind, "create");
	EXPECT_EQ(f.handles[0].i915->tiling, (std::pair<uint32_t, uint32_t>{I915_TILING_X, 1024}));
	EXPECT_EQ(f.handles[1].i915->kind, "create_ext");
	EXPECT_EQ(*f.handles[1].i915->pat, 3u);
	EXPECT_EQ(*f.handles[1].i915->caching, 1u);
	ASSERT_EQ(f.handles[1].i915->placements.size(), 2u);
	EXPECT_EQ(f.handles[1].i915->placements[0].mem_class, I915_MEMORY_CLASS_DEVICE);
	EXPECT_EQ(f.handles[2].i915->kind, "userptr");
	EXPECT_EQ(f.handles[2].i915->user_ptr, 94824881692672u);
}

TEST(I915Images, RoundTrip)
{
	FileImage a = i915_file();
	FileImage b = gwcriu::parse_file_image(gwcriu::to_json(a, test_index()).dump(), "x", test_devices());
	EXPECT_EQ(gwcriu::to_json(a, test_index()), gwcriu::to_json(b, test_index()));
	ASSERT_TRUE(b.i915);
	EXPECT_EQ(b.i915->contexts[3].params[1].data, (std::vector<uint8_t>{10, 11, 12, 13}));
	EXPECT_EQ(static_cast<int64_t>(b.i915->contexts[1].params[0].value), -100);
	// images from before i915 support have no "i915" members: still accepted
	json old = gwcriu::to_json(a, test_index());
	old.erase("i915");
	for (json &h : old["handles"])
		h.erase("i915");
	FileImage c = gwcriu::parse_file_image(old.dump(), "x", test_devices());
	EXPECT_FALSE(c.i915);
	EXPECT_FALSE(c.handles[0].i915);
}

TEST(I915Images, RefusesDamage)
{
	struct Case {
		const char *what;
		std::function<void(json &)> damage;
		const char *message;
	} cases[] = {
		{"vm 0", [](json &j) { j["i915"]["vms"][0] = 0; }, "i915.vms[0] is not a VM id"},
		{"vm order",
		 [](json &j) {
			 j["i915"]["vms"] = {3, 1};
		 },
		 "i915.vms[1] is not ascending"},
		{"ctx order", [](json &j) { j["i915"]["contexts"][2]["id"] = 1; }, "contexts[2].id is not ascending"},
		{"unknown vm", [](json &j) { j["i915"]["contexts"][1]["vm"] = 2; },
		 "names VM 2, which is not in i915.vms"},
		{"engines",
		 [](json &j) {
			 j["i915"]["contexts"][1]["engines"] = {{1, 2, 3}};
		 },
		 "engines[0] is not a pair"},
		{"param", [](json &j) { j["i915"]["contexts"][1]["params"][0]["param"] = 1 << 20; },
		 "params[0].param is"},
		{"data", [](json &j) { j["i915"]["contexts"][3]["params"][1]["data"] = "0g"; },
		 "params[1].data is not lowercase hex"},
		{"kind", [](json &j) { j["handles"][0]["i915"]["kind"] = "magic"; },
		 "handles[0].i915.kind is not create"},
		{"userptr", [](json &j) { j["handles"][2]["i915"]["user_ptr"] = 4097; },
		 "user_ptr is not a page-aligned"},
		{"tiling",
		 [](json &j) {
			 j["handles"][0]["i915"]["tiling"] = {99, 1};
		 },
		 "tiling is out of range"},
		{"placement",
		 [](json &j) {
			 j["handles"][1]["i915"]["placements"][0] = {70000, 0};
		 },
		 "placements[0] is out of range"},
		{"origin", [](json &j) { j["handles"][1]["origin"] = std::string(40, 'x'); }, "origin is longer than"},
	};
	for (const Case &c : cases) {
		std::string msg = file_error(c.damage);
		EXPECT_NE(msg.find(c.message), std::string::npos) << c.what << ": got '" << msg << "'";
		EXPECT_EQ(msg.rfind("gpuwatch-file-4.json: ", 0), 0u) << c.what << ": " << msg;
	}
}

TEST(I915Images, LateMappings)
{
	gwcriu::VmaRec v;
	v.pid = v.vpid = 300;
	v.start = 0x7f0000000000;
	v.length = 65536;
	v.offset = 0x100040000;
	v.prot = "rw";
	v.file = 4;
	v.device = i915_file().device;
	v.handle = 1;
	v.object = 1;
	v.object_size = 65536;
	v.saved = true;
	v.late = gwcriu::LateMap{"gem", I915_MMAP_OFFSET_GTT, 7, false};
	auto back = gwcriu::parse_vmas_image(gwcriu::to_json(std::vector<gwcriu::VmaRec>{v}, test_index()).dump(), "x",
					     test_devices());
	ASSERT_TRUE(back[0].late);
	EXPECT_EQ(back[0].late->kind, "gem");
	EXPECT_EQ(*back[0].late->mmap_type, uint32_t{I915_MMAP_OFFSET_GTT});
	EXPECT_EQ(back[0].late->fd, 7);

	auto error = [&](const std::function<void(json &)> &damage) -> std::string {
		json j = gwcriu::to_json(std::vector<gwcriu::VmaRec>{v}, test_index());
		damage(j["vmas"][0]);
		try {
			gwcriu::parse_vmas_image(j.dump(), "gpuwatch-vmas.json", test_devices());
		} catch (const ImageError &e) {
			return e.what();
		}
		return "";
	};
	EXPECT_NE(error([](json &m) { m["late"]["kind"] = "dumb"; }).find("late.kind is neither"), std::string::npos);
	EXPECT_NE(error([](json &m) { m["late"]["mmap_type"] = nullptr; }).find("late.mmap_type is missing"),
		  std::string::npos);
	EXPECT_NE(error([](json &m) { m["late"]["mmap_type"] = 9; }).find("late.mmap_type is"), std::string::npos);
	EXPECT_NE(error([](json &m) {
			  m["late"]["fd"] = -1;
		  }).find("late.fd is a negative integer, expected an unsigned integer"),
		  std::string::npos);
	EXPECT_NE(error([](json &m) { m["handle"] = nullptr; }).find("without a file, handle and buffer"),
		  std::string::npos);
}

TEST(I915Images, FenceFiles)
{
	gwcriu::FenceImage f;
	f.criu_id = 12;
	f.kind = "i915_perf";
	f.f_flags = 04000;
	f.device = i915_file().device;
	f.perf_flags = 1;
	f.properties = {{2, 1}, {3, 1}};
	f.holders.push_back({300, 300, {6}});
	gwcriu::FenceImage back =
		gwcriu::parse_fence_image(gwcriu::to_json(f, test_index()).dump(), "x", test_devices());
	EXPECT_EQ(back.kind, "i915_perf");
	EXPECT_EQ(back.properties, f.properties);
	EXPECT_EQ(back.holders[0].fds, std::vector<int>{6});

	auto error = [&](const std::function<void(json &)> &damage) -> std::string {
		json j = gwcriu::to_json(f, test_index());
		damage(j);
		try {
			gwcriu::parse_fence_image(j.dump(), "gpuwatch-fence-12.json", test_devices());
		} catch (const ImageError &e) {
			return e.what();
		}
		return "";
	};
	EXPECT_NE(error([](json &j) { j["kind"] = "eventfd"; }).find("kind is neither"), std::string::npos);
	EXPECT_NE(error([](json &j) { j["properties"] = json::array(); }).find("properties is empty"),
		  std::string::npos);
	EXPECT_NE(error([](json &j) { j["properties"][0] = {1}; }).find("properties[0] is not a pair"),
		  std::string::npos);
	EXPECT_NE(error([](json &j) { j["device"] = 99; }).find("device is 99, which names no entry"),
		  std::string::npos);
	EXPECT_EQ(error([](json &j) { j["kind"] = "sync_file"; }), "");
}

// i915's private ioctl numbers mean something else on another driver: never issued there
TEST(I915Images, RefusesI915StateOnAnotherDriver)
{
	gwcriu::SavedDevice vgem = i915_file().device;
	vgem.driver = "vgem";
	json other = test_index()(vgem);
	EXPECT_NE(file_error([&](json &j) { j["device"] = other; }).find("on a vgem device"), std::string::npos);
}
