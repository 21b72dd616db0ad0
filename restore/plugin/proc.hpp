// What the dump learns from /proc about the tasks CRIU has seized: their DRM and dma-buf
// fds and their DRM mappings.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gwcriu
{

struct TaskFd {
	int fd = -1;
	bool dmabuf = false; // else a DRM character device
	uint32_t minor = 0;  // DRM: the node's minor
	std::string link;    // readlink of /proc/PID/fd/N ("/dev/dri/card0", "/dmabuf:")
};

struct TaskVma {
	uint64_t start = 0, end = 0, offset = 0; // offset in bytes (the fake offset + delta)
	std::string prot;                        // "rw", "r", ...
	bool shared = false;
	uint32_t minor = 0;
};

struct Task {
	uint32_t pid = 0;  // as CRIU sees it
	uint32_t vpid = 0; // in the task's own pid namespace (NSpid, last)
	std::vector<TaskFd> fds;
	std::vector<TaskFd> other_fds; // out-fences (anon_inode:sync_file) and i915 perf streams
	std::vector<TaskVma> vmas;
};

// Whether this process traces pid (its TracerPid); its parent's pid in *ppid when given.
bool traced_by_me(uint32_t pid, uint32_t *ppid = nullptr);
// The processes this CRIU process is tracing (TracerPid == getpid()): the tasks being dumped.
// With the tree's root (root_hint, 0 if unknown), the tree is read (its children lists) rather
// than every process of the host; the root is used only when this CRIU has seized it and not
// its parent, else /proc is scanned.
std::vector<uint32_t> seized_tasks(uint32_t root_hint = 0);
// The root of the tree being dumped when criu's own command line names it (-t/--tree PID), else
// 0 (CRIU run over RPC).
uint32_t tree_root_from_cmdline();
// DRM and dma-buf fds and DRM mappings of one task.
Task scan_task(uint32_t pid);
// Its DRM and dma-buf fds (fds), its out-fence and perf-stream fds (other_fds), appended.
void scan_fds(uint32_t pid, std::vector<TaskFd> &fds, std::vector<TaskFd> &other_fds);

} // namespace gwcriu
