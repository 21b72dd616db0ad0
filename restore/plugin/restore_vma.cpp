// UPDATE_VMA_MAP: each DRM mapping comes back at its address on its buffer, through a file that
// holds its offset grant (DRM lets only such a file map it), at the offset we give. What CRIU
// does with the fd we give depends on its version (criu_abi.hpp): 3.17/3.18 mmap a dup of it and
// leave ours alone, so we hand over the task's own fd; from 3.19 CRIU owns it and closes it once
// the mapping is made, so we hand over a dup of our own. CRIU gives every device mapping a file
// id of its own (file-ids.c, "Don't cache the id for mapped devices"), so it never maps one
// through the fd given for another: the fd given is always used.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <set>
#include <sys/syscall.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "drm_devices.hpp"
#include "control_client.hpp"
#include "criu_abi.hpp"
#include "device.hpp"
#include "i915_late_maps.hpp"
#include "proc.hpp"
#include "proc_tree.hpp"
#include "remote_task.hpp"
#include "log.hpp"
#include "restore.hpp"

namespace gwcriu
{

bool drm_fd(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == gw::kDrmMajor;
}

UniqueFd task_drm_fd(int pid, int fd)
{
	UniqueFd copy(pidfd_getfd_of(pid, fd));
	if (!copy)
		throw Error("cannot reach fd " + std::to_string(fd) + " of the task: " + gw::errno_text(errno));
	if (!drm_fd(copy.get()))
		throw Error("fd " + std::to_string(fd) + " of the task, which the image names, is not a DRM file");
	return copy;
}

namespace
{

// CRIU 3.17/3.18: private backing files handed to CRIU by the previous call (CRIU has dup'ed
// them since; the last one stays open in the task, see restore/plugin/README.md).
std::vector<UniqueFd> g_pending;

// The fd to give CRIU for a mapping through fd (the task's own, or one of ours).
int give(int fd)
{
	if (!gwaction::criu_abi().owns_vma_fd)
		return fd;
	int d = fcntl(fd, F_DUPFD_CLOEXEC, kHighFd);
	if (d < 0)
		throw Error(std::string("cannot duplicate fd ") + std::to_string(fd) +
			    " for CRIU: " + gw::errno_text(errno));
	return d;
}

// Drivers that map GEM objects through drm_gem_mmap only map from an object's first page.
bool window_maps(int fd, uint64_t offset, uint64_t length)
{
	void *p = mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(offset));
	if (p == MAP_FAILED)
		return false;
	munmap(p, length);
	return true;
}

// The mapping's own file, as installed in this task, with the handle's new fake offset.
bool through_own_file(const VmaRec &v, uint64_t *new_off, int *plugin_fd, std::string *why)
{
	if (!v.file || !v.handle) {
		*why = v.file ? "its handle was closed before the dump"
			      : "no dumped fd reaches its buffer (its file or handle was closed before the dump)";
		return false;
	}
	const FileImage &f = restore_images().files.at(*v.file);
	uint32_t me = static_cast<uint32_t>(getpid());
	for (const Holder &h : f.holders) {
		if (h.vpid != me)
			continue;
		for (int fd : h.fds) {
			uint64_t off = 0;
			if (!drm_fd(fd) || map_offset(fd, *v.handle, &off) != 0)
				continue;
			if (v.delta && !window_maps(fd, off + v.delta, v.length)) {
				*why = "the driver does not map a window starting inside the buffer";
				return false;
			}
			*new_off = off + v.delta;
			*plugin_fd = give(fd);
			return true;
		}
	}
	*why = "this task holds no fd of its file";
	return false;
}

// Hands CRIU a private file of ours for a mapping: from 3.19 CRIU closes it once the mapping is
// made; 3.17/3.18 dup it, and ours stays open until the next call (the last one in the task:
// close_private_leftovers).
void give_private(UniqueFd f, int *plugin_fd)
{
	if (gwaction::criu_abi().owns_vma_fd) {
		*plugin_fd = f.release();
	} else {
		*plugin_fd = f.get();
		g_pending.push_back(std::move(f));
	}
}

// A file of our own on the device, holding the buffer (shared with the restored one when it
// exists, else a copy) or the mapping's saved bytes.
void through_private_file(const VmaRec &v, const std::string &why, uint64_t *new_off, int *plugin_fd)
{
	ChosenDevice dev = choose_device(v.device);
	std::string card = card_node_of(dev);
	if (card.empty())
		throw Error("no card node for " + dev.path);
	UniqueFd pf = open_node(card, O_RDWR, -1);
	uint32_t h = 0;
	std::string what;
	UniqueFd src = v.object && !v.delta ? find_object(v.object, std::nullopt, false) : UniqueFd();
	if (src) {
		if (int e = prime_import(pf.get(), src.get(), &h); e != 0)
			throw Error("cannot import buffer " + std::to_string(v.object) + ": " + gw::errno_text(-e));
		what = "the restored buffer " + std::to_string(v.object);
	} else {
		// Only the mapped range: a copy starting at the mapping (drivers map from page 0 only).
		h = create_buffer(pf.get(), "", generic_dumb_params(v.length), v.length, 0, false, nullptr);
		BufferMap m = BufferMap::of_handle(pf.get(), h, v.length, true);
		bool filled = fill_object(v.object, v.delta, v.saved, m);
		what = filled ? "a copy of its contents (no longer shared with any handle)"
			      : "zero-filled memory (contents unknown)";
	}
	uint64_t off = 0;
	if (int e = map_offset(pf.get(), h, &off); e != 0)
		throw Error("cannot get a fake offset on " + card + ": " + gw::errno_text(-e));
	*new_off = off;
	log_warn("mapping %#llx-%#llx of pid %d: %s; it comes back on %s", (unsigned long long)v.start,
		 (unsigned long long)(v.start + v.length), getpid(), why.c_str(), what.c_str());
	give_private(std::move(pf), plugin_fd);
}

// A stateless checkpoint's mapping: shared zero-filled memory of its length (a memfd, no
// device behind it) at the same address and prot. CRIU maps it as it would the device.
void through_zero_memory(const VmaRec &v, uint64_t *new_off, int *plugin_fd)
{
	UniqueFd m(static_cast<int>(syscall(SYS_memfd_create, kStatelessMemfd, MFD_CLOEXEC)));
	if (!m)
		throw Error(std::string("memfd_create: ") + gw::errno_text(errno));
	if (ftruncate(m.get(), static_cast<off_t>(v.length)) != 0)
		throw Error(std::string("ftruncate of the memfd: ") + gw::errno_text(errno));
	*new_off = 0;
	give_private(dup_high(m.get()), plugin_fd);
}

} // namespace

int update_vma_map(const char *path, uint64_t addr, uint64_t old_pgoff, uint64_t *new_pgoff, int *plugin_fd)
{
	g_pending.clear();
	note_restored_task();
	uint32_t me = static_cast<uint32_t>(getpid());
	const VmaRec *v = nullptr;
	for (const VmaRec &r : restore_images().vmas)
		if (r.vpid == me && r.start == addr)
			v = &r;
	if (!v) {
		if (path && gw::is_drm_node_path(path, nullptr)) {
			log_error("no saved mapping at %#llx of pid %u (%s): the images do not match the dump",
				  (unsigned long long)addr, me, path);
			return -1;
		}
		return -ENOTSUP;
	}
	if (v->offset != old_pgoff)
		log_warn("mapping %#llx: CRIU's offset %#llx differs from the saved %#llx", (unsigned long long)addr,
			 (unsigned long long)old_pgoff, (unsigned long long)v->offset);
	try {
		if (v->stateless) {
			through_zero_memory(*v, new_pgoff, plugin_fd);
			log_debug("mapping %#llx-%#llx of pid %u: zero-filled memory (stateless checkpoint)",
				  (unsigned long long)addr, (unsigned long long)(addr + v->length), me);
			return 1;
		}
		std::string why;
		if (through_own_file(*v, new_pgoff, plugin_fd, &why)) {
			log_debug("mapping %#llx of pid %u: handle %u of fd %d, offset %#llx -> %#llx",
				  (unsigned long long)addr, me, *v->handle, *plugin_fd, (unsigned long long)old_pgoff,
				  (unsigned long long)*new_pgoff);
			return 1;
		}
		through_private_file(*v, why, new_pgoff, plugin_fd);
		return 1;
	} catch (const std::exception &e) {
		log_error("cannot restore mapping %#llx-%#llx of pid %u (%s): %s", (unsigned long long)addr,
			  (unsigned long long)(addr + v->length), me, v->device.path.c_str(), e.what());
		return -1;
	}
}

namespace
{

// CRIU 3.17/3.18 keep the private file of a task's last private-file mapping open in the task
// (g_pending: no hook runs there after CRIU has duplicated it). Closed here, from CRIU's side
// (the task is stopped and CRIU traces it): else the application, and the manifest of a
// daemon following it, would hold a DRM file it never opened. Ours: a DRM fd at or above
// kHighFd that no file image gives this task.
void close_private_leftovers(int pid, uint32_t vpid)
{
	const RestoreImages &im = restore_images();
	if (gwaction::criu_abi().owns_vma_fd ||
	    std::none_of(im.vmas.begin(), im.vmas.end(), [&](const VmaRec &v) { return v.vpid == vpid; }))
		return;
	std::set<int> held;
	for (const auto &[id, f] : im.files)
		for (const Holder &h : f.holders)
			if (h.vpid == vpid)
				held.insert(h.fds.begin(), h.fds.end());
	std::vector<TaskFd> fds, others;
	scan_fds(static_cast<uint32_t>(pid), fds, others);
	std::vector<int> ours;
	for (const TaskFd &f : fds)
		if (!f.dmabuf && f.fd >= kHighFd && !held.count(f.fd))
			ours.push_back(f.fd);
	// a stateless checkpoint's zero-filled memory (through_zero_memory), in a task that had such
	// mappings
	if (std::any_of(im.vmas.begin(), im.vmas.end(),
			[&](const VmaRec &v) { return v.vpid == vpid && v.stateless; })) {
		const std::string memfd = std::string("/memfd:") + kStatelessMemfd + " (deleted)";
		std::error_code ec;
		for (const auto &e : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec))
			if (int fd = atoi(e.path().filename().c_str()); fd >= kHighFd && read_link(e.path()) == memfd)
				ours.push_back(fd);
	}
	if (ours.empty())
		return;
	std::string why;
	try {
		if (!gwremote::available(&why))
			throw Error(why);
		gwremote::RemoteTask t = gwremote::RemoteTask::attach(pid);
		for (int fd : ours)
			t.checked("close", SYS_close, static_cast<unsigned long>(fd));
		t.finish();
	} catch (const std::exception &e) {
		log_warn("pid %d: the plugin's private file (fd %d) stays open in the task: %s", pid, ours.front(),
			 e.what());
		return;
	}
	log_info("pid %d: closed the plugin's private file (fd %d) CRIU left in the task", pid, ours.front());
}

} // namespace

int resume_devices_late(int pid)
{
	const RestoreImages &im = restore_images();
	if (im.files.empty() && im.dmabufs.empty() && im.vmas.empty())
		return -ENOTSUP;
	// pid is CRIU's view (host pid); the images hold the dump's, which differs in a new pid
	// namespace (a container): the task's pid in its own namespace is restored as it was.
	uint32_t vpid = gwaction::inner_pid(static_cast<uint32_t>(pid));
	if (fill_late(pid, vpid) != 0 || map_back_late(pid, vpid) != 0)
		return -1;
	close_private_leftovers(pid, vpid);
	bool drm = false, stateless = false;
	for (const VmaRec &v : im.vmas)
		if (v.vpid == vpid) {
			drm = true;
			stateless |= v.stateless;
		}
	for (const auto &[id, f] : im.files)
		for (const Holder &h : f.holders)
			if (h.vpid == vpid) {
				drm = true;
				stateless |= f.source == "stateless";
			}
	// The daemon still attached learns the restored state at once rather than at its next
	// event. The request is not waited for: the daemon syncs while the tasks resume (a
	// snapshot of running tasks, as at attach), and the restore does not wait for it (16-21 ms
	// a restore under TCG).
	static std::set<uint32_t> synced;
	try {
		if (auto d = gw::control::daemon_for_pid(gw::control::default_run_dir(), static_cast<uint32_t>(pid));
		    d && synced.insert(d->pid).second)
			gw::control::request_sync_nowait(*d);
	} catch (const std::exception &e) {
		log_warn("pid %d: the gpuwatch daemon was not asked to sync after the restore: %s", pid, e.what());
	}
	if (drm && stateless)
		log_info("pid %d resumes with its DRM fds back and no GPU state (stateless checkpoint)", pid);
	else if (drm)
		log_info("pid %d resumes with its DRM state restored", pid);
	return 0;
}

} // namespace gwcriu
