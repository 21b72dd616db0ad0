// Out-fence (sync_file) and i915 perf-stream fds: CRIU hands them to DUMP_EXT_FILE (they are
// anonymous inodes it does not know). Neither keeps state across a checkpoint: GPU engine state
// is not restored, so a sync_file comes back signalled (the work it stood for is lost: the app
// must not rely on it having run) and a perf stream is opened again with its properties.
#pragma once

#include <cstdint>

namespace gwcriu
{

// DUMP_EXT_FILE: 0, -ENOTSUP (not one of these) or -1 (logged).
int dump_fence_file(int lfd, uint32_t id);
// RESTORE_EXT_FILE: an fd, -ENOTSUP (no such image) or -1 (logged).
int restore_fence_file(uint32_t id);

} // namespace gwcriu
