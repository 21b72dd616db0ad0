// The device-state model: processes, their fds and mappings (open, dup, close, close_range,
// mmap, munmap, mremap, fork, exec, exit).
#include "model.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <linux/close_range.h>
#include <sys/mman.h>

#include "model_ops.hpp"

namespace gw
{
namespace
{

constexpr uint64_t kUserAddrEnd = 1ull << 57; // above any user address (5-level paging)

bool range_ok(uint64_t start, uint64_t len)
{
	return start < kUserAddrEnd && len < kUserAddrEnd;
}

} // namespace

bool ModelOps::holds_fd(const Process &p, uint64_t kfile)
{
	for (const auto &[fd, e] : p.fds)
		if (e.kfile == kfile)
			return true;
	return false;
}

void ModelOps::install_fd(Process &p, int fd, FdEntry e)
{
	auto [it, inserted] = p.fds.try_emplace(fd, e);
	if (!inserted) {
		FdEntry &old = it->second;
		if (old.kfile == e.kfile && old.cloexec == e.cloexec && old.dmabuf == e.dmabuf && old.other == e.other)
			return;
		if (old.kfile != e.kfile || old.dmabuf != e.dmabuf || old.other != e.other)
			need_gc = true; // what the old entry held may be held by nothing now
		old = e;
	}
	changed = true;
}

// An ioctl proved that `fd` refers to `kfile` (an fd received over a socket, or one the
// table lost): record it, close-on-exec unknown.
void ModelOps::learn_fd(Process &p, int fd, uint64_t kfile, bool dmabuf)
{
	if (fd < 0)
		return;
	auto it = p.fds.find(fd);
	// the same kernel file as another kind (a dma-buf's, sync_file's or perf stream's file freed
	// and its address reused by a DRM file, with the close missed) is another file
	if (it == p.fds.end() || it->second.kfile != kfile || it->second.dmabuf != dmabuf || it->second.other != 0)
		install_fd(p, fd, FdEntry{kfile, false, dmabuf});
}

std::string_view Mapping::via_name() const
{
	switch (via) {
	case Via::device: break;
	case Via::i915_gem: return "anon_inode:i915.gem";
	case Via::i915_gem_mmap: return "i915.gem_mmap";
	}
	return "device";
}

// Removes [start, start+len), keeping the pieces of partly covered mappings.
void ModelOps::unmap_range(Process &p, uint64_t start, uint64_t len)
{
	if (len == 0)
		return;
	uint64_t end = start + len;
	auto it = p.mmaps.lower_bound(start);
	if (it != p.mmaps.begin()) {
		auto prev = std::prev(it);
		if (prev->second.start + prev->second.length > start)
			it = prev;
	}
	std::vector<Mapping> pieces;
	while (it != p.mmaps.end() && it->first < end) {
		Mapping mp = it->second;
		it = p.mmaps.erase(it);
		count_mapping(mp, -1);
		if (!holds_fd(p, mp.kfile))
			lost_files.push_back(mp.kfile);
		changed = true;
		uint64_t mend = mp.start + mp.length;
		if (mp.start < start) {
			Mapping left = mp;
			left.length = start - mp.start;
			pieces.push_back(left);
		}
		if (mend > end) {
			Mapping right = mp;
			right.start = end;
			right.length = mend - end;
			right.offset = mp.offset + (end - mp.start);
			pieces.push_back(right);
		}
	}
	for (const Mapping &piece : pieces)
		if (p.mmaps.emplace(piece.start, piece).second)
			count_mapping(piece, +1);
}

void ModelOps::map(Process &p, const Mapping &mp)
{
	unmap_range(p, mp.start, mp.length);
	if (p.mmaps.emplace(mp.start, mp).second)
		count_mapping(mp, +1);
	changed = true;
}

// The object behind a fake offset of `f`: the grant at or below `offset` whose object
// covers it (an exact match when the size is unknown).
std::optional<uint64_t> ModelOps::object_at(const DrmFile &f, uint64_t offset) const
{
	auto g = f.mmap_offsets.upper_bound(offset);
	if (g == f.mmap_offsets.begin())
		return std::nullopt;
	--g;
	auto h = f.handles.find(g->second.handle);
	if (h == f.handles.end())
		return std::nullopt;
	const GemObject *o = m.objects_.find(h->second.object);
	uint64_t size = o ? o->size : 0;
	if (offset == g->first || offset - g->first < size)
		return h->second.object;
	return std::nullopt;
}

ApplyStatus ModelOps::on_fd(const gw_ev_fd &ev)
{
	bool type_ok = ev.type >= GW_FILE_DRM && ev.type <= GW_FILE_PERF;
	if (!type_ok || ev.source < GW_FD_OPEN || ev.source > GW_FD_SNAPSHOT || ev.fd < 0 || ev.file == 0)
		return malformed();
	bool snapshot = ev.source == GW_FD_SNAPSHOT || ev.hdr.hook == GW_HOOK_ITER;
	Process *p = process(ev.hdr.tgid);
	if (!p && !snapshot)
		return ApplyStatus::unknown_process;
	if (!p)
		p = &process_or_create(ev.hdr.tgid);

	if (ev.type == GW_FILE_SYNC || ev.type == GW_FILE_PERF)
		return on_other_fd(*p, ev);
	bool dmabuf = ev.type == GW_FILE_DMABUF;
	bool known_as_other =
		(dmabuf ? m.files_.count(ev.file) > 0 : m.dmabufs_.count(ev.file) > 0) || m.others_.count(ev.file) > 0;
	if (ev.source == GW_FD_OPEN || known_as_other)
		purge(ev.file); // a new file at a known address: the old one was freed
	if (!dmabuf) {
		auto it = m.files_.find(ev.file);
		DrmFile &f = it != m.files_.end() ? it->second : new_file(ev.file, ev.source == GW_FD_OPEN);
		learn_meta(f, ev);
	}
	auto cur = p->fds.find(ev.fd);
	if (ev.source == GW_FD_FLAGS && cur != p->fds.end() && cur->second.kfile == ev.file && !cur->second.other &&
	    cur->second.dmabuf == dmabuf) {
		if (cur->second.cloexec != (ev.cloexec != 0))
			cur->second.cloexec = ev.cloexec != 0, changed = true;
		return ApplyStatus::ok;
	}
	install_fd(*p, ev.fd, FdEntry{ev.file, ev.cloexec != 0, dmabuf});
	return ApplyStatus::ok;
}

// An out-fence or perf stream fd: its origin is the ioctl that returned it, if seen.
ApplyStatus ModelOps::on_other_fd(Process &p, const gw_ev_fd &ev)
{
	if (m.files_.count(ev.file) || m.dmabufs_.count(ev.file))
		purge(ev.file); // a DRM file or dma-buf at this address was freed
	auto cur = p.fds.find(ev.fd);
	if (ev.source == GW_FD_FLAGS && cur != p.fds.end() && cur->second.kfile == ev.file &&
	    cur->second.other == ev.type) {
		if (cur->second.cloexec != (ev.cloexec != 0))
			cur->second.cloexec = ev.cloexec != 0, changed = true;
		return ApplyStatus::ok;
	}
	auto [it, inserted] = m.others_.try_emplace(ev.file);
	if (inserted || ev.source == GW_FD_OPEN || it->second.type != ev.type) {
		it->second = OtherFile{ev.file, ev.type, nullptr};
		if (auto o = m.pending_origin_.find({ev.hdr.tgid, ev.fd}); o != m.pending_origin_.end()) {
			it->second.origin = std::move(o->second);
			m.pending_origin_.erase(o);
		}
	}
	install_fd(p, ev.fd, FdEntry{ev.file, ev.cloexec != 0, false, ev.type});
	return ApplyStatus::ok;
}

ApplyStatus ModelOps::on_close(const gw_ev_close &ev)
{
	Process *p = process(ev.hdr.tgid);
	if (!p)
		return ApplyStatus::unknown_process;
	if (auto it = p->fds.find(ev.fd); it != p->fds.end()) {
		uint64_t kfile = it->second.kfile;
		p->fds.erase(it);
		if (!holds_fd(*p, kfile))
			lost_files.push_back(kfile);
		changed = true;
	}
	return ApplyStatus::ok;
}

ApplyStatus ModelOps::on_close_range(const gw_ev_close_range &ev)
{
	if (ev.first > ev.last)
		return malformed();
	Process *p = process(ev.hdr.tgid);
	if (!p)
		return ApplyStatus::unknown_process;
	for (auto it = p->fds.lower_bound(0); it != p->fds.end();) {
		auto fd = static_cast<uint32_t>(it->first);
		if (fd < ev.first || fd > ev.last) {
			++it;
		} else if (ev.flags & CLOSE_RANGE_CLOEXEC) {
			changed = changed || !it->second.cloexec;
			it->second.cloexec = true;
			++it;
		} else {
			it = p->fds.erase(it);
			changed = need_gc = true;
		}
	}
	return ApplyStatus::ok;
}

// An i915 mapping found by the snapshot names no DRM file (anon_inode:i915.gem names its
// device; a legacy GEM_MMAP's shmem file names nothing). Its file is, in this order: the
// process's file of that device that granted the offset; the file of the same mapping in
// another process (inherited across fork) if this process holds it too; the process's only
// i915 file of that device. Else 0: ambiguous, and the manifest says so.
uint64_t ModelOps::i915_anon_file(const Process &p, const gw_ev_mmap &ev)
{
	bool legacy = ev.via == GW_VIA_I915_SHMEM;
	std::vector<uint64_t> cands;
	for (const auto &[fd, e] : p.fds) {
		auto f = m.files_.find(e.kfile);
		if (e.dmabuf || e.other || f == m.files_.end() || f->second.driver != "i915" ||
		    (!legacy && f->second.dev != ev.dev))
			continue;
		if (!legacy && object_at(f->second, ev.offset))
			return e.kfile;
		if (std::find(cands.begin(), cands.end(), e.kfile) == cands.end())
			cands.push_back(e.kfile);
	}
	for (const auto &[pid, other] : m.procs_) {
		auto mp = other.mmaps.find(ev.start);
		if (pid == p.pid || mp == other.mmaps.end() || mp->second.offset != ev.offset ||
		    mp->second.length != page_up(ev.length))
			continue;
		if (std::find(cands.begin(), cands.end(), mp->second.kfile) != cands.end())
			return mp->second.kfile;
	}
	return cands.size() == 1 ? cands[0] : 0;
}

ApplyStatus ModelOps::on_mmap(const gw_ev_mmap &ev)
{
	bool anon = ev.via == GW_VIA_I915_ANON || ev.via == GW_VIA_I915_SHMEM;
	if ((ev.via == GW_VIA_I915_ANON && ev.dev == 0) || (ev.via == GW_VIA_FILE && ev.file == 0) ||
	    ev.via > GW_VIA_I915_SHMEM || (ev.via == GW_VIA_I915_SHMEM && ev.hdr.hook != GW_HOOK_ITER) ||
	    ev.length == 0 || !range_ok(ev.start, ev.length) || ev.start % kPageSize)
		return malformed();
	Process *p = process(ev.hdr.tgid);
	if (!p && ev.hdr.hook != GW_HOOK_ITER)
		return ApplyStatus::unknown_process;
	if (!p)
		p = &process_or_create(ev.hdr.tgid);
	uint64_t kfile = anon ? i915_anon_file(*p, ev) : ev.file;
	if (kfile == 0) {
		char buf[160];
		std::snprintf(buf, sizeof buf,
			      "process %u: the i915 mapping at 0x%llx (offset 0x%llx) "
			      "could not be tied to one of its DRM files",
			      ev.hdr.tgid, static_cast<unsigned long long>(ev.start),
			      static_cast<unsigned long long>(ev.offset));
		if (std::find(p->incomplete.begin(), p->incomplete.end(), buf) == p->incomplete.end())
			p->incomplete.push_back(buf);
		unmap_range(*p, ev.start, page_up(ev.length));
		changed = true;
		return ApplyStatus::ok;
	}
	DrmFile &f = file_seen(kfile);
	Mapping mp;
	mp.start = ev.start;
	mp.length = page_up(ev.length);
	mp.prot = ev.prot;
	mp.shared = ev.shared != 0;
	mp.kfile = kfile;
	mp.offset = ev.offset;
	if (ev.hdr.hook == GW_HOOK_ITER) {
		// A re-snapshot (at dump, at a sync) finds a mapping the records already built: keep
		// what they know (the legacy GEM_MMAP ioctl named its buffer; the VMA names nothing).
		auto old = p->mmaps.find(mp.start);
		if (old != p->mmaps.end() && old->second.length == mp.length && old->second.offset == mp.offset &&
		    old->second.kfile == kfile && old->second.shared == mp.shared && old->second.object) {
			if (old->second.prot != mp.prot) {
				old->second.prot = mp.prot;
				changed = true;
			}
			return ApplyStatus::ok;
		}
	}
	if (ev.via == GW_VIA_I915_SHMEM) {
		mp.via = Mapping::Via::i915_gem_mmap; // its object is not known: the ioctl that made it was not seen
	} else {
		mp.object = object_at(f, ev.offset);
		if (anon || f.driver == "i915")
			mp.via = Mapping::Via::i915_gem;
	}
	map(*p, mp);
	return ApplyStatus::ok;
}

ApplyStatus ModelOps::on_munmap(const gw_ev_munmap &ev)
{
	if (!range_ok(ev.start, ev.length))
		return malformed();
	Process *p = process(ev.hdr.tgid);
	if (!p)
		return ApplyStatus::unknown_process;
	unmap_range(*p, ev.start, page_up(ev.length));
	return ApplyStatus::ok;
}

// The piece at [old_start, +old_length) moves to [new_start, +new_length), keeping its file
// and offset. old_length 0 duplicates a shared mapping; MREMAP_DONTUNMAP keeps the old range.
ApplyStatus ModelOps::on_mremap(const gw_ev_mremap &ev)
{
	if (!range_ok(ev.old_start, ev.old_length) || !range_ok(ev.new_start, ev.new_length))
		return malformed();
	Process *p = process(ev.hdr.tgid);
	if (!p)
		return ApplyStatus::unknown_process;
	uint64_t old_len = page_up(ev.old_length), new_len = page_up(ev.new_length);
	std::optional<Mapping> piece;
	if (auto it = p->mmaps.upper_bound(ev.old_start); it != p->mmaps.begin()) {
		const Mapping &src = std::prev(it)->second;
		if (ev.old_start < src.start + src.length) {
			piece = src;
			piece->offset += ev.old_start - src.start;
		}
	}
	if (old_len != 0 && !(ev.flags & MREMAP_DONTUNMAP))
		unmap_range(*p, ev.old_start, old_len);
	if (piece && new_len != 0) {
		piece->start = ev.new_start;
		piece->length = new_len;
		map(*p, *piece);
	} else {
		unmap_range(*p, ev.new_start, new_len);
	}
	return ApplyStatus::ok;
}

ApplyStatus ModelOps::on_fork(const gw_ev_fork &ev)
{
	if (ev.child_tgid == 0 || ev.child_tgid == ev.hdr.tgid)
		return malformed();
	Process *parent = process(ev.hdr.tgid);
	if (!parent)
		return ApplyStatus::unknown_process;
	Process child = *parent; // fd table, mappings and comm
	child.pid = ev.child_tgid;
	for (const auto &[start, mp] : child.mmaps)
		count_mapping(mp, +1);
	if (auto stale = m.procs_.find(ev.child_tgid); stale != m.procs_.end()) {
		uncount_mappings(stale->second); // a stale process with the same pid: its exit was missed
		need_gc = true;
	}
	m.procs_[ev.child_tgid] = std::move(child);
	changed = true;
	return ApplyStatus::ok;
}

ApplyStatus ModelOps::on_exec(const gw_ev_exec &ev)
{
	Process *p = process(ev.hdr.tgid);
	if (!p)
		return ApplyStatus::unknown_process;
	uncount_mappings(*p);
	p->mmaps.clear();
	p->incomplete.clear(); // it was about mappings, and exec removed them all
	std::erase_if(p->fds, [](const auto &kv) { return kv.second.cloexec; });
	p->comm = bounded(ev.comm);
	changed = need_gc = true;
	return ApplyStatus::ok;
}

// What waited for a follow-up record of a process's threads waits no more once it is gone:
// an ext record whose ioctl never came (the thread died first), the origin of an fd never
// installed.
void ModelOps::drop_pending(uint32_t tgid)
{
	std::erase_if(m.pending_ext_, [&](const auto &kv) { return kv.second.hdr.tgid == tgid; });
	std::erase_if(m.pending_origin_, [&](const auto &kv) { return kv.first.first == tgid; });
}

ApplyStatus ModelOps::on_exit(const gw_ev_exit &ev)
{
	drop_pending(ev.hdr.tgid);
	auto it = m.procs_.find(ev.hdr.tgid);
	if (it == m.procs_.end())
		return ApplyStatus::unknown_process;
	uncount_mappings(it->second);
	m.last_proc_ = {};
	m.procs_.erase(it);
	changed = need_gc = true;
	return ApplyStatus::ok;
}

} // namespace gw
