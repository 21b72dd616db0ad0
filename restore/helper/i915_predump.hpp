// pre-dump for i915 mappings under CRIU 3.17 (see restore/plugin/README.md, "i915
// mappings"): find the tree's i915 GEM mappings, and if there are any, freeze the tree's
// cgroup, seize every thread, thaw, convert each mapping in its task (gwremote), write
// gpuwatch-i915-maps.json, freeze again, detach, and leave a watcher behind that thaws the
// cgroup once CRIU has seized the tasks and reverts whatever is left after CRIU.
#pragma once

#include <cstdint>
#include <string>
#include <sys/types.h>
#include <vector>

#include "manifest/manifest.hpp"

#include "i915_maps.hpp"

namespace gwaction
{

// Converts the i915 mappings of CRTOOLS_INIT_PID's tree; `manifest` is the synced manifest
// (null without a daemon: every mapping is then copied). Returns normally when done or when
// there was nothing to do; throws gw::Error (one line) after undoing everything otherwise.
void i915_predump(uint32_t init_pid, pid_t criu_pid, const std::string &image_dir,
		  const gw::manifest::Manifest *manifest);

// The i915 mappings of one process (anon_inode:i915.gem, legacy GEM_MMAP shmem mappings), each
// with how it will be converted: a placeholder where the manifest (null: none) knows its handle
// and the process holds an fd of its file, else a copy (one line per copy in *notes). Also used
// by the CRIU plugin on CRIU 4.x (CHECKPOINT_DEVICES), where CRIU has seized the process.
std::vector<gwremote::MapRecord> plan_conversion(uint32_t pid, const gw::manifest::Manifest *manifest,
						 std::vector<std::string> &notes);
// Whether process pid has i915 mappings CRIU cannot dump (anon_inode:i915.gem, or a shared
// mapping of i915's shmem file "/i915 (deleted)"); the first one's range in *which.
bool has_i915_mappings(uint32_t pid, std::string *which = nullptr);

// --- shared with the watcher ------------------------------------------------------------------
// PTRACE_SEIZE + PTRACE_INTERRUPT each thread and wait (bounded) for its stop. On failure the
// ones seized are detached and gw::Error is thrown.
void seize_threads(const std::vector<pid_t> &tids, int timeout_ms);
// PTRACE_DETACH each; returns the number that failed (already gone, ...).
int detach_threads(const std::vector<pid_t> &tids);
// Reverts the placeholders of the maps, grouped per process; the tasks must be seized and
// stopped. Logs through `log`; returns the number of errors.
int revert_seized(const std::vector<gwremote::MapRecord> &maps, void (*log)(const std::string &));

struct WatchPlan {
	std::string cgroup;
	pid_t criu_pid = 0;
	uint64_t criu_start = 0;    // start time of criu_pid (pid reuse)
	std::vector<uint32_t> pids; // the tree's processes
	std::vector<gwremote::MapRecord> maps;
	int timeout_s = 600;
	// false: the tasks were not frozen for the dump (CRIU 4.x: converted by the plugin in tasks
	// criu has seized already): nothing to thaw, only criu's end to wait for, among `pids`
	bool frozen = true;
};
// GPUWATCH_WATCH_TIMEOUT_S (default 600): the watcher's bound for the whole dump; throws on a
// value that is not 1-86400.
int watch_timeout_s();
// Double-forks the watcher (setsid, every fd closed but its log, named gpuwatch-watch). It waits for one byte on
// *go_fd before doing anything, and exits doing nothing when *go_fd closes without it.
pid_t spawn_watcher(const WatchPlan &plan, const std::string &log_path, int *go_fd);

} // namespace gwaction
