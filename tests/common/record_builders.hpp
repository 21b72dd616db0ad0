// Builders for ABI records (bpf/gpuwatch.h), as the tracer would write them: shared by the
// unit tests (tests/unit/records.hpp builds its World on them) and the benchmarks
// (tests/bench/model_bench.cpp generates its event streams with them).
#pragma once

#include <algorithm>
#include <cstring>
#include <type_traits>

#include <drm.h>
#include <drm_mode.h>

#include "event_abi.hpp"

namespace gwtest
{

// kernel file pointers, as the tracer would report them
constexpr uint64_t kCard = 0xffff888000001000;
constexpr uint64_t kCard2 = 0xffff888000002000;
constexpr uint64_t kRender = 0xffff888000003000;
constexpr uint64_t kBuf = 0xffff888000004000; // a dma-buf
constexpr uint64_t kBuf2 = 0xffff888000005000;
constexpr uint64_t kFake = 0x100000000; // a fake mmap offset (4 GiB)

inline gw_ev_fd fd_rec(uint32_t tgid, int fd, uint64_t file, uint8_t source = GW_FD_OPEN, bool cloexec = false,
		       uint32_t minor = 0, uint8_t type = GW_FILE_DRM, const char *driver = "vgem")
{
	auto r = gw::abi::make_record<gw_ev_fd>(tgid);
	r.file = file;
	r.fd = fd;
	r.f_flags = 02; // O_RDWR
	r.major = type == GW_FILE_DRM ? GW_DRM_MAJOR : 0;
	r.minor = minor;
	r.type = type;
	r.source = source;
	r.cloexec = cloexec;
	if (type == GW_FILE_DRM)
		std::strncpy(r.driver, driver, sizeof r.driver);
	if (source == GW_FD_SNAPSHOT)
		r.hdr.hook = GW_HOOK_ITER;
	return r;
}

inline gw_ev_close close_rec(uint32_t tgid, int fd, uint64_t file)
{
	auto r = gw::abi::make_record<gw_ev_close>(tgid);
	r.file = file;
	r.fd = fd;
	return r;
}

// An ioctl record: `in` is the argument at entry, `out` at exit (same struct type).
template <class T>
gw_ev_ioctl ioctl_rec(uint32_t tgid, int fd, uint64_t file, uint32_t cmd, const T &in, const T &out, uint64_t aux = 0)
{
	static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= GW_IOCTL_ARG_MAX);
	auto r = gw::abi::make_record<gw_ev_ioctl>(tgid);
	r.file = file;
	r.aux_file = aux;
	r.cmd = cmd;
	r.fd = fd;
	r.arg_size = _IOC_SIZE(cmd);
	std::memcpy(r.in, &in, sizeof in);
	std::memcpy(r.out, &out, sizeof out);
	return r;
}

// An ioctl record of any argument size: the first min(_IOC_SIZE(cmd), GW_IOCTL_ARG_MAX) bytes
// of `in` and `out`, the driver and the return value, as gw_ioctl_exit writes them.
template <class T>
gw_ev_ioctl ioctl_head_rec(uint32_t tgid, int fd, uint64_t file, uint32_t cmd, const T &in, const T &out, uint8_t drv,
			   int32_t ret = 0)
{
	static_assert(std::is_trivially_copyable_v<T>);
	auto r = gw::abi::make_record<gw_ev_ioctl>(tgid);
	r.file = file;
	r.cmd = cmd;
	r.fd = fd;
	r.arg_size = static_cast<uint16_t>(std::min<std::size_t>(_IOC_SIZE(cmd), GW_IOCTL_ARG_MAX));
	r.drv = drv;
	r.ret = ret;
	std::memcpy(r.in, &in, std::min<std::size_t>(sizeof in, r.arg_size));
	std::memcpy(r.out, &out, std::min<std::size_t>(sizeof out, r.arg_size));
	return r;
}

// The fexit path's record of the same call (GW_EV_IOCTL_AFTER): the argument as the call
// left it (full's out[]), once; the bytes after arg_size hold `junk`, as the BPF side leaves
// whatever the ring held there.
inline gw_ev_ioctl_after after_rec(const gw_ev_ioctl &full, uint8_t junk = 0xa5)
{
	auto r = gw::abi::make_record<gw_ev_ioctl_after>(full.hdr.tgid);
	r.hdr.tid = full.hdr.tid;
	r.hdr.hook = GW_HOOK_FEXIT;
	std::memcpy(&r.file, &full.file, offsetof(gw_ev_ioctl, in) - offsetof(gw_ev_ioctl, file));
	std::memset(r.in, junk, sizeof r.in);
	std::memcpy(r.in, full.out, std::min<std::size_t>(full.arg_size, sizeof r.in));
	return r;
}

// The generic GEM ioctls, as a successful call records them.
inline gw_ev_ioctl create_dumb_rec(uint32_t tgid, int fd, uint64_t file, uint32_t handle, uint32_t w = 64,
				   uint32_t h = 64)
{
	drm_mode_create_dumb in{}, out{};
	in.width = w, in.height = h, in.bpp = 32;
	out = in;
	out.handle = handle, out.pitch = w * 4, out.size = uint64_t{w} * h * 4;
	return ioctl_rec(tgid, fd, file, DRM_IOCTL_MODE_CREATE_DUMB, in, out);
}
inline gw_ev_ioctl map_dumb_rec(uint32_t tgid, int fd, uint64_t file, uint32_t handle, uint64_t offset)
{
	drm_mode_map_dumb in{}, out{};
	in.handle = handle;
	out = in;
	out.offset = offset;
	return ioctl_rec(tgid, fd, file, DRM_IOCTL_MODE_MAP_DUMB, in, out);
}
// MODE_ADDFB of an XRGB8888 (bpp 32, depth 24) framebuffer on `handle`, that got id fb_id
inline gw_ev_ioctl addfb_rec(uint32_t tgid, int fd, uint64_t file, uint32_t handle, uint32_t w, uint32_t h,
			     uint32_t fb_id)
{
	drm_mode_fb_cmd in{}, out{};
	in.width = w;
	in.height = h;
	in.pitch = w * 4;
	in.bpp = 32;
	in.depth = 24;
	in.handle = handle;
	out = in;
	out.fb_id = fb_id;
	return ioctl_rec(tgid, fd, file, DRM_IOCTL_MODE_ADDFB, in, out);
}
// MODE_SETCRTC of CRTC crtc_id showing fb_id at (x, y) in a w x h mode on one connector; a
// 0 x 0 mode switches the CRTC off (mode_valid 0)
inline gw_ev_ioctl setcrtc_rec(uint32_t tgid, int fd, uint64_t file, uint32_t crtc_id, uint32_t fb_id, uint16_t w,
			       uint16_t h, uint32_t vrefresh = 60, uint32_t clock = 0, uint32_t x = 0, uint32_t y = 0)
{
	drm_mode_crtc c{};
	c.set_connectors_ptr = 0x1000;
	c.count_connectors = 1;
	c.crtc_id = crtc_id;
	c.fb_id = fb_id;
	c.x = x;
	c.y = y;
	c.mode_valid = w && h;
	c.mode.clock = clock;
	c.mode.hdisplay = w;
	c.mode.vdisplay = h;
	c.mode.vrefresh = vrefresh;
	return ioctl_head_rec(tgid, fd, file, DRM_IOCTL_MODE_SETCRTC, c, c, GW_DRV_OTHER);
}
// The success of an ioctl the decoder does not know (gw_ioctl_exit's GW_IOCTL_NOTE record)
inline gw_ev_ioctl undecoded_rec(uint32_t tgid, int fd, uint64_t file, uint32_t cmd, uint8_t drv = GW_DRV_OTHER)
{
	auto r = gw::abi::make_record<gw_ev_ioctl>(tgid);
	r.file = file;
	r.cmd = cmd;
	r.fd = fd;
	r.drv = drv;
	r.undecoded = 1;
	return r;
}
inline gw_ev_ioctl gem_close_rec(uint32_t tgid, int fd, uint64_t file, uint32_t handle)
{
	drm_gem_close in{handle, 0};
	return ioctl_rec(tgid, fd, file, DRM_IOCTL_GEM_CLOSE, in, in);
}

inline gw_ev_mmap mmap_rec(uint32_t tgid, uint64_t file, uint64_t start, uint64_t length, uint64_t offset,
			   uint32_t prot = 3, bool shared = true, int fd = 3)
{
	auto r = gw::abi::make_record<gw_ev_mmap>(tgid);
	r.file = file;
	r.start = start;
	r.length = length;
	r.offset = offset;
	r.fd = fd;
	r.prot = prot;
	r.flags = shared ? 1 : 2;
	r.shared = shared;
	if (fd < 0)
		r.hdr.hook = GW_HOOK_ITER;
	return r;
}

inline gw_ev_munmap munmap_rec(uint32_t tgid, uint64_t start, uint64_t length)
{
	auto r = gw::abi::make_record<gw_ev_munmap>(tgid);
	r.start = start;
	r.length = length;
	return r;
}

} // namespace gwtest
