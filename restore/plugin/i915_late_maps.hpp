// i915 mappings CRIU cannot dump (anon_inode:i915.gem, legacy GEM_MMAP shmem mappings). On CRIU
// 3.x the action-script helper replaced them with placeholders before CRIU seized the tasks; on
// CRIU 4.x the plugin does it itself at CHECKPOINT_DEVICES, in tasks CRIU has seized, before
// CRIU reads their mappings. Either way it is recorded (gpuwatch-i915-maps.json, see
// restore/remote/i915_maps.hpp). Here:
//   dump     each placeholder becomes a mapping of the plugin's (gpuwatch-vmas.json, `late`),
//            tied to its DRM file and handle when that file is dumped; its buffer's bytes are
//            saved through the handle like any other buffer;
//   dump end the real mappings are put back in the still-seized tasks (they carry on after
//            --leave-running or a failed dump as if nothing happened);
//   restore  RESUME_DEVICES_LATE maps each buffer back at its address inside the restored task,
//            still stopped by CRIU, through the task's own restored fd.
#pragma once

#include "dump.hpp"
#include "i915_maps.hpp"

namespace gwcriu
{

// Dump: adds the recorded placeholders to the session's mappings (called once, at its start).
void add_converted_vmas(DumpSession &s);
void add_converted_vmas(DumpSession &s, const std::vector<gwremote::MapRecord> &maps);
// Dump, CRIU 4.x CHECKPOINT_DEVICES(pid): converts pid's i915 mappings (CRIU has seized it),
// records them and adds them to the session. 0, or -ENOTSUP when pid has none; throws Error
// (after putting back what it converted in pid) when they cannot be converted.
int convert_seized_maps(DumpSession &s, uint32_t pid);
// Dump: ties the placeholders held through lfd (a holder's recorded fd) to the file and handle.
void attribute_late_maps(DumpSession &s, int lfd, const FileImage &img);
// Dump end (plugin exit of a dump): puts the real mappings back in the tasks CRIU
// still traces. Logs what it did; never throws.
void revert_converted_maps();
// Restore: RESUME_DEVICES_LATE for pid (CRIU's, the host's), whose own pid in its namespace
// (the dump's) is vpid. 0 (mapped back, or nothing to do) or -1: then the task is killed, so
// the restore fails instead of resuming a process with holes in its memory.
int map_back_late(int pid, uint32_t vpid);

} // namespace gwcriu
