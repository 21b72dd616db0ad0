// The xe part of the plugin's images, without a device: what the dump takes from the manifest
// (VMs with their bindings, exec queues, GEM_CREATE parameters), its round trip through the file
// image, and the damage the restore must refuse.
#include <functional>
#include <gtest/gtest.h>

#include "dump_xe.hpp"
#include "images.hpp"
#include "image_test_util.hpp"
#include "manifest_entry.hpp"

using gwcriu::FileImage;
using json = nlohmann::json;

namespace
{

// A manifest file entry shaped like the daemon writes it for an xe file: VMs 1, 3, 4 (2 was
// destroyed), a VM-private buffer, a binding whose handle was closed while another handle of the
// same object remains, one whose buffer has no handle left, a userptr and a NULL binding; queues
// 1, 3, 4 (2 destroyed), queue 4 on the destroyed VM 2, queue 3 a bind queue.
json manifest_file()
{
	return json::parse(R"({
	  "id": 1, "driver": "xe", "handles_known": true,
	  "vms": [
	    {"id": 3, "flags": 1, "params": {}, "bindings": [
	      {"addr": 1048576, "range": 8192, "pat_index": 0, "flags": 0, "handle": 2, "object": 5, "offset": 4096}]},
	    {"id": 1, "flags": 0, "params": {}, "bindings": [
	      {"addr": 2097152, "range": 4096, "pat_index": 3, "flags": 8, "handle": 1, "object": 4, "offset": 0},
	      {"addr": 1048576, "range": 12288, "pat_index": 0, "flags": 0, "userptr": 140000000000000},
	      {"addr": 3145728, "range": 4096, "pat_index": 0, "flags": 0, "handle": null, "object": 4, "offset": 0},
	      {"addr": 4194304, "range": 4096, "pat_index": 0, "flags": 0, "handle": null, "object": 9, "offset": 0},
	      {"addr": 5242880, "range": 65536, "pat_index": 0, "flags": 4, "handle": null, "object": null, "offset": 0}]},
	    {"id": 4, "flags": 2, "params": {}, "bindings": []}
	  ],
	  "exec_queues": [
	    {"id": 4, "vm": 2, "flags": 0, "width": 1, "num_placements": 1, "instances": [{"class": 0, "instance": 0, "gt": 0}], "params": {}},
	    {"id": 1, "vm": 1, "flags": 0, "width": 2, "num_placements": 1,
	     "instances": [{"class": 2, "instance": 0, "gt": 0}, {"class": 2, "instance": 1, "gt": 0}],
	     "params": {"property_0": 2, "property_1": 5000}},
	    {"id": 3, "vm": 0, "flags": 0, "width": 1, "num_placements": 1, "instances": [{"class": 5, "instance": 0, "gt": 0}], "params": {}}
	  ],
	  "handles": [
	    {"handle": 1, "size": 65536, "origin": "xe.gem_create", "object": 4,
	     "params": {"placement": 3, "flags": 2, "vm_id": 0, "cpu_caching": 2, "properties": {}}},
	    {"handle": 2, "size": 16384, "origin": "xe.gem_create", "object": 5,
	     "params": {"placement": 1, "flags": 0, "vm_id": 3, "cpu_caching": 1, "properties": {}}},
	    {"handle": 3, "size": 4096, "origin": "xe.gem_create", "object": 6,
	     "params": {"placement": 1, "flags": 0, "vm_id": 2, "cpu_caching": 1, "properties": {}}},
	    {"handle": 5, "size": 4096, "origin": "dumb", "object": 7, "params": {}}
	  ]})");
}

FileImage xe_file(std::vector<std::string> *degraded = nullptr)
{
	gw::manifest::File mf = typed_manifest_file(manifest_file());
	FileImage f;
	f.criu_id = 6;
	f.device.path = "/dev/dri/renderD129";
	f.device.kind = "render";
	f.device.minor = 129;
	f.device.driver = "xe";
	f.f_flags = 02;
	f.source = "manifest";
	f.handles_known = true;
	for (const gw::manifest::Handle &h : mf.handles) {
		gwcriu::HandleRec r;
		r.handle = static_cast<uint32_t>(h.handle);
		r.size = h.size;
		r.origin = h.origin;
		r.object = h.object;
		r.saved = true;
		r.xe = gwcriu::xe_buffer_of(h, mf, &f.degraded);
		f.handles.push_back(r);
	}
	f.xe = gwcriu::xe_state_of(mf, &f.degraded);
	f.holders.push_back({300, 300, {7}});
	if (degraded)
		*degraded = f.degraded;
	return f;
}

std::string file_error(const std::function<void(json &)> &damage)
{
	return file_image_error(xe_file(), damage, "gpuwatch-file-6.json");
}

bool has_line(const std::vector<std::string> &v, const std::string &part)
{
	for (const std::string &s : v)
		if (s.find(part) != std::string::npos)
			return true;
	return false;
}

} // namespace

TEST(XeImages, FromTheManifest)
{
	std::vector<std::string> deg;
	FileImage f = xe_file(&deg);
	EXPECT_TRUE(gwcriu::is_xe(f.device));
	ASSERT_TRUE(f.xe);
	ASSERT_EQ(f.xe->vms.size(), 3u);
	EXPECT_EQ(f.xe->vms[0].id, 1u);
	EXPECT_EQ(f.xe->vms[1].id, 3u);
	EXPECT_EQ(f.xe->vms[1].flags, 1u);
	EXPECT_EQ(f.xe->vms[2].flags, 2u);
	const auto &b = f.xe->vms[0].bindings; // sorted by address; the handle-less object dropped
	ASSERT_EQ(b.size(), 4u);
	EXPECT_EQ(b[0].addr, 1048576u);
	EXPECT_EQ(*b[0].userptr, 140000000000000u);
	EXPECT_FALSE(b[0].handle);
	EXPECT_EQ(*b[1].handle, 1u);
	EXPECT_EQ(b[1].pat_index, 3u);
	EXPECT_EQ(b[1].flags, 8u);
	EXPECT_EQ(*b[2].handle, 1u); // handle closed, the object still has handle 1
	EXPECT_FALSE(b[3].handle);   // NULL binding
	EXPECT_FALSE(b[3].userptr);
	EXPECT_EQ(b[3].flags, 4u);
	EXPECT_EQ(f.xe->vms[1].bindings[0].offset, 4096u);
	EXPECT_TRUE(has_line(deg, "VM 1 binding at 4194304: its buffer has no handle left"));

	ASSERT_EQ(f.xe->queues.size(), 3u);
	EXPECT_EQ(f.xe->queues[0].id, 1u);
	EXPECT_EQ(f.xe->queues[0].width, 2u);
	ASSERT_EQ(f.xe->queues[0].instances.size(), 2u);
	EXPECT_EQ(f.xe->queues[0].instances[1].instance, 1u);
	EXPECT_EQ(f.xe->queues[0].properties, (gwcriu::xe::Properties{{0, 2}, {1, 5000}}));
	EXPECT_FALSE(f.xe->queues[1].vm_destroyed); // a bind queue takes no VM
	EXPECT_TRUE(f.xe->queues[2].vm_destroyed);
	EXPECT_EQ(f.xe->queues[2].vm, 2u);

	ASSERT_TRUE(f.handles[0].xe);
	EXPECT_EQ(f.handles[0].xe->placement, 3u);
	EXPECT_EQ(f.handles[0].xe->flags, 2u);
	EXPECT_EQ(f.handles[0].xe->cpu_caching, 2u);
	EXPECT_EQ(f.handles[1].xe->vm_id, 3u);
	EXPECT_EQ(f.handles[2].xe->vm_id, 0u); // its VM id was destroyed
	EXPECT_TRUE(has_line(deg, "handle 3: private to VM 2, whose id was destroyed"));
	EXPECT_FALSE(f.handles[3].xe); // a dumb buffer
}

TEST(XeImages, RoundTrip)
{
	FileImage a = xe_file();
	FileImage b = gwcriu::parse_file_image(gwcriu::to_json(a, test_index()).dump(), "x", test_devices());
	EXPECT_EQ(gwcriu::to_json(a, test_index()), gwcriu::to_json(b, test_index()));
	ASSERT_TRUE(b.xe);
	EXPECT_EQ(b.xe->queues[0].properties, a.xe->queues[0].properties);
	EXPECT_EQ(*b.xe->vms[0].bindings[0].userptr, 140000000000000u);
	// images from before xe support have no "xe" members: still accepted
	json old = gwcriu::to_json(a, test_index());
	old.erase("xe");
	for (json &h : old["handles"])
		h.erase("xe");
	FileImage c = gwcriu::parse_file_image(old.dump(), "x", test_devices());
	EXPECT_FALSE(c.xe);
	EXPECT_FALSE(c.handles[0].xe);
}

TEST(XeImages, RefusesDamage)
{
	struct Case {
		const char *what;
		std::function<void(json &)> damage;
		const char *message;
	} cases[] = {
		{"vm 0", [](json &j) { j["xe"]["vms"][0]["id"] = 0; }, "xe.vms[0].id is 0 or not ascending"},
		{"vm order", [](json &j) { j["xe"]["vms"][1]["id"] = 1; }, "xe.vms[1].id is 0 or not ascending"},
		{"vm flags", [](json &j) { j["xe"]["vms"][0]["flags"] = -1; },
		 "xe.vms[0].flags is a negative integer, expected an unsigned integer"},
		{"range", [](json &j) { j["xe"]["vms"][0]["bindings"][1]["range"] = 100; },
		 "bindings[1] is not a page-aligned"},
		{"overlap", [](json &j) { j["xe"]["vms"][0]["bindings"][1]["addr"] = 1052672; },
		 "bindings[1].addr overlaps"},
		{"handle", [](json &j) { j["xe"]["vms"][0]["bindings"][1]["handle"] = 4; },
		 "names handle 4, which is not in handles"},
		{"both", [](json &j) { j["xe"]["vms"][0]["bindings"][1]["userptr"] = 4096; },
		 "has both a handle and a userptr"},
		{"userptr", [](json &j) { j["xe"]["vms"][0]["bindings"][0]["userptr"] = 4097; },
		 "userptr is not a page-aligned"},
		{"pat", [](json &j) { j["xe"]["vms"][0]["bindings"][1]["pat_index"] = 70000; }, "pat_index is 70000"},
		{"no bindings", [](json &j) { j["xe"]["vms"][0].erase("bindings"); },
		 "missing field xe.vms[0].bindings"},
		{"queue order", [](json &j) { j["xe"]["exec_queues"][1]["id"] = 1; },
		 "exec_queues[1].id is 0 or not ascending"},
		{"queue vm", [](json &j) { j["xe"]["exec_queues"][0]["vm"] = 2; },
		 "names VM 2, which is not in xe.vms"},
		{"destroyed", [](json &j) { j["xe"]["exec_queues"][2]["vm"] = 1; },
		 "vm_destroyed is set for a VM id that is live"},
		{"width", [](json &j) { j["xe"]["exec_queues"][0]["width"] = 0; },
		 "exec_queues[0].width and num_placements"},
		{"instances", [](json &j) { j["xe"]["exec_queues"][0]["instances"].erase(1); },
		 "does not hold width * num_placements"},
		{"engine",
		 [](json &j) {
			 j["xe"]["exec_queues"][0]["instances"][0] = {0, 0};
		 },
		 "instances[0] is not [class, instance, gt]"},
		{"property", [](json &j) { j["xe"]["exec_queues"][0]["properties"][0] = {1}; },
		 "properties[0] is not a pair"},
		{"placement", [](json &j) { j["handles"][0]["xe"]["placement"] = 0; }, "handles[0].xe.placement is 0"},
		{"caching", [](json &j) { j["handles"][0]["xe"]["cpu_caching"] = 3; },
		 "handles[0].xe.cpu_caching is 3"},
		{"private vm", [](json &j) { j["handles"][1]["xe"]["vm_id"] = 2; },
		 "handles[1].xe.vm_id names a VM that is not"},
	};
	for (const Case &c : cases) {
		std::string msg = file_error(c.damage);
		EXPECT_NE(msg.find(c.message), std::string::npos) << c.what << ": got '" << msg << "'";
		EXPECT_EQ(msg.rfind("gpuwatch-file-6.json: ", 0), 0u) << c.what << ": " << msg;
	}
}

// xe's private ioctl numbers mean something else on another driver: never issued there
TEST(XeImages, RefusesXeStateOnAnotherDriver)
{
	gwcriu::SavedDevice vgem = xe_file().device;
	vgem.driver = "vgem";
	json other = test_index()(vgem);
	EXPECT_NE(file_error([&](json &j) { j["device"] = other; }).find("on a vgem device"), std::string::npos);
}
