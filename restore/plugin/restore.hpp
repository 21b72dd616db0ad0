// The restore side. The images are read and checked once, by the plugin's init in CRIU's
// main process, before it forks the tasks: every restored task inherits them. The hooks
// then run inside the restored tasks (RESTORE_EXT_FILE, UPDATE_VMA_MAP), where the pids
// (getpid()) are the dumped tasks' own.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "drm_ops.hpp"
#include "chunks.hpp"
#include "images.hpp"

namespace gwcriu
{

struct RestoreImages {
	Devices devices;                         // gpuwatch-devices.json: what the others name
	std::map<uint32_t, FileImage> files;     // by CRIU id
	std::map<uint32_t, DmabufImage> dmabufs; // by CRIU id
	std::vector<VmaRec> vmas;
	std::map<uint64_t, uint64_t> object_sizes;
	// saved objects, by where the checksum of their image is, checked as it is read: a
	// checksum file of an earlier version (object_sums) or the image's trailer (object_trailed)
	std::map<uint64_t, ContentSum> object_sums;
	std::set<uint64_t> object_trailed;
	std::map<uint64_t, ChunkMap> object_maps; // saved after a pre-dump: which chunks are whose (chunks.hpp)
	// buffer -> the one file that made it at dump (its handle of the buffer was not an import,
	// "prime" or "flink", nor of unknown origin) and that handle. Absent when no file or
	// several files did.
	struct Maker {
		uint32_t file = 0;
		const HandleRec *handle = nullptr; // in files.at(file).handles
	};
	std::map<uint64_t, Maker> makers;
};

// Reads and cross-checks every gpuwatch image: 0, or -1 with one error line in CRIU's log.
int load_restore_images();
// Called by the hooks in each restored task: lists it among this restore's tasks, the only
// ones whose fds find_object() may look at (pidfd_getfd).
void note_restored_task();
const RestoreImages &restore_images();
// The task that opens a file with these holders, by CRIU's rule (files.c, pid_rst_prio): the
// holder of lowest pid; the others receive the file from it.
uint32_t file_master(const std::vector<Holder> &holders);

// Late fills (late_fill.cpp): the contents of a buffer its task maps through its own file are
// written at RESUME_DEVICES_LATE, while that mapping holds its pages. plan_late_fills (CRIU's
// process, init; GPUWATCH_LATE_FILL=0: never) makes the table the tasks share; inside a task,
// may_fill_late says whether the buffer made for h can be left unfilled, note_late_fill records
// that it was; fill_late (CRIU's process, for task pid) fills those of the task's files, and
// kills the task on failure (0, or -1 logged).
void plan_late_fills(const RestoreImages &im);
bool may_fill_late(const FileImage &f, const HandleRec &h);
void note_late_fill(const FileImage &f, const HandleRec &h);
int fill_late(int pid, uint32_t vpid);
// The buffers left for a late fill that none has made (their task's RESUME_DEVICES_LATE did not
// reach them): "handle H of file F (buffer N)" each. Read at the end of the restore.
std::vector<std::string> unfilled_late();

// A DRM file descriptor (226:*) / a copy of fd `fd` of task pid (pidfd_getfd) that is one:
// the fd number is an image's, checked before any ioctl or mapping goes through it. Throws
// Error naming the fd.
bool drm_fd(int fd);
UniqueFd task_drm_fd(int pid, int fd);

// Hooks: an fd / 1 (mapping updated) / -ENOTSUP (not ours) / -1 (logged).
int restore_ext_file(uint32_t id);
int update_vma_map(const char *path, uint64_t addr, uint64_t old_pgoff, uint64_t *new_pgoff, int *plugin_fd);
int resume_devices_late(int pid);

// A dma-buf of buffer object n already restored: through an fd of this task (a restored DRM
// file holding it, or a restored dma-buf of it), else through a file this task does not hold
// but another restored task does (pidfd_getfd), waiting up to GPUWATCH_SHARE_WAIT_MS
// (default 2000) for those when `wait`. The file being restored (CRIU id `exclude`) is not a
// source. Empty when the object does not exist yet.
UniqueFd find_object(uint64_t n, std::optional<uint32_t> exclude, bool wait);

// Writes object n's saved contents (from byte `skip` of its image) into a mapped buffer.
// Returns false when the dump could not save them (the buffer stays zero-filled); throws
// Error when the image is missing or truncated although the dump saved it.
bool fill_object(uint64_t n, uint64_t skip, bool saved, BufferMap &dst);
// The same into `handle` of DRM file fd, mapped whole (size bytes) for the time of the write;
// false when n is 0 (no object) or its contents were not saved.
bool fill_handle(int fd, uint32_t handle, uint64_t size, uint64_t n, bool saved);

// Throws "<table> numbering diverged: got N where M was expected" unless got == want: ids
// (handles, contexts, VMs, queues) come back by replaying creations in order on a fresh file.
void expect_number(const std::string &table, uint32_t got, uint32_t want);

// A new buffer of exactly `size` bytes in the DRM file fd, holding object n's saved contents
// (n = 0: zero-filled). Made as a dumb buffer with `p` (else generic params giving that size);
// where fd's node refuses dumb buffers (render nodes), made on `card_path` and imported by
// PRIME. Returns the new handle; *filled says whether saved contents were written.
uint32_t create_buffer(int fd, const std::string &card_path, const DumbParams &p, uint64_t size, uint64_t n, bool saved,
		       bool *filled);

} // namespace gwcriu
