// The device-state model: DRM files, their lifetime and the reference counts the collection
// works from (which fds, mappings and handles keep a file or a buffer alive).
#include "model.hpp"

#include "drm_devices.hpp"

#include <algorithm>
#include <cstring>

#include "model_ops.hpp"

namespace gw
{
namespace
{

std::string default_node_name(uint32_t major, uint32_t minor)
{
	return major == kDrmMajor ? drm_node_path_of_minor(minor) : std::string();
}

} // namespace

DrmFile &ModelOps::new_file(uint64_t kfile, bool handles_known)
{
	DrmFile f;
	f.id = m.next_file_id_++;
	f.kfile = kfile;
	f.handles_known = handles_known;
	for (const auto &[pid, p] : m.procs_) // mappings made before the file was known
		for (const auto &[start, mp] : p.mmaps)
			f.mappings += mp.kfile == kfile;
	changed = true;
	return m.files_[kfile] = std::move(f);
}

// Node, driver and flags come with fd records only: fill them in on the first one.
void ModelOps::learn_meta(DrmFile &f, const gw_ev_fd &ev)
{
	if (f.major != 0)
		return;
	f.major = ev.major;
	f.minor = ev.minor;
	f.path = m.namer_ ? m.namer_(ev.major, ev.minor) : default_node_name(ev.major, ev.minor);
	f.driver = bounded(ev.driver);
	f.f_flags = ev.f_flags;
	f.dev = ev.dev;
	if (f.driver == "i915")
		f.contexts.try_emplace(0, Context{}); // i915 creates context 0 at open
	changed = true;
}

DrmFile *ModelOps::file(uint64_t kfile)
{
	return m.last_file_.find(m.files_, kfile);
}

// A DRM file met by a route other than open(): its earlier history is unknown.
DrmFile &ModelOps::file_seen(uint64_t kfile)
{
	if (DrmFile *f = file(kfile))
		return *f;
	if (m.dmabufs_.count(kfile))
		purge(kfile); // it was a dma-buf: freed, and the pointer reused
	return new_file(kfile, false);
}

// The kernel object at `kfile` was freed and the pointer reused: forget every reference.
void ModelOps::purge(uint64_t kfile)
{
	std::size_t gone = 0;
	for (auto &[pid, p] : m.procs_) {
		gone += std::erase_if(p.fds, [&](const auto &kv) { return kv.second.kfile == kfile; });
		gone += erase_if(p.mmaps, [&](const auto &kv) {
			if (kv.second.kfile != kfile)
				return false;
			count_mapping(kv.second, -1);
			return true;
		});
	}
	for (auto &[k, f] : m.files_)
		gone += f.prime.erase(kfile);
	gone += m.dmabufs_.erase(kfile);
	gone += m.others_.erase(kfile);
	if (auto it = m.files_.find(kfile); it != m.files_.end()) {
		drop_file(it);
		++gone;
	}
	if (gone) // nothing to forget (a fresh address) leaves nothing to collect
		changed = need_gc = true;
}

void ModelOps::drop_file(std::map<uint64_t, DrmFile>::iterator it)
{
	for (const auto &[n, h] : it->second.handles)
		count_handle(h.object, -1);
	for (auto &[k, d] : m.dmabufs_)
		if (d.exporter_kfile == it->first)
			d.exporter_kfile = 0, d.exporter_handle = 0;
	m.last_file_ = {};
	m.files_.erase(it);
	changed = need_gc = true;
}

void ModelOps::gc()
{
	std::set<uint64_t> live_files, live_bufs, live_objs, handled_objs;
	std::set<uint64_t> live_others;
	for (const auto &[pid, p] : m.procs_) {
		for (const auto &[fd, e] : p.fds)
			(e.other ? live_others : e.dmabuf ? live_bufs : live_files).insert(e.kfile);
		for (const auto &[start, mp] : p.mmaps) {
			live_files.insert(mp.kfile);
			if (mp.object)
				live_objs.insert(*mp.object);
		}
	}
	for (auto it = m.files_.begin(); it != m.files_.end();) {
		auto next = std::next(it);
		if (!live_files.count(it->first))
			drop_file(it);
		it = next;
	}
	for (const auto &[k, f] : m.files_) {
		for (const auto &[buf, h] : f.prime)
			live_bufs.insert(buf);
		for (const auto &[n, h] : f.handles)
			handled_objs.insert(h.object);
	}
	std::erase_if(m.others_, [&](const auto &kv) { return !live_others.count(kv.first); });
	for (const auto &[k, f] : m.files_)
		for (const auto &[id, vm] : f.vms)
			for (const auto &[addr, b] : vm.bindings)
				if (b.object)
					live_objs.insert(b.object); // a bound buffer outlives its handle
	std::erase_if(m.dmabufs_, [&](const auto &kv) { return !live_bufs.count(kv.first); });
	for (const auto &[k, d] : m.dmabufs_)
		live_objs.insert(d.object);
	live_objs.insert(handled_objs.begin(), handled_objs.end());
	std::erase_if(m.flinks_, [&](const auto &kv) { return !handled_objs.count(kv.second); });
	m.objects_.erase_if([&](uint64_t id, const GemObject &) { return !live_objs.count(id); });
}

void ModelOps::count_mapping(const Mapping &mp, int delta)
{
	if (DrmFile *f = file(mp.kfile))
		f->mappings += delta;
	if (!mp.object)
		return;
	if (GemObject *o = m.objects_.find(*mp.object))
		o->mappings += delta;
	if (delta < 0)
		lost_objs.push_back(*mp.object);
}

void ModelOps::uncount_mappings(const Process &p)
{
	for (const auto &[start, mp] : p.mmaps)
		count_mapping(mp, -1);
}

void ModelOps::count_handle(uint64_t object, int delta)
{
	if (GemObject *o = m.objects_.find(object))
		o->handles += delta;
	if (delta < 0)
		lost_objs.push_back(object);
}

// What gc() would do after a record that only closed fds, removed mappings or dropped
// handles, looking only at what lost a reference: gc() walks the whole model, which made
// every close and munmap cost O(handles + mappings). A DRM file that lost its last fd and its
// last mapping (DrmFile::mappings) is left to gc() (rare: the file is closed for good); one
// that only mappings hold is alive, and a munmap of one of them is no longer a full walk.
void ModelOps::collect()
{
	auto fd_holds = [&](uint64_t kfile) {
		for (const auto &[pid, p] : m.procs_)
			if (holds_fd(p, kfile))
				return true;
		return false;
	};
	for (uint64_t k : lost_files) {
		if (const DrmFile *f = file(k)) {
			if (f->mappings == 0 && !fd_holds(k))
				return gc(); // nothing holds it: gone, with what only it held
		} else if (m.dmabufs_.count(k)) {
			lost_bufs.push_back(k);
		} else if (m.others_.count(k) && !fd_holds(k)) {
			m.others_.erase(k);
		}
	}
	for (uint64_t b : lost_bufs) {
		auto d = m.dmabufs_.find(b);
		if (d == m.dmabufs_.end() || fd_holds(b))
			continue;
		bool primed = false;
		for (const auto &[k, f] : m.files_)
			if (f.prime.count(b)) {
				primed = true;
				break;
			}
		if (primed)
			continue;
		lost_objs.push_back(d->second.object);
		m.dmabufs_.erase(d);
	}
	for (uint64_t id : lost_objs) {
		GemObject *o = m.objects_.find(id);
		if (!o)
			continue;
		if (o->handles == 0 && o->flinked) { // a flink name lives while its object has a handle
			std::erase_if(m.flinks_, [&](const auto &kv) { return kv.second == id; });
			o->flinked = false;
		}
		if (o->handles || o->mappings)
			continue;
		bool held = false;
		for (auto d = m.dmabufs_.begin(); o->exported && !held && d != m.dmabufs_.end(); ++d)
			held = d->second.object == id;
		o->exported = held;
		for (auto f = m.files_.begin(); o->bound && !held && f != m.files_.end(); ++f)
			for (const auto &[vid, vm] : f->second.vms)
				for (const auto &[addr, b] : vm.bindings)
					held = held || b.object == id; // a bound buffer outlives its handle
		if (!held)
			m.objects_.erase(id);
	}
}

// GW_MODEL_CHECK_GC builds (tests only) check after every record that the reference counts
// are exact and that collect() left nothing gc() would collect.
void ModelOps::verify_collect() const
{
#ifdef GW_MODEL_CHECK_GC
	std::map<uint64_t, std::pair<uint32_t, uint32_t>> counts;
	for (const auto &[k, f] : m.files_)
		for (const auto &[n, h] : f.handles)
			counts[h.object].first++;
	for (const auto &[pid, p] : m.procs_)
		for (const auto &[start, mp] : p.mmaps)
			if (mp.object)
				counts[*mp.object].second++;
	for (const auto &[id, o] : m.objects_) {
		auto c = counts.count(id) ? counts.at(id) : std::pair<uint32_t, uint32_t>{};
		if (c.first != o.handles || c.second != o.mappings) {
			std::fprintf(stderr, "model: object %llu counts %u/%u, actual %u/%u\n", (unsigned long long)id,
				     o.handles, o.mappings, c.first, c.second);
			std::abort();
		}
	}
	std::map<uint64_t, uint32_t> file_maps;
	for (const auto &[pid, p] : m.procs_)
		for (const auto &[start, mp] : p.mmaps)
			file_maps[mp.kfile]++;
	for (const auto &[k, f] : m.files_)
		if (f.mappings != (file_maps.count(k) ? file_maps.at(k) : 0u)) {
			std::fprintf(stderr, "model: file %llu counts %u mappings, actual %u\n",
				     (unsigned long long)f.id, f.mappings, file_maps.count(k) ? file_maps.at(k) : 0u);
			std::abort();
		}
	// the bits that spare collect() its walks must be set wherever the walk would find something
	auto bits_fail = [](const char *what, uint64_t id) {
		std::fprintf(stderr, "model: %s %llu without its bit\n", what, (unsigned long long)id);
		std::abort();
	};
	for (const auto &[k, d] : m.dmabufs_)
		if (const GemObject *o = m.objects_.find(d.object); !o || !o->exported)
			bits_fail("object of a dma-buf", d.object);
	for (const auto &[key, id] : m.flinks_)
		if (const GemObject *o = m.objects_.find(id); o && !o->flinked)
			bits_fail("flinked object", id);
	for (const auto &[k, f] : m.files_)
		for (const auto &[buf, n] : f.prime)
			if (auto h = f.handles.find(n); h != f.handles.end() && !h->second.primed)
				bits_fail("handle in a prime map", n);
	Model copy = m;
	ModelOps{copy}.gc();
	if (copy.files_.size() != m.files_.size() || copy.objects_.size() != m.objects_.size() ||
	    copy.dmabufs_.size() != m.dmabufs_.size() || copy.flinks_.size() != m.flinks_.size() ||
	    copy.others_.size() != m.others_.size()) {
		std::fprintf(stderr,
			     "model: collect() left garbage gc() finds (files %zu -> %zu, objects %zu -> %zu, "
			     "dma-bufs %zu -> %zu, flinks %zu -> %zu, others %zu -> %zu)\n",
			     m.files_.size(), copy.files_.size(), m.objects_.size(), copy.objects_.size(),
			     m.dmabufs_.size(), copy.dmabufs_.size(), m.flinks_.size(), copy.flinks_.size(),
			     m.others_.size(), copy.others_.size());
		std::abort();
	}
#endif
}

} // namespace gw
