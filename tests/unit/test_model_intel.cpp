// i915 and xe state in the model and the manifest: buffers with their creation parameters,
// mmap grants and their types, contexts, VMs, bindings, exec queues, the fds i915 hands out,
// and i915.gem mappings found by the snapshot. Records are built as the tracer writes them
// (records.hpp intel_call: the GW_EV_IOCTL_EXT, then the GW_EV_IOCTL).
#include <gtest/gtest.h>

#include <i915_drm.h>
#include <sys/mman.h>

#include "records.hpp"
#include "uapi/i915_uapi_extra.h"
#include "uapi/xe_uapi.h"

namespace {

using namespace gwtest;
using json = nlohmann::json;

constexpr uint64_t kDev = 0xffff888010000000;   // struct drm_device * of the i915 device
constexpr uint64_t kDev2 = 0xffff888020000000;  // another device
constexpr uint64_t kI915 = 0xffff888000a15000;  // i915 DRM files
constexpr uint64_t kI915b = 0xffff888000a16000;
constexpr uint64_t kXe = 0xffff888000e0e000;    // an xe DRM file
constexpr uint64_t kPerf = 0xffff888000f01000;  // anon_inode:[i915_perf]
constexpr uint64_t kSync = 0xffff888000f02000;  // anon_inode:sync_file
constexpr uint64_t kArg = 0x7ffd00001000;       // ioctl arguments
constexpr uint64_t kNode0 = 0x555500010000;     // extension nodes, 0x1000 apart
constexpr uint64_t kArray = 0x555500020000;     // arrays behind pointers
constexpr uint64_t kArray2 = 0x555500030000;
constexpr uint64_t A = 0x7f0000000000;          // mapping addresses
constexpr uint64_t kOff = 0x100000000;          // fake offsets

uint64_t node(int i) { return kNode0 + 0x1000 * uint64_t(i); }

// --- i915 calls --------------------------------------------------------------------------
struct I915 {
	World &w;
	UserMem mem;
	uint64_t file = kI915;
	int fd = 3;
	uint32_t pid = 100;

	template <class T> ApplyStatus call(uint32_t cmd, const T &in, const T &out, int32_t ret = 0) {
		return w.intel(mem, pid, file, GW_DRV_I915, cmd, kArg, in, out, ret, fd);
	}
	ApplyStatus gem_create(uint32_t handle, uint64_t size) {
		drm_i915_gem_create in{size, 0, 0}, out{size, handle, 0};
		return call(DRM_IOCTL_I915_GEM_CREATE, in, out);
	}
	// handle 7, 64 KiB: memory regions [device 0, system 0] -> protected -> PAT 3
	IntelCall create_ext_call(uint32_t handle = 7, bool regions_readable = true) {
		drm_i915_gem_create_ext_memory_regions r{};
		r.base.next_extension = node(1);
		r.base.name = I915_GEM_CREATE_EXT_MEMORY_REGIONS;
		r.num_regions = 2;
		r.regions = regions_readable ? kArray : 0xdead0000;
		mem.put(node(0), r);
		mem.put_array(kArray, std::vector<drm_i915_gem_memory_class_instance>{
		                          {I915_MEMORY_CLASS_DEVICE, 0}, {I915_MEMORY_CLASS_SYSTEM, 0}});
		drm_i915_gem_create_ext_protected_content pc{};
		pc.base.next_extension = node(2);
		pc.base.name = I915_GEM_CREATE_EXT_PROTECTED_CONTENT;
		mem.put(node(1), pc);
		gw_drm_i915_gem_create_ext_set_pat pat{};
		pat.base.name = I915_GEM_CREATE_EXT_SET_PAT;
		pat.pat_index = 3;
		mem.put(node(2), pat);
		drm_i915_gem_create_ext in{}, out{};
		in.size = 65000;
		in.flags = I915_GEM_CREATE_EXT_FLAG_NEEDS_CPU_ACCESS;
		in.extensions = node(0);
		out = in;
		out.size = 65536;
		out.handle = handle;
		return intel_call(mem, pid, fd, file, GW_DRV_I915, DRM_IOCTL_I915_GEM_CREATE_EXT, kArg, in, out);
	}
	ApplyStatus mmap_gtt(uint32_t handle, uint64_t offset) {
		drm_i915_gem_mmap_gtt in{handle, 0, 0}, out{handle, 0, offset};
		return call(DRM_IOCTL_I915_GEM_MMAP_GTT, in, out);
	}
	ApplyStatus mmap_offset(uint32_t handle, uint64_t type, uint64_t offset) {
		drm_i915_gem_mmap_offset in{}, out{};
		in.handle = handle;
		in.flags = type;
		out = in;
		out.offset = offset;
		return call(DRM_IOCTL_I915_GEM_MMAP_OFFSET, in, out);
	}
	ApplyStatus vm_create(uint32_t id) {
		drm_i915_gem_vm_control in{}, out{};
		out.vm_id = id;
		return call(DRM_IOCTL_I915_GEM_VM_CREATE, in, out);
	}
	ApplyStatus vm_destroy(uint32_t id) {
		drm_i915_gem_vm_control in{};
		in.vm_id = id;
		return call(DRM_IOCTL_I915_GEM_VM_DESTROY, in, in);
	}
	ApplyStatus context_create(uint32_t id) {
		drm_i915_gem_context_create in{0, 0}, out{id, 0};
		return call(DRM_IOCTL_I915_GEM_CONTEXT_CREATE, in, out);
	}
	// CONTEXT_CREATE_EXT: VM vm -> priority -512 -> engines [render 0, copy 0]
	ApplyStatus context_create_ext(uint32_t id, uint32_t vm) {
		auto sp = [](uint64_t next, uint64_t param, uint64_t value, uint32_t size) {
			drm_i915_gem_context_create_ext_setparam s{};
			s.base.next_extension = next;
			s.base.name = I915_CONTEXT_CREATE_EXT_SETPARAM;
			s.param.param = param;
			s.param.value = value;
			s.param.size = size;
			return s;
		};
		I915_DEFINE_CONTEXT_PARAM_ENGINES(engines, 2);
		engines.extensions = 0;
		engines.engines[0] = {I915_ENGINE_CLASS_RENDER, 0};
		engines.engines[1] = {I915_ENGINE_CLASS_COPY, 0};
		mem.put(kArray2, engines);
		mem.put(node(0), sp(node(1), I915_CONTEXT_PARAM_VM, vm, 0));
		mem.put(node(1), sp(node(2), I915_CONTEXT_PARAM_PRIORITY, static_cast<uint64_t>(int64_t{-512}), 0));
		mem.put(node(2), sp(0, I915_CONTEXT_PARAM_ENGINES, kArray2, sizeof engines));
		drm_i915_gem_context_create_ext in{}, out{};
		in.flags = I915_CONTEXT_CREATE_FLAGS_USE_EXTENSIONS;
		in.extensions = node(0);
		out = in;
		out.ctx_id = id;
		return call(DRM_IOCTL_I915_GEM_CONTEXT_CREATE_EXT, in, out);
	}
	ApplyStatus context_destroy(uint32_t id) {
		drm_i915_gem_context_destroy in{id, 0};
		return call(DRM_IOCTL_I915_GEM_CONTEXT_DESTROY, in, in);
	}
	ApplyStatus context_set_vm(uint32_t id, uint32_t vm) {
		drm_i915_gem_context_param p{};
		p.ctx_id = id;
		p.param = I915_CONTEXT_PARAM_VM;
		p.value = vm;
		return call(DRM_IOCTL_I915_GEM_CONTEXT_SETPARAM, p, p);
	}
	ApplyStatus set_tiling(uint32_t handle) {
		drm_i915_gem_set_tiling in{handle, I915_TILING_X, 512, 0}, out{handle, I915_TILING_X, 512, I915_BIT_6_SWIZZLE_9_10};
		return call(DRM_IOCTL_I915_GEM_SET_TILING, in, out);
	}
	ApplyStatus userptr(uint32_t handle, uint64_t ptr, uint64_t size) {
		drm_i915_gem_userptr in{ptr, size, 0, 0}, out{ptr, size, 0, handle};
		return call(DRM_IOCTL_I915_GEM_USERPTR, in, out);
	}
	ApplyStatus gem_mmap(uint32_t handle, uint64_t size, uint64_t addr) {
		drm_i915_gem_mmap in{}, out{};
		in.handle = handle;
		in.size = size;
		out = in;
		out.addr_ptr = addr;
		return call(DRM_IOCTL_I915_GEM_MMAP, in, out);
	}
	ApplyStatus perf_open(int32_t new_fd) {
		uint64_t props[2][2] = {{DRM_I915_PERF_PROP_SAMPLE_OA, 1}, {DRM_I915_PERF_PROP_OA_METRICS_SET, 42}};
		mem.put(kArray2, props);
		drm_i915_perf_open_param in{I915_PERF_FLAG_FD_CLOEXEC, 2, kArray2};
		return call(DRM_IOCTL_I915_PERF_OPEN, in, in, new_fd);
	}
	ApplyStatus execbuf(uint32_t cmd, uint32_t ctx, uint64_t flags, int32_t fence_fd) {
		drm_i915_gem_execbuffer2 in{}, out{};
		in.buffer_count = 1;
		in.flags = flags;
		in.rsvd1 = ctx;
		out = in;
		out.rsvd2 = uint64_t(uint32_t(fence_fd)) << 32;
		return call(cmd, in, out);
	}
};

// A mapping the attach-time snapshot found: an anon_inode:i915.gem VMA of device `dev`.
gw_ev_mmap anon_map(uint32_t pid, uint64_t dev, uint64_t start, uint64_t length, uint64_t offset) {
	auto r = mmap_rec(pid, 0, start, length, offset, PROT_READ | PROT_WRITE, true, -1);
	r.via = GW_VIA_I915_ANON;
	r.dev = dev;
	r.flags = 0;
	return r;
}

World i915_world() {
	World w;
	w.proc(100);
	w.open_drv(100, 3, kI915, "i915", kDev);
	return w;
}

const json *find_id(const json &list, uint64_t id) {
	for (const json &e : list)
		if (e["id"] == id)
			return &e;
	return nullptr;
}

bool has_reason(const json &m, const std::string &part) {
	for (const json &r : m["incomplete_reasons"])
		if (r.get<std::string>().find(part) != std::string::npos)
			return true;
	return false;
}

TEST(ModelI915, AnI915FileHasContextZeroFromOpen) {
	World w = i915_world();
	const gw::DrmFile &f = w.f(kI915);
	EXPECT_EQ(f.driver, "i915");
	ASSERT_EQ(f.contexts.size(), 1u);
	EXPECT_FALSE(f.contexts.at(0).vm);
	json fj = w.manifest()["files"][0];
	EXPECT_EQ(fj["contexts"], (json::array({{{"id", 0}, {"flags", 0}, {"vm", nullptr}, {"params", json::object()}}})));
	EXPECT_EQ(fj["vms"], json::array());
	EXPECT_FALSE(fj.contains("exec_queues"));
	// no driver state for other drivers
	w.open(100, 4, kI915b);
	json other = w.manifest()["files"][1];
	EXPECT_EQ(other["driver"], "vgem");
	EXPECT_FALSE(other.contains("contexts"));
	EXPECT_FALSE(other.contains("vms"));
}

TEST(ModelI915, GemCreateAndCreateExtParams) {
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
	EXPECT_EQ(h[1]["params"], (json{{"placements", {{{"class", "device"}, {"instance", 0}}, {{"class", "system"}, {"instance", 0}}}},
	                                {"flags", I915_GEM_CREATE_EXT_FLAG_NEEDS_CPU_ACCESS}, {"protected", true}, {"pat_index", 3}}));
	EXPECT_EQ(m["objects"].size(), 2u);
}

TEST(ModelI915, GemCreateExtUnknownExtensionIsListed) {
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

TEST(ModelI915, TruncatedGemCreateExtMarksTheManifestIncomplete) {
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

TEST(ModelI915, MmapTypesFollowTheCommandSize) {
	World w = i915_world();
	I915 c{w};
	c.gem_create(1, 0x10000);
	ASSERT_EQ(c.mmap_gtt(1, kOff), ApplyStatus::ok);
	ASSERT_EQ(c.mmap_offset(1, I915_MMAP_OFFSET_WC, kOff + 0x10000), ApplyStatus::ok);
	ASSERT_EQ(c.mmap_offset(1, I915_MMAP_OFFSET_WB, kOff + 0x20000), ApplyStatus::ok);
	ASSERT_EQ(c.mmap_offset(1, I915_MMAP_OFFSET_UC, kOff + 0x30000), ApplyStatus::ok);
	json h = w.manifest()["files"][0]["handles"][0];
	EXPECT_EQ(h["mmap_offsets"], json::array({kOff, kOff + 0x10000, kOff + 0x20000, kOff + 0x30000}));
	EXPECT_EQ(h["mmap_types"], (json{{std::to_string(kOff), "gtt"}, {std::to_string(kOff + 0x10000), "wc"},
	                                 {std::to_string(kOff + 0x20000), "wb"}, {std::to_string(kOff + 0x30000), "uc"}}));
	// mmap() of the WB offset on the DRM fd: i915 swaps the VMA's file
	ASSERT_EQ(w.mmap(100, kI915, A, 0x10000, kOff + 0x20000), ApplyStatus::ok);
	json mp = w.manifest()["processes"][0]["mmaps"][0];
	EXPECT_EQ(mp["handle"], 1);
	EXPECT_EQ(mp["offset"], kOff + 0x20000);
	EXPECT_EQ(mp["via"], "anon_inode:i915.gem");
}

TEST(ModelI915, LegacyGemMmapMapsInsideTheIoctl) {
	World w = i915_world();
	I915 c{w};
	c.gem_create(1, 0x4000);
	c.gem_create(2, 0x4000);
	ASSERT_EQ(c.gem_mmap(2, 0x2800, A), ApplyStatus::ok);
	const gw::Mapping &mp = w.p(100).mmaps.at(A);
	EXPECT_EQ(mp.length, 0x3000u);
	EXPECT_EQ(mp.via, "i915.gem_mmap");
	EXPECT_EQ(mp.object, w.f(kI915).handles.at(2).object);
	json mj = w.manifest()["processes"][0]["mmaps"];
	EXPECT_EQ(mj, (json::array({{{"start", A}, {"length", 0x3000}, {"prot", "rw"}, {"shared", true}, {"file", 1},
	                             {"offset", 0}, {"handle", 2}, {"object", mp.object.value()}, {"via", "i915.gem_mmap"}}})));
	w.munmap(100, A, 0x3000);
	EXPECT_TRUE(w.p(100).mmaps.empty());
}

TEST(ModelI915, UserptrAndTiling) {
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

TEST(ModelI915, ContextsAndVms) {
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
	EXPECT_EQ(c2["params"]["engines"], (json{{"engines", {{{"class", I915_ENGINE_CLASS_RENDER}, {"instance", 0}},
	                                                      {{"class", I915_ENGINE_CLASS_COPY}, {"instance", 0}}}}}));
	EXPECT_FALSE(c2.contains("vm_destroyed"));
	EXPECT_EQ(m["files"][0]["vms"], (json::array({{{"id", 1}, {"flags", 0}, {"params", json::object()}, {"bindings", json::array()}}})));

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

TEST(ModelI915, SetparamOnAContextNeverSeenCreated) {
	World w = i915_world();
	I915 c{w};
	ASSERT_EQ(c.context_set_vm(9, 1), ApplyStatus::ok);
	EXPECT_EQ(w.f(kI915).contexts.at(9).vm, 1u);
	EXPECT_FALSE(w.f(kI915).handles_known); // created before tracing: the file's state is partial
}

TEST(ModelI915, PerfOpenThenItsStreamFd) {
	World w = i915_world();
	I915 c{w};
	ASSERT_EQ(c.perf_open(12), ApplyStatus::ok);
	ASSERT_EQ(w.other_fd(100, 12, kPerf, GW_FILE_PERF), ApplyStatus::ok);
	json fds = w.manifest()["processes"][0]["fds"];
	ASSERT_EQ(fds.size(), 2u);
	EXPECT_EQ(fds[1], (json{{"fd", 12},
	                        {"i915_perf", {{"origin", {{"file", 1}, {"ioctl", "PERF_OPEN"}, {"flags", I915_PERF_FLAG_FD_CLOEXEC},
	                                                   {"properties", {{DRM_I915_PERF_PROP_SAMPLE_OA, 1},
	                                                                   {DRM_I915_PERF_PROP_OA_METRICS_SET, 42}}},
	                                                   {"complete", true}}}}},
	                        {"cloexec", false}}));
	EXPECT_EQ(w.m.others().at(kPerf).type, GW_FILE_PERF);
	EXPECT_NO_THROW(gw::validate_manifest(w.manifest()));
}

TEST(ModelI915, ExecbufferOutFenceThenTheSyncFileFd) {
	World w = i915_world();
	I915 c{w};
	c.context_create(2);
	ASSERT_EQ(c.execbuf(DRM_IOCTL_I915_GEM_EXECBUFFER2_WR, 2, I915_EXEC_RENDER | I915_EXEC_FENCE_OUT, 15), ApplyStatus::ok);
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

TEST(ModelI915, PlainExecbuffer2IsIgnored) {
	World w = i915_world();
	I915 c{w};
	json before = w.manifest();
	ASSERT_EQ(c.execbuf(DRM_IOCTL_I915_GEM_EXECBUFFER2, 0, I915_EXEC_RENDER | I915_EXEC_FENCE_OUT, 15), ApplyStatus::ok);
	EXPECT_EQ(w.m.ignored_ioctls(), 1u);
	EXPECT_EQ(w.m.malformed_records(), 0u);
	json after = w.manifest();
	EXPECT_EQ(after["files"], before["files"]);
	EXPECT_EQ(after["processes"], before["processes"]);
	// no origin is waiting for fd 15
	w.other_fd(100, 15, kSync, GW_FILE_SYNC);
	EXPECT_EQ(w.manifest()["processes"][0]["fds"][1]["sync_file"]["origin"], nullptr);
}

TEST(ModelI915, ExtRecordOfAnotherIoctlIsNotUsed) {
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

TEST(ModelI915, SnapshotAnonMappingJoinsItsFileAndHandle) {
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

TEST(ModelI915, SnapshotAnonMappingPicksTheFileThatGrantedTheOffset) {
	World w = i915_world();
	w.open_drv(100, 4, kI915b, "i915", kDev);
	I915 a{w}, b{w};
	b.file = kI915b;
	b.fd = 4;
	a.gem_create(1, 0x4000);                       // fd 3: a buffer, no grant
	b.gem_create(1, 0x4000);                       // fd 4: granted the offset
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

TEST(ModelI915, SnapshotAnonMappingOfTheOnlyFileOfItsDevice) {
	World w = i915_world();
	w.open_drv(100, 4, kI915b, "i915", kDev2); // another device
	ASSERT_EQ(w.apply(anon_map(100, kDev, A, 0x1000, kOff)), ApplyStatus::ok); // no grant known
	const gw::Mapping &mp = w.p(100).mmaps.at(A);
	EXPECT_EQ(mp.kfile, kI915);
	EXPECT_FALSE(mp.object);
	EXPECT_EQ(w.manifest()["processes"][0]["mmaps"][0]["handle"], nullptr);
}

TEST(ModelI915, SnapshotAnonMappingWithNoFileOfItsDevice) {
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
	                          "could not be tied to one of its DRM files")) << m["incomplete_reasons"];
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

TEST(ModelI915, DriverOfAFileKnownOnlyFromItsIoctls) {
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
	EXPECT_EQ(f.handles.at(2).origin, "i915.gem_create");
	EXPECT_EQ(f.mmap_types.at(kOff), "wb");
	EXPECT_EQ(w.m.ignored_ioctls(), 0u);
}

TEST(ModelI915, MmapTypesGoWithTheirHandle) {
	World w = i915_world();
	I915 c{w};
	c.gem_create(1, 0x4000);
	c.mmap_offset(1, I915_MMAP_OFFSET_WB, kOff);
	w.gem_close(100, kI915, 1);
	EXPECT_TRUE(w.f(kI915).mmap_offsets.empty());
	EXPECT_TRUE(w.f(kI915).mmap_types.empty());
	// the offset is reused for a new buffer granted by MODE_MAP_DUMB: no type of the old one
	w.create_dumb(100, kI915, 1);
	w.map_dumb(100, kI915, 1, kOff);
	json h = w.manifest()["files"][0]["handles"][0];
	EXPECT_EQ(h["mmap_offsets"], json::array({kOff}));
	EXPECT_FALSE(h.contains("mmap_types"));
}

// --- xe calls ----------------------------------------------------------------------------
struct Xe {
	World &w;
	UserMem mem;
	uint64_t file = kXe;
	int fd = 3;
	uint32_t pid = 100;

	template <class T> ApplyStatus call(uint32_t cmd, const T &in, const T &out) {
		return w.intel(mem, pid, file, GW_DRV_XE, cmd, kArg, in, out, 0, fd);
	}
	ApplyStatus gem_create(uint32_t handle, uint64_t size, bool pxp = false) {
		gw_xe_gem_create in{}, out{};
		if (pxp) {
			gw_xe_ext_set_property sp{};
			sp.base.name = GW_XE_GEM_CREATE_EXTENSION_SET_PROPERTY;
			sp.property = GW_XE_GEM_CREATE_SET_PROPERTY_PXP_TYPE;
			sp.value = GW_XE_PXP_TYPE_HWDRM;
			in.extensions = mem.put(node(0), sp);
		}
		in.size = size;
		in.placement = GW_XE_GEM_PLACEMENT_BIT(0) | GW_XE_GEM_PLACEMENT_BIT(1);
		in.flags = GW_XE_GEM_CREATE_FLAG_SCANOUT;
		in.cpu_caching = GW_XE_GEM_CPU_CACHING_WC;
		out = in;
		out.handle = handle;
		return call(GW_XE_IOCTL_GEM_CREATE, in, out);
	}
	ApplyStatus mmap_offset(uint32_t handle, uint64_t offset, uint32_t flags = 0) {
		gw_xe_gem_mmap_offset in{}, out{};
		in.handle = handle;
		in.flags = flags;
		out = in;
		out.offset = offset;
		return call(GW_XE_IOCTL_GEM_MMAP_OFFSET, in, out);
	}
	ApplyStatus vm_create(uint32_t id, uint32_t flags = 0) {
		gw_xe_vm_create in{}, out{};
		in.flags = flags;
		out = in;
		out.vm_id = id;
		return call(GW_XE_IOCTL_VM_CREATE, in, out);
	}
	ApplyStatus vm_destroy(uint32_t id) {
		gw_xe_vm_destroy in{};
		in.vm_id = id;
		return call(GW_XE_IOCTL_VM_DESTROY, in, in);
	}
	// width 2 x 2 placements; instances unreadable when `readable` is false
	ApplyStatus exec_queue_create(uint32_t id, uint32_t vm, bool readable = true) {
		mem.put_array(kArray2, std::vector<gw_xe_engine_class_instance>{
		                           {GW_XE_ENGINE_CLASS_RENDER, 0, 0, 0}, {GW_XE_ENGINE_CLASS_RENDER, 1, 0, 0},
		                           {GW_XE_ENGINE_CLASS_COMPUTE, 0, 1, 0}, {GW_XE_ENGINE_CLASS_COMPUTE, 1, 1, 0}});
		gw_xe_exec_queue_create in{}, out{};
		in.width = 2;
		in.num_placements = 2;
		in.vm_id = vm;
		in.instances = readable ? kArray2 : 0xdead0000;
		out = in;
		out.exec_queue_id = id;
		return call(GW_XE_IOCTL_EXEC_QUEUE_CREATE, in, out);
	}
	ApplyStatus exec_queue_destroy(uint32_t id) {
		gw_xe_exec_queue_destroy in{};
		in.exec_queue_id = id;
		return call(GW_XE_IOCTL_EXEC_QUEUE_DESTROY, in, in);
	}
	IntelCall bind_call(uint32_t vm, const std::vector<gw_xe_vm_bind_op> &ops) {
		gw_xe_vm_bind in{};
		in.vm_id = vm;
		in.num_binds = static_cast<uint32_t>(ops.size());
		if (ops.size() == 1)
			in.bind = ops[0];
		else
			in.vector_of_binds = mem.put_array(kArray, ops);
		return intel_call(mem, pid, fd, file, GW_DRV_XE, GW_XE_IOCTL_VM_BIND, kArg, in, in);
	}
	ApplyStatus bind(uint32_t vm, const std::vector<gw_xe_vm_bind_op> &ops) { return w.call(bind_call(vm, ops)); }
};

gw_xe_vm_bind_op op(uint32_t kind, uint32_t obj, uint64_t obj_offset, uint64_t range, uint64_t addr, uint16_t pat = 0,
                    uint32_t flags = 0) {
	gw_xe_vm_bind_op b{};
	b.op = kind;
	b.obj = obj;
	b.obj_offset = obj_offset;
	b.range = range;
	b.addr = addr;
	b.pat_index = pat;
	b.flags = flags;
	return b;
}

World xe_world() {
	World w;
	w.proc(100);
	w.open_drv(100, 3, kXe, "xe", kDev2);
	return w;
}

// the manifest's bindings of VM `vm` of the first file, or null
json bindings(const World &w, uint32_t vm) {
	json m = w.manifest();
	const json *v = find_id(m["files"][0]["vms"], vm);
	return v ? (*v)["bindings"] : json(nullptr);
}

TEST(ModelXe, GemCreateParams) {
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
	EXPECT_EQ(f["handles"][0]["params"], (json{{"placement", 3}, {"flags", GW_XE_GEM_CREATE_FLAG_SCANOUT}, {"vm_id", 0},
	                                           {"cpu_caching", GW_XE_GEM_CPU_CACHING_WC},
	                                           {"properties", {{"property_0", GW_XE_PXP_TYPE_HWDRM}}}}));
	EXPECT_EQ(w.manifest()["complete"], true);
}

TEST(ModelXe, MmapOffsetThenMmapJoinsTheHandle) {
	World w = xe_world();
	Xe x{w};
	x.gem_create(3, 0x10000);
	ASSERT_EQ(x.mmap_offset(3, kOff), ApplyStatus::ok);
	EXPECT_EQ(w.f(kXe).mmap_offsets.at(kOff), 3u);
	ASSERT_EQ(w.mmap(100, kXe, A, 0x10000, kOff), ApplyStatus::ok);
	json mp = w.manifest()["processes"][0]["mmaps"][0];
	EXPECT_EQ(mp["handle"], 3);
	EXPECT_EQ(mp["object"], w.f(kXe).handles.at(3).object);
	EXPECT_EQ(mp["via"], "device");
	EXPECT_EQ(mp["length"], 0x10000);
}

TEST(ModelXe, PciBarrierOffsetHasNoHandle) {
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

TEST(ModelXe, VmsAndExecQueues) {
	World w = xe_world();
	Xe x{w};
	ASSERT_EQ(x.vm_create(1, GW_XE_VM_CREATE_FLAG_SCRATCH_PAGE), ApplyStatus::ok);
	ASSERT_EQ(x.vm_create(2), ApplyStatus::ok);
	ASSERT_EQ(x.exec_queue_create(9, 2), ApplyStatus::ok);
	json f = w.manifest()["files"][0];
	EXPECT_EQ(f["vms"], (json::array({{{"id", 1}, {"flags", GW_XE_VM_CREATE_FLAG_SCRATCH_PAGE}, {"params", json::object()}, {"bindings", json::array()}},
	                                  {{"id", 2}, {"flags", 0}, {"params", json::object()}, {"bindings", json::array()}}})));
	EXPECT_EQ(f["exec_queues"], (json::array({{{"id", 9}, {"vm", 2}, {"flags", 0}, {"width", 2}, {"num_placements", 2},
	                                           {"instances", {{{"class", 0}, {"instance", 0}, {"gt", 0}},
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

TEST(ModelXe, ExecQueueWithoutItsInstancesMarksTheManifestIncomplete) {
	World w = xe_world();
	Xe x{w};
	x.vm_create(2);
	ASSERT_EQ(x.exec_queue_create(9, 2, false), ApplyStatus::ok);
	json m = w.manifest();
	EXPECT_EQ(m["files"][0]["exec_queues"][0]["instances"], json::array());
	EXPECT_EQ(m["complete"], false);
	EXPECT_TRUE(has_reason(m, "file 1: xe EXEC_QUEUE_CREATE of queue 9")) << m["incomplete_reasons"];
}

TEST(ModelXe, VmBindOneInlineOp) {
	World w = xe_world();
	Xe x{w};
	x.vm_create(2);
	x.gem_create(3, 0x20000);
	ASSERT_EQ(x.bind(2, {op(GW_XE_VM_BIND_OP_MAP, 3, 0x1000, 0x10000, 0x100000, 5, GW_XE_VM_BIND_FLAG_DUMPABLE)}), ApplyStatus::ok);
	uint64_t obj = w.f(kXe).handles.at(3).object;
	EXPECT_EQ(bindings(w, 2), (json::array({{{"addr", 0x100000}, {"range", 0x10000}, {"pat_index", 5},
	                                         {"flags", GW_XE_VM_BIND_FLAG_DUMPABLE}, {"handle", 3}, {"object", obj},
	                                         {"offset", 0x1000}}})));
	EXPECT_EQ(w.manifest()["complete"], true);
}

TEST(ModelXe, VmBindVectorSplitsABinding) {
	World w = xe_world();
	Xe x{w};
	x.vm_create(2);
	x.gem_create(3, 0x10000);
	ASSERT_EQ(x.bind(2, {op(GW_XE_VM_BIND_OP_MAP, 3, 0, 0x10000, 0x100000),
	                     op(GW_XE_VM_BIND_OP_MAP_USERPTR, 0, 0x7f0000400000, 0x2000, 0x200000),
	                     op(GW_XE_VM_BIND_OP_UNMAP, 0, 0, 0x4000, 0x104000)}),
	          ApplyStatus::ok);
	uint64_t obj = w.f(kXe).handles.at(3).object;
	EXPECT_EQ(bindings(w, 2), (json::array({
		{{"addr", 0x100000}, {"range", 0x4000}, {"pat_index", 0}, {"flags", 0}, {"handle", 3}, {"object", obj}, {"offset", 0}},
		{{"addr", 0x108000}, {"range", 0x8000}, {"pat_index", 0}, {"flags", 0}, {"handle", 3}, {"object", obj}, {"offset", 0x8000}},
		{{"addr", 0x200000}, {"range", 0x2000}, {"pat_index", 0}, {"flags", 0}, {"userptr", 0x7f0000400000}},
	})));
	EXPECT_TRUE(w.f(kXe).handles_known);
}

TEST(ModelXe, UnmapAllRemovesEveryBindingOfTheObject) {
	World w = xe_world();
	Xe x{w};
	x.vm_create(2);
	x.gem_create(3, 0x10000);
	x.gem_create(4, 0x10000);
	x.bind(2, {op(GW_XE_VM_BIND_OP_MAP, 3, 0, 0x10000, 0x100000), op(GW_XE_VM_BIND_OP_MAP, 4, 0, 0x10000, 0x200000),
	           op(GW_XE_VM_BIND_OP_MAP, 3, 0, 0x8000, 0x300000)});
	ASSERT_EQ(w.f(kXe).vms.at(2).bindings.size(), 3u);
	ASSERT_EQ(x.bind(2, {op(GW_XE_VM_BIND_OP_UNMAP_ALL, 3, 0, 0, 0)}), ApplyStatus::ok);
	const auto &b = w.f(kXe).vms.at(2).bindings;
	ASSERT_EQ(b.size(), 1u);
	EXPECT_EQ(b.begin()->second.handle, 4u);
	EXPECT_EQ(b.begin()->first, 0x200000u);
}

TEST(ModelXe, UnmapAllOfAReusedHandleSparesTheOldObject) {
	World w = xe_world();
	Xe x{w};
	x.vm_create(2);
	x.gem_create(3, 0x10000);
	x.bind(2, {op(GW_XE_VM_BIND_OP_MAP, 3, 0, 0x10000, 0x100000)});
	w.gem_close(100, kXe, 3); // the binding keeps the object; handle 3 is free again
	x.gem_create(3, 0x10000); // a new object gets handle 3
	x.bind(2, {op(GW_XE_VM_BIND_OP_MAP, 3, 0, 0x10000, 0x200000)});
	ASSERT_EQ(x.bind(2, {op(GW_XE_VM_BIND_OP_UNMAP_ALL, 3, 0, 0, 0)}), ApplyStatus::ok);
	json b = bindings(w, 2);
	ASSERT_EQ(b.size(), 1u);
	EXPECT_EQ(b[0]["addr"], 0x100000);
	EXPECT_EQ(b[0]["handle"], nullptr);
	EXPECT_EQ(w.m.objects().size(), 2u);
}

TEST(ModelXe, NullBindNamesNoBuffer) {
	World w = xe_world();
	Xe x{w};
	x.vm_create(2);
	ASSERT_EQ(x.bind(2, {op(GW_XE_VM_BIND_OP_MAP, 0, 0, 0x100000, 0x400000, 0, GW_XE_VM_BIND_FLAG_NULL)}), ApplyStatus::ok);
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

TEST(ModelXe, VmBindOfMoreOpsThanCapturedMarksTheManifestIncomplete) {
	World w = xe_world();
	Xe x{w};
	x.vm_create(2);
	x.gem_create(3, 0x100000);
	std::vector<gw_xe_vm_bind_op> ops;
	for (uint64_t i = 0; i < 20; ++i)
		ops.push_back(op(GW_XE_VM_BIND_OP_MAP, 3, i * 0x1000, 0x1000, 0x100000 + i * 0x1000));
	ASSERT_EQ(x.bind(2, ops), ApplyStatus::ok);
	EXPECT_EQ(w.f(kXe).vms.at(2).bindings.size(), 12u);
	json m = w.manifest();
	EXPECT_EQ(m["complete"], false);
	EXPECT_TRUE(has_reason(m, "file 1: xe VM_BIND on VM 2")) << m["incomplete_reasons"];
}

TEST(ModelXe, BindOnAVmNeverSeenCreated) {
	World w = xe_world();
	Xe x{w};
	x.gem_create(3, 0x10000);
	ASSERT_EQ(x.bind(7, {op(GW_XE_VM_BIND_OP_MAP, 3, 0, 0x10000, 0x100000)}), ApplyStatus::ok);
	EXPECT_EQ(w.f(kXe).vms.at(7).bindings.size(), 1u);
	EXPECT_FALSE(w.f(kXe).handles_known);
}

TEST(ModelXe, ABoundObjectOutlivesItsHandle) {
	World w = xe_world();
	Xe x{w};
	x.vm_create(2);
	x.gem_create(3, 0x10000);
	x.bind(2, {op(GW_XE_VM_BIND_OP_MAP, 3, 0, 0x10000, 0x100000)});
	uint64_t obj = w.f(kXe).handles.at(3).object;
	ASSERT_EQ(w.gem_close(100, kXe, 3), ApplyStatus::ok);
	EXPECT_TRUE(w.f(kXe).handles.empty());
	json m = w.manifest();
	EXPECT_EQ(m["objects"], (json::array({{{"id", obj}, {"size", 0x10000}, {"flink_name", nullptr}}})));
	json b = bindings(w, 2);
	ASSERT_EQ(b.size(), 1u);
	EXPECT_EQ(b[0]["handle"], nullptr);
	EXPECT_EQ(b[0]["object"], obj);
	EXPECT_NE(gw::format_manifest_summary(m).find("bind 0x100000 +0x10000 handle closed offset 0x0"), std::string::npos)
		<< gw::format_manifest_summary(m);
	// unbinding drops the last reference
	x.bind(2, {op(GW_XE_VM_BIND_OP_UNMAP, 0, 0, 0x10000, 0x100000)});
	EXPECT_TRUE(w.m.objects().empty());
}

TEST(ModelXe, DestroyingTheVmReleasesItsObjects) {
	World w = xe_world();
	Xe x{w};
	x.vm_create(2);
	x.gem_create(3, 0x10000);
	x.bind(2, {op(GW_XE_VM_BIND_OP_MAP, 3, 0, 0x10000, 0x100000)});
	w.gem_close(100, kXe, 3);
	ASSERT_EQ(w.m.objects().size(), 1u);
	ASSERT_EQ(x.vm_destroy(2), ApplyStatus::ok); // the kernel tears the VM's bindings down
	EXPECT_TRUE(w.m.objects().empty());
	EXPECT_EQ(w.manifest()["objects"], json::array());
}

// --- the manifest of both -----------------------------------------------------------------
World intel_scenario() {
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
	x.bind(1, {op(GW_XE_VM_BIND_OP_MAP, 3, 0x1000, 0x10000, 0x100000),
	           op(GW_XE_VM_BIND_OP_MAP_USERPTR, 0, 0x7f0000400000, 0x2000, 0x200000)});
	x.mmap_offset(3, kOff + 0x100000);
	w.mmap(100, kXe, A + 0x100000, 0x20000, kOff + 0x100000);
	return w;
}

TEST(ManifestIntel, ValidatesAndRoundTrips) {
	World w = intel_scenario();
	json m = w.manifest();
	EXPECT_EQ(m["complete"], true) << m["incomplete_reasons"];
	EXPECT_EQ(w.m.malformed_records(), 0u);
	EXPECT_NO_THROW(gw::validate_manifest(m));
	json back = json::parse(gw::serialize_manifest(m));
	EXPECT_NO_THROW(gw::validate_manifest(back));
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
	EXPECT_THROW(gw::validate_manifest(bad), gw::ManifestError);
	bad = m;
	bad["files"][1]["vms"][0].erase("bindings");
	EXPECT_THROW(gw::validate_manifest(bad), gw::ManifestError);
}

TEST(ManifestIntel, ShowMentionsTheDriverState) {
	World w = intel_scenario();
	std::string s = gw::format_manifest_summary(w.manifest());
	for (const char *part : {
		     "file 1: /dev/dri/renderD128 (226:128) driver i915 O_RDWR: 3 handles",
		     "handle 7: 65536 bytes, i915.gem_create_ext, object 1, placements device:0 system:0, pat 3",
		     "handle 1: 32768 bytes, i915.gem_create, object 2, tiling X stride 512",
		     "handle 4: 65536 bytes, i915.userptr, object 3, user memory at 0x7f0000200000",
		     "  context 0: vm own\n",
		     "  context 2: vm 1, engines {\"engines\":[{\"class\":0,\"instance\":0},{\"class\":1,\"instance\":0}]}, priority -512\n",
		     "  vm 1: flags 0x0, 0 bindings\n",
		     "file 2: /dev/dri/renderD129 (226:129) driver xe O_RDWR: 1 handle",
		     "  vm 1: flags 0x0, 2 bindings\n",
		     "    bind 0x100000 +0x10000 handle 3 offset 0x1000\n",
		     "    bind 0x200000 +0x2000 userptr 0x7f0000400000\n",
		     "  exec queue 9: vm 1, width 2, 2 placements\n",
		     "fd 12: i915 perf stream from PERF_OPEN on file 1 /dev/dri/renderD128",
		     "fd 15: out-fence (sync_file) from EXECBUFFER2_WR on file 1 /dev/dri/renderD128",
		     "map 0x7f0000000000-0x7f0000008000 rw shared file 1 /dev/dri/renderD128 offset 0x0 handle 1 via i915.gem_mmap",
		     "map 0x7f0000100000-0x7f0000120000 rw shared file 2 /dev/dri/renderD129 offset 0x100100000 handle 3\n",
	     })
		EXPECT_NE(s.find(part), std::string::npos) << "missing: " << part << "\nin:\n" << s;
}

} // namespace
