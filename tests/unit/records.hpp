// A Model wrapper that applies ABI records (builders in tests/common/record_builders.hpp) and
// the i915/xe user-memory capture: the unit tests describe event sequences as calls like
// `w.open(100, 3, kCard)`.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <span>
#include <fcntl.h>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include <drm.h>
#include <drm_mode.h>

#include <i915_drm.h>

#include "uapi/i915_uapi_extra.h"
#include "uapi/xe_uapi.h"

#include "drm_decode.hpp"
#include "event_abi.hpp"
#include "model.hpp"

#include "../common/record_builders.hpp"

namespace gwtest
{

using gw::ApplyStatus;

// --- i915 / xe: the user memory behind ioctl arguments ----------------------------------------
// Fake user memory: argument structs, extension nodes and arrays at fake user addresses.
struct UserMem {
	std::map<uint64_t, std::vector<uint8_t>> regions; // start -> bytes; never overlapping

	// Stores n bytes at addr, zero-padded to a node's size (the BPF side reads whole nodes).
	void put_bytes(uint64_t addr, const void *p, std::size_t n)
	{
		std::vector<uint8_t> b(std::max<std::size_t>(n, GW_EXT_NODE_SIZE), 0);
		std::memcpy(b.data(), p, n);
		regions[addr] = std::move(b);
	}
	template <class T> uint64_t put(uint64_t addr, const T &v)
	{
		static_assert(std::is_trivially_copyable_v<T>);
		put_bytes(addr, &v, sizeof v);
		return addr;
	}
	template <class T> uint64_t put_array(uint64_t addr, const std::vector<T> &v)
	{
		static_assert(std::is_trivially_copyable_v<T>);
		put_bytes(addr, v.data(), v.size() * sizeof(T));
		return addr;
	}
	// false (a fault) unless [addr, addr + n) lies inside one stored region
	bool read(uint64_t addr, void *dst, std::size_t n) const
	{
		auto it = regions.upper_bound(addr);
		if (it == regions.begin())
			return false;
		--it;
		uint64_t off = addr - it->first;
		if (off > it->second.size() || it->second.size() - off < n)
			return false;
		std::memcpy(dst, it->second.data() + off, n);
		return true;
	}
};

namespace detail
{
inline uint64_t u64_at(const uint8_t *b, uint32_t off)
{
	uint64_t v;
	std::memcpy(&v, b + off, 8);
	return v;
}
inline uint32_t u32_at(const uint8_t *b, uint32_t off)
{
	uint32_t v;
	std::memcpy(&v, b + off, 4);
	return v;
}
inline uint16_t u16_at(const uint8_t *b, uint32_t off)
{
	uint16_t v;
	std::memcpy(&v, b + off, 2);
	return v;
}
} // namespace detail

// The GW_EV_IOCTL_EXT record bpf/handlers.bpf.h (gw_ioctl_ext) emits for an ioctl `cmd` of
// driver `drv` whose argument lives at user address `arg` and read `in` (the captured bytes)
// at entry; nullopt where it emits none. Mirrors gw_ext_wanted, gw_ext_chain, gw_ext_blob and
// gw_ext_arrays with the same hard-coded numbers and offsets, so that a decoder reading other
// offsets than the BPF side captures fails these tests.
inline std::optional<gw_ev_ioctl_ext> capture_ext(const UserMem &mem, uint32_t tgid, uint64_t file, uint8_t drv,
						  uint32_t cmd, const uint8_t *in, uint64_t arg)
{
	using detail::u16_at, detail::u32_at, detail::u64_at;
	uint32_t nr = _IOC_NR(cmd), size = _IOC_SIZE(cmd), chain_off = 0;
	int how = 0; // gw_ext_wanted: 1 = chain at in[chain_off] (+ arrays), 2 = arrays only
	if (drv == GW_DRV_I915) {
		switch (nr) {
		case 0x40 + 0x3c: how = 1, chain_off = 16; break; // GEM_CREATE_EXT
		case 0x40 + 0x2d:
			if (size >= 16 && (u32_at(in, 4) & 1))
				how = 1, chain_off = 8;
			break;                                        // CONTEXT_CREATE(_EXT)
		case 0x40 + 0x3a: how = 1; break;                     // VM_CREATE
		case 0x40 + 0x35: how = u32_at(in, 4) ? 2 : 0; break; // CONTEXT_SETPARAM
		case 0x40 + 0x36: how = 2; break;                     // PERF_OPEN
		}
	} else if (drv == GW_DRV_XE) {
		if (nr == 0x41 || nr == 0x43 || nr == 0x45 ||
		    nr == 0x46) // GEM_CREATE, VM_CREATE, VM_BIND, EXEC_QUEUE_CREATE
			how = 1;
	}
	if (!how)
		return std::nullopt;
	auto x = gw::abi::make_record<gw_ev_ioctl_ext>(tgid);
	x.file = file;
	x.cmd = cmd;
	if (how == 1) { // gw_ext_chain
		uint64_t next = u64_at(in, chain_off);
		uint8_t n = 0;
		for (int i = 0; i < GW_EXT_NODES_MAX && next; i++) {
			if (!mem.read(next, x.nodes[i].data, GW_EXT_NODE_SIZE)) {
				x.truncated = 1;
				break;
			}
			x.nodes[i].uaddr = next;
			next = u64_at(x.nodes[i].data, 0);
			n = static_cast<uint8_t>(i + 1);
		}
		if (next && n == GW_EXT_NODES_MAX)
			x.truncated = 1;
		x.n_nodes = n;
	}
	auto blob = [&](uint16_t owner, uint64_t uaddr, uint64_t len) { // gw_ext_blob
		uint8_t i = x.n_blobs;
		if (!uaddr || !len)
			return;
		if (i >= GW_EXT_BLOBS_MAX) {
			x.truncated = 1;
			return;
		}
		if (len > GW_EXT_BLOB_SIZE) {
			len = GW_EXT_BLOB_SIZE;
			x.truncated = 1;
		}
		if (!mem.read(uaddr, x.blobs[i].data, len)) {
			x.truncated = 1;
			return;
		}
		x.blobs[i].uaddr = uaddr;
		x.blobs[i].len = static_cast<uint32_t>(len);
		x.blobs[i].owner = owner;
		x.n_blobs = static_cast<uint8_t>(i + 1);
	};
	if (drv == GW_DRV_I915) { // gw_ext_arrays
		if (nr == 0x40 + 0x35)
			blob(GW_EXT_OWNER_ARG, u64_at(in, 16), u32_at(in, 4));
		if (nr == 0x40 + 0x36)
			blob(GW_EXT_OWNER_ARG, u64_at(in, 8), uint64_t{u32_at(in, 4)} * 16);
		for (int i = 0; i < x.n_nodes; i++) {
			const uint8_t *d = x.nodes[i].data;
			if (nr == 0x40 + 0x3c && u32_at(d, 8) == 0)
				blob(static_cast<uint16_t>(i), u64_at(d, 40), uint64_t{u32_at(d, 36)} * 4);
			if (nr == 0x40 + 0x2d && u32_at(d, 8) == 0 && u32_at(d, 36))
				blob(static_cast<uint16_t>(i), u64_at(d, 48), u32_at(d, 36));
		}
	} else {
		if (nr == 0x46)
			blob(GW_EXT_OWNER_ARG, u64_at(in, 24), uint64_t{u16_at(in, 8)} * u16_at(in, 10) * 8);
		if (nr == 0x45) {
			uint32_t n = u32_at(in, 20);
			if (n == 1)
				blob(GW_EXT_OWNER_ARG, arg + 24, 80);
			else
				blob(GW_EXT_OWNER_ARG, u64_at(in, 24), uint64_t{n} * 80);
		}
	}
	return x;
}

// What the tracer records for one i915/xe ioctl: the argument is stored in `mem` at `arg`,
// then the GW_EV_IOCTL_EXT (if the BPF side emits one) and the GW_EV_IOCTL record.
struct IntelCall {
	std::optional<gw_ev_ioctl_ext> ext;
	gw_ev_ioctl ev;
	const gw_ev_ioctl_ext *ext_ptr() const { return ext ? &*ext : nullptr; }
	gw::drm::IoctlRecord record() const { return gw::drm::IoctlRecord{ev, ext_ptr()}; }
};
template <class T>
IntelCall intel_call(UserMem &mem, uint32_t tgid, int fd, uint64_t file, uint8_t drv, uint32_t cmd, uint64_t arg,
		     const T &in, const T &out, int32_t ret = 0)
{
	mem.put(arg, out); // the ext record is read at the ioctl's exit
	auto ev = ioctl_head_rec(tgid, fd, file, cmd, in, out, drv, ret);
	return IntelCall{capture_ext(mem, tgid, file, drv, cmd, ev.in, arg), ev};
}

// With GW_RECORD_SEEDS=DIR, every record a World applies is appended to DIR/<test name>: the
// record streams of the unit tests are the seed corpus of tests/fuzz/fuzz_records.
inline void record_seed(std::span<const std::byte> b)
{
	static const char *dir = std::getenv("GW_RECORD_SEEDS");
	if (!dir)
		return;
	const auto *t = ::testing::UnitTest::GetInstance()->current_test_info();
	std::string name = t ? std::string(t->test_suite_name()) + "." + t->name() : "outside-a-test";
	std::ofstream(std::string(dir) + "/" + name, std::ios::app | std::ios::binary)
		.write(reinterpret_cast<const char *>(b.data()), static_cast<std::streamsize>(b.size()));
}

// Applies records to a Model and offers one call per event.
struct World {
	gw::Model m{"/sys/fs/cgroup/test"};

	template <class T> ApplyStatus apply(const T &rec)
	{
		record_seed(gw::abi::record_bytes(rec));
		return m.apply(gw::abi::record_bytes(rec));
	}

	void proc(uint32_t pid, const char *comm = "app") { m.add_process(pid, comm); }

	ApplyStatus open(uint32_t pid, int fd, uint64_t file, uint32_t minor = 0, bool cloexec = false)
	{
		return apply(fd_rec(pid, fd, file, GW_FD_OPEN, cloexec, minor));
	}
	ApplyStatus dup(uint32_t pid, int fd, uint64_t file, bool cloexec = false)
	{
		return apply(fd_rec(pid, fd, file, GW_FD_DUP, cloexec));
	}
	ApplyStatus close(uint32_t pid, int fd, uint64_t file) { return apply(close_rec(pid, fd, file)); }
	ApplyStatus close_range(uint32_t pid, uint32_t first, uint32_t last, uint32_t flags)
	{
		auto r = gw::abi::make_record<gw_ev_close_range>(pid);
		r.first = first;
		r.last = last;
		r.flags = flags;
		return apply(r);
	}
	ApplyStatus fork(uint32_t parent, uint32_t child)
	{
		auto r = gw::abi::make_record<gw_ev_fork>(parent);
		r.child_tgid = child;
		return apply(r);
	}
	ApplyStatus exec(uint32_t pid, const char *comm)
	{
		auto r = gw::abi::make_record<gw_ev_exec>(pid);
		std::strncpy(r.comm, comm, sizeof r.comm);
		return apply(r);
	}
	ApplyStatus exit(uint32_t pid) { return apply(gw::abi::make_record<gw_ev_exit>(pid)); }

	ApplyStatus mmap(uint32_t pid, uint64_t file, uint64_t start, uint64_t length, uint64_t offset)
	{
		return apply(mmap_rec(pid, file, start, length, offset));
	}
	ApplyStatus munmap(uint32_t pid, uint64_t start, uint64_t length)
	{
		return apply(munmap_rec(pid, start, length));
	}
	ApplyStatus mremap(uint32_t pid, uint64_t old_start, uint64_t old_len, uint64_t new_start, uint64_t new_len,
			   uint32_t flags = 1)
	{
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
				int fd = 3)
	{
		return apply(create_dumb_rec(pid, fd, file, handle, w, h));
	}
	ApplyStatus map_dumb(uint32_t pid, uint64_t file, uint32_t handle, uint64_t offset, int fd = 3)
	{
		return apply(map_dumb_rec(pid, fd, file, handle, offset));
	}
	ApplyStatus destroy_dumb(uint32_t pid, uint64_t file, uint32_t handle, int fd = 3)
	{
		drm_mode_destroy_dumb in{handle};
		return apply(ioctl_rec(pid, fd, file, DRM_IOCTL_MODE_DESTROY_DUMB, in, in));
	}
	ApplyStatus gem_close(uint32_t pid, uint64_t file, uint32_t handle, int fd = 3)
	{
		return apply(gem_close_rec(pid, fd, file, handle));
	}
	ApplyStatus flink(uint32_t pid, uint64_t file, uint32_t handle, uint32_t name, int fd = 3)
	{
		drm_gem_flink in{handle, 0}, out{handle, name};
		return apply(ioctl_rec(pid, fd, file, DRM_IOCTL_GEM_FLINK, in, out));
	}
	ApplyStatus gem_open(uint32_t pid, uint64_t file, uint32_t name, uint32_t handle, uint64_t size, int fd = 3)
	{
		drm_gem_open in{name, 0, 0}, out{name, handle, size};
		return apply(ioctl_rec(pid, fd, file, DRM_IOCTL_GEM_OPEN, in, out));
	}
	ApplyStatus export_fd(uint32_t pid, uint64_t file, uint32_t handle, int new_fd, uint64_t buf,
			      bool cloexec = true, int fd = 3)
	{
		drm_prime_handle in{handle, cloexec ? uint32_t(DRM_CLOEXEC | DRM_RDWR) : uint32_t(DRM_RDWR), -1};
		drm_prime_handle out = in;
		out.fd = new_fd;
		return apply(ioctl_rec(pid, fd, file, DRM_IOCTL_PRIME_HANDLE_TO_FD, in, out, buf));
	}
	ApplyStatus import_fd(uint32_t pid, uint64_t file, int buf_fd, uint32_t handle, uint64_t buf, int fd = 3)
	{
		drm_prime_handle in{0, 0, buf_fd}, out{handle, 0, buf_fd};
		return apply(ioctl_rec(pid, fd, file, DRM_IOCTL_PRIME_FD_TO_HANDLE, in, out, buf));
	}

	// --- i915 / xe ---
	// A DRM file of `driver` on the device at kernel address `dev`.
	ApplyStatus open_drv(uint32_t pid, int fd, uint64_t file, const char *driver, uint64_t dev,
			     uint32_t minor = 128, uint8_t source = GW_FD_OPEN)
	{
		auto r = fd_rec(pid, fd, file, source, false, minor, GW_FILE_DRM, driver);
		r.dev = dev;
		return apply(r);
	}
	// A sync_file or i915 perf stream fd installed by an ioctl (gw_emit_fd after the ioctl).
	ApplyStatus other_fd(uint32_t pid, int fd, uint64_t file, uint8_t type)
	{
		return apply(fd_rec(pid, fd, file, GW_FD_OPEN, false, 0, type));
	}
	ApplyStatus call(const IntelCall &c)
	{
		if (c.ext)
			apply(*c.ext);
		return apply(c.ev);
	}
	template <class T>
	ApplyStatus intel(UserMem &mem, uint32_t pid, uint64_t file, uint8_t drv, uint32_t cmd, uint64_t arg,
			  const T &in, const T &out, int32_t ret = 0, int fd = 3)
	{
		return call(intel_call(mem, pid, fd, file, drv, cmd, arg, in, out, ret));
	}

	// --- views ---
	const gw::Process &p(uint32_t pid) const { return m.processes().at(pid); }
	const gw::DrmFile &f(uint64_t kfile) const { return m.files().at(kfile); }
	bool has_file(uint64_t kfile) const { return m.files().count(kfile) > 0; }
	nlohmann::json manifest() const { return gw::manifest::to_json(m.manifest()); }
};

// The i915 GEM_CREATE_EXT chain the tests use: memory regions [device 0, system 0] at
// nodes[0] (its array at `array`, or `regions` pointing elsewhere, e.g. unreadable) ->
// protected content at nodes[1] -> PAT index 3 at nodes[2].
inline void put_i915_full_chain(UserMem &mem, const uint64_t (&nodes)[3], uint64_t array, uint64_t regions)
{
	drm_i915_gem_create_ext_memory_regions r{};
	r.base.next_extension = nodes[1];
	r.base.name = I915_GEM_CREATE_EXT_MEMORY_REGIONS;
	r.num_regions = 2;
	r.regions = regions;
	mem.put(nodes[0], r);
	mem.put_array(array, std::vector<drm_i915_gem_memory_class_instance>{{I915_MEMORY_CLASS_DEVICE, 0},
									     {I915_MEMORY_CLASS_SYSTEM, 0}});
	drm_i915_gem_create_ext_protected_content pc{};
	pc.base.next_extension = nodes[2];
	pc.base.name = I915_GEM_CREATE_EXT_PROTECTED_CONTENT;
	mem.put(nodes[1], pc);
	gw_drm_i915_gem_create_ext_set_pat pat{};
	pat.base.name = I915_GEM_CREATE_EXT_SET_PAT;
	pat.pat_index = 3;
	mem.put(nodes[2], pat);
}

// The decoded operation as a T; throws (failing the test) if it decoded as another.
template <class T> T as(const gw::drm::Op &op)
{
	const T *p = std::get_if<T>(&op);
	if (!p)
		throw std::runtime_error("decoded as another operation (index " + std::to_string(op.index()) + ")");
	return *p;
}

// An xe VM_BIND operation (struct drm_xe_vm_bind_op, user/uapi/xe_uapi.h).
inline gw_xe_vm_bind_op xe_bind_op(uint32_t op, uint32_t obj, uint64_t obj_offset, uint64_t range, uint64_t addr,
				   uint16_t pat = 0, uint32_t flags = 0)
{
	gw_xe_vm_bind_op b{};
	b.op = op;
	b.obj = obj;
	b.obj_offset = obj_offset;
	b.range = range;
	b.addr = addr;
	b.pat_index = pat;
	b.flags = flags;
	return b;
}

} // namespace gwtest
