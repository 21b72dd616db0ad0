// /proc and cgroup v2 helpers of the action-script helper: the process tree CRIU dumps, its
// threads, ptrace and freezer state.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace gwaction
{

// root and all its descendants (from /proc/*/stat).
std::set<uint32_t> process_tree(uint32_t root);
// The thread ids of a process ([] if it is gone).
std::vector<uint32_t> threads_of(uint32_t pid);
// The value of "Key:" in /proc/ID/status; "" if the task is gone or the key absent.
std::string status_field(uint32_t id, const char *key);
// The last NSpid of a task (its pid in its own namespace); id if unknown.
uint32_t inner_pid(uint32_t id);
// Field 22 of /proc/PID/stat (start time in clock ticks): with the pid, a process identity.
uint64_t start_time(uint32_t pid);
// The numbers in a file (cgroup.procs, cgroup.threads); [] if unreadable.
std::vector<uint32_t> read_ids(const std::string &path);

// cgroup v2 freezer of one directory.
struct Freezer {
	std::string dir;
	void set(bool frozen) const; // writes cgroup.freeze; throws gw::Error
	bool requested() const;      // cgroup.freeze reads 1
	bool frozen() const;         // cgroup.events says "frozen 1"
	// Polls cgroup.events until frozen == want; false after timeout_ms.
	bool wait(bool want, int timeout_ms) const;
};

} // namespace gwaction
