// Late fills: the contents of a buffer that its restored task maps through its own DRM file are
// written at RESUME_DEVICES_LATE, from CRIU's process, through a mapping of ours made while the
// task's own mapping (CRIU's restorer made it) holds the buffer's pages; not at
// RESTORE_EXT_FILE through a mapping of ours inside the task, unmapped before the restorer
// maps the buffer again. drm_gem_shmem drivers with write-combined mappings (vgem) change the
// caching attributes of every page of a buffer when its first mapping is made and when its
// last goes, each time with a TLB flush on every CPU: filling early cost three such changes
// per buffer, filling late costs one (docs/benchmarks.md).
//
// Which fills were left for later is decided inside each task (RESTORE_EXT_FILE) and read in
// CRIU's process: a flag per handle of every file image, in a page shared by all of them
// (mapped by CRIU's main process at init, before it forks the tasks).
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <unistd.h>

#include "log.hpp"
#include "restore.hpp"

namespace gwcriu
{
namespace
{

enum : uint8_t {
	kFilled = 0,
	kLeftLate = 1,
	kFilledLate = 2
};

struct LateTable {
	std::atomic<uint8_t> *flags = nullptr; // per handle of every file image, kFilled when untouched
	std::map<uint32_t, std::size_t> base;  // file (CRIU id) -> the flag of its first handle
	uint32_t mapped_for = 0;               // the task `mapped` was listed for (each is a fork)
	std::set<std::pair<uint32_t, uint32_t>> mapped;
};
LateTable g_late;

std::size_t flag_of(const FileImage &f, const HandleRec &h)
{
	return g_late.base.at(f.criu_id) + static_cast<std::size_t>(&h - f.handles.data());
}

// (file, handle) of the mappings CRIU's restorer makes in this task through the task's own
// DRM file, on a whole buffer from its first page: through_own_file in restore_vma.cpp.
const std::set<std::pair<uint32_t, uint32_t>> &mapped_here()
{
	uint32_t me = static_cast<uint32_t>(getpid());
	if (g_late.mapped_for != me) {
		g_late.mapped.clear();
		for (const VmaRec &v : restore_images().vmas)
			if (v.vpid == me && v.file && v.handle && !v.delta && !v.late && !v.stateless)
				g_late.mapped.emplace(*v.file, *v.handle);
		g_late.mapped_for = me;
	}
	return g_late.mapped;
}

// Until its buffers are filled a task must not run: if criu dies now (SIGKILL) the tasks it
// traces are let go, and this one would resume with half-filled buffers. PTRACE_O_EXITKILL kills
// them instead. CRIU seized them with no options, and its detach at the end clears this one.
void die_with_criu(int pid)
{
	std::error_code ec;
	for (const auto &e : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
		int tid = atoi(e.path().filename().c_str());
		if (tid > 0 && ptrace(PTRACE_SETOPTIONS, tid, nullptr, PTRACE_O_EXITKILL) != 0) {
			log_warn(
				"pid %d: thread %d is not tied to criu's life (PTRACE_SETOPTIONS: %s): should criu die "
				"during the late fill, it would run with its buffers half filled",
				pid, tid, gw::errno_text(errno).c_str());
			return;
		}
	}
	if (ec)
		log_warn("pid %d: its threads are not tied to criu's life (%s): should criu die during the late "
			 "fill, it would run with its buffers half filled",
			 pid, ec.message().c_str());
}

} // namespace

void plan_late_fills(const RestoreImages &im)
{
	g_late = LateTable();
	if (env_u64("GPUWATCH_LATE_FILL", 1) == 0)
		return;
	std::size_t n = 0;
	for (const auto &[id, f] : im.files) {
		g_late.base[id] = n;
		n += f.handles.size();
	}
	if (!n)
		return;
	void *p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		log_warn("no shared page for late fills (%s): every buffer is filled inside its task",
			 gw::errno_text(errno).c_str());
		return;
	}
	g_late.flags = static_cast<std::atomic<uint8_t> *>(p);
	std::uninitialized_value_construct_n(g_late.flags, n);
}

bool may_fill_late(const FileImage &f, const HandleRec &h)
{
	// KMS state set again at RESTORE_EXT_FILE (scanout, cursors) and virtio_gpu's host copy
	// read the contents there
	return g_late.flags && h.saved && h.object && !h.host_uploaded && f.kms.framebuffers.empty() &&
	       f.kms.cursors.empty() && mapped_here().count({f.criu_id, h.handle});
}

void note_late_fill(const FileImage &f, const HandleRec &h)
{
	g_late.flags[flag_of(f, h)].store(kLeftLate);
}

int fill_late(int pid, uint32_t vpid)
{
	if (!g_late.flags)
		return 0;
	const RestoreImages &im = restore_images();
	std::size_t buffers = 0;
	uint64_t bytes = 0;
	const HandleRec *at = nullptr;
	uint32_t file = 0;
	bool tied = false;
	try {
		for (const auto &[id, f] : im.files) {
			std::vector<const HandleRec *> left;
			for (const HandleRec &h : f.handles)
				if (g_late.flags[flag_of(f, h)].load() == kLeftLate)
					left.push_back(&h);
			int task_fd = -1;
			for (const Holder &ho : f.holders)
				if (ho.vpid == vpid && !ho.fds.empty())
					task_fd = ho.fds.front();
			if (left.empty() || task_fd < 0)
				continue;
			if (!tied) {
				die_with_criu(pid);
				tied = true;
			}
			file = id;
			at = nullptr;
			UniqueFd fd = task_drm_fd(pid, task_fd);
			for (const HandleRec *h : left) {
				at = h;
				fill_handle(fd.get(), h->handle, h->size, h->object, true);
				g_late.flags[flag_of(f, *h)].store(kFilledLate);
				++buffers;
				bytes += h->size;
			}
		}
	} catch (const std::exception &e) {
		log_error("pid %d: cannot write the contents of %s back (%s): killing it rather than resuming it with "
			  "wrong contents in its buffers",
			  pid,
			  at ? ("buffer " + std::to_string(at->object) + " (handle " + std::to_string(at->handle) +
				" of file " + std::to_string(file) + ")")
					  .c_str()
			     : ("the buffers of file " + std::to_string(file)).c_str(),
			  e.what());
		kill(pid, SIGKILL);
		return -1;
	}
	if (buffers)
		log_info("pid %d: contents of %zu buffers (%llu bytes) written back while its mappings hold them", pid,
			 buffers, (unsigned long long)bytes);
	return 0;
}

std::vector<std::string> unfilled_late()
{
	std::vector<std::string> out;
	if (!g_late.flags)
		return out;
	for (const auto &[id, f] : restore_images().files)
		for (const HandleRec &h : f.handles)
			if (g_late.flags[flag_of(f, h)].load() == kLeftLate)
				out.push_back("handle " + std::to_string(h.handle) + " of file " + std::to_string(id) +
					      " (buffer " + std::to_string(h.object) + ")");
	return out;
}

} // namespace gwcriu
