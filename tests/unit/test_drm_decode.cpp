// DRM ioctl decoding: (driver, nr) lookup, in/out fields, malformed arguments.
#include <gtest/gtest.h>

#include <i915_drm.h>

#include "records.hpp"

namespace
{

using namespace gw::drm;
using gwtest::ioctl_rec;

TEST(DrmDecode, CreateDumbTakesInputsFromInAndOutputsFromOut)
{
	drm_mode_create_dumb in{}, out{};
	in.height = 480, in.width = 640, in.bpp = 32, in.flags = 0;
	out = in;
	out.handle = 5, out.pitch = 2560, out.size = 1228800;
	in.handle = 99; // garbage at entry must not be read
	auto op = decode_ioctl("vgem", ioctl_rec(1, 3, 0x1000, DRM_IOCTL_MODE_CREATE_DUMB, in, out));
	auto *c = std::get_if<CreateDumb>(&op);
	ASSERT_TRUE(c);
	EXPECT_EQ(c->width, 640u);
	EXPECT_EQ(c->height, 480u);
	EXPECT_EQ(c->bpp, 32u);
	EXPECT_EQ(c->handle, 5u);
	EXPECT_EQ(c->pitch, 2560u);
	EXPECT_EQ(c->size, 1228800u);
}

TEST(DrmDecode, CoreIoctlsDecodeForAnyDriver)
{
	drm_mode_map_dumb in{7, 0, 0}, out{7, 0, 0x100010000};
	for (const char *drv : {"", "vgem", "i915", "xe"}) {
		auto op = decode_ioctl(drv, ioctl_rec(1, 3, 0x1000, DRM_IOCTL_MODE_MAP_DUMB, in, out));
		auto *m = std::get_if<MapDumb>(&op);
		ASSERT_TRUE(m) << drv;
		EXPECT_EQ(m->handle, 7u);
		EXPECT_EQ(m->offset, 0x100010000u);
	}
}

TEST(DrmDecode, PrimeHandleToFd)
{
	drm_prime_handle in{3, DRM_CLOEXEC | DRM_RDWR, -1}, out{3, DRM_CLOEXEC | DRM_RDWR, 11};
	auto op = decode_ioctl("vgem", ioctl_rec(1, 3, 0x1000, DRM_IOCTL_PRIME_HANDLE_TO_FD, in, out, 0x5000));
	auto *e = std::get_if<PrimeExport>(&op);
	ASSERT_TRUE(e);
	EXPECT_EQ(e->handle, 3u);
	EXPECT_EQ(e->fd, 11);
	EXPECT_TRUE(e->cloexec);
	EXPECT_EQ(e->dmabuf, 0x5000u);
	in.flags = out.flags = DRM_RDWR;
	op = decode_ioctl("vgem", ioctl_rec(1, 3, 0x1000, DRM_IOCTL_PRIME_HANDLE_TO_FD, in, out, 0x5000));
	EXPECT_FALSE(std::get<PrimeExport>(op).cloexec);
}

TEST(DrmDecode, PrimeFdToHandleNeedsTheDmaBufFile)
{
	drm_prime_handle in{0, 0, 8}, out{4, 0, 8};
	auto op = decode_ioctl("vgem", ioctl_rec(1, 3, 0x1000, DRM_IOCTL_PRIME_FD_TO_HANDLE, in, out, 0x5000));
	ASSERT_TRUE(std::holds_alternative<PrimeImport>(op));
	EXPECT_EQ(std::get<PrimeImport>(op).fd, 8);
	EXPECT_EQ(std::get<PrimeImport>(op).handle, 4u);
	op = decode_ioctl("vgem", ioctl_rec(1, 3, 0x1000, DRM_IOCTL_PRIME_FD_TO_HANDLE, in, out, 0));
	EXPECT_TRUE(std::holds_alternative<Malformed>(op));
}

TEST(DrmDecode, FlinkOpenSyncobjCap)
{
	drm_gem_flink fi{2, 0}, fo{2, 77};
	EXPECT_EQ(std::get<GemFlink>(decode_ioctl("", ioctl_rec(1, 3, 1, DRM_IOCTL_GEM_FLINK, fi, fo))).name, 77u);
	drm_gem_open oi{77, 0, 0}, oo{77, 9, 4096};
	auto o = std::get<GemOpen>(decode_ioctl("", ioctl_rec(1, 3, 1, DRM_IOCTL_GEM_OPEN, oi, oo)));
	EXPECT_EQ(o.name, 77u);
	EXPECT_EQ(o.handle, 9u);
	EXPECT_EQ(o.size, 4096u);
	drm_syncobj_create si{0, DRM_SYNCOBJ_CREATE_SIGNALED}, so{6, DRM_SYNCOBJ_CREATE_SIGNALED};
	auto s = std::get<SyncobjCreate>(decode_ioctl("", ioctl_rec(1, 3, 1, DRM_IOCTL_SYNCOBJ_CREATE, si, so)));
	EXPECT_EQ(s.handle, 6u);
	EXPECT_EQ(s.flags, uint32_t{DRM_SYNCOBJ_CREATE_SIGNALED});
	drm_syncobj_destroy d{6, 0};
	EXPECT_EQ(
		std::get<SyncobjDestroy>(decode_ioctl("", ioctl_rec(1, 3, 1, DRM_IOCTL_SYNCOBJ_DESTROY, d, d))).handle,
		6u);
	// a syncobj exported as a sync_file makes a new fd; exported as a syncobj fd, nothing here
	drm_syncobj_handle hi{6, DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE, -1, 0}, ho = hi;
	ho.fd = 9;
	auto x = std::get<SyncobjExportSyncFile>(
		decode_ioctl("", ioctl_rec(1, 3, 1, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, hi, ho)));
	EXPECT_EQ(x.handle, 6u);
	EXPECT_EQ(x.fd, 9);
	hi.flags = ho.flags = 0;
	EXPECT_TRUE(std::holds_alternative<Ignored>(
		decode_ioctl("", ioctl_rec(1, 3, 1, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, hi, ho))));
	drm_set_client_cap c{DRM_CLIENT_CAP_UNIVERSAL_PLANES, 1};
	auto cap = std::get<SetClientCap>(decode_ioctl("", ioctl_rec(1, 3, 1, DRM_IOCTL_SET_CLIENT_CAP, c, c)));
	EXPECT_EQ(cap.capability, uint64_t{DRM_CLIENT_CAP_UNIVERSAL_PLANES});
	EXPECT_EQ(cap.value, 1u);
	drm_gem_close gc{12, 0};
	EXPECT_EQ(std::get<GemClose>(decode_ioctl("", ioctl_rec(1, 3, 1, DRM_IOCTL_GEM_CLOSE, gc, gc))).handle, 12u);
	drm_mode_destroy_dumb dd{13};
	EXPECT_EQ(
		std::get<DestroyDumb>(decode_ioctl("", ioctl_rec(1, 3, 1, DRM_IOCTL_MODE_DESTROY_DUMB, dd, dd))).handle,
		13u);
}

TEST(DrmDecode, DriverPrivateNumbersDependOnTheDriver)
{
	// nr 0x5b is i915 GEM_CREATE; on a driver without a table, or "" (unknown), it is ignored
	drm_i915_gem_create in{4096, 0, 0}, out{4096, 1, 0};
	for (const char *drv : {"", "xe", "vgem"}) {
		auto op = decode_ioctl(drv, ioctl_rec(1, 3, 1, DRM_IOCTL_I915_GEM_CREATE, in, out));
		ASSERT_TRUE(std::holds_alternative<Ignored>(op)) << drv;
		EXPECT_EQ(std::get<Ignored>(op).nr, 0x5bu);
	}
	auto op = decode_ioctl("i915", ioctl_rec(1, 3, 1, DRM_IOCTL_I915_GEM_CREATE, in, out));
	ASSERT_TRUE(std::holds_alternative<I915GemCreate>(op));
	EXPECT_EQ(std::get<I915GemCreate>(op).handle, 1u);
	EXPECT_TRUE(is_driver_nr(0x40));
	EXPECT_TRUE(is_driver_nr(0x9f));
	EXPECT_FALSE(is_driver_nr(0xa0));
	EXPECT_FALSE(is_driver_nr(0x3f));
	EXPECT_FALSE(driver_ioctls("i915").empty());
	EXPECT_FALSE(driver_ioctls("xe").empty());
	EXPECT_TRUE(driver_ioctls("vgem").empty());
	EXPECT_EQ(find_ioctl("vgem", DRM_IOCTL_I915_GEM_CREATE), nullptr);
}

TEST(DrmDecode, NamesAndTables)
{
	EXPECT_EQ(ioctl_name("vgem", DRM_IOCTL_MODE_CREATE_DUMB), "MODE_CREATE_DUMB");
	EXPECT_EQ(ioctl_name("vgem", DRM_IOCTL_PRIME_FD_TO_HANDLE), "PRIME_FD_TO_HANDLE");
	EXPECT_EQ(ioctl_name("i915", DRM_IOCTL_I915_GEM_CREATE), "GEM_CREATE");
	EXPECT_EQ(ioctl_name("vgem", DRM_IOCTL_I915_GEM_CREATE), "vgem ioctl 0x1b");
	EXPECT_EQ(ioctl_name("", DRM_IOCTL_I915_GEM_CREATE), "driver ioctl 0x1b");
	EXPECT_EQ(ioctl_name("vgem", DRM_IOCTL_MODE_SETCRTC), "MODE_SETCRTC");
	EXPECT_EQ(ioctl_name("vgem", DRM_IOCTL_MODE_SETGAMMA), "MODE_SETGAMMA");
	EXPECT_EQ(ioctl_name("i915", DRM_IOCTL_I915_GEM_MADVISE), "GEM_MADVISE");
	EXPECT_EQ(ioctl_name("vgem", _IO('d', 0xfe)), "DRM ioctl 0xfe");
	EXPECT_EQ(core_ioctls().size(), 28u);
	for (const auto &d : core_ioctls())
		EXPECT_FALSE(is_driver_nr(d.nr)) << d.name;
	for (const char *drv : {"i915", "xe", "virtio_gpu"})
		for (const auto &d : driver_ioctls(drv)) {
			EXPECT_TRUE(is_driver_nr(d.nr)) << drv << " " << d.name;
			EXPECT_LE(d.arg_size, std::size_t{GW_IOCTL_ARG_MAX}) << drv << " " << d.name;
			EXPECT_TRUE(d.cmd == 0 || _IOC_NR(d.cmd) == d.nr) << drv << " " << d.name;
		}
	EXPECT_EQ(driver_name(GW_DRV_I915), "i915");
	EXPECT_EQ(driver_name(GW_DRV_XE), "xe");
	EXPECT_EQ(driver_name(GW_DRV_OTHER), "");
}

// Every number is decoded, quiet (changes nothing a restore brings back), or recorded as
// Undecoded: the tracer's masks come from these answers (set_decoded_ioctls).
TEST(DrmDecode, EveryNumberIsDecodedQuietOrNoted)
{
	EXPECT_TRUE(is_decoded("", _IOC_NR(DRM_IOCTL_MODE_CREATE_DUMB)));
	for (uint32_t cmd : std::initializer_list<uint32_t>{
		     DRM_IOCTL_MODE_SETCRTC, DRM_IOCTL_MODE_PAGE_FLIP, DRM_IOCTL_MODE_SETPLANE, DRM_IOCTL_SET_MASTER,
		     DRM_IOCTL_DROP_MASTER, DRM_IOCTL_MODE_ATOMIC, DRM_IOCTL_MODE_CREATEPROPBLOB,
		     DRM_IOCTL_MODE_DESTROYPROPBLOB, DRM_IOCTL_MODE_CURSOR, DRM_IOCTL_MODE_CURSOR2})
		EXPECT_TRUE(is_decoded("", _IOC_NR(cmd))) << ioctl_name("", cmd);
	EXPECT_TRUE(is_quiet("", _IOC_NR(DRM_IOCTL_VERSION)));
	EXPECT_TRUE(is_quiet("", _IOC_NR(DRM_IOCTL_MODE_GETRESOURCES)));
	EXPECT_TRUE(is_quiet("", _IOC_NR(DRM_IOCTL_WAIT_VBLANK)));
	for (uint32_t cmd :
	     std::initializer_list<uint32_t>{DRM_IOCTL_MODE_SETGAMMA, DRM_IOCTL_MODE_OBJ_SETPROPERTY,
					     DRM_IOCTL_MODE_CREATE_LEASE, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE}) {
		EXPECT_FALSE(is_decoded("", _IOC_NR(cmd))) << ioctl_name("", cmd);
		EXPECT_FALSE(is_quiet("", _IOC_NR(cmd))) << ioctl_name("", cmd);
	}
	// no decoded number is also called quiet, and every core name is a core number
	for (const auto &k : core_known_ioctls()) {
		EXPECT_FALSE(is_driver_nr(k.nr)) << k.name;
		EXPECT_FALSE(is_decoded("", k.nr)) << k.name;
	}
	for (const char *drv : {"i915", "xe", "virtio_gpu"})
		for (const auto &k : drv == std::string("i915") ? i915_known_ioctls()
				     : drv == std::string("xe") ? xe_known_ioctls()
								: virtio_gpu_known_ioctls()) {
			EXPECT_TRUE(is_driver_nr(k.nr)) << drv << " " << k.name;
			EXPECT_FALSE(is_decoded(drv, k.nr)) << drv << " " << k.name;
		}
	// i915's hot paths are quiet or decoded; a driver without a table has only unknown numbers
	EXPECT_TRUE(is_quiet("i915", _IOC_NR(DRM_IOCTL_I915_GEM_BUSY)));
	EXPECT_TRUE(is_decoded("i915", _IOC_NR(DRM_IOCTL_I915_GEM_EXECBUFFER2)));
	EXPECT_FALSE(is_quiet("i915", _IOC_NR(DRM_IOCTL_I915_GEM_MADVISE)));
	EXPECT_FALSE(is_quiet("bochs", 0x43) || is_decoded("bochs", 0x43));
}

// GETFB hands out a new handle on the framebuffer's buffer (none without the right to it);
// GETFB2 one per buffer, planes on one buffer sharing it.
TEST(DrmDecode, GetFbHandles)
{
	drm_mode_fb_cmd in{}, out{};
	in.fb_id = out.fb_id = 40;
	out.width = 640;
	out.height = 480;
	out.handle = 3;
	Op op = decode_ioctl("virtio_gpu", ioctl_rec(1, 3, 1, DRM_IOCTL_MODE_GETFB, in, out));
	ASSERT_TRUE(std::holds_alternative<GetFb>(op));
	EXPECT_EQ(std::get<GetFb>(op).fb_id, 40u);
	EXPECT_EQ(std::get<GetFb>(op).handles, std::vector<uint32_t>{3});
	out.handle = 0;
	EXPECT_TRUE(std::get<GetFb>(decode_ioctl("virtio_gpu", ioctl_rec(1, 3, 1, DRM_IOCTL_MODE_GETFB, in, out)))
			    .handles.empty());
	drm_mode_fb_cmd2 in2{}, out2{};
	in2.fb_id = out2.fb_id = 41;
	uint32_t hs[4] = {5, 5, 6, 0}; // NV12-like: two planes on buffer 5, one on 6
	std::copy(std::begin(hs), std::end(hs), out2.handles);
	op = decode_ioctl("virtio_gpu",
			  gwtest::ioctl_head_rec(1, 3, 1, DRM_IOCTL_MODE_GETFB2, in2, out2, GW_DRV_OTHER));
	ASSERT_TRUE(std::holds_alternative<GetFb>(op));
	EXPECT_EQ(std::get<GetFb>(op).fb_id, 41u);
	EXPECT_EQ(std::get<GetFb>(op).handles, (std::vector<uint32_t>{5, 6}));
	EXPECT_EQ(ioctl_name("", DRM_IOCTL_MODE_GETFB2), "MODE_GETFB2");
}

// ADDFB2's argument is longer than in[]: its tail (offsets[3], modifiers) comes as an
// argument blob of the ext record; without it, modifiers are unknown.
TEST(DrmDecode, AddFb2WithModifiers)
{
	drm_mode_fb_cmd2 in{}, out{};
	in.width = 64;
	in.height = 32;
	in.pixel_format = 0x34325258; // XR24
	in.flags = DRM_MODE_FB_MODIFIERS;
	in.handles[0] = 1;
	in.handles[1] = 2;
	in.pitches[0] = in.pitches[1] = 256;
	in.offsets[1] = 8192;
	in.modifier[0] = in.modifier[1] = 0x0100000000000001ull;
	out = in;
	out.fb_id = 45;
	auto ev = gwtest::ioctl_head_rec(1, 3, 1, DRM_IOCTL_MODE_ADDFB2, in, out, GW_DRV_OTHER);
	gw_ev_ioctl_ext x{};
	x.file = 1;
	x.cmd = DRM_IOCTL_MODE_ADDFB2;
	x.n_blobs = 1;
	x.blobs[0].owner = GW_EXT_OWNER_ARG;
	x.blobs[0].len = sizeof in - GW_IOCTL_ARG_MAX;
	std::memcpy(x.blobs[0].data, reinterpret_cast<const uint8_t *>(&in) + GW_IOCTL_ARG_MAX, x.blobs[0].len);
	Op op = decode_ioctl("virtio_gpu", IoctlRecord{ev, &x});
	ASSERT_TRUE(std::holds_alternative<AddFb>(op));
	const AddFb &a = std::get<AddFb>(op);
	EXPECT_EQ(a.fb_id, 45u);
	EXPECT_TRUE(a.modifiers_known);
	ASSERT_EQ(a.planes.size(), 2u);
	EXPECT_EQ(a.planes[1].handle, 2u);
	EXPECT_EQ(a.planes[1].offset, 8192u);
	EXPECT_EQ(a.planes[1].modifier, 0x0100000000000001ull);
	// no tail captured: the modifiers are unknown
	EXPECT_FALSE(std::get<AddFb>(decode_ioctl("virtio_gpu", IoctlRecord{ev, nullptr})).modifiers_known);
	op = decode_ioctl("bochs-drm", gwtest::addfb_rec(1, 3, 1, 7, 640, 480, 40));
	ASSERT_TRUE(std::holds_alternative<AddFb>(op));
	EXPECT_TRUE(std::get<AddFb>(op).legacy);
	EXPECT_EQ(std::get<AddFb>(op).planes.at(0).handle, 7u);
	uint32_t id = 40;
	op = decode_ioctl("bochs-drm", ioctl_rec(1, 3, 1, DRM_IOCTL_MODE_RMFB, id, id));
	EXPECT_EQ(std::get<RmFb>(op).fb_id, 40u);
}

// The display configuration: SETCRTC (captured up to the mode's vrefresh), PAGE_FLIP,
// SETPLANE, SET/DROP_MASTER; RMFB and CLOSEFB told apart.
TEST(DrmDecode, DisplayConfiguration)
{
	Op op = decode_ioctl("virtio_gpu", gwtest::setcrtc_rec(1, 3, 1, 35, 41, 1024, 768, 60, 65000, 8, 16));
	ASSERT_TRUE(std::holds_alternative<SetCrtc>(op)) << op.index();
	const SetCrtc &sc = std::get<SetCrtc>(op);
	EXPECT_EQ(sc.crtc_id, 35u);
	EXPECT_EQ(sc.fb_id, 41u);
	EXPECT_EQ(sc.x, 8u);
	EXPECT_EQ(sc.y, 16u);
	EXPECT_TRUE(sc.mode_valid);
	EXPECT_EQ(sc.connectors, 1u);
	EXPECT_EQ(sc.mode.clock, 65000u);
	EXPECT_EQ(sc.mode.hdisplay, 1024u);
	EXPECT_EQ(sc.mode.vdisplay, 768u);
	EXPECT_EQ(sc.mode.vrefresh, 60u);

	drm_mode_crtc_page_flip flip{35, 42, DRM_MODE_PAGE_FLIP_EVENT, 0, 7};
	op = decode_ioctl("virtio_gpu", ioctl_rec(1, 3, 1, DRM_IOCTL_MODE_PAGE_FLIP, flip, flip));
	ASSERT_TRUE(std::holds_alternative<PageFlip>(op));
	EXPECT_EQ(std::get<PageFlip>(op).crtc_id, 35u);
	EXPECT_EQ(std::get<PageFlip>(op).fb_id, 42u);

	drm_mode_set_plane plane{33, 35, 41, 0, -10, 20, 64, 64, 0, 0, 64 << 16, 64 << 16};
	op = decode_ioctl("virtio_gpu", ioctl_rec(1, 3, 1, DRM_IOCTL_MODE_SETPLANE, plane, plane));
	ASSERT_TRUE(std::holds_alternative<SetPlane>(op));
	EXPECT_EQ(std::get<SetPlane>(op).plane_id, 33u);
	EXPECT_EQ(std::get<SetPlane>(op).crtc_x, -10);
	EXPECT_EQ(std::get<SetPlane>(op).src_h, 64u << 16);

	auto master = gw::abi::make_record<gw_ev_ioctl>(1);
	master.file = 1;
	master.fd = 3;
	master.cmd = DRM_IOCTL_SET_MASTER;
	op = decode_ioctl("bochs-drm", master);
	ASSERT_TRUE(std::holds_alternative<Master>(op));
	EXPECT_TRUE(std::get<Master>(op).set);
	master.cmd = DRM_IOCTL_DROP_MASTER;
	EXPECT_FALSE(std::get<Master>(decode_ioctl("bochs-drm", master)).set);

	drm_mode_cursor cur{DRM_MODE_CURSOR_BO | DRM_MODE_CURSOR_MOVE, 35, -4, 20, 64, 64, 7};
	op = decode_ioctl("virtio_gpu", ioctl_rec(1, 3, 1, DRM_IOCTL_MODE_CURSOR, cur, cur));
	ASSERT_TRUE(std::holds_alternative<Cursor>(op)) << op.index();
	EXPECT_EQ(std::get<Cursor>(op).handle, 7u);
	EXPECT_EQ(std::get<Cursor>(op).x, -4);
	EXPECT_EQ(std::get<Cursor>(op).hot_x, 0);
	drm_mode_cursor2 cur2{DRM_MODE_CURSOR_BO, 35, 0, 0, 64, 64, 7, 3, 5};
	op = decode_ioctl("virtio_gpu", ioctl_rec(1, 3, 1, DRM_IOCTL_MODE_CURSOR2, cur2, cur2));
	ASSERT_TRUE(std::holds_alternative<Cursor>(op));
	EXPECT_EQ(std::get<Cursor>(op).hot_y, 5);
	EXPECT_EQ(std::get<Cursor>(op).width, 64u);

	drm_mode_create_blob blob_in{0x7000, 68, 0}, blob_out{0x7000, 68, 44};
	op = decode_ioctl("virtio_gpu", ioctl_rec(1, 3, 1, DRM_IOCTL_MODE_CREATEPROPBLOB, blob_in, blob_out));
	ASSERT_TRUE(std::holds_alternative<CreateBlob>(op)) << op.index();
	EXPECT_EQ(std::get<CreateBlob>(op).blob_id, 44u); // written back by the kernel
	EXPECT_EQ(std::get<CreateBlob>(op).length, 68u);
	drm_mode_destroy_blob gone{44};
	op = decode_ioctl("virtio_gpu", ioctl_rec(1, 3, 1, DRM_IOCTL_MODE_DESTROYPROPBLOB, gone, gone));
	ASSERT_TRUE(std::holds_alternative<DestroyBlob>(op));
	EXPECT_EQ(std::get<DestroyBlob>(op).blob_id, 44u);
	drm_mode_atomic commit{};
	commit.flags = DRM_MODE_ATOMIC_ALLOW_MODESET;
	commit.count_objs = 3;
	op = decode_ioctl("virtio_gpu", ioctl_rec(1, 3, 1, DRM_IOCTL_MODE_ATOMIC, commit, commit));
	ASSERT_TRUE(std::holds_alternative<AtomicCommit>(op));
	EXPECT_EQ(std::get<AtomicCommit>(op).count_objs, 3u);
	commit.flags |= DRM_MODE_ATOMIC_TEST_ONLY; // changes nothing
	EXPECT_TRUE(std::holds_alternative<Ignored>(
		decode_ioctl("virtio_gpu", ioctl_rec(1, 3, 1, DRM_IOCTL_MODE_ATOMIC, commit, commit))));

	uint32_t id = 41;
	EXPECT_FALSE(std::get<RmFb>(decode_ioctl("bochs-drm", ioctl_rec(1, 3, 1, DRM_IOCTL_MODE_RMFB, id, id))).close);
	struct {
		uint32_t fb_id, pad;
	} closefb{41, 0};
	Op c = decode_ioctl("bochs-drm", ioctl_rec(1, 3, 1, _IOWR('d', 0xd0, decltype(closefb)), closefb, closefb));
	ASSERT_TRUE(std::holds_alternative<RmFb>(c));
	EXPECT_TRUE(std::get<RmFb>(c).close);
	EXPECT_EQ(std::get<RmFb>(c).fb_id, 41u);
}

TEST(DrmDecode, UndecodedRecordNamesTheIoctl)
{
	Op op = decode_ioctl("vgem", gwtest::undecoded_rec(1, 3, 1, DRM_IOCTL_MODE_SETGAMMA));
	ASSERT_TRUE(std::holds_alternative<Undecoded>(op));
	EXPECT_EQ(std::get<Undecoded>(op).name, "MODE_SETGAMMA");
	op = decode_ioctl("vgem", gwtest::undecoded_rec(1, 3, 1, _IOW('d', 0x41, uint64_t)));
	EXPECT_EQ(std::get<Undecoded>(op).name, "vgem ioctl 0x01");
	auto bad = gwtest::undecoded_rec(1, 3, 1, DRM_IOCTL_MODE_SETGAMMA);
	bad.arg_size = 8; // an undecoded record never carries its argument
	EXPECT_TRUE(std::holds_alternative<Malformed>(decode_ioctl("vgem", bad)));
}

TEST(DrmDecode, NonDrmIoctlIsIgnored)
{
	drm_gem_close gc{1, 0};
	uint32_t cmd = _IOW('b', 0x09, struct drm_gem_close); // same nr, another ioctl type
	EXPECT_TRUE(std::holds_alternative<Ignored>(decode_ioctl("vgem", ioctl_rec(1, 3, 1, cmd, gc, gc))));
}

TEST(DrmDecode, ShortArgumentIsMalformed)
{
	// a caller passing an old, shorter struct: the command's size is 8, the struct needs 32
	struct short_dumb {
		__u32 height, width;
	} in{1, 1};
	uint32_t cmd = _IOWR('d', 0xB2, struct short_dumb);
	auto op = decode_ioctl("vgem", ioctl_rec(1, 3, 1, cmd, in, in));
	ASSERT_TRUE(std::holds_alternative<Malformed>(op));
	EXPECT_NE(std::get<Malformed>(op).reason.find("MODE_CREATE_DUMB"), std::string::npos);
}

TEST(DrmDecode, ArgSizeMustAgreeWithCommand)
{
	drm_gem_close gc{1, 0};
	auto r = ioctl_rec(1, 3, 1, DRM_IOCTL_GEM_CLOSE, gc, gc);
	r.arg_size = 4;
	EXPECT_TRUE(std::holds_alternative<Malformed>(decode_ioctl("vgem", r)));
	r.arg_size = GW_IOCTL_ARG_MAX + 1;
	EXPECT_TRUE(std::holds_alternative<Malformed>(decode_ioctl("vgem", r)));
}

} // namespace
