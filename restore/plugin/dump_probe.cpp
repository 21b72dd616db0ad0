#include "dump_probe.hpp"

#include <cerrno>
#include <sys/mman.h>
#include <sys/stat.h>

#include "drm_ops.hpp"
#include "log.hpp"

namespace gwcriu
{

namespace
{

// The size of the buffer at fake offset `off` of lfd, without PRIME: DRM maps a range of a
// buffer only when it fits (drm_gem_mmap_obj), so the largest length that maps is its size.
// 0 when not even a page maps.
uint64_t size_by_mapping(int lfd, uint64_t off)
{
	const uint64_t page = page_size(), cap = uint64_t{1} << 36; // 64 GiB
	auto maps = [&](uint64_t len) {
		void *p = mmap(nullptr, len, PROT_READ, MAP_SHARED, lfd, static_cast<off_t>(off));
		if (p == MAP_FAILED)
			return false;
		munmap(p, len);
		return true;
	};
	if (!maps(page))
		return 0;
	uint64_t lo = page, hi = 2 * page; // lo maps; find a hi that does not
	while (hi <= cap && maps(hi)) {
		lo = hi;
		hi *= 2;
	}
	while (hi - lo > page) {
		uint64_t mid = lo + (hi - lo) / 2 / page * page;
		(maps(mid) ? lo : hi) = mid;
	}
	return lo;
}

// Drivers without PRIME (bochs-drm on 6.1: VRAM helpers): handles found by MODE_MAP_DUMB,
// sizes by mapping. Sharing between files cannot be seen: each handle is a buffer of its own.
bool probe_by_mapping(DumpSession &s, int lfd, FileImage &img, std::string *why)
{
	uint64_t gap = env_u64("GPUWATCH_PROBE_GAP", 256), misses = 0;
	for (uint32_t h = 1; h <= max_handle() && misses < gap; ++h) {
		uint64_t off = 0;
		int r = map_offset(lfd, h, &off);
		if (r == -ENOENT || r == -EINVAL) {
			++misses;
			continue;
		}
		if (r != 0) {
			*why = "no PRIME, and MODE_MAP_DUMB of handle " + std::to_string(h) + ": " + gw::errno_text(-r);
			return false;
		}
		misses = 0;
		uint64_t size = size_by_mapping(lfd, off);
		if (!size) {
			img.degraded.push_back("handle " + std::to_string(h) +
					       " exists but cannot be mapped to learn its size: not restored");
			continue;
		}
		HandleRec rec;
		rec.handle = h;
		rec.size = size;
		rec.origin = "unknown";
		rec.object = s.new_object();
		s.object_sizes[rec.object] = rec.size;
		img.handles.push_back(std::move(rec));
	}
	img.degraded.push_back("the driver has no PRIME: handles were found with MODE_MAP_DUMB and sized by "
			       "mapping them; handles sharing a buffer (in this file or another) come back on copies");
	return true;
}

} // namespace

bool probe_handles(DumpSession &s, int lfd, FileImage &img, std::string *why)
{
	uint64_t gap = env_u64("GPUWATCH_PROBE_GAP", 256), misses = 0;
	for (uint32_t h = 1; h <= max_handle() && misses < gap; ++h) {
		UniqueFd d;
		int r = prime_export(lfd, h, false, &d);
		if (r == -ENOENT || r == -EINVAL) {
			++misses;
			continue;
		}
		if ((r == -ENOSYS || r == -EOPNOTSUPP) && img.handles.empty())
			return probe_by_mapping(s, lfd, img, why);
		if (r != 0) {
			*why = "PRIME export of handle " + std::to_string(h) + ": " + gw::errno_text(-r);
			return false;
		}
		misses = 0;
		struct stat st;
		int64_t size = dmabuf_size(d.get());
		if (fstat(d.get(), &st) != 0 || size <= 0 || static_cast<uint64_t>(size) % page_size()) {
			img.degraded.push_back("handle " + std::to_string(h) +
					       " exists but its size is unknown: not restored");
			continue;
		}
		HandleRec rec;
		rec.handle = h;
		rec.size = static_cast<uint64_t>(size);
		rec.origin = "unknown";
		rec.object = s.object_of_dmabuf(st.st_ino);
		s.object_sizes[rec.object] = rec.size;
		img.handles.push_back(std::move(rec));
	}
	return true;
}

const TaskFd *any_drm_fd(const DumpSession &s)
{
	const TaskFd *any = nullptr;
	for (const Task &t : s.tasks)
		for (const TaskFd &f : t.fds) {
			if (f.dmabuf)
				continue;
			if (f.link.rfind("/dev/dri/card", 0) == 0)
				return &f;
			if (!any)
				any = &f;
		}
	return any;
}

namespace
{

// Fake offsets of the file's handles (MODE_MAP_DUMB: existing offsets come back unchanged).
struct FakeOffsets {
	int lfd;
	std::map<uint32_t, std::optional<uint64_t>> cache;
	std::optional<uint64_t> of(uint32_t h)
	{
		auto [it, fresh] = cache.try_emplace(h);
		if (fresh) {
			uint64_t off = 0;
			if (map_offset(lfd, h, &off) == 0)
				it->second = off;
		}
		return it->second;
	}
};

// Contents of a mapping no handle explains, read through the file at the mapping's own offset
// (the file must hold the offset grant). 0 when the range cannot be mapped through lfd.
uint64_t save_range(DumpSession &s, int lfd, const VmaRec &v)
{
	void *p = mmap(nullptr, v.length, PROT_READ, MAP_SHARED, lfd, static_cast<off_t>(v.offset));
	if (p == MAP_FAILED)
		return 0;
	munmap(p, v.length);
	uint64_t n = s.new_object();
	try {
		save_object(s, n, BufferMap::of_range(lfd, v.offset, v.length));
	} catch (const Error &e) {
		log_warn("mapping %#llx of pid %u: contents not saved: %s", (unsigned long long)v.start, v.pid,
			 e.what());
		return 0;
	}
	s.object_sizes[n] = v.length;
	return n;
}

} // namespace

void attribute_vmas(DumpSession &s, int lfd, const FileImage &img, const std::size_t *mindex,
		    const gw::manifest::File *mfile)
{
	std::set<uint32_t> pids;
	for (const Holder &h : img.holders)
		pids.insert(h.pid);
	std::map<uint32_t, const HandleRec *> handles;
	for (const HandleRec &h : img.handles)
		handles[h.handle] = &h;
	FakeOffsets fake{lfd, {}};

	for (std::size_t i = 0; i < s.vmas.size(); ++i) {
		VmaRec &v = s.vmas[i];
		if (s.attributed[i] || v.late || v.device.minor != img.device.minor)
			continue;
		std::optional<uint32_t> handle;
		uint64_t object = 0;
		bool mine = false;
		const gw::manifest::Mmap *e = mfile ? s.manifest_mmap(*mindex, v.pid, v.start) : nullptr;
		if (e) {
			if (e->file != mfile->id)
				continue; // the manifest gives it to another file
			mine = true;
			if (e->handle && *e->handle <= UINT32_MAX && handles.count(static_cast<uint32_t>(*e->handle)))
				handle = static_cast<uint32_t>(*e->handle);
			else if (e->object)
				object = s.object_of_manifest(*mindex, *e->object);
		} else if (pids.count(v.pid)) {
			for (const HandleRec &h : img.handles) {
				auto off = fake.of(h.handle);
				if (off && v.offset >= *off && v.offset - *off < h.size) {
					handle = h.handle;
					mine = true;
					break;
				}
			}
		}
		if (!mine && !pids.count(v.pid))
			continue;
		if (handle) {
			const HandleRec &h = *handles[*handle];
			object = h.object;
			auto off = fake.of(*handle);
			v.delta = off && v.offset >= *off ? v.offset - *off : 0;
		} else if (!object || !s.saved.count(object)) {
			// Nothing names the buffer (or its contents are unknown): keep the bytes themselves.
			uint64_t n = save_range(s, lfd, v);
			if (!n && !mine)
				continue; // not mappable through this file: another file's mapping
			if (n) {
				object = n;
				v.delta = 0;
			}
		}
		v.file = img.criu_id;
		v.device = img.device;
		v.handle = handle;
		v.object = object;
		v.object_size = object ? s.object_sizes[object] : 0;
		s.attributed[i] = true;
		log_debug("mapping %#llx-%#llx of pid %u: file %u, handle %s, buffer %llu", (unsigned long long)v.start,
			  (unsigned long long)(v.start + v.length), v.pid, img.criu_id,
			  handle ? std::to_string(*handle).c_str() : "none", (unsigned long long)object);
	}
}

} // namespace gwcriu
