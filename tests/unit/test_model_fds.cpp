// Processes, fd tables and file lifetime: open, dup, fork, close, close_range, exec, exit.
#include <gtest/gtest.h>

#include <linux/close_range.h>

#include "records.hpp"

namespace
{

using namespace gwtest;

TEST(ModelFds, TwoOpensOfOneNodeAreTwoFiles)
{
	World w;
	w.proc(100);
	ASSERT_EQ(w.open(100, 3, kCard), ApplyStatus::ok);
	ASSERT_EQ(w.open(100, 4, kCard2), ApplyStatus::ok);
	ASSERT_EQ(w.m.files().size(), 2u);
	EXPECT_EQ(w.f(kCard).id, 1u);
	EXPECT_EQ(w.f(kCard2).id, 2u);
	EXPECT_EQ(w.f(kCard).path, "/dev/dri/card0");
	EXPECT_EQ(w.f(kCard2).path, "/dev/dri/card0");
	EXPECT_EQ(w.f(kCard).driver, "vgem");
	EXPECT_TRUE(w.f(kCard).handles_known);
	EXPECT_EQ(w.p(100).fds.at(3).kfile, kCard);
	EXPECT_EQ(w.p(100).fds.at(4).kfile, kCard2);
}

TEST(ModelFds, DupSharesTheFile)
{
	World w;
	w.proc(100);
	w.open(100, 3, kCard);
	w.create_dumb(100, kCard, 1);
	ASSERT_EQ(w.dup(100, 7, kCard), ApplyStatus::ok);
	EXPECT_EQ(w.m.files().size(), 1u);
	EXPECT_EQ(w.p(100).fds.at(7).kfile, kCard);
	w.close(100, 3, kCard);
	ASSERT_TRUE(w.has_file(kCard));
	EXPECT_EQ(w.f(kCard).handles.size(), 1u); // state belongs to the file, not the fd
	w.close(100, 7, kCard);
	EXPECT_FALSE(w.has_file(kCard));
	EXPECT_TRUE(w.m.objects().empty());
}

TEST(ModelFds, DupOntoAnOpenFdReplacesIt)
{
	World w;
	w.proc(100);
	w.open(100, 3, kCard);
	w.open(100, 4, kCard2);
	w.dup(100, 3, kCard2); // dup2(4, 3)
	EXPECT_EQ(w.p(100).fds.at(3).kfile, kCard2);
	EXPECT_FALSE(w.has_file(kCard));
	EXPECT_EQ(w.m.files().size(), 1u);
}

TEST(ModelFds, FlagsRecordOnlyChangesCloexec)
{
	World w;
	w.proc(100);
	w.open(100, 3, kCard, 0, false);
	auto r = fd_rec(100, 3, kCard, GW_FD_FLAGS, true);
	r.f_flags = 0; // must not overwrite the file's flags
	ASSERT_EQ(w.apply(r), ApplyStatus::ok);
	EXPECT_TRUE(w.p(100).fds.at(3).cloexec);
	EXPECT_EQ(w.f(kCard).f_flags, 02u);
	EXPECT_TRUE(w.f(kCard).handles_known);
}

TEST(ModelFds, DupOrFlagsOfAnUnknownFileCreateItIncomplete)
{
	World w;
	w.proc(100);
	ASSERT_EQ(w.dup(100, 5, kCard), ApplyStatus::ok); // opened before tracing, dup'd after
	ASSERT_EQ(w.apply(fd_rec(100, 6, kCard2, GW_FD_FLAGS, true)), ApplyStatus::ok);
	EXPECT_FALSE(w.f(kCard).handles_known);
	EXPECT_FALSE(w.f(kCard2).handles_known);
	EXPECT_TRUE(w.p(100).fds.at(6).cloexec);
	EXPECT_EQ(w.f(kCard).path, "/dev/dri/card0");
	EXPECT_EQ(w.manifest()["complete"], false);
	EXPECT_EQ(w.manifest()["incomplete_reasons"].size(), 2u);
}

TEST(ModelFds, ForkSharesFileAndChildClosesItsCopy)
{
	World w;
	w.proc(100, "parent");
	w.open(100, 3, kCard);
	w.create_dumb(100, kCard, 1);
	w.dup(100, 4, kCard);
	ASSERT_EQ(w.fork(100, 101), ApplyStatus::ok);
	ASSERT_TRUE(w.m.has_process(101));
	EXPECT_EQ(w.p(101).comm, "parent");
	EXPECT_EQ(w.p(101).fds.size(), 2u);
	EXPECT_EQ(w.p(101).fds.at(3).kfile, kCard);
	EXPECT_EQ(w.m.files().size(), 1u);
	w.close(101, 4, kCard); // the child closes its copy of the dup
	EXPECT_EQ(w.p(101).fds.count(4), 0u);
	EXPECT_EQ(w.p(100).fds.count(4), 1u);
	w.close(100, 3, kCard);
	w.close(100, 4, kCard);
	ASSERT_TRUE(w.has_file(kCard)); // the child's fd 3 keeps it
	EXPECT_EQ(w.f(kCard).handles.count(1), 1u);
	w.exit(101);
	EXPECT_FALSE(w.has_file(kCard));
}

TEST(ModelFds, CloseRangeCloses)
{
	World w;
	w.proc(100);
	w.open(100, 3, kCard);
	w.dup(100, 4, kCard);
	w.dup(100, 9, kCard);
	ASSERT_EQ(w.close_range(100, 4, ~0u, 0), ApplyStatus::ok);
	ASSERT_EQ(w.p(100).fds.size(), 1u);
	EXPECT_EQ(w.p(100).fds.begin()->first, 3);
	w.close_range(100, 0, 3, CLOSE_RANGE_UNSHARE);
	EXPECT_TRUE(w.p(100).fds.empty());
	EXPECT_FALSE(w.has_file(kCard));
}

TEST(ModelFds, CloseRangeCloexecSetsTheFlag)
{
	World w;
	w.proc(100);
	w.open(100, 3, kCard);
	w.dup(100, 4, kCard);
	w.dup(100, 5, kCard);
	w.close_range(100, 4, 4, CLOSE_RANGE_CLOEXEC);
	EXPECT_FALSE(w.p(100).fds.at(3).cloexec);
	EXPECT_TRUE(w.p(100).fds.at(4).cloexec);
	EXPECT_FALSE(w.p(100).fds.at(5).cloexec);
	EXPECT_EQ(w.p(100).fds.size(), 3u);
}

TEST(ModelFds, ExecDropsMappingsAndCloexecFds)
{
	World w;
	w.proc(100, "sh");
	w.open(100, 3, kCard, 0, true);
	w.open(100, 4, kCard2, 0, false);
	w.mmap(100, kCard2, 0x7f0000000000, 4096, 0);
	ASSERT_EQ(w.exec(100, "ffmpeg"), ApplyStatus::ok);
	EXPECT_EQ(w.p(100).comm, "ffmpeg");
	EXPECT_TRUE(w.p(100).mmaps.empty());
	EXPECT_EQ(w.p(100).fds.count(3), 0u);
	EXPECT_EQ(w.p(100).fds.count(4), 1u);
	EXPECT_FALSE(w.has_file(kCard));
	EXPECT_TRUE(w.has_file(kCard2));
}

TEST(ModelFds, ExitDropsTheProcessAndItsFiles)
{
	World w;
	w.proc(100);
	w.open(100, 3, kCard);
	w.mmap(100, kCard, 0x7f0000000000, 4096, 0);
	ASSERT_EQ(w.exit(100), ApplyStatus::ok);
	EXPECT_FALSE(w.m.has_process(100));
	EXPECT_TRUE(w.m.files().empty());
	EXPECT_TRUE(w.manifest()["processes"].empty());
}

// Issue 16, finding 11: an ext record whose ioctl never came (its thread died first) stayed in
// the model for ever; so did the origin of an fd never installed.
TEST(ModelFds, ExitDropsWhatWaitedForItsThreads)
{
	World w;
	w.proc(100);
	w.proc(200);
	w.open(100, 3, kCard);
	auto x = gw::abi::make_record<gw_ev_ioctl_ext>(100);
	x.hdr.tid = 103; // a thread of 100 that dies before its ioctl record
	ASSERT_EQ(w.apply(x), ApplyStatus::ok);
	auto y = gw::abi::make_record<gw_ev_ioctl_ext>(200);
	ASSERT_EQ(w.apply(y), ApplyStatus::ok);
	EXPECT_EQ(w.m.pending_records(), 2u);
	ASSERT_EQ(w.exit(100), ApplyStatus::ok);
	EXPECT_EQ(w.m.pending_records(), 1u) << "200's record is still its own";
	ASSERT_EQ(w.exit(200), ApplyStatus::ok);
	EXPECT_EQ(w.m.pending_records(), 0u);
}

TEST(ModelFds, FileLivesWhileMappedAfterClose)
{
	World w;
	w.proc(100);
	w.open(100, 3, kCard);
	w.create_dumb(100, kCard, 1);
	w.map_dumb(100, kCard, 1, kFake);
	w.mmap(100, kCard, 0x7f0000000000, 16384, kFake);
	w.close(100, 3, kCard);
	ASSERT_TRUE(w.has_file(kCard));
	EXPECT_EQ(w.f(kCard).handles.count(1), 1u);
	auto m = w.manifest();
	ASSERT_EQ(m["processes"].size(), 1u); // listed for its mapping alone
	EXPECT_TRUE(m["processes"][0]["fds"].empty());
	w.munmap(100, 0x7f0000000000, 16384);
	EXPECT_FALSE(w.has_file(kCard));
	EXPECT_TRUE(w.manifest()["processes"].empty());
}

// A file no fd holds lives while any process maps it: its count of mappings follows munmap,
// fork and exit, and the file goes with the last one.
TEST(ModelFds, FileLivesWhileAnyMappingOfItLives)
{
	World w;
	w.proc(100);
	w.open(100, 3, kCard);
	for (uint32_t h : {1u, 2u}) {
		w.create_dumb(100, kCard, h);
		w.map_dumb(100, kCard, h, kFake + h * 0x10000);
		w.mmap(100, kCard, 0x7f0000000000 + h * 0x10000, 16384, kFake + h * 0x10000);
	}
	EXPECT_EQ(w.f(kCard).mappings, 2u);
	ASSERT_EQ(w.fork(100, 101), ApplyStatus::ok);
	EXPECT_EQ(w.f(kCard).mappings, 4u);
	w.close(100, 3, kCard);
	w.close(101, 3, kCard);
	w.munmap(100, 0x7f0000010000, 0x20000);
	ASSERT_TRUE(w.has_file(kCard));
	EXPECT_EQ(w.f(kCard).mappings, 2u);
	w.munmap(101, 0x7f0000010000, 16384);
	ASSERT_TRUE(w.has_file(kCard));
	EXPECT_EQ(w.f(kCard).mappings, 1u);
	EXPECT_EQ(w.f(kCard).handles.size(), 2u);
	ASSERT_EQ(w.exit(101), ApplyStatus::ok);
	EXPECT_FALSE(w.has_file(kCard));
	EXPECT_TRUE(w.m.objects().empty());
}

TEST(ModelFds, OpenOfAKnownPointerReplacesTheFreedFile)
{
	World w;
	w.proc(100);
	w.proc(200);
	w.open(100, 3, kCard);
	w.create_dumb(100, kCard, 1);
	w.mmap(100, kCard, 0x7f0000000000, 4096, 0);
	w.fork(100, 101);
	// the close of fd 3, the unmap and the exit of 101 were all missed; the kernel freed
	// the file and handed its address to a new open in another process
	ASSERT_EQ(w.open(200, 5, kCard, 128), ApplyStatus::ok);
	EXPECT_EQ(w.m.files().size(), 1u);
	EXPECT_EQ(w.f(kCard).id, 2u);
	EXPECT_EQ(w.f(kCard).path, "/dev/dri/renderD128");
	EXPECT_TRUE(w.f(kCard).handles.empty());
	EXPECT_TRUE(w.f(kCard).handles_known);
	EXPECT_TRUE(w.p(100).fds.empty());
	EXPECT_TRUE(w.p(100).mmaps.empty());
	EXPECT_TRUE(w.p(101).fds.empty());
	EXPECT_EQ(w.p(200).fds.at(5).kfile, kCard);
	EXPECT_TRUE(w.m.objects().empty());
}

std::string test_namer(uint32_t major, uint32_t minor)
{
	return "/test/" + std::to_string(major) + "-" + std::to_string(minor);
}

TEST(ModelFds, NodeNames)
{
	World w;
	w.proc(100);
	w.open(100, 3, kCard, 1);
	w.open(100, 4, kRender, 129);
	w.open(100, 5, kCard2, 70);
	EXPECT_EQ(w.f(kCard).path, "/dev/dri/card1");
	EXPECT_EQ(w.f(kRender).path, "/dev/dri/renderD129");
	EXPECT_EQ(w.f(kCard2).path, "") << "minor 70 has no name in DRM's numbering: none, not another device's";
	w.m.set_node_namer(test_namer);
	w.open(100, 6, 0xffff888000009000, 128);
	EXPECT_EQ(w.f(0xffff888000009000).path, "/test/226-128");
}

} // namespace
