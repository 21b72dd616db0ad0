// xe state in the model (buffers, VMs and their bindings, exec queues), and the manifest
// of a mixed i915 + xe process: validation, round trip, `gpuwatch show`.
#include "intel_world.hpp"

namespace
{

using namespace gwtest;
using namespace gwtest::intel;
using json = nlohmann::json;

TEST(ModelXe, GemCreateParams)
{
	World w = xe_world();
	Xe x{w};
	ASSERT_EQ(x.gem_create(3, 0x200000, true), ApplyStatus::ok);
	json f = w.manifest()["files"][0];
	EXPECT_EQ(f["driver"], "xe");
	EXPECT_FALSE(f.contains("contexts"));
	EXPECT_EQ(f["vms"], json::array());
	EXPECT_EQ(f["exec_queues"], json::array());
	ASSERT_EQ(f["handles"].size(), 1u);
	EXPECT_EQ(f["handles"][0]["handle"], 3);
	EXPECT_EQ(f["handles"][0]["origin"], "xe.gem_create");
	EXPECT_EQ(f["handles"][0]["size"], 0x200000);
	EXPECT_EQ(f["handles"][0]["params"], (json{{"placement", 3},
						   {"flags", GW_XE_GEM_CREATE_FLAG_SCANOUT},
						   {"vm_id", 0},
						   {"cpu_caching", GW_XE_GEM_CPU_CACHING_WC},
						   {"properties", {{"property_0", GW_XE_PXP_TYPE_HWDRM}}}}));
	EXPECT_EQ(w.manifest()["complete"], true);
}

TEST(ModelXe, MmapOffsetThenMmapJoinsTheHandle)
{
	World w = xe_world();
	Xe x{w};
	x.gem_create(3, 0x10000);
	ASSERT_EQ(x.mmap_offset(3, kOff), ApplyStatus::ok);
	EXPECT_EQ(w.f(kXe).mmap_offsets.at(kOff).handle, 3u);
	ASSERT_EQ(w.mmap(100, kXe, A, 0x10000, kOff), ApplyStatus::ok);
	json mp = w.manifest()["processes"][0]["mmaps"][0];
	EXPECT_EQ(mp["handle"], 3);
	EXPECT_EQ(mp["object"], w.f(kXe).handles.at(3).object);
	EXPECT_EQ(mp["via"], "device");
	EXPECT_EQ(mp["length"], 0x10000);
}

TEST(ModelXe, PciBarrierOffsetHasNoHandle)
{
	World w = xe_world();
	Xe x{w};
	ASSERT_EQ(x.mmap_offset(0, 0x50000, GW_XE_MMAP_OFFSET_FLAG_PCI_BARRIER), ApplyStatus::ok);
	EXPECT_TRUE(w.f(kXe).handles.empty()); // handle 0 is never a buffer
	EXPECT_TRUE(w.f(kXe).handles_known);
	ASSERT_EQ(w.mmap(100, kXe, A, 0x1000, 0x50000), ApplyStatus::ok);
	json m = w.manifest();
	EXPECT_EQ(m["processes"][0]["mmaps"][0]["handle"], nullptr);
	EXPECT_EQ(m["files"][0]["handles"], json::array());
	EXPECT_EQ(m["complete"], true);
}

TEST(ModelXe, VmsAndExecQueues)
{
	World w = xe_world();
	Xe x{w};
	ASSERT_EQ(x.vm_create(1, GW_XE_VM_CREATE_FLAG_SCRATCH_PAGE), ApplyStatus::ok);
	ASSERT_EQ(x.vm_create(2), ApplyStatus::ok);
	ASSERT_EQ(x.exec_queue_create(9, 2), ApplyStatus::ok);
	json f = w.manifest()["files"][0];
	EXPECT_EQ(f["vms"],
		  (json::array({{{"id", 1},
				 {"flags", GW_XE_VM_CREATE_FLAG_SCRATCH_PAGE},
				 {"params", json::object()},
				 {"bindings", json::array()}},
				{{"id", 2}, {"flags", 0}, {"params", json::object()}, {"bindings", json::array()}}})));
	EXPECT_EQ(f["exec_queues"], (json::array({{{"id", 9},
						   {"vm", 2},
						   {"flags", 0},
						   {"width", 2},
						   {"num_placements", 2},
						   {"instances",
						    {{{"class", 0}, {"instance", 0}, {"gt", 0}},
						     {{"class", 0}, {"instance", 1}, {"gt", 0}},
						     {{"class", 4}, {"instance", 0}, {"gt", 1}},
						     {{"class", 4}, {"instance", 1}, {"gt", 1}}}},
						   {"params", json::object()}}})));
	ASSERT_EQ(x.exec_queue_destroy(9), ApplyStatus::ok);
	ASSERT_EQ(x.vm_destroy(1), ApplyStatus::ok);
	f = w.manifest()["files"][0];
	EXPECT_EQ(f["exec_queues"], json::array());
	ASSERT_EQ(f["vms"].size(), 1u);
	EXPECT_EQ(f["vms"][0]["id"], 2);
	EXPECT_EQ(w.manifest()["complete"], true);
}

TEST(ModelXe, ExecQueueWithoutItsInstancesMarksTheManifestIncomplete)
{
	World w = xe_world();
	Xe x{w};
	x.vm_create(2);
	ASSERT_EQ(x.exec_queue_create(9, 2, false), ApplyStatus::ok);
	json m = w.manifest();
	EXPECT_EQ(m["files"][0]["exec_queues"][0]["instances"], json::array());
	EXPECT_EQ(m["complete"], false);
	EXPECT_TRUE(has_reason(m, "file 1: xe EXEC_QUEUE_CREATE of queue 9")) << m["incomplete_reasons"];
}

TEST(ModelXe, VmBindOneInlineOp)
{
	World w = xe_world();
	Xe x{w};
	x.vm_create(2);
	x.gem_create(3, 0x20000);
	ASSERT_EQ(x.bind(2, {xe_bind_op(GW_XE_VM_BIND_OP_MAP, 3, 0x1000, 0x10000, 0x100000, 5,
					GW_XE_VM_BIND_FLAG_DUMPABLE)}),
		  ApplyStatus::ok);
	uint64_t obj = w.f(kXe).handles.at(3).object;
	EXPECT_EQ(bindings(w, 2), (json::array({{{"addr", 0x100000},
						 {"range", 0x10000},
						 {"pat_index", 5},
						 {"flags", GW_XE_VM_BIND_FLAG_DUMPABLE},
						 {"handle", 3},
						 {"object", obj},
						 {"offset", 0x1000}}})));
	EXPECT_EQ(w.manifest()["complete"], true);
}

TEST(ModelXe, VmBindVectorSplitsABinding)
{
	World w = xe_world();
	Xe x{w};
	x.vm_create(2);
	x.gem_create(3, 0x10000);
	ASSERT_EQ(x.bind(2, {xe_bind_op(GW_XE_VM_BIND_OP_MAP, 3, 0, 0x10000, 0x100000),
			     xe_bind_op(GW_XE_VM_BIND_OP_MAP_USERPTR, 0, 0x7f0000400000, 0x2000, 0x200000),
			     xe_bind_op(GW_XE_VM_BIND_OP_UNMAP, 0, 0, 0x4000, 0x104000)}),
		  ApplyStatus::ok);
	uint64_t obj = w.f(kXe).handles.at(3).object;
	EXPECT_EQ(bindings(w, 2), (json::array({
					  {{"addr", 0x100000},
					   {"range", 0x4000},
					   {"pat_index", 0},
					   {"flags", 0},
					   {"handle", 3},
					   {"object", obj},
					   {"offset", 0}},
					  {{"addr", 0x108000},
					   {"range", 0x8000},
					   {"pat_index", 0},
					   {"flags", 0},
					   {"handle", 3},
					   {"object", obj},
					   {"offset", 0x8000}},
					  {{"addr", 0x200000},
					   {"range", 0x2000},
					   {"pat_index", 0},
					   {"flags", 0},
					   {"userptr", 0x7f0000400000}},
				  })));
	EXPECT_TRUE(w.f(kXe).handles_known);
}

TEST(ModelXe, UnmapAllRemovesEveryBindingOfTheObject)
{
	World w = xe_world();
	Xe x{w};
	x.vm_create(2);
	x.gem_create(3, 0x10000);
	x.gem_create(4, 0x10000);
	x.bind(2, {xe_bind_op(GW_XE_VM_BIND_OP_MAP, 3, 0, 0x10000, 0x100000),
		   xe_bind_op(GW_XE_VM_BIND_OP_MAP, 4, 0, 0x10000, 0x200000),
		   xe_bind_op(GW_XE_VM_BIND_OP_MAP, 3, 0, 0x8000, 0x300000)});
	ASSERT_EQ(w.f(kXe).vms.at(2).bindings.size(), 3u);
	ASSERT_EQ(x.bind(2, {xe_bind_op(GW_XE_VM_BIND_OP_UNMAP_ALL, 3, 0, 0, 0)}), ApplyStatus::ok);
	const auto &b = w.f(kXe).vms.at(2).bindings;
	ASSERT_EQ(b.size(), 1u);
	EXPECT_EQ(b.begin()->second.handle, 4u);
	EXPECT_EQ(b.begin()->first, 0x200000u);
}

TEST(ModelXe, UnmapAllOfAReusedHandleSparesTheOldObject)
{
	World w = xe_world();
	Xe x{w};
	x.vm_create(2);
	x.gem_create(3, 0x10000);
	x.bind(2, {xe_bind_op(GW_XE_VM_BIND_OP_MAP, 3, 0, 0x10000, 0x100000)});
	w.gem_close(100, kXe, 3); // the binding keeps the object; handle 3 is free again
	x.gem_create(3, 0x10000); // a new object gets handle 3
	x.bind(2, {xe_bind_op(GW_XE_VM_BIND_OP_MAP, 3, 0, 0x10000, 0x200000)});
	ASSERT_EQ(x.bind(2, {xe_bind_op(GW_XE_VM_BIND_OP_UNMAP_ALL, 3, 0, 0, 0)}), ApplyStatus::ok);
	json b = bindings(w, 2);
	ASSERT_EQ(b.size(), 1u);
	EXPECT_EQ(b[0]["addr"], 0x100000);
	EXPECT_EQ(b[0]["handle"], nullptr);
	EXPECT_EQ(w.m.objects().size(), 2u);
}

TEST(ModelXe, NullBindNamesNoBuffer)
{
	World w = xe_world();
	Xe x{w};
	x.vm_create(2);
	ASSERT_EQ(x.bind(2, {xe_bind_op(GW_XE_VM_BIND_OP_MAP, 0, 0, 0x100000, 0x400000, 0, GW_XE_VM_BIND_FLAG_NULL)}),
		  ApplyStatus::ok);
	EXPECT_TRUE(w.f(kXe).handles.empty()); // obj 0: no handle 0 invented
	EXPECT_TRUE(w.f(kXe).handles_known);
	json b = bindings(w, 2);
	ASSERT_EQ(b.size(), 1u);
	EXPECT_EQ(b[0]["flags"], GW_XE_VM_BIND_FLAG_NULL);
	EXPECT_EQ(b[0]["handle"], nullptr);
	EXPECT_EQ(b[0]["object"], nullptr);
	EXPECT_EQ(b[0]["range"], 0x100000);
	EXPECT_TRUE(w.m.objects().empty());
	EXPECT_EQ(w.manifest()["complete"], true);
}

TEST(ModelXe, VmBindOfMoreOpsThanCapturedMarksTheManifestIncomplete)
{
	World w = xe_world();
	Xe x{w};
	x.vm_create(2);
	x.gem_create(3, 0x100000);
	std::vector<gw_xe_vm_bind_op> ops;
	for (uint64_t i = 0; i < 20; ++i)
		ops.push_back(xe_bind_op(GW_XE_VM_BIND_OP_MAP, 3, i * 0x1000, 0x1000, 0x100000 + i * 0x1000));
	ASSERT_EQ(x.bind(2, ops), ApplyStatus::ok);
	EXPECT_EQ(w.f(kXe).vms.at(2).bindings.size(), 12u);
	json m = w.manifest();
	EXPECT_EQ(m["complete"], false);
	EXPECT_TRUE(has_reason(m, "file 1: xe VM_BIND on VM 2")) << m["incomplete_reasons"];
}

TEST(ModelXe, BindOnAVmNeverSeenCreated)
{
	World w = xe_world();
	Xe x{w};
	x.gem_create(3, 0x10000);
	ASSERT_EQ(x.bind(7, {xe_bind_op(GW_XE_VM_BIND_OP_MAP, 3, 0, 0x10000, 0x100000)}), ApplyStatus::ok);
	EXPECT_EQ(w.f(kXe).vms.at(7).bindings.size(), 1u);
	EXPECT_FALSE(w.f(kXe).handles_known);
}

TEST(ModelXe, ABoundObjectOutlivesItsHandle)
{
	World w = xe_world();
	Xe x{w};
	x.vm_create(2);
	x.gem_create(3, 0x10000);
	x.bind(2, {xe_bind_op(GW_XE_VM_BIND_OP_MAP, 3, 0, 0x10000, 0x100000)});
	uint64_t obj = w.f(kXe).handles.at(3).object;
	ASSERT_EQ(w.gem_close(100, kXe, 3), ApplyStatus::ok);
	EXPECT_TRUE(w.f(kXe).handles.empty());
	json m = w.manifest();
	EXPECT_EQ(m["objects"], (json::array({{{"id", obj}, {"size", 0x10000}, {"flink_name", nullptr}}})));
	json b = bindings(w, 2);
	ASSERT_EQ(b.size(), 1u);
	EXPECT_EQ(b[0]["handle"], nullptr);
	EXPECT_EQ(b[0]["object"], obj);
	EXPECT_NE(gw::manifest::format_summary(gw::manifest::from_json(m))
			  .find("bind 0x100000 +0x10000 handle closed offset 0x0"),
		  std::string::npos)
		<< gw::manifest::format_summary(gw::manifest::from_json(m));
	// unbinding drops the last reference
	x.bind(2, {xe_bind_op(GW_XE_VM_BIND_OP_UNMAP, 0, 0, 0x10000, 0x100000)});
	EXPECT_TRUE(w.m.objects().empty());
}

TEST(ModelXe, DestroyingTheVmReleasesItsObjects)
{
	World w = xe_world();
	Xe x{w};
	x.vm_create(2);
	x.gem_create(3, 0x10000);
	x.bind(2, {xe_bind_op(GW_XE_VM_BIND_OP_MAP, 3, 0, 0x10000, 0x100000)});
	w.gem_close(100, kXe, 3);
	ASSERT_EQ(w.m.objects().size(), 1u);
	ASSERT_EQ(x.vm_destroy(2), ApplyStatus::ok); // the kernel tears the VM's bindings down
	EXPECT_TRUE(w.m.objects().empty());
	EXPECT_EQ(w.manifest()["objects"], json::array());
}

// --- the manifest of both -----------------------------------------------------------------
World intel_scenario()
{
	World w;
	w.proc(100, "intelapp");
	w.open_drv(100, 3, kI915, "i915", kDev, 128);
	w.open_drv(100, 4, kXe, "xe", kDev2, 129);
	I915 c{w};
	w.call(c.create_ext_call(7));
	c.gem_create(1, 0x8000);
	c.set_tiling(1);
	c.userptr(4, 0x7f0000200000, 0x10000);
	c.gem_mmap(1, 0x8000, A);
	c.vm_create(1);
	c.context_create_ext(2, 1);
	c.perf_open(12);
	w.other_fd(100, 12, kPerf, GW_FILE_PERF);
	c.execbuf(DRM_IOCTL_I915_GEM_EXECBUFFER2_WR, 2, I915_EXEC_RENDER | I915_EXEC_FENCE_OUT, 15);
	w.other_fd(100, 15, kSync, GW_FILE_SYNC);
	Xe x{w};
	x.fd = 4;
	x.vm_create(1);
	x.gem_create(3, 0x20000);
	x.exec_queue_create(9, 1);
	x.bind(1, {xe_bind_op(GW_XE_VM_BIND_OP_MAP, 3, 0x1000, 0x10000, 0x100000),
		   xe_bind_op(GW_XE_VM_BIND_OP_MAP_USERPTR, 0, 0x7f0000400000, 0x2000, 0x200000)});
	x.mmap_offset(3, kOff + 0x100000);
	w.mmap(100, kXe, A + 0x100000, 0x20000, kOff + 0x100000);
	return w;
}

TEST(ManifestIntel, ValidatesAndRoundTrips)
{
	World w = intel_scenario();
	json m = w.manifest();
	EXPECT_EQ(m["complete"], true) << m["incomplete_reasons"];
	EXPECT_EQ(w.m.malformed_records(), 0u);
	EXPECT_NO_THROW(gw::manifest::validate(m));
	json back = json::parse(gw::manifest::serialize(gw::manifest::from_json(m)));
	EXPECT_NO_THROW(gw::manifest::validate(back));
	EXPECT_EQ(back, m);
	// the fd table: both DRM files, the perf stream and the out-fence
	json fds = m["processes"][0]["fds"];
	ASSERT_EQ(fds.size(), 4u);
	EXPECT_EQ(fds[0], (json{{"fd", 3}, {"file", 1}, {"cloexec", false}}));
	EXPECT_EQ(fds[1], (json{{"fd", 4}, {"file", 2}, {"cloexec", false}}));
	EXPECT_EQ(fds[2]["i915_perf"]["origin"]["ioctl"], "PERF_OPEN");
	EXPECT_EQ(fds[3]["sync_file"]["origin"]["context"], 2);
	// a context whose vm is not an object fails validation
	json bad = m;
	bad["files"][0]["contexts"][1]["vm"] = "one";
	EXPECT_THROW(gw::manifest::validate(bad), gw::ManifestError);
	bad = m;
	bad["files"][1]["vms"][0].erase("bindings");
	EXPECT_THROW(gw::manifest::validate(bad), gw::ManifestError);
}

TEST(ManifestIntel, ShowMentionsTheDriverState)
{
	World w = intel_scenario();
	std::string s = gw::manifest::format_summary(w.m.manifest());
	for (const char *part : {
		     "file 1: /dev/dri/renderD128 (226:128) driver i915 O_RDWR: 3 handles",
		     "handle 7: 65536 bytes, i915.gem_create_ext, object 1, placements device:0 system:0, pat 3",
		     "handle 1: 32768 bytes, i915.gem_create, object 2, tiling X stride 512",
		     "handle 4: 65536 bytes, i915.userptr, object 3, user memory at 0x7f0000200000",
		     "  context 0: vm own\n",
		     "  context 2: vm 1, engines "
		     "{\"engines\":[{\"class\":0,\"instance\":0},{\"class\":1,\"instance\":0}]}, priority -512\n",
		     "  vm 1: flags 0x0, 0 bindings\n",
		     "file 2: /dev/dri/renderD129 (226:129) driver xe O_RDWR: 1 handle",
		     "  vm 1: flags 0x0, 2 bindings\n",
		     "    bind 0x100000 +0x10000 handle 3 offset 0x1000\n",
		     "    bind 0x200000 +0x2000 userptr 0x7f0000400000\n",
		     "  exec queue 9: vm 1, width 2, 2 placements\n",
		     "fd 12: i915 perf stream from PERF_OPEN on file 1 /dev/dri/renderD128",
		     "fd 15: out-fence (sync_file) from EXECBUFFER2_WR on file 1 /dev/dri/renderD128",
		     "map 0x7f0000000000-0x7f0000008000 rw shared file 1 /dev/dri/renderD128 offset 0x0 handle 1 via "
		     "i915.gem_mmap",
		     "map 0x7f0000100000-0x7f0000120000 rw shared file 2 /dev/dri/renderD129 offset 0x100100000 handle "
		     "3\n",
	     })
		EXPECT_NE(s.find(part), std::string::npos) << "missing: " << part << "\nin:\n" << s;
}

} // namespace
