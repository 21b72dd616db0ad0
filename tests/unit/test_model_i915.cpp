// i915 state in the model and the manifest: buffers with their creation parameters, mmap
// grants and their types, contexts, VMs, the fds i915 hands out, and i915.gem mappings found
// by the snapshot.
#include "intel_world.hpp"

namespace
{

using namespace gwtest;
using namespace gwtest::intel;
using json = nlohmann::json;

TEST(ModelI915, AnI915FileHasContextZeroFromOpen)
{
	World w = i915_world();
	const gw::DrmFile &f = w.f(kI915);
	EXPECT_EQ(f.driver, "i915");
	ASSERT_EQ(f.contexts.size(), 1u);
	EXPECT_FALSE(f.contexts.at(0).vm);
	json fj = w.manifest()["files"][0];
	EXPECT_EQ(fj["contexts"],
		  (json::array({{{"id", 0}, {"flags", 0}, {"vm", nullptr}, {"params", json::object()}}})));
	EXPECT_EQ(fj["vms"], json::array());
	EXPECT_FALSE(fj.contains("exec_queues"));
	// no driver state for other drivers
	w.open(100, 4, kI915b);
	json other = w.manifest()["files"][1];
	EXPECT_EQ(other["driver"], "vgem");
	EXPECT_FALSE(other.contains("contexts"));
	EXPECT_FALSE(other.contains("vms"));
}

TEST(ModelI915, GemCreateAndCreateExtParams)
{
	World w = i915_world();
	I915 c{w};
	ASSERT_EQ(c.gem_create(1, 8192), ApplyStatus::ok);
	ASSERT_EQ(w.call(c.create_ext_call(7)), ApplyStatus::ok);
	json m = w.manifest();
	EXPECT_EQ(m["complete"], true);
	json h = m["files"][0]["handles"];
	ASSERT_EQ(h.size(), 2u);
	EXPECT_EQ(h[0]["origin"], "i915.gem_create");
	EXPECT_EQ(h[0]["size"], 8192);
	EXPECT_EQ(h[0]["params"], json::object());
	EXPECT_EQ(h[1]["handle"], 7);
	EXPECT_EQ(h[1]["origin"], "i915.gem_create_ext");
	EXPECT_EQ(h[1]["size"], 65536);
	EXPECT_EQ(
		h[1]["params"],
		(json{{"placements", {{{"class", "device"}, {"instance", 0}}, {{"class", "system"}, {"instance", 0}}}},
		      {"flags", I915_GEM_CREATE_EXT_FLAG_NEEDS_CPU_ACCESS},
		      {"protected", true},
		      {"pat_index", 3}}));
	EXPECT_EQ(m["objects"].size(), 2u);
}

TEST(ModelI915, GemCreateExtUnknownExtensionIsListed)
{
	World w = i915_world();
	I915 c{w};
	i915_user_extension odd{};
	odd.name = 0x77;
	c.mem.put(node(0), odd);
	drm_i915_gem_create_ext in{}, out{};
	in.size = 4096;
	in.extensions = node(0);
	out = in;
	out.handle = 2;
	ASSERT_EQ(c.call(DRM_IOCTL_I915_GEM_CREATE_EXT, in, out), ApplyStatus::ok);
	json p = w.manifest()["files"][0]["handles"][0]["params"];
	EXPECT_EQ(p["unknown_extensions"], json::array({0x77}));
	EXPECT_EQ(p["placements"], json::array());
	EXPECT_EQ(w.manifest()["complete"], true);
}

TEST(ModelI915, TruncatedGemCreateExtMarksTheManifestIncomplete)
{
	{ // the regions array could not be read
		World w = i915_world();
		I915 c{w};
		ASSERT_EQ(w.call(c.create_ext_call(7, false)), ApplyStatus::ok);
		json m = w.manifest();
		EXPECT_EQ(m["complete"], false);
		EXPECT_TRUE(has_reason(m, "file 1: GEM_CREATE_EXT of handle 7")) << m["incomplete_reasons"];
		EXPECT_EQ(m["files"][0]["handles"][0]["handle"], 7); // the buffer is still there
		EXPECT_EQ(m["files"][0]["handles"][0]["params"]["placements"], json::array());
		EXPECT_EQ(m["files"][0]["handles"][0]["params"]["pat_index"], 3);
	}
	{ // the chain is longer than the BPF side captures
		World w = i915_world();
		I915 c{w};
		auto call = c.create_ext_call(8);
		ASSERT_TRUE(call.ext);
		call.ext->truncated = 1;
		ASSERT_EQ(w.call(call), ApplyStatus::ok);
		json m = w.manifest();
		EXPECT_EQ(m["complete"], false);
		EXPECT_TRUE(has_reason(m, "GEM_CREATE_EXT of handle 8")) << m["incomplete_reasons"];
		EXPECT_FALSE(has_reason(m, "handle 7"));
	}
}

TEST(ModelI915, MmapTypesFollowTheCommandSize)
{
	World w = i915_world();
	I915 c{w};
	c.gem_create(1, 0x10000);
	ASSERT_EQ(c.mmap_gtt(1, kOff), ApplyStatus::ok);
	ASSERT_EQ(c.mmap_offset(1, I915_MMAP_OFFSET_WC, kOff + 0x10000), ApplyStatus::ok);
	ASSERT_EQ(c.mmap_offset(1, I915_MMAP_OFFSET_WB, kOff + 0x20000), ApplyStatus::ok);
	ASSERT_EQ(c.mmap_offset(1, I915_MMAP_OFFSET_UC, kOff + 0x30000), ApplyStatus::ok);
	json h = w.manifest()["files"][0]["handles"][0];
	EXPECT_EQ(h["mmap_offsets"], json::array({kOff, kOff + 0x10000, kOff + 0x20000, kOff + 0x30000}));
	EXPECT_EQ(h["mmap_types"], (json{{std::to_string(kOff), "gtt"},
					 {std::to_string(kOff + 0x10000), "wc"},
					 {std::to_string(kOff + 0x20000), "wb"},
					 {std::to_string(kOff + 0x30000), "uc"}}));
	// mmap() of the WB offset on the DRM fd: i915 swaps the VMA's file
	ASSERT_EQ(w.mmap(100, kI915, A, 0x10000, kOff + 0x20000), ApplyStatus::ok);
	json mp = w.manifest()["processes"][0]["mmaps"][0];
	EXPECT_EQ(mp["handle"], 1);
	EXPECT_EQ(mp["offset"], kOff + 0x20000);
	EXPECT_EQ(mp["via"], "anon_inode:i915.gem");
}

TEST(ModelI915, LegacyGemMmapMapsInsideTheIoctl)
{
	World w = i915_world();
	I915 c{w};
	c.gem_create(1, 0x4000);
	c.gem_create(2, 0x4000);
	ASSERT_EQ(c.gem_mmap(2, 0x2800, A), ApplyStatus::ok);
	const gw::Mapping &mp = w.p(100).mmaps.at(A);
	EXPECT_EQ(mp.length, 0x3000u);
	EXPECT_EQ(mp.via_name(), "i915.gem_mmap");
	EXPECT_EQ(mp.object, w.f(kI915).handles.at(2).object);
	json mj = w.manifest()["processes"][0]["mmaps"];
	EXPECT_EQ(mj, (json::array({{{"start", A},
				     {"length", 0x3000},
				     {"prot", "rw"},
				     {"shared", true},
				     {"file", 1},
				     {"offset", 0},
				     {"handle", 2},
				     {"object", *mp.object},
				     {"via", "i915.gem_mmap"}}})));
	// a re-snapshot (a sync at dump) finds the same VMA, which names no buffer: the handle stays
	auto snap = mmap_rec(100, 0, A, 0x3000, 0, PROT_READ, true, -1);
	snap.via = GW_VIA_I915_SHMEM;
	snap.flags = 0;
	ASSERT_EQ(w.apply(snap), ApplyStatus::ok);
	EXPECT_EQ(w.manifest()["processes"][0]["mmaps"][0]["handle"], 2);
	EXPECT_EQ(w.manifest()["processes"][0]["mmaps"][0]["prot"], "r");
	w.munmap(100, A, 0x3000);
	EXPECT_TRUE(w.p(100).mmaps.empty());
	// a snapshot of a legacy mapping no ioctl was seen for: its buffer is unknown
	ASSERT_EQ(w.apply(snap), ApplyStatus::ok);
	EXPECT_EQ(w.manifest()["processes"][0]["mmaps"][0]["handle"], nullptr);
}

TEST(ModelI915, UserptrAndTiling)
{
	World w = i915_world();
	I915 c{w};
	ASSERT_EQ(c.userptr(4, 0x7f0000200000, 0x10000), ApplyStatus::ok);
	c.gem_create(5, 0x8000);
	ASSERT_EQ(c.set_tiling(5), ApplyStatus::ok);
	drm_i915_gem_caching cc{5, I915_CACHING_CACHED};
	ASSERT_EQ(c.call(DRM_IOCTL_I915_GEM_SET_CACHING, cc, cc), ApplyStatus::ok);
	json h = w.manifest()["files"][0]["handles"];
	EXPECT_EQ(h[0]["origin"], "i915.userptr");
	EXPECT_EQ(h[0]["params"], (json{{"user_ptr", 0x7f0000200000}, {"flags", 0}}));
	EXPECT_EQ(h[0]["size"], 0x10000);
	EXPECT_FALSE(h[0].contains("tiling"));
	EXPECT_EQ(h[1]["tiling"], (json{{"mode", "X"}, {"stride", 512}, {"swizzle", I915_BIT_6_SWIZZLE_9_10}}));
	EXPECT_EQ(h[1]["caching"], I915_CACHING_CACHED);
}

TEST(ModelI915, ContextsAndVms)
{
	World w = i915_world();
	I915 c{w};
	ASSERT_EQ(c.vm_create(1), ApplyStatus::ok);
	ASSERT_EQ(c.context_create(1), ApplyStatus::ok);
	ASSERT_EQ(c.context_create_ext(2, 1), ApplyStatus::ok);
	json m = w.manifest();
	EXPECT_EQ(m["complete"], true) << m["incomplete_reasons"];
	json ctxs = m["files"][0]["contexts"];
	ASSERT_EQ(ctxs.size(), 3u);
	EXPECT_EQ(ctxs[1], (json{{"id", 1}, {"flags", 0}, {"vm", nullptr}, {"params", json::object()}}));
	const json &c2 = ctxs[2];
	EXPECT_EQ(c2["id"], 2);
	EXPECT_EQ(c2["flags"], I915_CONTEXT_CREATE_FLAGS_USE_EXTENSIONS);
	EXPECT_EQ(c2["vm"], 1);
	ASSERT_TRUE(c2["params"]["priority"].is_number_integer());
	EXPECT_EQ(c2["params"]["priority"].get<int64_t>(), -512); // not 2^64 - 512
	EXPECT_EQ(c2["params"]["engines"], (json{{"engines",
						  {{{"class", I915_ENGINE_CLASS_RENDER}, {"instance", 0}},
						   {{"class", I915_ENGINE_CLASS_COPY}, {"instance", 0}}}}}));
	EXPECT_FALSE(c2.contains("vm_destroyed"));
	EXPECT_EQ(m["files"][0]["vms"],
		  (json::array({{{"id", 1}, {"flags", 0}, {"params", json::object()}, {"bindings", json::array()}}})));

	ASSERT_EQ(c.context_destroy(1), ApplyStatus::ok);
	EXPECT_EQ(w.f(kI915).contexts.count(1), 0u);
	EXPECT_EQ(w.f(kI915).contexts.size(), 2u);

	// SETPARAM VM on an existing context, then the VM's id is destroyed (the context keeps it)
	ASSERT_EQ(c.vm_create(2), ApplyStatus::ok);
	ASSERT_EQ(c.context_set_vm(2, 2), ApplyStatus::ok);
	EXPECT_EQ(w.f(kI915).contexts.at(2).vm, 2u);
	EXPECT_EQ(w.f(kI915).contexts.at(2).params.count("priority"), 1u); // other params kept
	ASSERT_EQ(c.vm_destroy(2), ApplyStatus::ok);
	m = w.manifest();
	const json *ctx = find_id(m["files"][0]["contexts"], 2);
	ASSERT_TRUE(ctx);
	EXPECT_EQ((*ctx)["vm"], 2);
	EXPECT_EQ((*ctx)["vm_destroyed"], true);
	EXPECT_EQ(m["files"][0]["vms"].size(), 1u);
	EXPECT_TRUE(find_id(m["files"][0]["vms"], 1));
	EXPECT_TRUE(w.f(kI915).handles_known);
	EXPECT_EQ(m["complete"], true);
}

TEST(ModelI915, SetparamOnAContextNeverSeenCreated)
{
	World w = i915_world();
	I915 c{w};
	ASSERT_EQ(c.context_set_vm(9, 1), ApplyStatus::ok);
	EXPECT_EQ(w.f(kI915).contexts.at(9).vm, 1u);
	EXPECT_FALSE(w.f(kI915).handles_known); // created before tracing: the file's state is partial
}

TEST(ModelI915, PerfOpenThenItsStreamFd)
{
	World w = i915_world();
	I915 c{w};
	ASSERT_EQ(c.perf_open(12), ApplyStatus::ok);
	ASSERT_EQ(w.other_fd(100, 12, kPerf, GW_FILE_PERF), ApplyStatus::ok);
	json fds = w.manifest()["processes"][0]["fds"];
	ASSERT_EQ(fds.size(), 2u);
	EXPECT_EQ(
		fds[1],
		(json{{"fd", 12},
		      {"i915_perf",
		       {{"origin",
			 {{"file", 1},
			  {"ioctl", "PERF_OPEN"},
			  {"flags", I915_PERF_FLAG_FD_CLOEXEC},
			  {"properties", {{DRM_I915_PERF_PROP_SAMPLE_OA, 1}, {DRM_I915_PERF_PROP_OA_METRICS_SET, 42}}},
			  {"complete", true}}}}},
		      {"cloexec", false}}));
	EXPECT_EQ(w.m.others().at(kPerf).type, GW_FILE_PERF);
	EXPECT_NO_THROW(gw::manifest::validate(w.manifest()));
}

TEST(ModelI915, ExecbufferOutFenceThenTheSyncFileFd)
{
	World w = i915_world();
	I915 c{w};
	c.context_create(2);
	ASSERT_EQ(c.execbuf(DRM_IOCTL_I915_GEM_EXECBUFFER2_WR, 2, I915_EXEC_RENDER | I915_EXEC_FENCE_OUT, 15),
		  ApplyStatus::ok);
	ASSERT_EQ(w.other_fd(100, 15, kSync, GW_FILE_SYNC), ApplyStatus::ok);
	json fds = w.manifest()["processes"][0]["fds"];
	ASSERT_EQ(fds.size(), 2u);
	EXPECT_EQ(fds[1], (json{{"fd", 15},
				{"sync_file", {{"origin", {{"file", 1}, {"ioctl", "EXECBUFFER2_WR"}, {"context", 2}}}}},
				{"cloexec", false}}));
	// closing the fd forgets the out-fence
	w.close(100, 15, kSync);
	EXPECT_TRUE(w.m.others().empty());
}

TEST(ModelI915, SyncobjExportedAsASyncFile)
{
	World w = i915_world();
	drm_syncobj_create sc{0, DRM_SYNCOBJ_CREATE_SIGNALED}, so{4, DRM_SYNCOBJ_CREATE_SIGNALED};
	ASSERT_EQ(w.apply(ioctl_rec(100, 3, kI915, DRM_IOCTL_SYNCOBJ_CREATE, sc, so)), ApplyStatus::ok);
	drm_syncobj_handle hi{4, DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE, -1, 0}, ho = hi;
	ho.fd = 16;
	ASSERT_EQ(w.apply(ioctl_rec(100, 3, kI915, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, hi, ho)), ApplyStatus::ok);
	ASSERT_EQ(w.other_fd(100, 16, kSync, GW_FILE_SYNC), ApplyStatus::ok);
	EXPECT_EQ(w.manifest()["processes"][0]["fds"][1]["sync_file"],
		  (json{{"origin", {{"file", 1}, {"ioctl", "SYNCOBJ_HANDLE_TO_FD"}, {"syncobj", 4}}}}));
}

TEST(ModelI915, PlainExecbuffer2IsIgnored)
{
	World w = i915_world();
	I915 c{w};
	json before = w.manifest();
	ASSERT_EQ(c.execbuf(DRM_IOCTL_I915_GEM_EXECBUFFER2, 0, I915_EXEC_RENDER | I915_EXEC_FENCE_OUT, 15),
		  ApplyStatus::ok);
	EXPECT_EQ(w.m.ignored_ioctls(), 1u);
	EXPECT_EQ(w.m.malformed_records(), 0u);
	json after = w.manifest();
	EXPECT_EQ(after["files"], before["files"]);
	EXPECT_EQ(after["processes"], before["processes"]);
	// no origin is waiting for fd 15
	w.other_fd(100, 15, kSync, GW_FILE_SYNC);
	EXPECT_EQ(w.manifest()["processes"][0]["fds"][1]["sync_file"]["origin"], nullptr);
}

TEST(ModelI915, ExtRecordOfAnotherIoctlIsNotUsed)
{
	World w = i915_world();
	w.open_drv(100, 4, kI915b, "i915", kDev);
	I915 c{w};
	auto call = c.create_ext_call(7);
	ASSERT_TRUE(call.ext);
	call.ext->file = kI915b; // captured for another file
	ASSERT_EQ(w.call(call), ApplyStatus::ok);
	json m = w.manifest();
	EXPECT_EQ(m["files"][0]["handles"][0]["params"]["placements"], json::array());
	EXPECT_EQ(m["files"][0]["handles"][0]["params"]["protected"], false);
	EXPECT_TRUE(has_reason(m, "GEM_CREATE_EXT of handle 7"));

	// an ext record is for the thread's next ioctl only: a GEM_CREATE in between consumes it
	World w2 = i915_world();
	I915 c2{w2};
	auto full = c2.create_ext_call(8);
	ASSERT_TRUE(full.ext);
	w2.apply(*full.ext);
	c2.gem_create(1, 4096);
	ASSERT_EQ(w2.apply(full.ev), ApplyStatus::ok);
	json h = w2.manifest()["files"][0]["handles"];
	EXPECT_EQ(h[1]["handle"], 8);
	EXPECT_EQ(h[1]["params"]["placements"], json::array());
	EXPECT_TRUE(has_reason(w2.manifest(), "GEM_CREATE_EXT of handle 8"));
}

TEST(ModelI915, SnapshotAnonMappingJoinsItsFileAndHandle)
{
	World w = i915_world();
	I915 c{w};
	c.gem_create(1, 0x4000);
	c.mmap_offset(1, I915_MMAP_OFFSET_WB, kOff);
	ASSERT_EQ(w.apply(anon_map(100, kDev, A, 0x4000, kOff)), ApplyStatus::ok);
	const gw::Mapping &mp = w.p(100).mmaps.at(A);
	EXPECT_EQ(mp.kfile, kI915);
	EXPECT_EQ(mp.object, w.f(kI915).handles.at(1).object);
	json mj = w.manifest()["processes"][0]["mmaps"][0];
	EXPECT_EQ(mj["file"], 1);
	EXPECT_EQ(mj["handle"], 1);
	EXPECT_EQ(mj["via"], "anon_inode:i915.gem");
	EXPECT_EQ(w.manifest()["complete"], true);
}

TEST(ModelI915, SnapshotAnonMappingPicksTheFileThatGrantedTheOffset)
{
	World w = i915_world();
	w.open_drv(100, 4, kI915b, "i915", kDev);
	I915 a{w}, b{w};
	b.file = kI915b;
	b.fd = 4;
	a.gem_create(1, 0x4000); // fd 3: a buffer, no grant
	b.gem_create(1, 0x4000); // fd 4: granted the offset
	b.mmap_offset(1, I915_MMAP_OFFSET_WC, kOff + 0x8000);
	ASSERT_EQ(w.apply(anon_map(100, kDev, A, 0x1000, kOff + 0x9000)), ApplyStatus::ok); // inside the object
	const gw::Mapping &mp = w.p(100).mmaps.at(A);
	EXPECT_EQ(mp.kfile, kI915b);
	EXPECT_EQ(mp.object, w.f(kI915b).handles.at(1).object);
	json mj = w.manifest()["processes"][0]["mmaps"][0];
	EXPECT_EQ(mj["file"], 2);
	EXPECT_EQ(mj["handle"], 1);
	EXPECT_EQ(mj["offset"], kOff + 0x9000);
}

TEST(ModelI915, SnapshotAnonMappingOfTheOnlyFileOfItsDevice)
{
	World w = i915_world();
	w.open_drv(100, 4, kI915b, "i915", kDev2);                                 // another device
	ASSERT_EQ(w.apply(anon_map(100, kDev, A, 0x1000, kOff)), ApplyStatus::ok); // no grant known
	const gw::Mapping &mp = w.p(100).mmaps.at(A);
	EXPECT_EQ(mp.kfile, kI915);
	EXPECT_FALSE(mp.object);
	EXPECT_EQ(w.manifest()["processes"][0]["mmaps"][0]["handle"], nullptr);
}

TEST(ModelI915, SnapshotAnonMappingWithNoFileOfItsDevice)
{
	World w;
	w.proc(100);
	w.open_drv(100, 3, kI915, "i915", kDev2);
	w.mmap(100, kI915, A, 0x2000, kOff); // an older mapping the new one replaced
	ASSERT_EQ(w.apply(anon_map(100, kDev, A, 0x1000, kOff + 0x10000)), ApplyStatus::ok);
	ASSERT_EQ(w.p(100).mmaps.size(), 1u); // only the part not covered is left
	EXPECT_EQ(w.p(100).mmaps.begin()->first, A + 0x1000);
	json m = w.manifest();
	EXPECT_EQ(m["complete"], false);
	EXPECT_TRUE(has_reason(m, "process 100: the i915 mapping at 0x7f0000000000 (offset 0x100010000) "
				  "could not be tied to one of its DRM files"))
		<< m["incomplete_reasons"];
	EXPECT_EQ(m["processes"][0]["mmaps"].size(), 1u);
	// two files of the device and neither granted the offset: no guess either
	World w2;
	w2.proc(100);
	w2.open_drv(100, 3, kI915, "i915", kDev);
	w2.open_drv(100, 4, kI915b, "i915", kDev);
	w2.apply(anon_map(100, kDev, A, 0x1000, kOff));
	EXPECT_TRUE(w2.p(100).mmaps.empty());
	EXPECT_EQ(w2.manifest()["complete"], false);
}

TEST(ModelI915, DriverOfAFileKnownOnlyFromItsIoctls)
{
	// an i915 fd received over a socket: no fd record, the ioctl records carry the driver
	World w;
	w.proc(100);
	I915 c{w};
	ASSERT_EQ(c.gem_create(1, 4096), ApplyStatus::ok);
	ASSERT_EQ(c.gem_create(2, 8192), ApplyStatus::ok);
	ASSERT_EQ(c.mmap_offset(2, I915_MMAP_OFFSET_WB, kOff), ApplyStatus::ok);
	const gw::DrmFile &f = w.f(kI915);
	EXPECT_FALSE(f.handles_known);
	ASSERT_EQ(f.handles.size(), 2u);
	EXPECT_EQ(f.handles.at(2).origin(), "i915.gem_create");
	EXPECT_EQ(f.mmap_offsets.at(kOff).i915_type_name(), "wb");
	EXPECT_EQ(w.m.ignored_ioctls(), 0u);
}

TEST(ModelI915, MmapTypesGoWithTheirHandle)
{
	World w = i915_world();
	I915 c{w};
	c.gem_create(1, 0x4000);
	c.mmap_offset(1, I915_MMAP_OFFSET_WB, kOff);
	w.gem_close(100, kI915, 1);
	EXPECT_TRUE(w.f(kI915).mmap_offsets.empty());
	// the offset is reused for a new buffer granted by MODE_MAP_DUMB: no type of the old one
	w.create_dumb(100, kI915, 1);
	w.map_dumb(100, kI915, 1, kOff);
	json h = w.manifest()["files"][0]["handles"][0];
	EXPECT_EQ(h["mmap_offsets"], json::array({kOff}));
	EXPECT_FALSE(h.contains("mmap_types"));
}

} // namespace
