// Internal to the model (model*.cpp): the state changes one record makes.
//
// Ownership mirrors the kernel: fds and mappings keep a DRM file alive; handles, mappings
// and known dma-bufs keep a GEM object alive; a flink name lives while its object has a
// handle somewhere; dma-buf fds and prime maps keep a dma-buf registry entry alive.
// Removals only flag the state for collection, which runs once per record: a targeted one
// (collect) when the record only dropped fds, mappings or handles, else the full walk (gc).
#pragma once

#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "drm_decode.hpp"
#include "event_abi.hpp"
#include "model.hpp"

namespace gw
{

// a fixed-size, possibly unterminated char array of a record (comm, names) as a string
template <std::size_t N> std::string bounded(const char (&s)[N])
{
	return std::string(s, strnlen(s, N));
}

constexpr uint64_t kPageSize = 4096; // x86_64: the kernel maps whole pages and sizes buffers in them

inline uint64_t page_up(uint64_t len) // a length rounded up to whole pages
{
	return (len + kPageSize - 1) & ~(kPageSize - 1);
}

struct ModelOps {
	Model &m;
	bool changed = false; // the manifest changes: bump the generation
	bool need_gc = false; // a reference was dropped that only gc() follows
	// what lost a reference in this record, for collect(): the kernel file of a closed fd or
	// of a removed mapping, a dma-buf that lost a prime entry, an object that lost a handle
	// or a mapping
	std::vector<uint64_t> lost_files, lost_bufs, lost_objs;

	ApplyStatus malformed();
	Process *process(uint32_t tgid);
	Process &process_or_create(uint32_t tgid);

	// files (model_files.cpp)
	DrmFile &new_file(uint64_t kfile, bool handles_known);
	void learn_meta(DrmFile &f, const gw_ev_fd &ev);
	DrmFile *file(uint64_t kfile); // nullptr when not known
	DrmFile &file_seen(uint64_t kfile);
	void purge(uint64_t kfile);
	void drop_file(std::map<uint64_t, DrmFile>::iterator it);
	void gc();
	void collect();
	void verify_collect() const;

	// object reference counts (GemObject::handles, ::mappings)
	void count_mapping(const Mapping &mp, int delta);
	void uncount_mappings(const Process &p);
	void drop_pending(uint32_t tgid); // the pending tables' entries of a process that is gone
	void count_handle(uint64_t object, int delta);

	// fds and mappings (model_tasks.cpp)
	static bool holds_fd(const Process &p, uint64_t kfile);
	void install_fd(Process &p, int fd, FdEntry e);
	void learn_fd(Process &p, int fd, uint64_t kfile, bool dmabuf);
	void unmap_range(Process &p, uint64_t start, uint64_t len);
	void map(Process &p, const Mapping &mp);
	std::optional<uint64_t> object_at(const DrmFile &f, uint64_t offset) const;

	// records (dispatch: model.cpp; processes, fds, mappings: model_tasks.cpp; on_ioctl in
	// model_gem.cpp)
	ApplyStatus dispatch(std::span<const std::byte> rec);
	ApplyStatus on_fd(const gw_ev_fd &ev);
	ApplyStatus on_other_fd(Process &p, const gw_ev_fd &ev);
	uint64_t i915_anon_file(const Process &p, const gw_ev_mmap &ev);
	ApplyStatus on_close(const gw_ev_close &ev);
	ApplyStatus on_close_range(const gw_ev_close_range &ev);
	ApplyStatus on_ioctl(const gw_ev_ioctl &ev);
	ApplyStatus on_mmap(const gw_ev_mmap &ev);
	ApplyStatus on_munmap(const gw_ev_munmap &ev);
	ApplyStatus on_mremap(const gw_ev_mremap &ev);
	ApplyStatus on_fork(const gw_ev_fork &ev);
	ApplyStatus on_exec(const gw_ev_exec &ev);
	ApplyStatus on_exit(const gw_ev_exit &ev);

	// GEM handles, objects, dma-bufs (model_gem.cpp)
	uint64_t new_object(uint64_t size);
	void drop_handle(DrmFile &f, uint32_t handle);
	void name_flink(std::pair<uint64_t, uint32_t> key, uint64_t obj);
	void set_dmabuf(DmaBuf &d, const DmaBuf &v);
	void name_prime(DrmFile &f, uint64_t dmabuf, uint32_t handle, Handle &h);
	Grant &grant(DrmFile &f, uint64_t offset, uint32_t handle); // the grant made (until f's grants change)
	Handle &add_handle(DrmFile &f, uint32_t handle, uint64_t object, std::string_view origin,
			   nlohmann::json params = nullptr);
	Handle &known_handle(DrmFile &f, uint32_t handle);
	void apply_op(Process &p, DrmFile &f, const drm::Op &op);
	void op(DrmFile &f, const drm::GemOpen &x);
	void op(DrmFile &f, const drm::AddFb &x);
	void op(DrmFile &f, const drm::RmFb &x);
	void op(DrmFile &f, const drm::SetCrtc &x);
	void op(DrmFile &f, const drm::PageFlip &x);
	void op(DrmFile &f, const drm::SetPlane &x);
	void op(DrmFile &f, const drm::Cursor &x);
	void op(DrmFile &f, const drm::GetFb &x);
	void op(Process &p, DrmFile &f, const drm::PrimeExport &x);
	void op(Process &p, DrmFile &f, const drm::PrimeImport &x);

	// i915 and xe operations (model_intel.cpp); false if `o` is not one of theirs
	bool apply_intel(Process &p, DrmFile &f, const drm::Op &o);
	void unbind_range(Vm &vm, uint64_t addr, uint64_t range);
	// virtio_gpu operations (model_virtio_gpu.cpp); false if `o` is not one of theirs
	bool apply_virtio_gpu(DrmFile &f, const drm::Op &o);
};

} // namespace gw
