// RESTORE_EXT_FILE: reopen a DRM file with every handle at its number, or recreate a dma-buf.
#include <cerrno>
#include <map>
#include <set>
#include <fcntl.h>
#include <unistd.h>
#include <xf86drm.h>

#include "device.hpp"
#include "log.hpp"
#include "restore.hpp"
#include "restore_i915.hpp"
#include "fence_files.hpp"
#include "restore_virtio_gpu.hpp"
#include "restore_xe.hpp"

namespace gwcriu
{
namespace
{

DumbParams params_of(const HandleRec &h)
{
	DumbParams p;
	if (h.origin != "dumb")
		return p;
	auto u32 = [&](const char *k) -> uint32_t {
		auto it = h.params.find(k);
		return it != h.params.end() && it->is_number_unsigned() && it->get<uint64_t>() <= UINT32_MAX
			       ? it->get<uint32_t>()
			       : 0;
	};
	p.width = u32("width");
	p.height = u32("height");
	p.bpp = u32("bpp");
	p.flags = u32("flags");
	if (!p.width || !p.height || !p.bpp)
		p = DumbParams();
	return p;
}

void expect_handle(uint32_t got, uint32_t want, const char *what)
{
	expect_number(std::string("handle (") + what + ")", got, want);
}

std::string list(const std::vector<uint32_t> &v)
{
	std::string s;
	for (uint32_t h : v)
		s += (s.empty() ? "" : ",") + std::to_string(h);
	return s;
}

// The returned fd goes to CRIU, which moves it to its target number at once.
int hand_over(const UniqueFd &fd)
{
	int out = dup(fd.get());
	if (out < 0)
		throw Error("cannot duplicate the restored fd: " + gw::errno_text(errno));
	return out;
}

// This task's DRM files in the making: the one being restored now, and those restored ahead of
// their turn (a file that made a buffer at dump is restored before a file importing it, so it
// makes the buffer again and the other imports it from there, as at dump). Per task: CRIU forks
// every restored task before any of them restores a file.
struct InTheMaking {
	int fd = -1;
	std::map<uint64_t, uint32_t> made; // buffer -> its first handle in the file
};
std::map<uint32_t, InTheMaking> g_making; // by CRIU id
std::map<uint32_t, UniqueFd> g_ahead;     // restored ahead, until CRIU asks for them
std::set<uint32_t> g_handed;              // handed to CRIU: found through their fds from then on

UniqueFd open_drm_file(const FileImage &f);
void restore_contents(const FileImage &f, int fd, const ChosenDevice &dev, std::map<uint64_t, uint32_t> &here);

// Buffer n for file `asking`, which does not hold it yet: from a file of this task in the making
// (its maker restored ahead first if this task opens the maker and has not yet), else from a
// restored file or dma-buf (find_object). Empty when the buffer does not exist yet.
UniqueFd shared_buffer(uint64_t n, uint32_t asking)
{
	const RestoreImages &im = restore_images();
	auto m = im.makers.find(n);
	if (m != im.makers.end() && m->second.file != asking && !g_making.count(m->second.file) &&
	    !g_handed.count(m->second.file)) {
		const FileImage &maker = im.files.at(m->second.file);
		if (file_master(maker.holders) == static_cast<uint32_t>(getpid())) {
			log_info("file %u: restored ahead of its turn: it made buffer %llu, which %s %u imports",
				 maker.criu_id, (unsigned long long)n, im.files.count(asking) ? "file" : "dma-buf",
				 asking);
			UniqueFd fd = open_drm_file(maker);
			g_ahead.emplace(maker.criu_id, std::move(fd));
		}
	}
	for (const auto &[id, x] : g_making)
		if (auto h = x.made.find(n); id != asking && h != x.made.end()) {
			UniqueFd d;
			if (prime_export(x.fd, h->second, true, &d) == 0)
				return d;
		}
	return find_object(n, asking, true);
}

UniqueFd open_drm_file(const FileImage &f)
{
	ChosenDevice dev = choose_device(f.device);
	UniqueFd fd = open_node(dev.path, f.f_flags, dev.minor);
	InTheMaking &mk = g_making[f.criu_id];
	mk.fd = fd.get();
	try {
		restore_contents(f, fd.get(), dev, mk.made);
	} catch (...) {
		g_making.erase(f.criu_id);
		throw;
	}
	return fd;
}

void restore_contents(const FileImage &f, int fd, const ChosenDevice &dev, std::map<uint64_t, uint32_t> &here)
{
	if (f.source == "stateless") {
		log_info("restored file %u on %s%s: stateless checkpoint, the fd alone (no buffers, handles or driver "
			 "state)",
			 f.criu_id, dev.path.c_str(),
			 dev.substituted ? (" (saved as " + f.device.path + ")").c_str() : "");
		return;
	}
	// client caps first: they change what the file's later KMS calls see (universal planes, atomic)
	for (const auto &[cap, value] : f.caps)
		if (drmSetClientCap(fd, cap, value) != 0)
			log_warn("file %u: client cap %llu = %llu cannot be set again (SET_CLIENT_CAP: %s)", f.criu_id,
				 (unsigned long long)cap, (unsigned long long)value, gw::errno_text(errno).c_str());
	std::string card = card_node_of(dev);
	const uint64_t page = page_size();

	std::vector<uint32_t> fillers, shared, zeroed, copies, uploaded, not_maker;
	std::size_t late = 0;
	uint32_t next = 1;
	I915Restore i915(fd, f);
	i915.contexts();
	XeRestore xe(fd, f);
	xe.vms();
	for (const HandleRec &h : f.handles) {
		for (; next < h.handle; ++next) {
			uint32_t got =
				f.i915 ? i915.filler(page)
				: f.xe ? xe.filler(page)
				       : create_buffer(fd, card, generic_dumb_params(page), page, 0, false, nullptr);
			expect_handle(got, next, "a filler");
			fillers.push_back(got);
		}
		uint32_t got = 0;
		bool filled = true, leave_late = false;
		auto same = here.find(h.object);
		uint32_t name = 0;
		if (same != here.end() && gem_flink(fd, same->second, &name) == 0 && gem_open(fd, name, &got) == 0) {
			shared.push_back(h.handle); // a second handle of one buffer (GEM_OPEN of a flink name)
		} else if (UniqueFd src = same == here.end() ? shared_buffer(h.object, f.criu_id) : UniqueFd()) {
			if (int e = prime_import(fd, src.get(), &got); e != 0)
				throw Error("cannot import buffer " + std::to_string(h.object) + " as handle " +
					    std::to_string(h.handle) + ": " + gw::errno_text(-e));
			shared.push_back(h.handle);
		} else {
			// made here although another file made it at dump (not restored before this one:
			// another task's, or a maker that itself waits on this file): as a dumb buffer with
			// the maker's parameters where it was one
			auto m = restore_images().makers.find(h.object);
			const HandleRec *maker = m != restore_images().makers.end() && m->second.file != f.criu_id
							 ? m->second.handle
							 : nullptr;
			const bool i915_made = h.i915 && !h.i915->kind.empty();
			leave_late = !i915_made && !h.xe && !h.virtio && may_fill_late(f, h);
			got = i915_made  ? i915.create(h, &filled)
			      : h.xe     ? xe.create(h, &filled)
			      : h.virtio ? virtio_gpu_create(fd, h, &filled)
					 : create_buffer(fd, card, params_of(maker ? *maker : h), h.size,
							 leave_late ? 0 : h.object, h.saved, &filled);
			if (same != here.end())
				copies.push_back(h.handle); // made again: no longer the buffer of that handle
			else if (maker)
				not_maker.push_back(h.handle);
		}
		i915.attributes(h, got);
		if (h.host_uploaded) {
			DumbParams dp = params_of(h);
			if (virtio_gpu_upload(fd, got, h.virtio ? h.virtio->width : dp.width,
					      h.virtio ? h.virtio->height : dp.height))
				uploaded.push_back(h.handle);
		}
		expect_handle(got, h.handle, ("buffer " + std::to_string(h.object)).c_str());
		if (leave_late) {
			note_late_fill(f, h);
			++late;
		}
		if (!filled)
			zeroed.push_back(h.handle);
		here.try_emplace(h.object, got);
		next = h.handle + 1;
	}
	for (uint32_t x : fillers)
		gem_close(fd, x);
	// The offsets the i915 mappings of this task will be mapped back at (RESUME_DEVICES_LATE,
	// from CRIU's process): granted here, inside the task, so a gpuwatch daemon following it sees
	// which handle each mapping is.
	for (const VmaRec &v : restore_images().vmas)
		if (v.late && v.late->kind == "gem" && v.file == f.criu_id &&
		    v.vpid == static_cast<uint32_t>(getpid())) {
			uint64_t off = 0;
			if (int e = i915::mmap_offset(fd, *v.handle, *v.late->mmap_type, &off); e != 0)
				throw Error("no mmap offset for handle " + std::to_string(*v.handle) + " (mapping " +
					    std::to_string(v.start) + "): " + gw::errno_text(-e));
		}
	xe.finish(); // bindings name the restored handles; queues and filler VMs last
	for (const std::string &x : kms_restore(fd, f.kms))
		log_warn("file %u: %s", f.criu_id, x.c_str());
	if (!f.kms.framebuffers.empty() || !f.kms.blobs.empty() || !f.kms.cursors.empty() ||
	    f.kms.master.value_or(false)) {
		std::string what = std::to_string(f.kms.framebuffers.size()) + " framebuffers and " +
				   std::to_string(f.kms.crtcs.size()) + " CRTCs set again";
		if (!f.kms.planes.empty())
			what += ", and " + std::to_string(f.kms.planes.size()) + " other planes";
		if (!f.kms.cursors.empty())
			what += ", and " + std::to_string(f.kms.cursors.size()) + " cursors";
		if (!f.kms.blobs.empty())
			what += "; " + std::to_string(f.kms.blobs.size()) + " property blobs made again";
		if (f.kms.master)
			what += drmIsMaster(fd) ? "; DRM master" : "; not DRM master";
		log_info("file %u: %s", f.criu_id, what.c_str());
	}

	log_info("restored file %u on %s%s: %zu handles (shared with buffers restored before: %s), %zu fillers closed",
		 f.criu_id, dev.path.c_str(), dev.substituted ? (" (saved as " + f.device.path + ")").c_str() : "",
		 f.handles.size(), shared.empty() ? "none" : ("handles " + list(shared)).c_str(), fillers.size());
	if (!uploaded.empty())
		log_info("file %u: host copies written again: handles %s", f.criu_id, list(uploaded).c_str());
	if (late)
		log_info("file %u: the contents of %zu mapped buffers are written at RESUME_DEVICES_LATE, while "
			 "the task's restored mappings hold them",
			 f.criu_id, late);
	if (!zeroed.empty())
		log_warn("file %u: handles %s come back zero-filled: their contents were not saved at dump", f.criu_id,
			 list(zeroed).c_str());
	if (!not_maker.empty())
		log_warn("file %u: handles %s are made here, not by the file that made them at dump (it was not "
			 "restored before this one): files restored after this one import them from here, and the "
			 "manifest names this file as their maker",
			 f.criu_id, list(not_maker).c_str());
	if (!copies.empty())
		log_warn("file %u: handles %s are copies, no longer the same buffer as another handle of the file",
			 f.criu_id, list(copies).c_str());
	for (const std::string &d : f.degraded)
		log_warn("file %u (degraded at dump): %s", f.criu_id, d.c_str());
	for (const std::string &n : i915.notes())
		log_warn("file %u: %s", f.criu_id, n.c_str());
	for (const std::string &n : xe.notes())
		log_warn("file %u: %s", f.criu_id, n.c_str());
}

int restore_dmabuf(const DmabufImage &d)
{
	UniqueFd src = shared_buffer(d.object, d.criu_id);
	if (src) {
		log_info("restored dma-buf %u: export of the restored buffer %llu", d.criu_id,
			 (unsigned long long)d.object);
	} else {
		// No restored file holds the buffer (yet): make it on the device, keep it alive by
		// the dma-buf alone; DRM files restored later import it from there.
		ChosenDevice dev = choose_device(d.device);
		std::string card = card_node_of(dev);
		if (card.empty())
			throw Error("no card node for " + dev.path + " to recreate the buffer of dma-buf " +
				    std::to_string(d.criu_id));
		UniqueFd cfd = open_node(card, O_RDWR, -1);
		bool filled = false;
		uint32_t h =
			create_buffer(cfd.get(), "", generic_dumb_params(d.size), d.size, d.object, d.saved, &filled);
		if (int e = prime_export(cfd.get(), h, true, &src); e != 0)
			throw Error("cannot export the recreated buffer from " + card + ": " + gw::errno_text(-e));
		log_info("restored dma-buf %u: buffer %llu recreated on %s%s", d.criu_id, (unsigned long long)d.object,
			 card.c_str(), filled ? "" : " (zero-filled: contents not saved at dump)");
	}
	for (const std::string &x : d.degraded)
		log_warn("dma-buf %u (degraded at dump): %s", d.criu_id, x.c_str());
	return hand_over(src);
}

} // namespace

void expect_number(const std::string &table, uint32_t got, uint32_t want)
{
	if (got != want)
		throw Error(table + " numbering diverged: got " + std::to_string(got) + " where " +
			    std::to_string(want) + " was expected (was the file not fresh?)");
}

int restore_ext_file(uint32_t id)
{
	const RestoreImages &im = restore_images();
	note_restored_task();
	try {
		if (auto f = im.files.find(id); f != im.files.end()) {
			UniqueFd fd;
			if (auto a = g_ahead.find(id); a != g_ahead.end()) {
				fd = std::move(a->second);
				g_ahead.erase(a);
			} else {
				fd = open_drm_file(f->second);
			}
			g_making.erase(id);
			g_handed.insert(id);
			return hand_over(fd);
		}
		if (auto d = im.dmabufs.find(id); d != im.dmabufs.end())
			return restore_dmabuf(d->second);
	} catch (const std::exception &e) {
		log_error("cannot restore %s %u: %s", im.files.count(id) ? "DRM file" : "dma-buf", id, e.what());
		return -1;
	}
	return restore_fence_file(id);
}

} // namespace gwcriu
