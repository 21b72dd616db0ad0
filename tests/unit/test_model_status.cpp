// apply() statuses: unknown processes, snapshot records, malformed records; generation and
// completeness bookkeeping.
#include <gtest/gtest.h>

#include <vector>

#include "records.hpp"

namespace
{

using namespace gwtest;

TEST(ModelStatus, RecordsOfAnUnknownProcessChangeNothing)
{
	World w;
	uint64_t gen = w.m.generation();
	EXPECT_EQ(w.open(300, 3, kCard), ApplyStatus::unknown_process);
	EXPECT_EQ(w.dup(300, 4, kCard), ApplyStatus::unknown_process);
	EXPECT_EQ(w.close(300, 3, kCard), ApplyStatus::unknown_process);
	EXPECT_EQ(w.close_range(300, 0, ~0u, 0), ApplyStatus::unknown_process);
	EXPECT_EQ(w.create_dumb(300, kCard, 1), ApplyStatus::unknown_process);
	EXPECT_EQ(w.mmap(300, kCard, 0x7f0000000000, 4096, 0), ApplyStatus::unknown_process);
	EXPECT_EQ(w.munmap(300, 0x7f0000000000, 4096), ApplyStatus::unknown_process);
	EXPECT_EQ(w.mremap(300, 0x7f0000000000, 4096, 0x7f1000000000, 4096), ApplyStatus::unknown_process);
	EXPECT_EQ(w.fork(300, 301), ApplyStatus::unknown_process);
	EXPECT_EQ(w.exec(300, "x"), ApplyStatus::unknown_process);
	EXPECT_EQ(w.exit(300), ApplyStatus::unknown_process);
	EXPECT_TRUE(w.m.pids().empty());
	EXPECT_TRUE(w.m.files().empty());
	EXPECT_EQ(w.m.generation(), gen);
	EXPECT_EQ(w.m.malformed_records(), 0u);
}

TEST(ModelStatus, CgroupMoveIsLeftToTheDaemon)
{
	World w;
	w.proc(100);
	uint64_t gen = w.m.generation();
	auto r = gw::abi::make_record<gw_ev_cgroup_move>(100);
	r.dst_cgid = 1234;
	EXPECT_EQ(w.apply(r), ApplyStatus::ok);
	auto r2 = gw::abi::make_record<gw_ev_cgroup_move>(999); // unknown process: still ok
	EXPECT_EQ(w.apply(r2), ApplyStatus::ok);
	EXPECT_EQ(w.m.generation(), gen);
	EXPECT_EQ(w.m.pids(), std::vector<uint32_t>{100});
}

TEST(ModelStatus, SnapshotRecordsCreateTheProcess)
{
	World w;
	ASSERT_EQ(w.apply(fd_rec(300, 5, kCard, GW_FD_SNAPSHOT, true, 0)), ApplyStatus::ok);
	ASSERT_EQ(w.apply(mmap_rec(301, kCard, 0x7f0000000000, 8192, kFake, 1, true, -1)), ApplyStatus::ok);
	EXPECT_EQ(w.m.pids(), (std::vector<uint32_t>{300, 301}));
	ASSERT_TRUE(w.has_file(kCard));
	EXPECT_FALSE(w.f(kCard).handles_known);
	EXPECT_EQ(w.f(kCard).path, "/dev/dri/card0");
	EXPECT_TRUE(w.p(300).fds.at(5).cloexec);
	EXPECT_EQ(w.p(301).mmaps.at(0x7f0000000000).length, 8192u);
	auto m = w.manifest();
	EXPECT_EQ(m["complete"], false);
	ASSERT_EQ(m["incomplete_reasons"].size(), 1u);
	EXPECT_NE(m["incomplete_reasons"][0].get<std::string>().find("file 1 (/dev/dri/card0)"), std::string::npos);
	w.m.add_process(300, "vainfo"); // the daemon names it afterwards
	EXPECT_EQ(w.p(300).comm, "vainfo");
	EXPECT_EQ(w.p(300).fds.size(), 1u);
}

TEST(ModelStatus, SnapshotOfAKnownFileKeepsItsState)
{
	World w;
	w.proc(100);
	w.open(100, 3, kCard);
	w.create_dumb(100, kCard, 1);
	w.apply(fd_rec(100, 3, kCard, GW_FD_SNAPSHOT, false, 0));
	EXPECT_TRUE(w.f(kCard).handles_known);
	EXPECT_EQ(w.f(kCard).handles.size(), 1u);
	EXPECT_EQ(w.manifest()["complete"], true);
}

TEST(ModelStatus, ForkFromAKnownParentIsApplied)
{
	World w;
	w.proc(100);
	w.open(100, 3, kCard);
	ASSERT_EQ(w.fork(100, 200), ApplyStatus::ok);
	EXPECT_TRUE(w.m.has_process(200));
	EXPECT_EQ(w.fork(100, 100), ApplyStatus::malformed);
}

// Issue 16, finding 10 (found again by tests/fuzz/fuzz_records): an ioctl record with a
// negative fd on a file no fd held made the model keep that file, which only a full collection
// dropped (the GW_MODEL_CHECK_GC oracle aborted). No successful ioctl has a negative fd.
TEST(ModelStatus, IoctlWithANegativeFdIsMalformed)
{
	World w;
	w.proc(100);
	w.open(100, 3, kCard);
	auto r = create_dumb_rec(100, -1071618894, kCard2, 1);
	EXPECT_EQ(w.apply(r), ApplyStatus::malformed);
	EXPECT_EQ(w.m.malformed_records(), 1u);
	EXPECT_EQ(w.m.manifest().files.size(), 1u) << "the unknown file of the record was kept";
}

// Found by tests/fuzz/fuzz_records: an ioctl through an fd the model knew as a dma-buf of the
// same kernel file (the dma-buf freed, its address reused by a DRM file, the close missed) left
// the DRM file held by no fd and the fd still a dma-buf's.
// fd 3 known as another kind of file whose kernel address a DRM file reuses (the close
// missed), then a DRM ioctl on it through fd 3: fd 3 is the DRM file's, which holds the handle
void expect_ioctl_makes_it_the_drm_file(uint8_t type)
{
	World w;
	w.proc(200);
	ASSERT_EQ(w.apply(fd_rec(200, 3, kRender, GW_FD_OPEN, false, 128, type)), ApplyStatus::ok);
	ASSERT_EQ(w.apply(create_dumb_rec(200, 3, kRender, 1)), ApplyStatus::ok);
	auto m = w.m.manifest();
	ASSERT_EQ(m.processes.size(), 1u);
	ASSERT_EQ(m.processes[0].fds.size(), 1u);
	EXPECT_EQ(m.processes[0].fds[0].kind, gw::manifest::Fd::Kind::drm);
	ASSERT_EQ(m.files.size(), 1u);
	EXPECT_EQ(m.files[0].handles.size(), 1u);
}

TEST(ModelStatus, IoctlThroughAnFdKnownAsADmaBufMakesItTheDrmFile)
{
	expect_ioctl_makes_it_the_drm_file(GW_FILE_DMABUF);
}

TEST(ModelStatus, IoctlThroughAnFdKnownAsASyncFileMakesItTheDrmFile)
{
	expect_ioctl_makes_it_the_drm_file(GW_FILE_SYNC); // found by fuzz_records
}

// Found by tests/fuzz/fuzz_records (a 10^7 campaign): fd 3 known as one kind of file, then a
// cloexec change (GW_FD_FLAGS) reporting the same kernel address as another kind (the first
// freed, its address reused, the close missed). The FLAGS shortcut kept fd 3 the old kind's and
// the new DRM file was held by no fd. Now fd 3 is the new kind's, and nothing of the old is left.
void expect_flags_record_makes_it_the_new_kind(uint8_t was, uint8_t now)
{
	World w;
	w.proc(200);
	ASSERT_EQ(w.apply(fd_rec(200, 3, kRender, GW_FD_OPEN, false, 128, was)), ApplyStatus::ok);
	ASSERT_EQ(w.apply(fd_rec(200, 3, kRender, GW_FD_FLAGS, true, 128, now)), ApplyStatus::ok);
	auto m = w.m.manifest();
	ASSERT_EQ(m.processes.size(), 1u);
	ASSERT_EQ(m.processes[0].fds.size(), 1u);
	const auto &fd = m.processes[0].fds[0];
	using Kind = gw::manifest::Fd::Kind;
	Kind want = now == GW_FILE_DRM ? Kind::drm : now == GW_FILE_DMABUF ? Kind::dmabuf : Kind::sync_file;
	EXPECT_EQ(fd.kind, want);
	EXPECT_TRUE(fd.cloexec);
	EXPECT_EQ(m.files.size(), now == GW_FILE_DRM ? 1u : 0u) << "a DRM file no fd holds, or the old one, was kept";
	EXPECT_EQ(w.m.others().size(), now == GW_FILE_SYNC ? 1u : 0u) << "the old sync file was kept";
}

TEST(ModelStatus, FlagsRecordOfAnFdKnownAsASyncFileMakesItTheDrmFile)
{
	expect_flags_record_makes_it_the_new_kind(GW_FILE_SYNC, GW_FILE_DRM); // found by fuzz_records
}

TEST(ModelStatus, FlagsRecordOfAnFdKnownAsADmaBufMakesItTheDrmFile)
{
	expect_flags_record_makes_it_the_new_kind(GW_FILE_DMABUF, GW_FILE_DRM);
}

TEST(ModelStatus, FlagsRecordOfAnFdKnownAsADrmFileMakesItTheSyncFile)
{
	expect_flags_record_makes_it_the_new_kind(GW_FILE_DRM, GW_FILE_SYNC);
}

TEST(ModelStatus, FlagsRecordOfAnFdKnownAsASyncFileMakesItTheDmaBuf)
{
	expect_flags_record_makes_it_the_new_kind(GW_FILE_SYNC, GW_FILE_DMABUF);
}

std::vector<std::byte> raw(const void *p, std::size_t n)
{
	std::vector<std::byte> v(n);
	std::memcpy(v.data(), p, n);
	return v;
}

TEST(ModelStatus, MalformedRecordsAreCountedNotApplied)
{
	World w;
	w.proc(100);
	w.open(100, 3, kCard);
	auto fd = fd_rec(100, 4, kCard2);
	auto bytes = raw(&fd, sizeof fd);
	EXPECT_EQ(w.m.apply(std::span(bytes).first(10)), ApplyStatus::malformed); // short
	EXPECT_EQ(w.m.apply(std::span(bytes).first(40)), ApplyStatus::malformed); // size field says 72
	auto bad = fd;
	bad.hdr.kind = 77;
	EXPECT_EQ(w.apply(bad), ApplyStatus::malformed);
	bad.hdr.kind = GW_EV_CLOSE; // a 72-byte CLOSE
	EXPECT_EQ(w.apply(bad), ApplyStatus::malformed);
	bad = fd;
	bad.type = 9;
	EXPECT_EQ(w.apply(bad), ApplyStatus::malformed);
	struct {
		__u32 height, width;
	} small{1, 1};
	EXPECT_EQ(w.apply(ioctl_rec(100, 3, kCard, _IOWR('d', 0xB2, decltype(small)), small, small)),
		  ApplyStatus::malformed);
	auto io = ioctl_rec(100, 3, kCard, DRM_IOCTL_GEM_CLOSE, drm_gem_close{1, 0}, drm_gem_close{1, 0});
	io.arg_size = 200;
	EXPECT_EQ(w.apply(io), ApplyStatus::malformed);
	EXPECT_EQ(w.apply(mmap_rec(100, kCard, 0x7f0000000123, 4096, 0)), ApplyStatus::malformed); // unaligned
	EXPECT_EQ(w.apply(mmap_rec(100, kCard, 0x7f0000000000, 0, 0)), ApplyStatus::malformed);
	EXPECT_EQ(w.close_range(100, 5, 4, 0), ApplyStatus::malformed);
	EXPECT_EQ(w.m.malformed_records(), 10u);
	EXPECT_EQ(w.m.files().size(), 1u); // nothing applied
	EXPECT_EQ(w.p(100).fds.size(), 1u);
	EXPECT_TRUE(w.f(kCard).handles.empty());
	auto m = w.manifest();
	EXPECT_EQ(m["complete"], false);
	EXPECT_EQ(m["malformed_records"], 10);
	EXPECT_EQ(m["incomplete_reasons"], nlohmann::json::array({"10 malformed records"}));
}

// An undecoded ioctl's success makes the manifest incomplete, naming the file and the ioctl
// once however often it came; the file lists it, and a reader reads it back.
TEST(ModelStatus, UndecodedIoctlMakesTheFileIncomplete)
{
	World w;
	w.proc(100);
	w.open(100, 3, kCard);
	w.create_dumb(100, kCard, 1);
	EXPECT_EQ(w.manifest()["complete"], true);
	uint64_t gen = w.m.generation();
	EXPECT_EQ(w.apply(undecoded_rec(100, 3, kCard, DRM_IOCTL_MODE_SETGAMMA)), ApplyStatus::ok);
	EXPECT_GT(w.m.generation(), gen);
	gen = w.m.generation();
	EXPECT_EQ(w.apply(undecoded_rec(100, 3, kCard, DRM_IOCTL_MODE_SETGAMMA)), ApplyStatus::ok);
	EXPECT_EQ(w.m.generation(), gen); // nothing new
	EXPECT_EQ(w.apply(undecoded_rec(100, 3, kCard, _IOW('d', 0x41, uint64_t))), ApplyStatus::ok);
	auto m = w.manifest();
	EXPECT_EQ(m["complete"], false);
	EXPECT_EQ(
		m["incomplete_reasons"],
		nlohmann::json::array({"file 1 (/dev/dri/card0): MODE_SETGAMMA succeeded and gpuwatch does not decode "
				       "it: the state it made is unknown",
				       "file 1 (/dev/dri/card0): vgem ioctl 0x01 succeeded and gpuwatch does not "
				       "decode it: the state it made is unknown"}));
	EXPECT_EQ(m["files"][0]["undecoded_ioctls"], nlohmann::json::array({"MODE_SETGAMMA", "vgem ioctl 0x01"}));
	EXPECT_EQ(m["files"][0]["handles"].size(), 1u); // the handles it knows stay listed
	auto back = gw::manifest::from_json(m);
	EXPECT_EQ(back.files.at(0).undecoded_ioctls, (std::vector<std::string>{"MODE_SETGAMMA", "vgem ioctl 0x01"}));
}

// A framebuffer made by a followed file is listed with its handle and buffer; GETFB's new
// handle names that buffer (its size known); RMFB removes the framebuffer, the handle stays.
TEST(ModelStatus, FramebufferAndGetFbShareTheBuffer)
{
	World w;
	w.proc(100);
	w.open(100, 3, kCard);
	w.create_dumb(100, kCard, 1, 64, 64);
	ASSERT_EQ(w.apply(addfb_rec(100, 3, kCard, 1, 64, 64, 41)), ApplyStatus::ok);
	drm_mode_fb_cmd g{}, go{};
	g.fb_id = go.fb_id = 41;
	go.handle = 2;
	ASSERT_EQ(w.apply(ioctl_rec(100, 3, kCard, DRM_IOCTL_MODE_GETFB, g, go)), ApplyStatus::ok);
	auto m = w.manifest();
	EXPECT_EQ(m["complete"], true);
	auto fbs = m["files"][0]["framebuffers"];
	ASSERT_EQ(fbs.size(), 1u);
	EXPECT_EQ(fbs[0]["id"], 41);
	EXPECT_EQ(fbs[0]["format"], "bpp 32 depth 24");
	EXPECT_EQ(fbs[0]["planes"][0]["handle"], 1);
	auto hs = m["files"][0]["handles"];
	ASSERT_EQ(hs.size(), 2u);
	EXPECT_EQ(hs[1]["object"], hs[0]["object"]); // one buffer
	EXPECT_EQ(hs[1]["size"], hs[0]["size"]);
	uint32_t id = 41;
	ASSERT_EQ(w.apply(ioctl_rec(100, 3, kCard, DRM_IOCTL_MODE_RMFB, id, id)), ApplyStatus::ok);
	m = w.manifest();
	EXPECT_FALSE(m["files"][0].contains("framebuffers"));
	EXPECT_EQ(m["files"][0]["handles"].size(), 2u);
	auto back = gw::manifest::from_json(w.manifest());
	EXPECT_TRUE(back.files.at(0).framebuffers.empty());
}

// The display configuration the file set: SETCRTC, a page flip, an overlay plane, master;
// RMFB switches off what showed the framebuffer; written and read back unchanged; the
// manifest stays complete (these ioctls are decoded).
TEST(ModelStatus, DisplayConfigurationTheFileSet)
{
	World w;
	w.proc(100);
	w.open(100, 3, kCard);
	w.create_dumb(100, kCard, 1, 64, 64);
	w.create_dumb(100, kCard, 2, 64, 64);
	ASSERT_EQ(w.apply(addfb_rec(100, 3, kCard, 1, 64, 64, 41)), ApplyStatus::ok);
	ASSERT_EQ(w.apply(addfb_rec(100, 3, kCard, 2, 64, 64, 42)), ApplyStatus::ok);
	auto master = gw::abi::make_record<gw_ev_ioctl>(100);
	master.file = kCard;
	master.fd = 3;
	master.cmd = DRM_IOCTL_SET_MASTER;
	ASSERT_EQ(w.apply(master), ApplyStatus::ok);
	ASSERT_EQ(w.apply(setcrtc_rec(100, 3, kCard, 35, 41, 64, 64, 60, 300)), ApplyStatus::ok);
	drm_mode_crtc_page_flip flip{36, 42, 0, 0, 0}; // a CRTC it never set: only the flip is known
	ASSERT_EQ(w.apply(ioctl_rec(100, 3, kCard, DRM_IOCTL_MODE_PAGE_FLIP, flip, flip)), ApplyStatus::ok);
	drm_mode_set_plane plane{33, 35, 42, 0, -8, 8, 32, 32, 0, 0, 32 << 16, 32 << 16};
	ASSERT_EQ(w.apply(ioctl_rec(100, 3, kCard, DRM_IOCTL_MODE_SETPLANE, plane, plane)), ApplyStatus::ok);
	auto m = w.manifest();
	EXPECT_EQ(m["complete"], true) << m.dump();
	auto d = m["files"][0]["display"];
	EXPECT_EQ(d["master"], true);
	ASSERT_EQ(d["crtcs"].size(), 2u) << d.dump();
	EXPECT_EQ(d["crtcs"][0],
		  (nlohmann::json{{"crtc", 35},
				  {"fb", 41},
				  {"configured", true},
				  {"x", 0},
				  {"y", 0},
				  {"connectors", 1},
				  {"mode", {{"clock", 300}, {"hdisplay", 64}, {"vdisplay", 64}, {"vrefresh", 60}}}}));
	EXPECT_EQ(d["crtcs"][1], (nlohmann::json{{"crtc", 36}, {"fb", 42}, {"configured", false}}));
	ASSERT_EQ(d["planes"].size(), 1u);
	EXPECT_EQ(d["planes"][0]["crtc_rect"], nlohmann::json::array({-8, 8, 32, 32}));
	auto back = gw::manifest::from_json(m);
	EXPECT_EQ(gw::manifest::to_json(back)["files"][0]["display"], d);

	// RMFB of 42: CRTC 36 and plane 33 no longer show it; CRTC 35 still shows 41
	uint32_t id = 42;
	ASSERT_EQ(w.apply(ioctl_rec(100, 3, kCard, DRM_IOCTL_MODE_RMFB, id, id)), ApplyStatus::ok);
	d = w.manifest()["files"][0]["display"];
	EXPECT_EQ(d["crtcs"][0]["fb"], 41);
	EXPECT_EQ(d["crtcs"][1]["fb"], 0);
	EXPECT_TRUE(d["planes"].empty());
	// SETCRTC without a mode switches 35 off; DROP_MASTER
	ASSERT_EQ(w.apply(setcrtc_rec(100, 3, kCard, 35, 0, 0, 0)), ApplyStatus::ok);
	master.cmd = DRM_IOCTL_DROP_MASTER;
	ASSERT_EQ(w.apply(master), ApplyStatus::ok);
	d = w.manifest()["files"][0]["display"];
	EXPECT_EQ(d["crtcs"][0]["mode"], nullptr);
	EXPECT_EQ(d["crtcs"][0]["fb"], 0);
	EXPECT_EQ(d["master"], false);
	// the reader refuses a malformed display section, naming the field
	auto bad = w.manifest();
	bad["files"][0]["display"]["planes"] = {
		{{"plane", 1}, {"crtc", 2}, {"fb", 3}, {"crtc_rect", {1, 2, 3}}, {"src_rect", {0, 0, 0, 0}}}};
	try {
		gw::manifest::from_json(bad);
		ADD_FAILURE() << "a 3-element crtc_rect was accepted";
	} catch (const std::exception &e) {
		EXPECT_NE(std::string(e.what()).find("display.planes[0].crtc_rect"), std::string::npos) << e.what();
	}
}

// An atomic client: CREATEPROPBLOB (the mode), a TEST_ONLY commit (nothing changes), a commit;
// the manifest lists the blob and counts the commit, stays complete, reads back unchanged;
// DESTROYPROPBLOB removes the blob.
TEST(ModelStatus, AtomicCommitsAndPropertyBlobs)
{
	World w;
	w.proc(100);
	w.open(100, 3, kCard);
	drm_mode_create_blob in{0x7000, 68, 0}, out{0x7000, 68, 40};
	ASSERT_EQ(w.apply(ioctl_rec(100, 3, kCard, DRM_IOCTL_MODE_CREATEPROPBLOB, in, out)), ApplyStatus::ok);
	drm_mode_atomic commit{};
	commit.flags = DRM_MODE_ATOMIC_TEST_ONLY | DRM_MODE_ATOMIC_ALLOW_MODESET;
	commit.count_objs = 3;
	ASSERT_EQ(w.apply(ioctl_rec(100, 3, kCard, DRM_IOCTL_MODE_ATOMIC, commit, commit)), ApplyStatus::ok);
	auto m = w.manifest();
	auto d = m["files"][0]["display"];
	EXPECT_EQ(d["atomic_commits"], 0) << d.dump();
	commit.flags = DRM_MODE_ATOMIC_ALLOW_MODESET;
	ASSERT_EQ(w.apply(ioctl_rec(100, 3, kCard, DRM_IOCTL_MODE_ATOMIC, commit, commit)), ApplyStatus::ok);
	m = w.manifest();
	EXPECT_EQ(m["complete"], true) << m.dump();
	EXPECT_FALSE(m["files"][0].contains("undecoded_ioctls") && !m["files"][0]["undecoded_ioctls"].empty());
	d = m["files"][0]["display"];
	EXPECT_EQ(d["atomic_commits"], 1);
	EXPECT_EQ(d["blobs"], (nlohmann::json::array({{{"id", 40}, {"length", 68}}})));
	EXPECT_EQ(gw::manifest::to_json(gw::manifest::from_json(m))["files"][0]["display"], d);
	drm_mode_destroy_blob gone{40};
	ASSERT_EQ(w.apply(ioctl_rec(100, 3, kCard, DRM_IOCTL_MODE_DESTROYPROPBLOB, gone, gone)), ApplyStatus::ok);
	EXPECT_TRUE(w.manifest()["files"][0]["display"]["blobs"].empty());
}

// Legacy cursors: CURSOR2 sets the buffer and hotspot, MOVE the position (either alone keeps
// the other); a cursor whose handle is closed lists no handle; BO with handle 0 hides it (it is
// no longer listed). The manifest stays complete and reads back unchanged.
TEST(ModelStatus, LegacyCursors)
{
	World w;
	w.proc(100);
	w.open(100, 3, kCard);
	w.create_dumb(100, kCard, 1, 64, 64);
	w.create_dumb(100, kCard, 2, 64, 64);
	drm_mode_cursor2 bo{DRM_MODE_CURSOR_BO, 35, 0, 0, 64, 64, 1, 2, 3};
	ASSERT_EQ(w.apply(ioctl_rec(100, 3, kCard, DRM_IOCTL_MODE_CURSOR2, bo, bo)), ApplyStatus::ok);
	drm_mode_cursor move{DRM_MODE_CURSOR_MOVE, 35, -5, 40, 0, 0, 0};
	ASSERT_EQ(w.apply(ioctl_rec(100, 3, kCard, DRM_IOCTL_MODE_CURSOR, move, move)), ApplyStatus::ok);
	drm_mode_cursor other{DRM_MODE_CURSOR_BO, 36, 0, 0, 32, 32, 2};
	ASSERT_EQ(w.apply(ioctl_rec(100, 3, kCard, DRM_IOCTL_MODE_CURSOR, other, other)), ApplyStatus::ok);
	auto m = w.manifest();
	EXPECT_EQ(m["complete"], true) << m.dump();
	auto c = m["files"][0]["display"]["cursors"];
	ASSERT_EQ(c.size(), 2u) << c.dump();
	EXPECT_EQ(c[0]["crtc"], 35);
	EXPECT_EQ(c[0]["handle"], 1);
	EXPECT_EQ(c[0]["hotspot"], nlohmann::json::array({2, 3}));
	EXPECT_EQ(c[0]["position"], nlohmann::json::array({-5, 40}));
	EXPECT_EQ(c[1]["position"], nullptr);
	EXPECT_EQ(gw::manifest::to_json(gw::manifest::from_json(m))["files"][0]["display"], m["files"][0]["display"]);
	ASSERT_EQ(w.apply(ioctl_rec(100, 3, kCard, DRM_IOCTL_GEM_CLOSE, drm_gem_close{2, 0}, drm_gem_close{2, 0})),
		  ApplyStatus::ok);
	c = w.manifest()["files"][0]["display"]["cursors"];
	EXPECT_EQ(c[1]["handle"], nullptr) << c.dump(); // closed: the kernel's cursor keeps the buffer
	drm_mode_cursor hide{DRM_MODE_CURSOR_BO, 35, 0, 0, 0, 0, 0};
	ASSERT_EQ(w.apply(ioctl_rec(100, 3, kCard, DRM_IOCTL_MODE_CURSOR, hide, hide)), ApplyStatus::ok);
	c = w.manifest()["files"][0]["display"]["cursors"];
	ASSERT_EQ(c.size(), 1u);
	EXPECT_EQ(c[0]["crtc"], 36);
}

// GETFB of a framebuffer no followed file made: a handle of its own (size unknown), listed
// (origin getfb, the framebuffer id), closed by GEM_CLOSE; the manifest stays complete.
TEST(ModelStatus, GetFbHandleIsListed)
{
	World w;
	w.proc(100);
	w.open(100, 3, kCard);
	w.create_dumb(100, kCard, 1);
	drm_mode_fb_cmd in{}, out{};
	in.fb_id = out.fb_id = 40;
	out.handle = 2;
	ASSERT_EQ(w.apply(ioctl_rec(100, 3, kCard, DRM_IOCTL_MODE_GETFB, in, out)), ApplyStatus::ok);
	auto m = w.manifest();
	EXPECT_EQ(m["complete"], true);
	ASSERT_EQ(m["files"][0]["handles"].size(), 2u);
	EXPECT_EQ(m["files"][0]["handles"][1]["handle"], 2);
	EXPECT_EQ(m["files"][0]["handles"][1]["origin"], "getfb");
	EXPECT_EQ(m["files"][0]["handles"][1]["params"], nlohmann::json({{"fb_id", 40}}));
	ASSERT_EQ(w.apply(gem_close_rec(100, 3, kCard, 2)), ApplyStatus::ok);
	EXPECT_EQ(w.manifest()["files"][0]["handles"].size(), 1u);
}

TEST(ModelStatus, GenerationFollowsManifestChanges)
{
	World w;
	w.proc(100);
	uint64_t g0 = w.m.generation();
	w.open(100, 3, kCard);
	uint64_t g1 = w.m.generation();
	EXPECT_GT(g1, g0);
	w.close(100, 9, kCard);        // not an fd the model knows
	w.close_range(100, 10, 20, 0); // nothing in range
	w.munmap(100, 0x7f0000000000, 4096);
	w.m.add_process(100, "app"); // same comm
	w.m.set_kernel_counters(0, 0);
	EXPECT_EQ(w.m.generation(), g1);
	w.create_dumb(100, kCard, 1);
	EXPECT_GT(w.m.generation(), g1);
	uint64_t g2 = w.m.generation();
	w.m.mark_incomplete("snapshot of pid 7 failed");
	w.m.mark_incomplete("snapshot of pid 7 failed");
	EXPECT_EQ(w.m.generation(), g2 + 1);
	w.m.set_kernel_counters(3, 1);
	EXPECT_EQ(w.m.generation(), g2 + 2);
	auto m = w.manifest();
	EXPECT_EQ(m["generation"], g2 + 2);
	EXPECT_EQ(m["lost_events"], 3);
	EXPECT_EQ(m["failed_reads"], 1);
	EXPECT_EQ(m["complete"], false);
	EXPECT_EQ(m["incomplete_reasons"],
		  (nlohmann::json::array(
			  {"3 events lost (ring buffer full)", "1 kernel reads failed", "snapshot of pid 7 failed"})));
}

// The model remembers the last process and file it looked up; an exit or a file's last close
// must make it forget them (a stale one would be freed memory).
TEST(ModelStatus, TheLastLookupForgetsWhatIsGone)
{
	World w;
	w.proc(100);
	w.open(100, 3, kCard);
	ASSERT_EQ(w.create_dumb(100, kCard, 1), ApplyStatus::ok);
	ASSERT_EQ(w.exit(100), ApplyStatus::ok);
	EXPECT_EQ(w.create_dumb(100, kCard, 2), ApplyStatus::unknown_process);
	EXPECT_TRUE(w.m.files().empty());
	w.proc(100);
	ASSERT_EQ(w.open(100, 3, kCard), ApplyStatus::ok); // a new file at the freed one's address
	ASSERT_EQ(w.create_dumb(100, kCard, 1), ApplyStatus::ok);
	ASSERT_EQ(w.close(100, 3, kCard), ApplyStatus::ok);
	EXPECT_TRUE(w.m.files().empty());
	ASSERT_EQ(w.open(100, 4, kCard), ApplyStatus::ok);
	ASSERT_EQ(w.create_dumb(100, kCard, 1, 64, 64, 4), ApplyStatus::ok);
	ASSERT_EQ(w.m.files().size(), 1u);
	EXPECT_EQ(w.f(kCard).handles.size(), 1u);
	w.m.remove_process(100);
	EXPECT_EQ(w.create_dumb(100, kCard, 2, 64, 64, 4), ApplyStatus::unknown_process);
}

TEST(ModelStatus, RemoveProcessIsLikeExit)
{
	World w;
	w.proc(100);
	w.proc(101);
	w.open(100, 3, kCard);
	w.m.remove_process(100);
	EXPECT_FALSE(w.m.has_process(100));
	EXPECT_TRUE(w.m.files().empty());
	EXPECT_EQ(w.m.pids(), std::vector<uint32_t>{101});
	EXPECT_TRUE(w.manifest()["processes"].empty()); // 101 holds nothing: not listed
	EXPECT_EQ(w.manifest()["complete"], true);
}

} // namespace
