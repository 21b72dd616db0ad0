// Out-fence (sync_file) and i915 perf-stream fds: CRIU hands them to DUMP_EXT_FILE (they are
// anonymous inodes it does not know). Neither keeps state across a checkpoint: GPU engine state
// is not restored, so a sync_file comes back signalled (the work it stood for is lost: the app
// must not rely on it having run) and a perf stream is opened again with its properties.
#pragma once

#include <cstdint>
#include <string>

namespace gwcriu
{

// DUMP_EXT_FILE: 0, -ENOTSUP (not one of these) or -1 (logged).
int dump_fence_file(int lfd, uint32_t id);
// RESTORE_EXT_FILE: an fd, -ENOTSUP (no such image) or -1 (logged).
int restore_fence_file(uint32_t id);
// Throws Error where the driver gates perf streams (the sysctl reads non-zero) and the
// administrator did not set GPUWATCH_RESTORE_PERF_STREAMS=1: see fence_files.cpp.
void check_perf_allowed(const std::string &paranoid_sysctl = "/proc/sys/dev/i915/perf_stream_paranoid");

} // namespace gwcriu
