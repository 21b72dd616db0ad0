// GEM state of a file: dumb buffers, GEM_CLOSE, flink/open, PRIME, syncobjs, client caps,
// and ioctls on state the model never saw created.
#include <gtest/gtest.h>

#include "records.hpp"

namespace
{

using namespace gwtest;
using json = nlohmann::json;

TEST(ModelGem, DumbCreateMapDestroy)
{
	World w;
	w.proc(100);
	w.open(100, 3, kCard);
	ASSERT_EQ(w.create_dumb(100, kCard, 1, 64, 32), ApplyStatus::ok);
	const gw::Handle &h = w.f(kCard).handles.at(1);
	EXPECT_EQ(h.origin(), "dumb");
	EXPECT_EQ(h.params(), (json{{"width", 64}, {"height", 32}, {"bpp", 32}, {"flags", 0}, {"pitch", 256}}));
	EXPECT_EQ(w.m.objects().at(h.object).size, 8192u);
	ASSERT_EQ(w.map_dumb(100, kCard, 1, kFake), ApplyStatus::ok);
	EXPECT_EQ(w.f(kCard).mmap_offsets.at(kFake).handle, 1u);
	ASSERT_EQ(w.destroy_dumb(100, kCard, 1), ApplyStatus::ok);
	EXPECT_TRUE(w.f(kCard).handles.empty());
	EXPECT_TRUE(w.f(kCard).mmap_offsets.empty());
	EXPECT_TRUE(w.m.objects().empty());
	EXPECT_TRUE(w.f(kCard).handles_known);
}

// The same calls as the fexit path records them (GW_EV_IOCTL_AFTER, the argument once, after
// the call): the same model
TEST(ModelGem, DumbCreateMapDestroyFromFexitRecords)
{
	World w;
	w.proc(100);
	w.open(100, 3, kCard);
	ASSERT_EQ(w.apply(after_rec(create_dumb_rec(100, 3, kCard, 1, 64, 32))), ApplyStatus::ok);
	const gw::Handle &h = w.f(kCard).handles.at(1);
	EXPECT_EQ(h.origin(), "dumb");
	EXPECT_EQ(h.params(), (json{{"width", 64}, {"height", 32}, {"bpp", 32}, {"flags", 0}, {"pitch", 256}}));
	EXPECT_EQ(w.m.objects().at(h.object).size, 8192u);
	ASSERT_EQ(w.apply(after_rec(map_dumb_rec(100, 3, kCard, 1, kFake))), ApplyStatus::ok);
	EXPECT_EQ(w.f(kCard).mmap_offsets.at(kFake).handle, 1u);
	drm_mode_destroy_dumb d{1};
	ASSERT_EQ(w.apply(after_rec(ioctl_rec(100, 3, kCard, DRM_IOCTL_MODE_DESTROY_DUMB, d, d))), ApplyStatus::ok);
	EXPECT_TRUE(w.f(kCard).handles.empty());
	EXPECT_TRUE(w.m.objects().empty());
}

TEST(ModelGem, GemCloseRemovesHandleAndGrants)
{
	World w;
	w.proc(100);
	w.open(100, 3, kCard);
	w.create_dumb(100, kCard, 1);
	w.create_dumb(100, kCard, 2);
	w.map_dumb(100, kCard, 2, kFake);
	ASSERT_EQ(w.gem_close(100, kCard, 2), ApplyStatus::ok);
	EXPECT_EQ(w.f(kCard).handles.size(), 1u);
	EXPECT_EQ(w.f(kCard).handles.count(1), 1u);
	EXPECT_TRUE(w.f(kCard).mmap_offsets.empty());
	EXPECT_EQ(w.m.objects().size(), 1u);
}

// A dumb buffer's flags (none is defined, so the kernel's 0) are kept out of line when not
// 0; a grant that is not a page's offset is kept as "many" (closing the handle scans).
TEST(ModelGem, DumbFlagsAndOddGrantsSurviveTheCompactHandle)
{
	World w;
	w.proc(100);
	w.open(100, 3, kCard);
	drm_mode_create_dumb in{}, out{};
	in.width = 16, in.height = 8, in.bpp = 32, in.flags = 0x80000001u;
	out = in;
	out.handle = 1, out.pitch = 64, out.size = 512;
	ASSERT_EQ(w.apply(ioctl_rec(100, 3, kCard, DRM_IOCTL_MODE_CREATE_DUMB, in, out)), ApplyStatus::ok);
	EXPECT_EQ(w.f(kCard).handles.at(1).params(),
		  (json{{"width", 16}, {"height", 8}, {"bpp", 32}, {"flags", 0x80000001u}, {"pitch", 64}}));
	w.create_dumb(100, kCard, 2);
	for (uint64_t off : {kFake + 1, kFake + (uint64_t{0xffffffff} << 12), uint64_t{0x1000}}) {
		ASSERT_EQ(w.map_dumb(100, kCard, 2, off), ApplyStatus::ok);
		EXPECT_EQ(w.f(kCard).mmap_offsets.at(off).handle, 2u);
	}
	ASSERT_EQ(w.map_dumb(100, kCard, 1, kFake + 0x100000), ApplyStatus::ok);
	EXPECT_EQ(w.f(kCard).handles.at(1).grant(), kFake + 0x100000);
	ASSERT_EQ(w.gem_close(100, kCard, 2), ApplyStatus::ok);
	ASSERT_EQ(w.f(kCard).mmap_offsets.size(), 1u);
	EXPECT_EQ(w.f(kCard).mmap_offsets.at(kFake + 0x100000).handle, 1u);
	ASSERT_EQ(w.gem_close(100, kCard, 1), ApplyStatus::ok);
	EXPECT_TRUE(w.f(kCard).mmap_offsets.empty());
}

TEST(ModelGem, FlinkThenOpenSharesTheObject)
{
	World w;
	w.proc(100);
	w.proc(200);
	w.open(100, 3, kCard);
	w.open(200, 3, kCard2); // another open of card0
	w.create_dumb(100, kCard, 1, 64, 64);
	ASSERT_EQ(w.flink(100, kCard, 1, 5), ApplyStatus::ok);
	EXPECT_EQ(w.f(kCard).handles.at(1).flink_name(), 5u);
	ASSERT_EQ(w.gem_open(200, kCard2, 5, 1, 16384), ApplyStatus::ok);
	const gw::Handle &h = w.f(kCard2).handles.at(1);
	EXPECT_EQ(h.origin(), "flink");
	EXPECT_EQ(h.object, w.f(kCard).handles.at(1).object);
	EXPECT_EQ(h.params(), (json{{"name", 5}}));
	w.gem_open(200, kCard2, 5, 2, 16384); // GEM_OPEN always makes a new handle
	EXPECT_EQ(w.f(kCard2).handles.at(2).object, h.object);
	EXPECT_EQ(w.m.objects().size(), 1u);
	auto files = w.manifest()["files"];
	EXPECT_EQ(files[0]["handles"][0]["flink_name"], 5);
	EXPECT_EQ(files[1]["handles"][1]["flink_name"], 5);
	EXPECT_EQ(files[1]["handles"][1]["size"], 16384);
}

TEST(ModelGem, OpenOfUnknownNameMakesAnObjectOfThatSize)
{
	World w;
	w.proc(100);
	w.open(100, 3, kCard);
	ASSERT_EQ(w.gem_open(100, kCard, 9, 1, 65536), ApplyStatus::ok);
	EXPECT_EQ(w.m.objects().at(w.f(kCard).handles.at(1).object).size, 65536u);
	w.gem_open(100, kCard, 9, 2, 65536); // the name is now known
	EXPECT_EQ(w.f(kCard).handles.at(2).object, w.f(kCard).handles.at(1).object);
}

TEST(ModelGem, FlinkNameDiesWithTheLastHandle)
{
	World w;
	w.proc(100);
	w.open(100, 3, kCard);
	w.create_dumb(100, kCard, 1);
	w.flink(100, kCard, 1, 5);
	w.gem_close(100, kCard, 1);
	EXPECT_EQ(w.m.flink_names(), 0u);   // forgotten at once, not at the next full collection
	w.gem_open(100, kCard, 5, 1, 4096); // a new object that happens to get the name again
	EXPECT_EQ(w.m.objects().size(), 1u);
	EXPECT_EQ(w.m.objects().begin()->second.size, 4096u);
	EXPECT_EQ(w.m.flink_names(), 1u);
}

// process 100 exports from card0; process 200 imports on renderD128
struct Prime : ::testing::Test {
	World w;
	void SetUp() override
	{
		w.proc(100);
		w.proc(200);
		w.open(100, 3, kCard);
		w.open(200, 3, kRender, 128);
		w.create_dumb(100, kCard, 1, 64, 64);
		ASSERT_EQ(w.export_fd(100, kCard, 1, 8, kBuf, true), ApplyStatus::ok);
	}
};

TEST_F(Prime, ExportInstallsADmaBufFd)
{
	const gw::FdEntry &e = w.p(100).fds.at(8);
	EXPECT_TRUE(e.dmabuf);
	EXPECT_TRUE(e.cloexec);
	EXPECT_EQ(e.kfile, kBuf);
	EXPECT_EQ(w.f(kCard).prime.at(kBuf), 1u);
	EXPECT_EQ(w.m.dmabufs().at(kBuf).exporter_kfile, kCard);
	auto fd = w.manifest()["processes"][0]["fds"][1];
	EXPECT_EQ(fd, (json{{"fd", 8}, {"dmabuf", {{"file", 1}, {"handle", 1}, {"object", 1}}}, {"cloexec", true}}));
}

TEST_F(Prime, ImportIntoAnotherFileAndReimport)
{
	w.apply(fd_rec(200, 5, kBuf, GW_FD_DUP, false, 0, GW_FILE_DMABUF)); // received over a socket: dup'd
	ASSERT_EQ(w.import_fd(200, kRender, 5, 1, kBuf), ApplyStatus::ok);
	const gw::Handle &h = w.f(kRender).handles.at(1);
	EXPECT_EQ(h.origin(), "prime");
	EXPECT_EQ(h.object, w.f(kCard).handles.at(1).object);
	EXPECT_EQ(h.imports(), 0u);
	EXPECT_EQ(h.params(), (json{{"import_fd", 5}, {"exporter_file", 1}, {"exporter_handle", 1}}));
	EXPECT_EQ(w.manifest()["files"][1]["handles"][0]["size"], 16384);
	ASSERT_EQ(w.import_fd(200, kRender, 5, 1, kBuf), ApplyStatus::ok); // the kernel returns handle 1 again
	EXPECT_EQ(w.f(kRender).handles.size(), 1u);
	EXPECT_EQ(w.f(kRender).handles.at(1).imports(), 1u);
	EXPECT_EQ(w.m.objects().size(), 1u);
}

TEST_F(Prime, ReimportIntoTheExporterReturnsItsHandle)
{
	ASSERT_EQ(w.import_fd(100, kCard, 8, 1, kBuf), ApplyStatus::ok);
	EXPECT_EQ(w.f(kCard).handles.size(), 1u);
	EXPECT_EQ(w.f(kCard).handles.at(1).origin(), "dumb");
	EXPECT_EQ(w.f(kCard).handles.at(1).imports(), 1u);
}

TEST_F(Prime, ImportLearnsAnFdTheModelMissed)
{
	ASSERT_EQ(w.import_fd(200, kRender, 6, 2, kBuf), ApplyStatus::ok);
	const gw::FdEntry &e = w.p(200).fds.at(6);
	EXPECT_TRUE(e.dmabuf);
	EXPECT_EQ(e.kfile, kBuf);
}

TEST_F(Prime, GemCloseDropsAHandleWhateverItsImports)
{
	w.import_fd(200, kRender, 5, 1, kBuf);
	w.import_fd(200, kRender, 5, 1, kBuf);
	ASSERT_EQ(w.gem_close(200, kRender, 1), ApplyStatus::ok);
	EXPECT_TRUE(w.f(kRender).handles.empty());
	EXPECT_TRUE(w.f(kRender).prime.empty());
	w.import_fd(200, kRender, 5, 1, kBuf); // a fresh import: a new handle, no imports
	EXPECT_EQ(w.f(kRender).handles.at(1).imports(), 0u);
}

// A close walks the dma-bufs and the file's prime map only for a buffer that was shared
// (GemObject::exported, Handle::primed): these check that sharing sets what the walks need.
TEST_F(Prime, AnExportedBufferOutlivesItsHandleWhileItsDmaBufLives)
{
	uint64_t obj = w.f(kCard).handles.at(1).object;
	w.gem_close(100, kCard, 1); // fd 8 still holds the dma-buf, and it the object
	ASSERT_EQ(w.m.dmabufs().count(kBuf), 1u);
	EXPECT_EQ(w.m.dmabufs().at(kBuf).object, obj);
	EXPECT_TRUE(w.m.objects().find(obj));
	EXPECT_TRUE(w.f(kCard).prime.empty());
	w.close(100, 8, kBuf);
	EXPECT_TRUE(w.m.dmabufs().empty());
	EXPECT_TRUE(w.m.objects().empty());
}

TEST_F(Prime, ClosingTheExportedHandleReleasesAClosedDmaBuf)
{
	w.close(100, 8, kBuf); // the exporter's prime map alone holds the dma-buf now
	ASSERT_EQ(w.m.dmabufs().count(kBuf), 1u);
	w.gem_close(100, kCard, 1);
	EXPECT_TRUE(w.f(kCard).prime.empty());
	EXPECT_TRUE(w.m.dmabufs().empty());
	EXPECT_TRUE(w.m.objects().empty());
}

TEST_F(Prime, DmaBufOutlivesItsExporter)
{
	w.fork(100, 101);
	w.exit(100);
	w.close(101, 3, kCard); // the child keeps only the dma-buf fd 8
	EXPECT_FALSE(w.has_file(kCard));
	ASSERT_TRUE(w.m.dmabufs().count(kBuf));
	EXPECT_EQ(w.m.dmabufs().at(kBuf).exporter_kfile, 0u);
	auto m = w.manifest();
	ASSERT_EQ(m["processes"].size(), 2u);
	EXPECT_EQ(m["processes"][0]["pid"], 101);
	EXPECT_EQ(m["processes"][0]["fds"][0]["dmabuf"]["file"], nullptr);
	EXPECT_EQ(m["processes"][0]["fds"][0]["dmabuf"]["handle"], nullptr);
	// the buffer is still known: an import gets its size
	w.import_fd(200, kRender, 5, 1, kBuf);
	EXPECT_EQ(w.m.objects().at(w.f(kRender).handles.at(1).object).size, 16384u);
	w.exit(101);
	w.close(200, 5, kBuf);
	EXPECT_EQ(w.m.dmabufs().count(kBuf), 1u); // the importer's prime map still names it
	w.gem_close(200, kRender, 1);
	EXPECT_TRUE(w.m.dmabufs().empty());
	EXPECT_TRUE(w.m.objects().empty());
}

TEST_F(Prime, ImportOfUnknownDmaBuf)
{
	ASSERT_EQ(w.import_fd(200, kRender, 7, 1, kBuf2), ApplyStatus::ok);
	const gw::Handle &h = w.f(kRender).handles.at(1);
	EXPECT_EQ(h.origin(), "prime");
	EXPECT_EQ(w.m.objects().at(h.object).size, 0u);
	EXPECT_TRUE(h.params().contains("note"));
	EXPECT_EQ(w.m.dmabufs().at(kBuf2).object, h.object);
}

TEST(ModelGem, SyncobjsAndCaps)
{
	World w;
	w.proc(100);
	w.open(100, 3, kCard);
	drm_syncobj_create si{0, DRM_SYNCOBJ_CREATE_SIGNALED}, so{1, DRM_SYNCOBJ_CREATE_SIGNALED};
	ASSERT_EQ(w.apply(ioctl_rec(100, 3, kCard, DRM_IOCTL_SYNCOBJ_CREATE, si, so)), ApplyStatus::ok);
	so.handle = 2, si.flags = so.flags = 0;
	w.apply(ioctl_rec(100, 3, kCard, DRM_IOCTL_SYNCOBJ_CREATE, si, so));
	EXPECT_EQ(w.f(kCard).syncobjs, (std::map<uint32_t, uint32_t>{{1, 1}, {2, 0}}));
	drm_syncobj_destroy d{1, 0};
	w.apply(ioctl_rec(100, 3, kCard, DRM_IOCTL_SYNCOBJ_DESTROY, d, d));
	EXPECT_EQ(w.f(kCard).syncobjs, (std::map<uint32_t, uint32_t>{{2, 0}}));
	EXPECT_TRUE(w.f(kCard).handles.empty()); // a separate namespace from GEM handles
	drm_set_client_cap c{DRM_CLIENT_CAP_ATOMIC, 1};
	ASSERT_EQ(w.apply(ioctl_rec(100, 3, kCard, DRM_IOCTL_SET_CLIENT_CAP, c, c)), ApplyStatus::ok);
	EXPECT_EQ(w.f(kCard).caps.at(DRM_CLIENT_CAP_ATOMIC), 1u);
	auto f = w.manifest()["files"][0];
	EXPECT_EQ(f["syncobjs"], (json::array({{{"handle", 2}, {"flags", 0}}})));
	EXPECT_EQ(f["caps"], (json::array({{{"capability", DRM_CLIENT_CAP_ATOMIC}, {"value", 1}}})));
}

TEST(ModelGem, IoctlsOnStateTheModelNeverSaw)
{
	World w;
	w.proc(100);
	// a file opened before tracing: first seen through an ioctl on fd 6
	ASSERT_EQ(w.map_dumb(100, kCard, 4, kFake, 6), ApplyStatus::ok);
	ASSERT_TRUE(w.has_file(kCard));
	EXPECT_FALSE(w.f(kCard).handles_known);
	EXPECT_EQ(w.p(100).fds.at(6).kfile, kCard);
	EXPECT_EQ(w.f(kCard).handles.at(4).origin(), "unknown");
	EXPECT_EQ(w.f(kCard).mmap_offsets.at(kFake).handle, 4u);
	EXPECT_EQ(w.gem_close(100, kCard, 9, 6), ApplyStatus::ok); // never seen: nothing to drop
	EXPECT_EQ(w.flink(100, kCard, 4, 3, 6), ApplyStatus::ok);
	EXPECT_EQ(w.f(kCard).handles.size(), 1u);
	EXPECT_EQ(w.manifest()["complete"], false);
	// the fd record that comes later fills in what ioctls cannot tell
	w.apply(fd_rec(100, 6, kCard, GW_FD_SNAPSHOT, true, 0));
	EXPECT_EQ(w.f(kCard).path, "/dev/dri/card0");
	EXPECT_EQ(w.f(kCard).driver, "vgem");
	EXPECT_FALSE(w.f(kCard).handles_known);
}

TEST(ModelGem, UnknownHandleInAKnownFileMakesItIncomplete)
{
	World w;
	w.proc(100);
	w.open(100, 3, kCard);
	ASSERT_EQ(w.export_fd(100, kCard, 3, 9, kBuf), ApplyStatus::ok); // created by an ioctl not decoded
	EXPECT_FALSE(w.f(kCard).handles_known);
	EXPECT_EQ(w.f(kCard).handles.at(3).origin(), "unknown");
	EXPECT_EQ(w.m.dmabufs().at(kBuf).object, w.f(kCard).handles.at(3).object);
}

TEST(ModelGem, DriverPrivateIoctlIsCountedNotApplied)
{
	World w;
	w.proc(100);
	w.open(100, 3, kCard);
	uint64_t gen = w.m.generation();
	struct {
		__u64 size;
		__u32 handle, pad;
	} in{4096, 0, 0}, out{4096, 1, 0};
	ASSERT_EQ(w.apply(ioctl_rec(100, 3, kCard, DRM_IOWR(0x5b, decltype(in)), in, out)), ApplyStatus::ok);
	EXPECT_EQ(w.m.ignored_ioctls(), 1u);
	EXPECT_TRUE(w.f(kCard).handles.empty());
	EXPECT_EQ(w.m.generation(), gen);
}

} // namespace
