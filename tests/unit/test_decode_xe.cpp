// xe ioctl decoding. No xe hardware or driver is available to the other test layers: these
// tests are xe's only coverage. Arguments are built from user/uapi/xe_uapi.h and the user
// memory they point to is captured as bpf/handlers.bpf.h does (records.hpp capture_ext).
#include <gtest/gtest.h>

#include "records.hpp"
#include "uapi/xe_uapi.h"

namespace
{

using namespace gw::drm;
using namespace gwtest;

constexpr uint64_t kFile = 0xffff888000e0e000; // an xe DRM file
constexpr uint64_t kArg = 0x7ffd00002000;      // the ioctl argument
constexpr uint64_t kNode = 0x555500040000;     // an extension node
constexpr uint64_t kArray = 0x555500050000;    // an array behind a pointer

Op decode(const IntelCall &c)
{
	return decode_ioctl("xe", c.record());
}

IntelCall vm_bind(UserMem &mem, uint32_t vm, const std::vector<gw_xe_vm_bind_op> &ops)
{
	gw_xe_vm_bind in{};
	in.vm_id = vm;
	in.exec_queue_id = 0;
	in.num_binds = static_cast<uint32_t>(ops.size());
	if (ops.size() == 1)
		in.bind = ops[0];
	else
		in.vector_of_binds = mem.put_array(kArray, ops);
	return intel_call(mem, 100, 3, kFile, GW_DRV_XE, GW_XE_IOCTL_VM_BIND, kArg, in, in);
}

TEST(DecodeXe, GemCreateWithASetPropertyExtension)
{
	UserMem mem;
	gw_xe_ext_set_property pxp{};
	pxp.base.name = GW_XE_GEM_CREATE_EXTENSION_SET_PROPERTY;
	pxp.property = GW_XE_GEM_CREATE_SET_PROPERTY_PXP_TYPE;
	pxp.value = GW_XE_PXP_TYPE_HWDRM;
	mem.put(kNode, pxp);
	gw_xe_gem_create in{}, out{};
	in.extensions = kNode;
	in.size = 0x200000;
	in.placement = GW_XE_GEM_PLACEMENT_BIT(1) | GW_XE_GEM_PLACEMENT_BIT(0);
	in.flags = GW_XE_GEM_CREATE_FLAG_SCANOUT;
	in.vm_id = 4;
	in.cpu_caching = GW_XE_GEM_CPU_CACHING_WC;
	out = in;
	out.handle = 3;
	auto c = intel_call(mem, 100, 3, kFile, GW_DRV_XE, GW_XE_IOCTL_GEM_CREATE, kArg, in, out);
	ASSERT_TRUE(c.ext);
	EXPECT_EQ(c.ext->n_nodes, 1);
	EXPECT_EQ(c.ext->nodes[0].uaddr, kNode);
	auto g = as<XeGemCreate>(decode(c));
	EXPECT_EQ(g.size, 0x200000u);
	EXPECT_EQ(g.placement, 3u);
	EXPECT_EQ(g.flags, uint32_t{GW_XE_GEM_CREATE_FLAG_SCANOUT});
	EXPECT_EQ(g.vm_id, 4u);
	EXPECT_EQ(g.cpu_caching, GW_XE_GEM_CPU_CACHING_WC);
	EXPECT_EQ(g.handle, 3u);
	ASSERT_EQ(g.exts.size(), 1u);
	EXPECT_EQ(g.exts[0].name, uint32_t{GW_XE_GEM_CREATE_EXTENSION_SET_PROPERTY});
	EXPECT_EQ(g.exts[0].property, uint32_t{GW_XE_GEM_CREATE_SET_PROPERTY_PXP_TYPE});
	EXPECT_EQ(g.exts[0].value, uint64_t{GW_XE_PXP_TYPE_HWDRM});
	EXPECT_FALSE(g.truncated);

	c.ext.reset(); // announced, not captured
	auto t = as<XeGemCreate>(decode(c));
	EXPECT_TRUE(t.truncated);
	EXPECT_TRUE(t.exts.empty());
	EXPECT_EQ(t.handle, 3u);
}

TEST(DecodeXe, GemMmapOffset)
{
	UserMem mem;
	gw_xe_gem_mmap_offset in{}, out{};
	in.handle = 3;
	out = in;
	out.offset = 0x1000a0000;
	auto m = as<XeMmapOffset>(
		decode(intel_call(mem, 100, 3, kFile, GW_DRV_XE, GW_XE_IOCTL_GEM_MMAP_OFFSET, kArg, in, out)));
	EXPECT_EQ(m.handle, 3u);
	EXPECT_EQ(m.flags, 0u);
	EXPECT_EQ(m.offset, 0x1000a0000u);
}

TEST(DecodeXe, VmCreateAndDestroy)
{
	UserMem mem;
	gw_xe_vm_create in{}, out{};
	in.flags = GW_XE_VM_CREATE_FLAG_LR_MODE | GW_XE_VM_CREATE_FLAG_SCRATCH_PAGE;
	out = in;
	out.vm_id = 2;
	auto c = intel_call(mem, 100, 3, kFile, GW_DRV_XE, GW_XE_IOCTL_VM_CREATE, kArg, in, out);
	ASSERT_TRUE(c.ext); // an empty chain record
	EXPECT_EQ(c.ext->n_nodes, 0);
	auto v = as<XeVmCreate>(decode(c));
	EXPECT_EQ(v.id, 2u);
	EXPECT_EQ(v.flags, uint32_t{GW_XE_VM_CREATE_FLAG_LR_MODE | GW_XE_VM_CREATE_FLAG_SCRATCH_PAGE});
	EXPECT_TRUE(v.exts.empty());
	EXPECT_FALSE(v.truncated);
	gw_xe_vm_destroy d{};
	d.vm_id = 2;
	auto dc = intel_call(mem, 100, 3, kFile, GW_DRV_XE, GW_XE_IOCTL_VM_DESTROY, kArg, d, d);
	EXPECT_FALSE(dc.ext);
	EXPECT_EQ(as<XeVmDestroy>(decode(dc)).id, 2u);
}

gw_xe_exec_queue_create queue_arg(uint64_t instances)
{
	gw_xe_exec_queue_create q{};
	q.width = 2;
	q.num_placements = 2;
	q.vm_id = 2;
	q.flags = GW_XE_EXEC_QUEUE_LOW_LATENCY_HINT;
	q.instances = instances;
	return q;
}

TEST(DecodeXe, ExecQueueCreateTakesWidthTimesPlacementsInstances)
{
	UserMem mem;
	// [placement][width]: render 0 / render 1 on gt 0, ccs 0 / ccs 1 on gt 1
	mem.put_array(kArray, std::vector<gw_xe_engine_class_instance>{{GW_XE_ENGINE_CLASS_RENDER, 0, 0, 0},
								       {GW_XE_ENGINE_CLASS_RENDER, 1, 0, 0},
								       {GW_XE_ENGINE_CLASS_COMPUTE, 0, 1, 0},
								       {GW_XE_ENGINE_CLASS_COMPUTE, 1, 1, 0}});
	auto in = queue_arg(kArray), out = in;
	out.exec_queue_id = 9;
	auto c = intel_call(mem, 100, 3, kFile, GW_DRV_XE, GW_XE_IOCTL_EXEC_QUEUE_CREATE, kArg, in, out);
	ASSERT_TRUE(c.ext);
	ASSERT_EQ(c.ext->n_blobs, 1);
	EXPECT_EQ(c.ext->blobs[0].len, 32u);
	EXPECT_EQ(c.ext->blobs[0].owner, GW_EXT_OWNER_ARG);
	auto q = as<XeExecQueueCreate>(decode(c));
	EXPECT_EQ(q.id, 9u);
	EXPECT_EQ(q.vm_id, 2u);
	EXPECT_EQ(q.width, 2);
	EXPECT_EQ(q.num_placements, 2);
	EXPECT_EQ(q.flags, uint32_t{GW_XE_EXEC_QUEUE_LOW_LATENCY_HINT});
	ASSERT_EQ(q.instances.size(), 4u);
	EXPECT_EQ(q.instances[1].engine_class, GW_XE_ENGINE_CLASS_RENDER);
	EXPECT_EQ(q.instances[1].instance, 1);
	EXPECT_EQ(q.instances[2].engine_class, GW_XE_ENGINE_CLASS_COMPUTE);
	EXPECT_EQ(q.instances[3].instance, 1);
	EXPECT_EQ(q.instances[3].gt, 1);
	EXPECT_FALSE(q.truncated);
}

TEST(DecodeXe, ExecQueueCreateWithoutItsInstancesIsTruncated)
{
	UserMem mem;
	auto in = queue_arg(0xdead0000), out = in; // unreadable: no blob
	out.exec_queue_id = 9;
	auto c = intel_call(mem, 100, 3, kFile, GW_DRV_XE, GW_XE_IOCTL_EXEC_QUEUE_CREATE, kArg, in, out);
	ASSERT_TRUE(c.ext);
	EXPECT_EQ(c.ext->n_blobs, 0);
	auto q = as<XeExecQueueCreate>(decode(c));
	EXPECT_TRUE(q.truncated);
	EXPECT_TRUE(q.instances.empty());
	EXPECT_EQ(q.id, 9u);
	c.ext.reset(); // no ext record at all: the same
	EXPECT_TRUE(as<XeExecQueueCreate>(decode(c)).truncated);

	gw_xe_exec_queue_destroy d{};
	d.exec_queue_id = 9;
	EXPECT_EQ(as<XeExecQueueDestroy>(
			  decode(intel_call(mem, 100, 3, kFile, GW_DRV_XE, GW_XE_IOCTL_EXEC_QUEUE_DESTROY, kArg, d, d)))
			  .id,
		  9u);
}

TEST(DecodeXe, VmBindOneInlineOpIsCapturedAtTheArgumentsOwnAddress)
{
	UserMem mem;
	auto c = vm_bind(
		mem, 2,
		{xe_bind_op(GW_XE_VM_BIND_OP_MAP, 3, 0x1000, 0x10000, 0x1a0000, 5, GW_XE_VM_BIND_FLAG_DUMPABLE)});
	EXPECT_EQ(c.ev.arg_size, GW_IOCTL_ARG_MAX); // 136 bytes: only the head is in the record
	ASSERT_TRUE(c.ext);
	ASSERT_EQ(c.ext->n_blobs, 1);
	EXPECT_EQ(c.ext->blobs[0].owner, GW_EXT_OWNER_ARG);
	EXPECT_EQ(c.ext->blobs[0].uaddr, kArg + 24);
	EXPECT_EQ(c.ext->blobs[0].len, 80u);
	auto b = as<XeVmBind>(decode(c));
	EXPECT_EQ(b.vm_id, 2u);
	EXPECT_EQ(b.num_binds, 1u);
	EXPECT_FALSE(b.truncated);
	ASSERT_EQ(b.binds.size(), 1u);
	EXPECT_EQ(b.binds[0].op, uint32_t{GW_XE_VM_BIND_OP_MAP});
	EXPECT_EQ(b.binds[0].obj, 3u);
	EXPECT_EQ(b.binds[0].obj_offset, 0x1000u);
	EXPECT_EQ(b.binds[0].range, 0x10000u);
	EXPECT_EQ(b.binds[0].addr, 0x1a0000u);
	EXPECT_EQ(b.binds[0].pat_index, 5);
	EXPECT_EQ(b.binds[0].flags, uint32_t{GW_XE_VM_BIND_FLAG_DUMPABLE});

	c.ext.reset();
	auto t = as<XeVmBind>(decode(c));
	EXPECT_TRUE(t.truncated);
	EXPECT_TRUE(t.binds.empty());
}

TEST(DecodeXe, VmBindVectorOfOps)
{
	UserMem mem;
	auto c = vm_bind(mem, 2,
			 {xe_bind_op(GW_XE_VM_BIND_OP_MAP, 3, 0, 0x10000, 0x100000),
			  xe_bind_op(GW_XE_VM_BIND_OP_MAP_USERPTR, 0, 0x7f0000400000, 0x2000, 0x200000),
			  xe_bind_op(GW_XE_VM_BIND_OP_UNMAP, 0, 0, 0x4000, 0x104000)});
	ASSERT_TRUE(c.ext);
	EXPECT_EQ(c.ext->blobs[0].uaddr, kArray);
	EXPECT_EQ(c.ext->blobs[0].len, 240u);
	auto b = as<XeVmBind>(decode(c));
	EXPECT_EQ(b.num_binds, 3u);
	EXPECT_FALSE(b.truncated);
	ASSERT_EQ(b.binds.size(), 3u);
	EXPECT_EQ(b.binds[1].op, uint32_t{GW_XE_VM_BIND_OP_MAP_USERPTR});
	EXPECT_EQ(b.binds[1].obj_offset, 0x7f0000400000u); // the user address
	EXPECT_EQ(b.binds[2].op, uint32_t{GW_XE_VM_BIND_OP_UNMAP});
	EXPECT_EQ(b.binds[2].addr, 0x104000u);
	EXPECT_EQ(b.binds[2].range, 0x4000u);

	// a blob at another address than vector_of_binds is not these ops
	c.ext->blobs[0].uaddr = kArray + 80;
	auto t = as<XeVmBind>(decode(c));
	EXPECT_TRUE(t.truncated);
	EXPECT_TRUE(t.binds.empty());
}

TEST(DecodeXe, VmBindOfMoreOpsThanTheBlobHoldsIsTruncated)
{
	UserMem mem;
	std::vector<gw_xe_vm_bind_op> ops;
	for (uint64_t i = 0; i < 20; ++i)
		ops.push_back(xe_bind_op(GW_XE_VM_BIND_OP_MAP, 3, 0, 0x1000, 0x100000 + i * 0x1000));
	auto c = vm_bind(mem, 2, ops);
	ASSERT_TRUE(c.ext);
	EXPECT_EQ(c.ext->truncated, 1);
	EXPECT_EQ(c.ext->blobs[0].len, uint32_t{GW_EXT_BLOB_SIZE});
	auto b = as<XeVmBind>(decode(c));
	EXPECT_EQ(b.num_binds, 20u);
	EXPECT_TRUE(b.truncated);
	ASSERT_EQ(b.binds.size(), GW_EXT_BLOB_SIZE / sizeof(gw_xe_vm_bind_op)); // 12 whole ops
	EXPECT_EQ(b.binds[11].addr, 0x100000u + 11 * 0x1000);
}

TEST(DecodeXe, CommandsAndNumbers)
{
	EXPECT_EQ(ioctl_name("xe", GW_XE_IOCTL_VM_BIND), "VM_BIND");
	EXPECT_EQ(ioctl_name("xe", GW_XE_IOCTL_EXEC_QUEUE_CREATE), "EXEC_QUEUE_CREATE");
	EXPECT_EQ(ioctl_name("xe", GW_XE_IOCTL_EXEC), "EXEC"); // not decoded: changes no state
	EXPECT_TRUE(is_quiet("xe", _IOC_NR(GW_XE_IOCTL_EXEC)));
	// xe's numbers on an i915 file are i915's: GEM_CREATE (0x41) is not decoded there
	UserMem mem;
	gw_xe_gem_create in{}, out{};
	out.handle = 3;
	auto c = intel_call(mem, 100, 3, kFile, GW_DRV_XE, GW_XE_IOCTL_GEM_CREATE, kArg, in, out);
	EXPECT_TRUE(std::holds_alternative<XeGemCreate>(decode_ioctl("xe", c.record())));
	EXPECT_FALSE(std::holds_alternative<XeGemCreate>(decode_ioctl("i915", c.record())));
	// a wrong direction on a shared number is not the xe ioctl
	auto wr = c;
	wr.ev.cmd = _IOW('d', 0x40 + GW_XE_NR_GEM_CREATE, gw_xe_gem_create);
	EXPECT_TRUE(std::holds_alternative<Ignored>(decode_ioctl("xe", wr.record())));
}

} // namespace
