// i915 GEM mappings under CRIU 3.17: the conversion record and the in-task operations.
//
// CRIU 3.17 cannot dump a mapping of i915's anonymous inode (`anon_inode:i915.gem`, what an
// mmap of the DRM fd at a fake offset becomes) nor a legacy GEM_MMAP mapping (a MAP_SHARED
// mapping of the object's shmem file, `/i915 (deleted)`), and it has no hook before it parses
// the mappings. So the action-script helper converts them before CRIU looks (placeholder or
// copy, see MapMode), records what it did in `gpuwatch-i915-maps.json` in the image directory,
// and they are put back at the end of the dump (the CRIU plugin, or the helper's watcher).
//
// Everything taking a RemoteTask& runs inside that task: the caller traces it and has stopped
// every thread of its process (see remote_task.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "remote_task.hpp"

namespace gwremote
{

constexpr const char *kMapsRecordName = "gpuwatch-i915-maps.json";
constexpr const char *kMapsSchema = "gpuwatch.criu.i915maps/v1";

enum class MapKind {
	Gem,   // anon_inode:i915.gem: an mmap of the DRM fd at the object's fake offset
	Shmem, // legacy GEM_MMAP: the object's shmem file mapped by the ioctl
};
enum class MapMode {
	Placeholder, // replaced by PROT_NONE anonymous memory; the buffer is saved through its handle
		     // and the real mapping comes back with revert_maps / map_gem / map_legacy
	Copy,        // replaced by private anonymous memory holding the same bytes and prot; CRIU
		     // dumps it as memory; it is no longer shared with the buffer (not reverted)
};

struct MapRecord {
	uint32_t pid = 0;  // as the helper sees it (host pid)
	uint32_t vpid = 0; // in the task's own pid namespace (last NSpid)
	uint64_t start = 0, length = 0;
	int prot = 0; // PROT_READ | PROT_WRITE | PROT_EXEC
	MapKind kind = MapKind::Gem;
	MapMode mode = MapMode::Copy;
	uint64_t offset = 0;          // as /proc/PID/maps shows, in bytes (gem: the fake offset; shmem: in the object)
	std::optional<int> fd;        // the task's fd on the DRM file (placeholder: required)
	std::optional<uint32_t> file; // the manifest's file id
	std::optional<uint32_t> handle;       // GEM handle in that file (placeholder: required)
	std::optional<uint64_t> object;       // the manifest's object id
	std::optional<std::string> mmap_type; // gtt | wc | wb | uc | fixed (the handle's mmap_types)
	bool wc = false;                      // shmem: GEM_MMAP with I915_MMAP_WC
};

struct MapsRecord {
	std::string cgroup; // the frozen cgroup v2 directory
	uint32_t criu_pid = 0;
	std::optional<uint32_t> watcher_pid;
	std::vector<MapRecord> maps;
};

// "rw", "r", "rwx", "none" <-> PROT_* bits
std::string prot_string(int prot);
const char *kind_name(MapKind k);
const char *mode_name(MapMode m);

nlohmann::json to_json(const MapsRecord &r);
// Strict: the record is untrusted input. Throws gw::Error with one line naming the field
// ("gpuwatch-i915-maps.json: field maps[1].length: not a multiple of the page size"): every
// field present with its type and range, no unknown fields, placeholders complete, no two
// maps of one pid overlapping.
MapsRecord parse_maps_record(const std::string &text);

// --- in the task -----------------------------------------------------------------------------
// Replaces the mapping m describes with its placeholder (PROT_NONE private anonymous,
// MAP_NORESERVE) or with a private anonymous copy of its bytes (m.mode). The bytes of a copy
// are read by the task itself (a remote pipe): GEM mappings are VM_IO|VM_PFNMAP, which
// process_vm_readv and /proc/PID/mem cannot read.
void convert_map(RemoteTask &t, const MapRecord &m);

// Copies len bytes from src to dst inside the task, through a pipe it creates and closes again:
// the task's own reads fault GEM pages in, which no outside reader can do on VM_IO|VM_PFNMAP
// mappings. dst must be writable memory of the task.
void copy_through_pipe(RemoteTask &t, uint64_t src, uint64_t dst, uint64_t len);

// Puts the placeholders among maps (those of t's process) back: gem with map_gem, shmem with
// map_legacy. A map whose placeholder is no longer there (not a PROT_NONE private anonymous
// mapping covering it) is left alone, as are copies. Never throws for one map: the result
// lists what failed, one line each.
struct RevertResult {
	int reverted = 0, skipped = 0;
	std::vector<std::string> errors;
	std::vector<std::string> notes; // skipped maps and why
};
RevertResult revert_maps(RemoteTask &t, const std::vector<MapRecord> &maps);

// Whether [start, start+length) of pid is still a placeholder (reads /proc/PID/maps).
bool placeholder_present(uint32_t pid, uint64_t start, uint64_t length);

// mmap(addr, len, prot, MAP_SHARED|MAP_FIXED, fd, fake_offset) in the task: the mapping i915
// makes for an mmap of the DRM fd (shown as anon_inode:i915.gem). Throws gw::Error.
void map_gem(RemoteTask &t, uint64_t addr, uint64_t len, int prot, int fd, uint64_t fake_offset);
// DRM_IOCTL_I915_GEM_MMAP {handle, offset, size = len, flags = wc ? I915_MMAP_WC : 0} on fd in
// the task, then mremap of the result to addr (MREMAP_FIXED) and mprotect to prot if it is not
// rw. Throws gw::Error.
void map_legacy(RemoteTask &t, uint64_t addr, uint64_t len, int prot, int fd, uint32_t handle, uint64_t offset,
		bool wc);

} // namespace gwremote
