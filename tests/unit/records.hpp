// Builders for ABI records, and a Model wrapper that applies them: the unit tests describe
// event sequences as calls like `w.open(100, 3, kCard)`.
#pragma once

#include <cstring>
#include <fcntl.h>
#include <string>
#include <type_traits>

#include <drm.h>
#include <drm_mode.h>

#include "drm_decode.hpp"
#include "event_abi.hpp"
#include "model.hpp"

namespace gwtest {

using gw::ApplyStatus;

// kernel file pointers, as the tracer would report them
constexpr uint64_t kCard = 0xffff888000001000;
constexpr uint64_t kCard2 = 0xffff888000002000;
constexpr uint64_t kRender = 0xffff888000003000;
constexpr uint64_t kBuf = 0xffff888000004000;  // a dma-buf
constexpr uint64_t kBuf2 = 0xffff888000005000;
constexpr uint64_t kFake = 0x100000000;         // a fake mmap offset (4 GiB)

inline gw_ev_fd fd_rec(uint32_t tgid, int fd, uint64_t file, uint8_t source = GW_FD_OPEN, bool cloexec = false,
                       uint32_t minor = 0, uint8_t type = GW_FILE_DRM, const char *driver = "vgem") {
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

// An ioctl record: `in` is the argument at entry, `out` at exit (same struct type).
template <class T>
gw_ev_ioctl ioctl_rec(uint32_t tgid, int fd, uint64_t file, uint32_t cmd, const T &in, const T &out, uint64_t aux = 0) {
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

inline gw_ev_mmap mmap_rec(uint32_t tgid, uint64_t file, uint64_t start, uint64_t length, uint64_t offset,
                           uint32_t prot = 3, bool shared = true, int fd = 3) {
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

// Applies records to a Model and offers one call per event.
struct World {
	gw::Model m{"/sys/fs/cgroup/test"};

	template <class T> ApplyStatus apply(const T &rec) { return m.apply(gw::abi::record_bytes(rec)); }

	void proc(uint32_t pid, const char *comm = "app") { m.add_process(pid, comm); }

	ApplyStatus open(uint32_t pid, int fd, uint64_t file, uint32_t minor = 0, bool cloexec = false) {
		return apply(fd_rec(pid, fd, file, GW_FD_OPEN, cloexec, minor));
	}
	ApplyStatus dup(uint32_t pid, int fd, uint64_t file, bool cloexec = false) {
		return apply(fd_rec(pid, fd, file, GW_FD_DUP, cloexec));
	}
	ApplyStatus close(uint32_t pid, int fd, uint64_t file) {
		auto r = gw::abi::make_record<gw_ev_close>(pid);
		r.file = file;
		r.fd = fd;
		return apply(r);
	}
	ApplyStatus close_range(uint32_t pid, uint32_t first, uint32_t last, uint32_t flags) {
		auto r = gw::abi::make_record<gw_ev_close_range>(pid);
		r.first = first;
		r.last = last;
		r.flags = flags;
		return apply(r);
	}
	ApplyStatus fork(uint32_t parent, uint32_t child) {
		auto r = gw::abi::make_record<gw_ev_fork>(parent);
		r.child_tgid = child;
		return apply(r);
	}
	ApplyStatus exec(uint32_t pid, const char *comm) {
		auto r = gw::abi::make_record<gw_ev_exec>(pid);
		std::strncpy(r.comm, comm, sizeof r.comm);
		return apply(r);
	}
	ApplyStatus exit(uint32_t pid) { return apply(gw::abi::make_record<gw_ev_exit>(pid)); }

	ApplyStatus mmap(uint32_t pid, uint64_t file, uint64_t start, uint64_t length, uint64_t offset) {
		return apply(mmap_rec(pid, file, start, length, offset));
	}
	ApplyStatus munmap(uint32_t pid, uint64_t start, uint64_t length) {
		auto r = gw::abi::make_record<gw_ev_munmap>(pid);
		r.start = start;
		r.length = length;
		return apply(r);
	}
	ApplyStatus mremap(uint32_t pid, uint64_t old_start, uint64_t old_len, uint64_t new_start, uint64_t new_len,
	                   uint32_t flags = 1) {
		auto r = gw::abi::make_record<gw_ev_mremap>(pid);
		r.old_start = old_start;
		r.old_length = old_len;
		r.new_start = new_start;
		r.new_length = new_len;
		r.flags = flags;
		return apply(r);
	}

	// --- DRM ioctls (fd 3 unless said otherwise) ---
	ApplyStatus create_dumb(uint32_t pid, uint64_t file, uint32_t handle, uint32_t w = 64, uint32_t h = 64,
	                        int fd = 3) {
		drm_mode_create_dumb in{}, out{};
		in.width = w, in.height = h, in.bpp = 32;
		out = in;
		out.handle = handle, out.pitch = w * 4, out.size = uint64_t{w} * h * 4;
		return apply(ioctl_rec(pid, fd, file, DRM_IOCTL_MODE_CREATE_DUMB, in, out));
	}
	ApplyStatus map_dumb(uint32_t pid, uint64_t file, uint32_t handle, uint64_t offset, int fd = 3) {
		drm_mode_map_dumb in{}, out{};
		in.handle = handle;
		out = in;
		out.offset = offset;
		return apply(ioctl_rec(pid, fd, file, DRM_IOCTL_MODE_MAP_DUMB, in, out));
	}
	ApplyStatus destroy_dumb(uint32_t pid, uint64_t file, uint32_t handle, int fd = 3) {
		drm_mode_destroy_dumb in{handle};
		return apply(ioctl_rec(pid, fd, file, DRM_IOCTL_MODE_DESTROY_DUMB, in, in));
	}
	ApplyStatus gem_close(uint32_t pid, uint64_t file, uint32_t handle, int fd = 3) {
		drm_gem_close in{handle, 0};
		return apply(ioctl_rec(pid, fd, file, DRM_IOCTL_GEM_CLOSE, in, in));
	}
	ApplyStatus flink(uint32_t pid, uint64_t file, uint32_t handle, uint32_t name, int fd = 3) {
		drm_gem_flink in{handle, 0}, out{handle, name};
		return apply(ioctl_rec(pid, fd, file, DRM_IOCTL_GEM_FLINK, in, out));
	}
	ApplyStatus gem_open(uint32_t pid, uint64_t file, uint32_t name, uint32_t handle, uint64_t size, int fd = 3) {
		drm_gem_open in{name, 0, 0}, out{name, handle, size};
		return apply(ioctl_rec(pid, fd, file, DRM_IOCTL_GEM_OPEN, in, out));
	}
	ApplyStatus export_fd(uint32_t pid, uint64_t file, uint32_t handle, int new_fd, uint64_t buf,
	                      bool cloexec = true, int fd = 3) {
		drm_prime_handle in{handle, cloexec ? uint32_t(DRM_CLOEXEC | DRM_RDWR) : uint32_t(DRM_RDWR), -1};
		drm_prime_handle out = in;
		out.fd = new_fd;
		return apply(ioctl_rec(pid, fd, file, DRM_IOCTL_PRIME_HANDLE_TO_FD, in, out, buf));
	}
	ApplyStatus import_fd(uint32_t pid, uint64_t file, int buf_fd, uint32_t handle, uint64_t buf, int fd = 3) {
		drm_prime_handle in{0, 0, buf_fd}, out{handle, 0, buf_fd};
		return apply(ioctl_rec(pid, fd, file, DRM_IOCTL_PRIME_FD_TO_HANDLE, in, out, buf));
	}

	// --- views ---
	const gw::Process &p(uint32_t pid) const { return m.processes().at(pid); }
	const gw::DrmFile &f(uint64_t kfile) const { return m.files().at(kfile); }
	bool has_file(uint64_t kfile) const { return m.files().count(kfile) > 0; }
	nlohmann::json manifest() const { return m.manifest(); }
};

} // namespace gwtest
