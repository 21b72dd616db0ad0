// i915 ioctl decoding: the argument (in/out) and the user memory it points to, captured as
// bpf/handlers.bpf.h does (records.hpp capture_ext), decoded into operations.
#include <gtest/gtest.h>

#include <i915_drm.h>

#include "records.hpp"
#include "uapi/i915_uapi_extra.h"

namespace
{

using namespace gw::drm;
using namespace gwtest;

constexpr uint64_t kFile = 0xffff888000a15000; // an i915 DRM file
constexpr uint64_t kArg = 0x7ffd00001000;      // the ioctl argument on the caller's stack
constexpr uint64_t kNode0 = 0x555500010000;    // extension nodes, 0x1000 apart
constexpr uint64_t kRegions = 0x555500020000;  // arrays behind pointers
constexpr uint64_t kArray2 = 0x555500030000;

uint64_t node(int i)
{
	return kNode0 + 0x1000 * uint64_t(i);
}

Op decode(const IntelCall &c)
{
	return decode_ioctl("i915", c.record());
}

// GEM_CREATE_EXT of 64 KiB returning handle 7, chain starting at `first` (0: none).
IntelCall create_ext(UserMem &mem, uint64_t first, uint32_t flags = 0)
{
	drm_i915_gem_create_ext in{}, out{};
	in.size = 65000;
	in.flags = flags;
	in.extensions = first;
	out = in;
	out.size = 65536; // rounded up by the kernel
	out.handle = 7;
	return intel_call(mem, 100, 3, kFile, GW_DRV_I915, DRM_IOCTL_I915_GEM_CREATE_EXT, kArg, in, out);
}

drm_i915_gem_create_ext_memory_regions regions_ext(uint64_t next, uint32_t n, uint64_t array)
{
	drm_i915_gem_create_ext_memory_regions r{};
	r.base.next_extension = next;
	r.base.name = I915_GEM_CREATE_EXT_MEMORY_REGIONS;
	r.num_regions = n;
	r.regions = array;
	return r;
}

// memory regions [device 0, system 0] -> protected content -> PAT index 3
void full_chain(UserMem &mem)
{
	put_i915_full_chain(mem, {node(0), node(1), node(2)}, kRegions, kRegions);
}

TEST(DecodeI915, GemCreate)
{
	drm_i915_gem_create in{4000, 0, 0}, out{4096, 5, 0};
	UserMem mem;
	auto c = intel_call(mem, 100, 3, kFile, GW_DRV_I915, DRM_IOCTL_I915_GEM_CREATE, kArg, in, out);
	EXPECT_FALSE(c.ext); // nothing behind the argument
	auto g = as<I915GemCreate>(decode(c));
	EXPECT_EQ(g.size, 4096u);
	EXPECT_EQ(g.handle, 5u);
	EXPECT_FALSE(g.ext);
	EXPECT_FALSE(g.truncated);
	EXPECT_TRUE(g.placements.empty());
}

TEST(DecodeI915, GemCreateExtRegionsProtectedAndPatInOneChain)
{
	UserMem mem;
	full_chain(mem);
	auto c = create_ext(mem, node(0), I915_GEM_CREATE_EXT_FLAG_NEEDS_CPU_ACCESS);
	// what the BPF side captured: three nodes, the regions array hanging off node 0
	ASSERT_TRUE(c.ext);
	EXPECT_EQ(c.ext->n_nodes, 3);
	EXPECT_EQ(c.ext->n_blobs, 1);
	EXPECT_EQ(c.ext->blobs[0].owner, 0);
	EXPECT_EQ(c.ext->blobs[0].len, 8u);
	EXPECT_EQ(c.ext->truncated, 0);

	auto g = as<I915GemCreate>(decode(c));
	EXPECT_TRUE(g.ext);
	EXPECT_EQ(g.handle, 7u);
	EXPECT_EQ(g.size, 65536u);
	EXPECT_EQ(g.flags, uint32_t{I915_GEM_CREATE_EXT_FLAG_NEEDS_CPU_ACCESS});
	ASSERT_EQ(g.placements.size(), 2u);
	EXPECT_EQ(g.placements[0].mem_class, I915_MEMORY_CLASS_DEVICE); // priority order kept
	EXPECT_EQ(g.placements[0].instance, 0);
	EXPECT_EQ(g.placements[1].mem_class, I915_MEMORY_CLASS_SYSTEM);
	EXPECT_TRUE(g.protected_content);
	ASSERT_TRUE(g.pat_index);
	EXPECT_EQ(*g.pat_index, 3u);
	EXPECT_TRUE(g.unknown_exts.empty());
	EXPECT_FALSE(g.truncated);
}

TEST(DecodeI915, GemCreateExtUnknownExtensionIsListed)
{
	UserMem mem;
	i915_user_extension odd{};
	odd.next_extension = node(1);
	odd.name = 0x77;
	mem.put(node(0), odd);
	mem.put(node(1), regions_ext(0, 1, kRegions));
	mem.put_array(kRegions, std::vector<drm_i915_gem_memory_class_instance>{{I915_MEMORY_CLASS_SYSTEM, 0}});
	auto c = create_ext(mem, node(0));
	ASSERT_TRUE(c.ext);
	EXPECT_EQ(c.ext->blobs[0].owner, 1); // the regions array belongs to node 1
	auto g = as<I915GemCreate>(decode(c));
	EXPECT_EQ(g.unknown_exts, std::vector<uint32_t>{0x77});
	ASSERT_EQ(g.placements.size(), 1u);
	EXPECT_EQ(g.placements[0].mem_class, I915_MEMORY_CLASS_SYSTEM);
	EXPECT_FALSE(g.protected_content);
	EXPECT_FALSE(g.pat_index);
	EXPECT_FALSE(g.truncated);
}

TEST(DecodeI915, GemCreateExtChainLongerThanCapturedIsTruncated)
{
	UserMem mem;
	for (int i = 0; i < GW_EXT_NODES_MAX + 1; ++i) { // nine PROTECTED_CONTENT nodes
		drm_i915_gem_create_ext_protected_content pc{};
		pc.base.next_extension = i < GW_EXT_NODES_MAX ? node(i + 1) : 0;
		pc.base.name = I915_GEM_CREATE_EXT_PROTECTED_CONTENT;
		mem.put(node(i), pc);
	}
	auto c = create_ext(mem, node(0));
	ASSERT_TRUE(c.ext);
	EXPECT_EQ(c.ext->n_nodes, GW_EXT_NODES_MAX);
	EXPECT_EQ(c.ext->truncated, 1);
	auto g = as<I915GemCreate>(decode(c));
	EXPECT_TRUE(g.truncated);
	EXPECT_TRUE(g.protected_content);
	EXPECT_EQ(g.handle, 7u);
}

TEST(DecodeI915, GemCreateExtUnreadableRegionsAreTruncated)
{
	UserMem mem;
	mem.put(node(0), regions_ext(0, 2, 0xdead0000)); // a pointer the BPF side cannot read
	auto c = create_ext(mem, node(0));
	ASSERT_TRUE(c.ext);
	EXPECT_EQ(c.ext->n_blobs, 0);
	auto g = as<I915GemCreate>(decode(c));
	EXPECT_TRUE(g.truncated);
	EXPECT_TRUE(g.placements.empty());
}

TEST(DecodeI915, GemCreateExtMissingRegionsBlobIsTruncatedEvenWithoutTheFlag)
{
	UserMem mem;
	full_chain(mem);
	auto c = create_ext(mem, node(0));
	ASSERT_TRUE(c.ext);
	c.ext->n_blobs = 0; // the decoder itself must notice the array is absent
	c.ext->truncated = 0;
	auto g = as<I915GemCreate>(decode(c));
	EXPECT_TRUE(g.truncated);
	EXPECT_TRUE(g.placements.empty());
	EXPECT_TRUE(g.protected_content); // the rest of the chain is still read
	ASSERT_TRUE(g.pat_index);
	EXPECT_EQ(*g.pat_index, 3u);

	// a blob shorter than num_regions entries: the placements it covers, then truncated
	c = create_ext(mem, node(0));
	c.ext->blobs[0].len = 4;
	auto h = as<I915GemCreate>(decode(c));
	EXPECT_TRUE(h.truncated);
	ASSERT_EQ(h.placements.size(), 1u);
	EXPECT_EQ(h.placements[0].mem_class, I915_MEMORY_CLASS_DEVICE);
}

TEST(DecodeI915, GemCreateExtWithoutItsExtRecord)
{
	UserMem mem;
	full_chain(mem);
	auto c = create_ext(mem, node(0));
	c.ext.reset(); // the chain was announced but not captured (lost record)
	auto g = as<I915GemCreate>(decode(c));
	EXPECT_TRUE(g.truncated);
	EXPECT_TRUE(g.placements.empty());

	auto plain = create_ext(mem, 0); // no chain announced: nothing missing
	ASSERT_TRUE(plain.ext);          // the BPF side still emits an (empty) record
	EXPECT_EQ(plain.ext->n_nodes, 0);
	EXPECT_FALSE(as<I915GemCreate>(decode(plain)).truncated);
	plain.ext.reset();
	EXPECT_FALSE(as<I915GemCreate>(decode(plain)).truncated);
}

TEST(DecodeI915, ExtRecordOfAnotherFileOrCommandIsNotUsed)
{
	UserMem mem;
	full_chain(mem);
	auto c = create_ext(mem, node(0));
	ASSERT_TRUE(c.ext);
	c.ext->file = kFile + 0x1000;
	auto g = as<I915GemCreate>(decode(c));
	EXPECT_TRUE(g.placements.empty());
	EXPECT_FALSE(g.protected_content);
	EXPECT_TRUE(g.truncated); // decoded as if the chain was not captured

	c = create_ext(mem, node(0));
	c.ext->cmd = DRM_IOCTL_I915_GEM_CONTEXT_CREATE_EXT;
	auto h = as<I915GemCreate>(decode(c));
	EXPECT_TRUE(h.placements.empty());
	EXPECT_FALSE(h.pat_index);
	EXPECT_TRUE(h.truncated);
}

TEST(DecodeI915, MmapGttAndMmapOffsetShareANumberAndDifferBySize)
{
	static_assert(_IOC_NR(DRM_IOCTL_I915_GEM_MMAP_GTT) == _IOC_NR(DRM_IOCTL_I915_GEM_MMAP_OFFSET));
	UserMem mem;
	drm_i915_gem_mmap_gtt gi{7, 0, 0}, go{7, 0, 0x100040000};
	auto gtt = decode(intel_call(mem, 100, 3, kFile, GW_DRV_I915, DRM_IOCTL_I915_GEM_MMAP_GTT, kArg, gi, go));
	auto g = as<I915MmapOffset>(gtt);
	EXPECT_TRUE(g.legacy_gtt);
	EXPECT_EQ(g.type, uint64_t{I915_MMAP_OFFSET_GTT});
	EXPECT_EQ(g.handle, 7u);
	EXPECT_EQ(g.offset, 0x100040000u);

	for (uint64_t type : {I915_MMAP_OFFSET_WC, I915_MMAP_OFFSET_WB, I915_MMAP_OFFSET_UC, I915_MMAP_OFFSET_FIXED}) {
		drm_i915_gem_mmap_offset oi{}, oo{};
		oi.handle = 7;
		oi.flags = type;
		oo = oi;
		oo.offset = 0x100080000 + type * 0x1000;
		auto op = decode(
			intel_call(mem, 100, 3, kFile, GW_DRV_I915, DRM_IOCTL_I915_GEM_MMAP_OFFSET, kArg, oi, oo));
		auto o = as<I915MmapOffset>(op);
		EXPECT_FALSE(o.legacy_gtt) << type;
		EXPECT_EQ(o.type, type);
		EXPECT_EQ(o.handle, 7u);
		EXPECT_EQ(o.offset, 0x100080000 + type * 0x1000);
	}
	EXPECT_EQ(ioctl_name("i915", DRM_IOCTL_I915_GEM_MMAP_GTT), "GEM_MMAP_GTT");
	EXPECT_EQ(ioctl_name("i915", DRM_IOCTL_I915_GEM_MMAP_OFFSET), "GEM_MMAP_OFFSET");
}

TEST(DecodeI915, LegacyGemMmapReturnsTheAddress)
{
	UserMem mem;
	drm_i915_gem_mmap in{}, out{};
	in.handle = 7;
	in.offset = 0x2000;
	in.size = 0x3000;
	in.flags = I915_MMAP_WC;
	out = in;
	out.addr_ptr = 0x7f1234560000;
	auto m = as<I915MmapLegacy>(
		decode(intel_call(mem, 100, 3, kFile, GW_DRV_I915, DRM_IOCTL_I915_GEM_MMAP, kArg, in, out)));
	EXPECT_EQ(m.handle, 7u);
	EXPECT_EQ(m.offset, 0x2000u);
	EXPECT_EQ(m.size, 0x3000u);
	EXPECT_EQ(m.addr, 0x7f1234560000u);
	EXPECT_EQ(m.flags, uint64_t{I915_MMAP_WC});
	out.addr_ptr = 0;
	auto bad = decode(intel_call(mem, 100, 3, kFile, GW_DRV_I915, DRM_IOCTL_I915_GEM_MMAP, kArg, in, out));
	EXPECT_TRUE(std::holds_alternative<Malformed>(bad));
}

TEST(DecodeI915, UserptrTilingCaching)
{
	UserMem mem;
	drm_i915_gem_userptr ui{0x7f0000200000, 0x10000, I915_USERPTR_READ_ONLY, 0}, uo = ui;
	uo.handle = 9;
	auto u = as<I915Userptr>(
		decode(intel_call(mem, 100, 3, kFile, GW_DRV_I915, DRM_IOCTL_I915_GEM_USERPTR, kArg, ui, uo)));
	EXPECT_EQ(u.user_ptr, 0x7f0000200000u);
	EXPECT_EQ(u.size, 0x10000u);
	EXPECT_EQ(u.flags, uint32_t{I915_USERPTR_READ_ONLY});
	EXPECT_EQ(u.handle, 9u);

	// the kernel writes back what it applied: the decoder takes mode, stride, swizzle from out
	drm_i915_gem_set_tiling ti{7, I915_TILING_Y, 1024, 0}, to{7, I915_TILING_X, 512, I915_BIT_6_SWIZZLE_9_10};
	auto t = as<I915SetTiling>(
		decode(intel_call(mem, 100, 3, kFile, GW_DRV_I915, DRM_IOCTL_I915_GEM_SET_TILING, kArg, ti, to)));
	EXPECT_EQ(t.handle, 7u);
	EXPECT_EQ(t.mode, uint32_t{I915_TILING_X});
	EXPECT_EQ(t.stride, 512u);
	EXPECT_EQ(t.swizzle, uint32_t{I915_BIT_6_SWIZZLE_9_10});

	drm_i915_gem_caching ci{7, I915_CACHING_CACHED};
	auto cc = as<I915SetCaching>(
		decode(intel_call(mem, 100, 3, kFile, GW_DRV_I915, DRM_IOCTL_I915_GEM_SET_CACHING, kArg, ci, ci)));
	EXPECT_EQ(cc.handle, 7u);
	EXPECT_EQ(cc.caching, uint32_t{I915_CACHING_CACHED});
}

TEST(DecodeI915, ContextCreateAndCreateExtAreChosenBySize)
{
	static_assert(_IOC_NR(DRM_IOCTL_I915_GEM_CONTEXT_CREATE) == _IOC_NR(DRM_IOCTL_I915_GEM_CONTEXT_CREATE_EXT));
	UserMem mem;
	drm_i915_gem_context_create ci{0, 0}, co{4, 0};
	auto c = intel_call(mem, 100, 3, kFile, GW_DRV_I915, DRM_IOCTL_I915_GEM_CONTEXT_CREATE, kArg, ci, co);
	EXPECT_FALSE(c.ext);
	auto a = as<I915ContextCreate>(decode(c));
	EXPECT_EQ(a.id, 4u);
	EXPECT_FALSE(a.ext);

	drm_i915_gem_context_create_ext ei{}, eo{};
	ei.flags = I915_CONTEXT_CREATE_FLAGS_SINGLE_TIMELINE;
	eo = ei;
	eo.ctx_id = 5;
	auto e = intel_call(mem, 100, 3, kFile, GW_DRV_I915, DRM_IOCTL_I915_GEM_CONTEXT_CREATE_EXT, kArg, ei, eo);
	EXPECT_FALSE(e.ext); // no USE_EXTENSIONS: nothing captured
	auto b = as<I915ContextCreate>(decode(e));
	EXPECT_EQ(b.id, 5u);
	EXPECT_TRUE(b.ext);
	EXPECT_EQ(b.flags, uint32_t{I915_CONTEXT_CREATE_FLAGS_SINGLE_TIMELINE});
	EXPECT_TRUE(b.params.empty());
	EXPECT_FALSE(b.truncated);
}

drm_i915_gem_context_create_ext_setparam setparam(uint64_t next, uint64_t param, uint64_t value, uint32_t size = 0)
{
	drm_i915_gem_context_create_ext_setparam sp{};
	sp.base.next_extension = next;
	sp.base.name = I915_CONTEXT_CREATE_EXT_SETPARAM;
	sp.param.param = param;
	sp.param.value = value;
	sp.param.size = size;
	return sp;
}

// VM 2 -> priority -512 -> engines [render 0, copy 0] -> CLONE (unknown)
IntelCall context_with_params(UserMem &mem)
{
	mem.put(node(0), setparam(node(1), I915_CONTEXT_PARAM_VM, 2));
	mem.put(node(1), setparam(node(2), I915_CONTEXT_PARAM_PRIORITY, static_cast<uint64_t>(int64_t{-512})));
	I915_DEFINE_CONTEXT_PARAM_ENGINES(engines, 2);
	engines.extensions = 0;
	engines.engines[0] = {I915_ENGINE_CLASS_RENDER, 0};
	engines.engines[1] = {I915_ENGINE_CLASS_COPY, 0};
	mem.put(kArray2, engines);
	mem.put(node(2), setparam(node(3), I915_CONTEXT_PARAM_ENGINES, kArray2, sizeof engines));
	i915_user_extension clone{};
	clone.name = I915_CONTEXT_CREATE_EXT_CLONE;
	mem.put(node(3), clone);
	drm_i915_gem_context_create_ext in{}, out{};
	in.flags = I915_CONTEXT_CREATE_FLAGS_USE_EXTENSIONS;
	in.extensions = node(0);
	out = in;
	out.ctx_id = 6;
	return intel_call(mem, 100, 3, kFile, GW_DRV_I915, DRM_IOCTL_I915_GEM_CONTEXT_CREATE_EXT, kArg, in, out);
}

TEST(DecodeI915, ContextCreateExtSetparamVmPriorityEngines)
{
	UserMem mem;
	auto c = context_with_params(mem);
	ASSERT_TRUE(c.ext);
	EXPECT_EQ(c.ext->n_nodes, 4);
	ASSERT_EQ(c.ext->n_blobs, 1); // only ENGINES has a size
	EXPECT_EQ(c.ext->blobs[0].owner, 2);
	EXPECT_EQ(c.ext->blobs[0].len, 16u);

	auto x = as<I915ContextCreate>(decode(c));
	EXPECT_EQ(x.id, 6u);
	EXPECT_TRUE(x.ext);
	EXPECT_FALSE(x.truncated);
	ASSERT_EQ(x.params.size(), 3u);
	EXPECT_EQ(x.params[0].param, uint64_t{I915_CONTEXT_PARAM_VM});
	EXPECT_EQ(x.params[0].value, 2u);
	EXPECT_FALSE(x.params[0].data);
	EXPECT_EQ(x.params[1].param, uint64_t{I915_CONTEXT_PARAM_PRIORITY});
	EXPECT_EQ(static_cast<int64_t>(x.params[1].value), -512);
	EXPECT_EQ(x.params[2].param, uint64_t{I915_CONTEXT_PARAM_ENGINES});
	EXPECT_EQ(x.params[2].size, 16u);
	ASSERT_TRUE(x.params[2].data);
	EXPECT_EQ(*x.params[2].data, (std::vector<uint8_t>{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}));
	EXPECT_EQ(x.unknown_exts, std::vector<uint32_t>{I915_CONTEXT_CREATE_EXT_CLONE});
}

TEST(DecodeI915, ContextCreateExtEnginesNotCapturedIsTruncated)
{
	UserMem mem;
	auto c = context_with_params(mem);
	ASSERT_TRUE(c.ext);
	c.ext->n_blobs = 0;
	auto x = as<I915ContextCreate>(decode(c));
	EXPECT_TRUE(x.truncated);
	ASSERT_EQ(x.params.size(), 3u);
	EXPECT_FALSE(x.params[2].data);
	EXPECT_EQ(x.params[2].size, 16u);
}

TEST(DecodeI915, ContextDestroySetparamVmCreateDestroy)
{
	UserMem mem;
	drm_i915_gem_context_destroy d{6, 0};
	EXPECT_EQ(as<I915ContextDestroy>(decode(intel_call(mem, 100, 3, kFile, GW_DRV_I915,
							   DRM_IOCTL_I915_GEM_CONTEXT_DESTROY, kArg, d, d)))
			  .id,
		  6u);

	drm_i915_gem_context_param p{};
	p.ctx_id = 6;
	p.param = I915_CONTEXT_PARAM_VM;
	p.value = 3;
	auto sc = intel_call(mem, 100, 3, kFile, GW_DRV_I915, DRM_IOCTL_I915_GEM_CONTEXT_SETPARAM, kArg, p, p);
	EXPECT_FALSE(sc.ext); // size 0: no user memory behind it
	auto s = as<I915ContextSetParam>(decode(sc));
	EXPECT_EQ(s.p.ctx_id, 6u);
	EXPECT_EQ(s.p.param, uint64_t{I915_CONTEXT_PARAM_VM});
	EXPECT_EQ(s.p.value, 3u);
	EXPECT_FALSE(s.truncated);

	// a parameter with a size: its bytes come from the blob at value, owned by the argument
	uint32_t sseu[4] = {0x11, 0x22, 0x33, 0x44};
	mem.put(kArray2, sseu);
	p.param = I915_CONTEXT_PARAM_SSEU;
	p.value = kArray2;
	p.size = sizeof sseu;
	auto sb = intel_call(mem, 100, 3, kFile, GW_DRV_I915, DRM_IOCTL_I915_GEM_CONTEXT_SETPARAM, kArg, p, p);
	ASSERT_TRUE(sb.ext);
	EXPECT_EQ(sb.ext->blobs[0].owner, GW_EXT_OWNER_ARG);
	auto s2 = as<I915ContextSetParam>(decode(sb));
	ASSERT_TRUE(s2.p.data);
	EXPECT_EQ(s2.p.data->size(), 16u);
	EXPECT_EQ((*s2.p.data)[4], 0x22);
	EXPECT_FALSE(s2.truncated);
	sb.ext.reset();
	EXPECT_TRUE(as<I915ContextSetParam>(decode(sb)).truncated);

	drm_i915_gem_vm_control vi{}, vo{};
	vo.vm_id = 2;
	auto vc = intel_call(mem, 100, 3, kFile, GW_DRV_I915, DRM_IOCTL_I915_GEM_VM_CREATE, kArg, vi, vo);
	auto v = as<I915VmCreate>(decode(vc));
	EXPECT_EQ(v.id, 2u);
	EXPECT_FALSE(v.has_exts);
	drm_i915_gem_vm_control vd{};
	vd.vm_id = 2;
	EXPECT_EQ(as<I915VmDestroy>(decode(intel_call(mem, 100, 3, kFile, GW_DRV_I915, DRM_IOCTL_I915_GEM_VM_DESTROY,
						      kArg, vd, vd)))
			  .id,
		  2u);
}

TEST(DecodeI915, PerfOpenReturnsTheStreamFd)
{
	UserMem mem;
	uint64_t props[3][2] = {{DRM_I915_PERF_PROP_SAMPLE_OA, 1},
				{DRM_I915_PERF_PROP_OA_METRICS_SET, 42},
				{DRM_I915_PERF_PROP_OA_FORMAT, I915_OA_FORMAT_A32u40_A4u32_B8_C8}};
	mem.put(kArray2, props);
	drm_i915_perf_open_param in{I915_PERF_FLAG_FD_CLOEXEC, 3, kArray2};
	auto c = intel_call(mem, 100, 3, kFile, GW_DRV_I915, DRM_IOCTL_I915_PERF_OPEN, kArg, in, in, 12);
	ASSERT_TRUE(c.ext);
	EXPECT_EQ(c.ext->blobs[0].len, 48u);
	auto p = as<I915PerfOpen>(decode(c));
	EXPECT_EQ(p.fd, 12);
	EXPECT_EQ(p.flags, uint32_t{I915_PERF_FLAG_FD_CLOEXEC});
	ASSERT_EQ(p.properties.size(), 3u);
	EXPECT_EQ(p.properties[1], (std::pair<uint64_t, uint64_t>{DRM_I915_PERF_PROP_OA_METRICS_SET, 42}));
	EXPECT_FALSE(p.truncated);

	c.ext.reset();
	auto q = as<I915PerfOpen>(decode(c));
	EXPECT_TRUE(q.truncated);
	EXPECT_TRUE(q.properties.empty());

	auto neg = intel_call(mem, 100, 3, kFile, GW_DRV_I915, DRM_IOCTL_I915_PERF_OPEN, kArg, in, in, -1);
	EXPECT_TRUE(std::holds_alternative<Malformed>(decode(neg)));
}

TEST(DecodeI915, ExecbufferWrWithFenceOutOnly)
{
	UserMem mem;
	drm_i915_gem_execbuffer2 in{}, out{};
	in.buffer_count = 1;
	in.flags = I915_EXEC_RENDER | I915_EXEC_FENCE_OUT;
	in.rsvd1 = 6; // context
	out = in;
	out.rsvd2 = uint64_t{15} << 32; // the out-fence fd in the upper half
	auto f = as<I915ExecFence>(
		decode(intel_call(mem, 100, 3, kFile, GW_DRV_I915, DRM_IOCTL_I915_GEM_EXECBUFFER2_WR, kArg, in, out)));
	EXPECT_EQ(f.fd, 15);
	EXPECT_EQ(f.ctx_id, 6u);
	EXPECT_EQ(f.flags, uint64_t{I915_EXEC_RENDER | I915_EXEC_FENCE_OUT});

	in.flags = out.flags = I915_EXEC_RENDER;
	auto nofence =
		decode(intel_call(mem, 100, 3, kFile, GW_DRV_I915, DRM_IOCTL_I915_GEM_EXECBUFFER2_WR, kArg, in, out));
	EXPECT_TRUE(std::holds_alternative<Ignored>(nofence));

	// EXECBUFFER2 (write-only) shares the number: never an out-fence
	in.flags = out.flags = I915_EXEC_RENDER | I915_EXEC_FENCE_OUT;
	auto plain = decode(intel_call(mem, 100, 3, kFile, GW_DRV_I915, DRM_IOCTL_I915_GEM_EXECBUFFER2, kArg, in, out));
	ASSERT_TRUE(std::holds_alternative<Ignored>(plain));
	EXPECT_EQ(std::get<Ignored>(plain).nr, uint32_t{_IOC_NR(DRM_IOCTL_I915_GEM_EXECBUFFER2)});
}

TEST(DecodeI915, I915NumbersMeanNothingOnAnXeFile)
{
	UserMem mem;
	full_chain(mem);
	auto c = create_ext(mem, node(0));
	EXPECT_TRUE(std::holds_alternative<Ignored>(decode_ioctl("xe", c.record())));
	EXPECT_TRUE(std::holds_alternative<Ignored>(decode_ioctl("", c.record())));
}

} // namespace
