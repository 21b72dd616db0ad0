// The C++ side of the event ABI (bpf/gpuwatch.h): layout checks and a safe record view.
//
// Records arrive as byte spans from the ring buffer or the snapshot iterators, with no
// alignment guarantee. Never cast such a span to a record struct: check it with
// check_record() and copy it out with read_record<T>(), which does both.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <type_traits>

#include "gpuwatch.h"

// --- layout: the sizes written in gpuwatch.h, and the offsets where padding matters ------
static_assert(sizeof(gw_hdr) == 24);
static_assert(offsetof(gw_hdr, kind) == 0 && offsetof(gw_hdr, size) == 2);
static_assert(offsetof(gw_hdr, hook) == 4 && offsetof(gw_hdr, tgid) == 8);
static_assert(offsetof(gw_hdr, tid) == 12 && offsetof(gw_hdr, reserved) == 16);

static_assert(sizeof(gw_ev_fd) == 80 && offsetof(gw_ev_fd, dev) == 72);
static_assert(offsetof(gw_ev_fd, file) == 24 && offsetof(gw_ev_fd, fd) == 32);
static_assert(offsetof(gw_ev_fd, f_flags) == 36 && offsetof(gw_ev_fd, major) == 40);
static_assert(offsetof(gw_ev_fd, minor) == 44 && offsetof(gw_ev_fd, type) == 48);
static_assert(offsetof(gw_ev_fd, source) == 49 && offsetof(gw_ev_fd, cloexec) == 50);
static_assert(offsetof(gw_ev_fd, driver) == 56);

static_assert(sizeof(gw_ev_close) == 40);
static_assert(offsetof(gw_ev_close, file) == 24 && offsetof(gw_ev_close, fd) == 32);

static_assert(sizeof(gw_ev_close_range) == 40);
static_assert(offsetof(gw_ev_close_range, first) == 24 && offsetof(gw_ev_close_range, flags) == 32);

static_assert(sizeof(gw_ev_ioctl) == 184);
static_assert(offsetof(gw_ev_ioctl, file) == 24 && offsetof(gw_ev_ioctl, aux_file) == 32);
static_assert(offsetof(gw_ev_ioctl, cmd) == 40 && offsetof(gw_ev_ioctl, fd) == 44);
static_assert(offsetof(gw_ev_ioctl, arg_size) == 48 && offsetof(gw_ev_ioctl, in) == 56);
static_assert(offsetof(gw_ev_ioctl, drv) == 50 && offsetof(gw_ev_ioctl, ret) == 52);
static_assert(offsetof(gw_ev_ioctl, out) == 56 + GW_IOCTL_ARG_MAX);
// the fexit path's record is a gw_ev_ioctl cut before out[] (read_ioctl copies it over)
static_assert(sizeof(gw_ev_ioctl_after) == offsetof(gw_ev_ioctl, out));
static_assert(offsetof(gw_ev_ioctl_after, file) == 24 && offsetof(gw_ev_ioctl_after, aux_file) == 32);
static_assert(offsetof(gw_ev_ioctl_after, cmd) == 40 && offsetof(gw_ev_ioctl_after, fd) == 44);
static_assert(offsetof(gw_ev_ioctl_after, arg_size) == 48 && offsetof(gw_ev_ioctl_after, in) == 56);
static_assert(offsetof(gw_ev_ioctl_after, drv) == 50 && offsetof(gw_ev_ioctl_after, ret) == 52);

static_assert(sizeof(gw_ev_mmap) == 80 && offsetof(gw_ev_mmap, via) == 69 && offsetof(gw_ev_mmap, dev) == 72);
static_assert(offsetof(gw_ev_mmap, file) == 24 && offsetof(gw_ev_mmap, start) == 32);
static_assert(offsetof(gw_ev_mmap, length) == 40 && offsetof(gw_ev_mmap, offset) == 48);
static_assert(offsetof(gw_ev_mmap, fd) == 56 && offsetof(gw_ev_mmap, prot) == 60);
static_assert(offsetof(gw_ev_mmap, flags) == 64 && offsetof(gw_ev_mmap, shared) == 68);

static_assert(sizeof(gw_ev_munmap) == 40);
static_assert(offsetof(gw_ev_munmap, start) == 24 && offsetof(gw_ev_munmap, length) == 32);

static_assert(sizeof(gw_ev_mremap) == 64);
static_assert(offsetof(gw_ev_mremap, old_start) == 24 && offsetof(gw_ev_mremap, old_length) == 32);
static_assert(offsetof(gw_ev_mremap, new_start) == 40 && offsetof(gw_ev_mremap, new_length) == 48);
static_assert(offsetof(gw_ev_mremap, flags) == 56);

static_assert(sizeof(gw_ev_fork) == 32 && offsetof(gw_ev_fork, child_tgid) == 24);
static_assert(sizeof(gw_ev_exec) == 40 && offsetof(gw_ev_exec, comm) == 24);
static_assert(sizeof(gw_ev_exit) == 24);
static_assert(sizeof(gw_ev_cgroup_move) == 40);
static_assert(offsetof(gw_ev_cgroup_move, dst_cgid) == 24);
static_assert(offsetof(gw_ev_cgroup_move, threadgroup) == 32);
static_assert(sizeof(gw_counters) == 24);
static_assert((GW_EXT_BLOB_SIZE & (GW_EXT_BLOB_SIZE - 1)) == 0);
static_assert(sizeof(gw_ext_node) == 72 && sizeof(gw_ext_blob) == 1040);
static_assert(offsetof(gw_ext_blob, len) == 8 && offsetof(gw_ext_blob, owner) == 12 &&
	      offsetof(gw_ext_blob, data) == 16);
static_assert(sizeof(gw_ev_ioctl_ext) == 2696);
static_assert(offsetof(gw_ev_ioctl_ext, file) == 24 && offsetof(gw_ev_ioctl_ext, cmd) == 32);
static_assert(offsetof(gw_ev_ioctl_ext, n_nodes) == 36 && offsetof(gw_ev_ioctl_ext, truncated) == 38);
static_assert(offsetof(gw_ev_ioctl_ext, nodes) == 40 && offsetof(gw_ev_ioctl_ext, blobs) == 40 + 8 * 72);

namespace gw::abi
{

// The record struct of each kind, and back.
template <class T> struct kind_of;
template <> struct kind_of<gw_ev_fd> {
	static constexpr uint16_t value = GW_EV_FD;
};
template <> struct kind_of<gw_ev_close> {
	static constexpr uint16_t value = GW_EV_CLOSE;
};
template <> struct kind_of<gw_ev_close_range> {
	static constexpr uint16_t value = GW_EV_CLOSE_RANGE;
};
template <> struct kind_of<gw_ev_ioctl> {
	static constexpr uint16_t value = GW_EV_IOCTL;
};
template <> struct kind_of<gw_ev_mmap> {
	static constexpr uint16_t value = GW_EV_MMAP;
};
template <> struct kind_of<gw_ev_munmap> {
	static constexpr uint16_t value = GW_EV_MUNMAP;
};
template <> struct kind_of<gw_ev_mremap> {
	static constexpr uint16_t value = GW_EV_MREMAP;
};
template <> struct kind_of<gw_ev_fork> {
	static constexpr uint16_t value = GW_EV_FORK;
};
template <> struct kind_of<gw_ev_exec> {
	static constexpr uint16_t value = GW_EV_EXEC;
};
template <> struct kind_of<gw_ev_exit> {
	static constexpr uint16_t value = GW_EV_EXIT;
};
template <> struct kind_of<gw_ev_cgroup_move> {
	static constexpr uint16_t value = GW_EV_CGROUP_MOVE;
};
template <> struct kind_of<gw_ev_ioctl_ext> {
	static constexpr uint16_t value = GW_EV_IOCTL_EXT;
};
template <> struct kind_of<gw_ev_ioctl_after> {
	static constexpr uint16_t value = GW_EV_IOCTL_AFTER;
};
template <class T> inline constexpr uint16_t kind_of_v = kind_of<T>::value;

// sizeof the record struct of `kind`; 0 for an invalid kind
constexpr std::size_t record_size(uint16_t kind) noexcept
{
	switch (kind) {
	case GW_EV_FD: return sizeof(gw_ev_fd);
	case GW_EV_CLOSE: return sizeof(gw_ev_close);
	case GW_EV_CLOSE_RANGE: return sizeof(gw_ev_close_range);
	case GW_EV_IOCTL: return sizeof(gw_ev_ioctl);
	case GW_EV_MMAP: return sizeof(gw_ev_mmap);
	case GW_EV_MUNMAP: return sizeof(gw_ev_munmap);
	case GW_EV_MREMAP: return sizeof(gw_ev_mremap);
	case GW_EV_FORK: return sizeof(gw_ev_fork);
	case GW_EV_EXEC: return sizeof(gw_ev_exec);
	case GW_EV_EXIT: return sizeof(gw_ev_exit);
	case GW_EV_CGROUP_MOVE: return sizeof(gw_ev_cgroup_move);
	case GW_EV_IOCTL_EXT: return sizeof(gw_ev_ioctl_ext);
	case GW_EV_IOCTL_AFTER: return sizeof(gw_ev_ioctl_after);
	default: return 0;
	}
}

enum class RecordError {
	none,
	too_short,     // fewer bytes than a gw_hdr
	size_mismatch, // hdr.size differs from the number of bytes received
	bad_kind,      // hdr.kind is not an enum gw_kind value
	wrong_size,    // hdr.size is not sizeof the kind's struct
};

constexpr const char *record_error_name(RecordError e) noexcept
{
	switch (e) {
	case RecordError::none: return "ok";
	case RecordError::too_short: return "shorter than a record header";
	case RecordError::size_mismatch: return "size field differs from the bytes received";
	case RecordError::bad_kind: return "unknown record kind";
	case RecordError::wrong_size: return "size does not match the record kind";
	}
	return "?";
}

// Copies the header out of `rec` (no checks beyond the length).
inline std::optional<gw_hdr> read_header(std::span<const std::byte> rec) noexcept
{
	if (rec.size() < sizeof(gw_hdr))
		return std::nullopt;
	gw_hdr h;
	std::memcpy(&h, rec.data(), sizeof h);
	return h;
}

// All the checks a record must pass before any field other than the header is read.
inline RecordError check_record(std::span<const std::byte> rec) noexcept
{
	auto h = read_header(rec);
	if (!h)
		return RecordError::too_short;
	if (h->size != rec.size())
		return RecordError::size_mismatch;
	std::size_t want = record_size(h->kind);
	if (want == 0)
		return RecordError::bad_kind;
	if (h->size != want)
		return RecordError::wrong_size;
	return RecordError::none;
}

// The record as a T, if `rec` passes check_record() and its kind is T's.
template <class T> std::optional<T> read_record(std::span<const std::byte> rec) noexcept
{
	static_assert(std::is_trivially_copyable_v<T>);
	if (check_record(rec) != RecordError::none)
		return std::nullopt;
	auto h = read_header(rec);
	if (h->kind != kind_of_v<T>)
		return std::nullopt;
	T out;
	std::memcpy(&out, rec.data(), sizeof out);
	return out;
}

// An ioctl record of either kind as the gw_ev_ioctl it stands for: a GW_EV_IOCTL as it is, a
// GW_EV_IOCTL_AFTER (the fexit path's, the argument read once after the call) with its
// arg_size bytes as in[] and out[], zero-padded as a GW_EV_IOCTL's (the BPF side writes
// nothing after them), and the header of a GW_EV_IOCTL (an arg_size over GW_IOCTL_ARG_MAX is
// kept for the decoder to refuse). nullopt for any other record, or one that fails
// check_record().
inline std::optional<gw_ev_ioctl> read_ioctl(std::span<const std::byte> rec) noexcept
{
	if (auto io = read_record<gw_ev_ioctl>(rec))
		return io;
	auto after = read_record<gw_ev_ioctl_after>(rec);
	if (!after)
		return std::nullopt;
	gw_ev_ioctl io;
	std::memcpy(&io, &*after, offsetof(gw_ev_ioctl, in));
	std::memset(io.in, 0, sizeof io.in);
	std::memcpy(io.in, after->in, std::min<std::size_t>(after->arg_size, sizeof io.in));
	std::memcpy(io.out, io.in, sizeof io.out);
	io.hdr.kind = GW_EV_IOCTL;
	io.hdr.size = sizeof io;
	return io;
}

// Building records (tests, userspace snapshot fallback): a zeroed T with kind/size/tgid set.
template <class T> T make_record(uint32_t tgid) noexcept
{
	static_assert(std::is_trivially_copyable_v<T>);
	T rec;
	std::memset(&rec, 0, sizeof rec);
	rec.hdr.kind = kind_of_v<T>;
	rec.hdr.size = sizeof(T);
	rec.hdr.tgid = tgid;
	rec.hdr.tid = tgid;
	return rec;
}

template <class T> std::span<const std::byte> record_bytes(const T &rec) noexcept
{
	static_assert(std::is_trivially_copyable_v<T>);
	return std::as_bytes(std::span<const T, 1>(&rec, 1));
}

} // namespace gw::abi
