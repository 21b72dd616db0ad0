// DUMP_EXT_FILE: one DRM file or one dma-buf, read through the fd CRIU hands the hook (the
// very open file of the task, so its handles and fake offsets are valid here).
#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <poll.h>
#include <set>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "chunks.hpp"
#include "device.hpp"
#include "drm_ops.hpp"
#include "dump.hpp"
#include "dump_i915.hpp"
#include "dump_xe.hpp"
#include "dump_probe.hpp"
#include "i915_late_maps.hpp"
#include "log.hpp"
#include "object_image.hpp"

namespace gwcriu
{
namespace
{

namespace mf = gw::manifest;

uint32_t saved_flags(int lfd)
{
	int fl = fcntl(lfd, F_GETFL);
	return fl < 0 ? O_RDWR : static_cast<uint32_t>(fl) & (O_ACCMODE | O_NONBLOCK | O_APPEND);
}

// Holders of lfd among the seized tasks (kcmp), and the first fd link seen.
std::vector<Holder> holders_of(const DumpSession &s, int lfd, bool dmabuf, uint32_t minor, std::string *link)
{
	std::vector<Holder> out;
	for (const Task &t : s.tasks) {
		Holder h{t.pid, t.vpid, {}};
		for (const TaskFd &f : t.fds)
			if (f.dmabuf == dmabuf && (dmabuf || f.minor == minor) &&
			    same_file(getpid(), lfd, static_cast<int>(t.pid), f.fd)) {
				h.fds.push_back(f.fd);
				if (link && link->empty())
					*link = f.link;
			}
		if (!h.fds.empty())
			out.push_back(std::move(h));
	}
	return out;
}

std::string holders_text(const std::vector<Holder> &hs)
{
	std::string s;
	for (const Holder &h : hs)
		for (int fd : h.fds)
			s += (s.empty() ? "" : ", ") + std::string("pid ") + std::to_string(h.pid) + " fd " +
			     std::to_string(fd);
	return s.empty() ? "no task fd" : s;
}

// What names a buffer from one dump to the next (chunks.hpp): its file's first holder and handle.
std::optional<ChunkKey> first_holder_key(const std::vector<Holder> &hs, uint32_t handle)
{
	if (hs.empty() || hs[0].fds.empty())
		return std::nullopt;
	return ChunkKey{hs[0].pid, hs[0].fds[0], handle};
}

// The manifest's files[] entry for this file, through any holder's (pid, fd).
const mf::File *manifest_file_of(DumpSession &s, const std::vector<Holder> &hs, std::size_t *index)
{
	const mf::File *found = nullptr;
	for (const Holder &h : hs)
		for (int fd : h.fds) {
			std::size_t i = 0;
			const mf::Fd *e = s.manifest_fd(h.pid, fd, &i);
			if (!e || e->kind != mf::Fd::Kind::drm || !e->file)
				continue;
			const mf::File *f = s.manifest_file(i, *e->file);
			if (f && !found) {
				found = f;
				*index = i;
			} else if (f && f != found) {
				log_warn("the manifest names two files for what is one open file (pid %u fd %d): using "
					 "the first",
					 h.pid, fd);
			}
		}
	return found;
}

// Handle table from the manifest; false (with *why) when the manifest does not match the file.
bool handles_from_manifest(DumpSession &s, std::size_t index, const mf::File &mfile, int lfd, FileImage &img,
			   std::string *why)
{
	std::map<uint32_t, HandleRec> table;
	const bool i915 = is_i915(img.device);
	for (const mf::Handle &h : mfile.handles) {
		HandleRec r;
		uint64_t n = h.handle;
		if (n == 0 || n > max_handle()) {
			*why = "handle " + std::to_string(n) + " is beyond GPUWATCH_MAX_HANDLE";
			return false;
		}
		r.handle = static_cast<uint32_t>(n);
		r.size = h.size;
		r.origin = h.origin;
		r.object = s.object_of_manifest(index, h.object);
		r.params = h.params;
		r.host_uploaded = h.host_uploaded && img.device.driver == "virtio_gpu";
		// The handle must exist in the file: MODE_MAP_DUMB answers ENOENT otherwise; drivers
		// that refuse it (render nodes) are asked through PRIME, which also gives the size.
		// i915 is asked with GEM_BUSY, which grants no mmap offset as a side effect.
		uint64_t off = 0;
		int e = i915 ? (i915_handle_exists(lfd, r.handle) ? 0 : -ENOENT) : map_offset(lfd, r.handle, &off);
		if (i915)
			r.i915 = i915_buffer_of(h, &img.degraded);
		if (is_xe(img.device))
			r.xe = xe_buffer_of(h, mfile, &img.degraded);
		if (e == -ENOENT) {
			*why = "handle " + std::to_string(n) + " of the manifest does not exist in the file";
			return false;
		}
		if (e != 0 || r.size == 0) {
			UniqueFd d;
			if (int pe = prime_export(lfd, r.handle, false, &d); pe != 0) {
				*why = "handle " + std::to_string(n) +
				       " cannot be checked (PRIME export: " + gw::errno_text(-pe) + ")";
				return false;
			}
			int64_t size = dmabuf_size(d.get());
			if (size > 0)
				r.size = static_cast<uint64_t>(size);
		}
		if (r.size == 0 || r.size % page_size()) {
			*why = "handle " + std::to_string(n) + " has no usable size";
			return false;
		}
		s.object_sizes[r.object] = r.size;
		table[r.handle] = std::move(r);
	}
	// A manifest that missed a creation would leave that handle out: numbers the manifest says
	// are free must be free. MODE_MAP_DUMB tells, with no effect the process could notice
	// (at most a fake offset for a buffer that had none), where the driver allows it; render
	// nodes refuse it: there the manifest is trusted.
	uint32_t top = table.empty() ? 0 : table.rbegin()->first;
	uint64_t probe = 0;
	int first = i915 ? 0 : map_offset(lfd, 1, &probe);
	bool can_check = first == 0 || first == -ENOENT;
	auto exists = [&](uint32_t n) { return i915 ? i915_handle_exists(lfd, n) : map_offset(lfd, n, &probe) == 0; };
	for (uint32_t n = 1; can_check && n <= top + 8 && n <= max_handle(); ++n) {
		if (!table.count(n) && exists(n)) {
			*why = "handle " + std::to_string(n) + " exists but the manifest does not list it";
			return false;
		}
	}
	for (auto &[n, r] : table)
		img.handles.push_back(std::move(r));
	return true;
}

// A stateless checkpoint's DRM file: its device, flags and holders. Its mappings in the
// holders are claimed so that none is reported as unreached; they come back as zero-filled
// memory (restore_vma.cpp).
int dump_stateless_file(DumpSession &s, FileImage &img, const std::string &who)
{
	img.source = "stateless";
	img.handles_known = false;
	std::set<uint32_t> pids;
	for (const Holder &h : img.holders)
		pids.insert(h.pid);
	std::size_t maps = 0;
	// a converted i915 mapping is this file's when a holder's fd is the one it was made through
	auto holds = [&](uint32_t pid, int fd) {
		for (const Holder &h : img.holders)
			if (h.pid == pid && std::find(h.fds.begin(), h.fds.end(), fd) != h.fds.end())
				return true;
		return false;
	};
	for (std::size_t i = 0; i < s.vmas.size(); ++i) {
		VmaRec &v = s.vmas[i];
		bool mine = v.late ? holds(v.pid, v.late->fd) : v.device.minor == img.device.minor && pids.count(v.pid);
		if (s.attributed[i] || !mine)
			continue;
		s.attributed[i] = true;
		v.file = img.criu_id;
		v.device = img.device; // the same minor, described (dump_session leaves it to the file)
		++maps;
	}
	write_image(file_image_name(img.criu_id), to_json(img, s.device_indexer()).dump(1));
	write_vmas_image(s, false);
	log_info("dumped %s: %s, stateless: the fd only (%zu of its mappings come back as zero-filled memory)",
		 who.c_str(), img.device.driver.c_str(), maps);
	return 0;
}

} // namespace

void save_object(DumpSession &s, uint64_t n, const BufferMap &map, const std::optional<ChunkKey> &key)
{
	if (s.saved.count(n))
		return;
	// after a pre-dump that copied this buffer (CRIU's parent link): the chunks that changed,
	// each with its hash in the map
	if (key && s.has_parent() && image_exists("parent/" + chunk_map_name(pre_image_base(*key)))) {
		ChunkSave r = save_chunked(object_base_name(n), map, key);
		s.bytes_stored += r.stored;
		s.bytes_reused += r.reused;
	} else {
		save_object_image(object_image_name(n), map);
		s.bytes_stored += map.size();
	}
	s.saved.insert(n);
}

void predump_drm_file(DumpSession &s, int lfd)
{
	struct stat st;
	if (fstat(lfd, &st) != 0)
		throw Error("pre-dump: cannot stat a DRM file: " + gw::errno_text(errno));
	FileImage img;
	std::string link;
	img.holders = holders_of(s, lfd, false, minor(st.st_rdev), &link);
	if (img.holders.empty())
		return;
	std::size_t index = 0;
	const mf::File *mf = manifest_file_of(s, img.holders, &index);
	img.device = describe_device(gw::kDrmMajor, minor(st.st_rdev), mf ? mf->path : link, lfd, mf ? mf->driver : "",
				     img.holders[0].pid);
	std::string who = img.device.path + " (" + holders_text(img.holders) + ")";
	std::string why;
	if (!mf || !mf->handles_known || !handles_from_manifest(s, index, *mf, lfd, img, &why)) {
		img.handles.clear();
		if (!probe_handles(s, lfd, img, &why)) {
			log_warn("pre-dump: %s: handles cannot be probed (%s): the final dump saves its buffers whole",
				 who.c_str(), why.c_str());
			return;
		}
	}
	for (const HandleRec &h : img.handles) {
		if ((h.i915 && h.i915->kind == "userptr") || !s.saved.insert(h.object).second)
			continue;
		std::optional<ChunkKey> key = first_holder_key(img.holders, h.handle);
		std::optional<BufferMap> map;
		try {
			map.emplace(BufferMap::of_handle(lfd, h.handle, h.size, false));
		} catch (const Error &e) {
			log_warn("pre-dump: %s: handle %u cannot be read (%s): the final dump saves it whole",
				 who.c_str(), h.handle, e.what());
			continue;
		}
		ChunkSave r = save_chunked(pre_image_base(*key), *map, key); // a write error fails the pre-dump
		s.bytes_stored += r.stored;
		s.bytes_reused += r.reused;
	}
}

int dump_drm_file(int lfd, uint32_t id)
{
	struct stat st;
	if (fstat(lfd, &st) != 0)
		return -errno;
	DumpSession &s = dump_session();
	FileImage img;
	img.criu_id = id;
	img.f_flags = saved_flags(lfd);
	std::string link;
	img.holders = holders_of(s, lfd, false, minor(st.st_rdev), &link);
	std::size_t index = 0;
	const mf::File *mf = manifest_file_of(s, img.holders, &index);
	img.device = describe_device(gw::kDrmMajor, minor(st.st_rdev), mf ? mf->path : link, lfd, mf ? mf->driver : "",
				     img.holders.empty() ? 0 : img.holders[0].pid);
	std::string who =
		"file " + std::to_string(id) + " (" + img.device.path + ", " + holders_text(img.holders) + ")";
	if (img.holders.empty())
		log_warn("%s: no seized task holds it by an fd that kcmp recognises: its mappings will come back "
			 "on private files",
			 who.c_str());

	if (s.stateless)
		return dump_stateless_file(s, img, who);

	std::string why;
	if (mf && mf->handles_known && handles_from_manifest(s, index, *mf, lfd, img, &why)) {
		img.source = "manifest";
		img.handles_known = true;
		if (is_i915(img.device))
			img.i915 = i915_state_of(*mf, &img.degraded);
		if (is_xe(img.device))
			img.xe = xe_state_of(*mf, &img.degraded);
	} else {
		if (!mf)
			why = "no manifest lists it";
		else if (!mf->handles_known)
			why = "it was opened before gpuwatch attached";
		img.handles.clear();
		img.source = "probe";
		img.handles_known = false;
		img.degraded.push_back("handle table probed (" + why +
				       "): creation parameters unknown, buffers come back "
				       "as plain dumb buffers of the same size");
		std::string perr;
		if (!probe_handles(s, lfd, img, &perr))
			img.degraded.push_back("handles could not be probed (" + perr + "): the file comes back empty");
	}
	// A GETFB handle of a framebuffer whose buffer no other handle of the followed files holds
	// (fbcon's, another program's) comes back as a copy; else it names that buffer again.
	auto held_elsewhere = [&](const mf::Handle &g) {
		for (const mf::File &of : s.manifests[index].files)
			for (const mf::Handle &o : of.handles)
				if (o.object == g.object && (&of != mf || o.handle != g.handle))
					return true;
		return false;
	};
	if (img.source == "manifest")
		for (const mf::Handle &h : mf->handles)
			if (h.origin == "getfb" && !held_elsewhere(h))
				img.degraded.push_back("handle " + std::to_string(h.handle) +
						       " (MODE_GETFB of framebuffer " +
						       h.params.value("fb_id", nlohmann::json()).dump() +
						       ") comes back as a buffer of its own with the same contents: no "
						       "other followed handle holds the framebuffer's buffer");
	if (mf) {
		std::map<uint64_t, uint64_t> caps; // by capability, the last value set
		for (const mf::Cap &c : mf->caps)
			caps[c.capability] = c.value;
		img.caps.assign(caps.begin(), caps.end());
	}
	if (img.source == "manifest")
		img.kms = kms_state_of(*mf, lfd, &img.degraded);
	else if (mf && !mf->framebuffers.empty())
		img.degraded.push_back("its framebuffers are not recreated: its handles were probed");
	if (mf) {
		for (const std::string &name : mf->undecoded_ioctls)
			img.degraded.push_back(name +
					       " succeeded on this file and gpuwatch does not decode it: the state it "
					       "made is not restored");
		// The CRTCs that show the file's framebuffers come back from the read-back (kms_state_of);
		// one the file switched off is not switched off again.
		for (const mf::DisplayCrtc &c : mf->display.crtcs)
			if (c.configured && !c.mode)
				img.degraded.push_back(
					"CRTC " + std::to_string(c.crtc) +
					" was switched off by this file (MODE_SETCRTC, or MODE_RMFB of the framebuffer "
					"it showed): it is not switched off again at restore");
	}
	// Completions (page flip, vblank, CRTC sequence) the kernel queued on the file and the task
	// had not read yet. poll() does not consume them; nothing can read them without doing so,
	// and a restored file starts with an empty queue.
	pollfd pending{lfd, POLLIN, 0};
	if (poll(&pending, 1, 0) == 1 && (pending.revents & POLLIN))
		img.degraded.push_back("events the task had not read yet were queued on the file (page flip, vblank or "
				       "sequence completions): they are not delivered after the restore, and a task "
				       "waiting for one waits on");
	for (HandleRec &h : img.handles) {
		if (h.i915 && h.i915->kind == "userptr")
			continue; // its pages are the task's own memory, which CRIU dumps
		if (!s.saved.count(h.object)) {
			try {
				save_object(s, h.object, BufferMap::of_handle(lfd, h.handle, h.size, false),
					    first_holder_key(img.holders, h.handle));
			} catch (const Error &e) {
				img.degraded.push_back("contents of handle " + std::to_string(h.handle) +
						       " not saved: " + e.what());
			}
		}
		h.saved = s.saved.count(h.object) != 0;
	}
	attribute_vmas(s, lfd, img, mf ? &index : nullptr, mf);
	attribute_late_maps(s, lfd, img);

	write_image(file_image_name(id), to_json(img, s.device_indexer()).dump(1));
	write_vmas_image(s, false);
	std::string shown; // the display configuration read back, set again at restore
	for (const KmsCrtc &c : img.kms.crtcs)
		shown += (shown.empty() ? "; read back: " : ", ") +
			 ("CRTC " + std::to_string(c.crtc_id) + " showing framebuffer " + std::to_string(c.fb_id));
	log_info("dumped %s: %s, %zu handles, %s%s", who.c_str(), img.device.driver.c_str(), img.handles.size(),
		 img.source == "manifest" ? "from the manifest" : "probed (degraded)", shown.c_str());
	for (const std::string &d : img.degraded)
		log_warn("%s: %s", who.c_str(), d.c_str());
	return 0;
}

int dump_dmabuf(int lfd, uint32_t id)
{
	DumpSession &s = dump_session();
	DmabufImage img;
	img.criu_id = id;
	img.f_flags = saved_flags(lfd);
	img.holders = holders_of(s, lfd, true, 0, nullptr);
	std::string who = "dma-buf " + std::to_string(id) + " (" + holders_text(img.holders) + ")";
	int64_t size = dmabuf_size(lfd);
	if (size <= 0 || static_cast<uint64_t>(size) % page_size()) {
		log_error("%s: cannot tell its size (%lld)", who.c_str(), static_cast<long long>(size));
		return -1;
	}
	img.size = static_cast<uint64_t>(size);

	const mf::File *mfile = nullptr;
	for (const Holder &h : img.holders)
		for (int fd : h.fds) {
			std::size_t i = 0;
			const mf::Fd *e = s.manifest_fd(h.pid, fd, &i);
			if (img.object || !e || e->kind != mf::Fd::Kind::dmabuf)
				continue;
			if (e->object)
				img.object = s.object_of_manifest(i, *e->object);
			if (e->file)
				mfile = s.manifest_file(i, *e->file);
		}
	if (mfile && mfile->major == gw::kDrmMajor) {
		img.device = describe_device(mfile->major, mfile->minor, mfile->path, -1, mfile->driver,
					     img.holders.empty() ? 0 : img.holders[0].pid);
	} else if (const TaskFd *card = any_drm_fd(s)) {
		img.device = s.device_of_minor(card->minor, s.tasks.front().pid);
	} else {
		log_debug("%s: no DRM device in the dumped tasks: not ours", who.c_str());
		return -ENOTSUP;
	}
	if (!img.object) {
		std::string exp = fdinfo_field(lfd, "exp_name");
		if (exp != "drm" && exp != img.device.driver) {
			log_debug("%s: exported by %s, not a DRM buffer: not ours", who.c_str(), exp.c_str());
			return -ENOTSUP;
		}
		struct stat st;
		fstat(lfd, &st);
		img.object = s.object_of_dmabuf(st.st_ino);
		img.degraded.push_back(
			"not in the manifest: shared again only with DRM files whose handles were probed");
	}
	s.object_sizes[img.object] = img.size;
	if (s.stateless) {
		img.degraded = {
			"stateless checkpoint: its contents are not saved; it comes back as the dma-buf of a new "
			"zero-filled buffer of the same size"};
	} else if (!s.saved.count(img.object)) {
		try {
			save_object(s, img.object, BufferMap::of_dmabuf(lfd, img.size, false));
		} catch (const Error &e) {
			img.degraded.push_back(std::string("contents not saved: ") + e.what());
		}
	}
	img.saved = s.saved.count(img.object) != 0;
	write_image(dmabuf_image_name(id), to_json(img, s.device_indexer()).dump(1));
	log_info("dumped %s: buffer %llu, %llu bytes", who.c_str(), (unsigned long long)img.object,
		 (unsigned long long)img.size);
	for (const std::string &d : img.degraded)
		log_warn("%s: %s", who.c_str(), d.c_str());
	return 0;
}

} // namespace gwcriu
