// The dump side: one session per `criu dump`, started by the first DRM hook (all tasks are
// seized and frozen by then), holding the synced manifest(s), what /proc says about the
// tasks, the dump's object numbering and every DRM mapping.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "chunks.hpp"
#include "images.hpp"
#include "manifest/manifest.hpp"
#include "proc.hpp"

namespace gwcriu
{

struct DumpSession {
	// GPUWATCH_CHECKPOINT_MODE or /etc/criu/gpuwatch.conf said stateless: the DRM files' device, flags
	// and holders only; no manifest, no buffer, handle or driver state (criu_settings.hpp).
	bool stateless = false;
	std::vector<Task> tasks;
	std::vector<gw::manifest::Manifest> manifests;
	std::string manifest_origin; // "daemon", "GPUWATCH_MANIFEST", "image directory" or ""

	// Dump-wide object numbers: manifest objects by (manifest, object id); probed objects by
	// the inode of their dma-buf (one dma-buf per object, so every export shares it).
	uint64_t next_object = 1;
	std::map<std::pair<std::size_t, uint64_t>, uint64_t> manifest_objects;
	std::map<uint64_t, uint64_t> dmabuf_objects;
	std::map<uint64_t, uint64_t> object_sizes;
	std::set<uint64_t> saved; // objects whose gpuwatch-object-N.bin is written
	// buffer bytes written into the image, and those left to the previous pre-dump's image
	uint64_t bytes_stored = 0, bytes_reused = 0;
	// whether the image directory has CRIU's parent link (--prev-images-dir), asked once: a
	// buffer looks for its pre-dump image only then
	bool has_parent();
	std::optional<bool> parent_link;

	std::vector<VmaRec> vmas;     // every DRM mapping of every seized task
	std::vector<bool> attributed; // vmas[i] was claimed by a dumped file (or the manifest)

	std::map<uint32_t, SavedDevice> devices; // by minor, for mappings no dumped file claims
	std::vector<SavedDevice> image_devices;  // gpuwatch-devices.json: what the images name

	// The index of `d` in gpuwatch-devices.json, written again when `d` is new (the images
	// written before name only earlier entries).
	uint32_t device_index(const SavedDevice &d);
	DeviceIndex device_indexer()
	{
		return [this](const SavedDevice &d) { return device_index(d); };
	}

	uint64_t object_of_manifest(std::size_t index, uint64_t id);
	uint64_t object_of_dmabuf(uint64_t ino);
	uint64_t new_object();
	const SavedDevice &device_of_minor(uint32_t minor, uint32_t pid);
	// Manifest lookups (nullptr when absent): the fds[] entry of (pid, fd) in any manifest
	// (its index in *index), a files[] entry, the mmaps[] entry of (pid, start).
	const gw::manifest::Fd *manifest_fd(uint32_t pid, int fd, std::size_t *index) const;
	const gw::manifest::File *manifest_file(std::size_t index, uint64_t id) const;
	const gw::manifest::Mmap *manifest_mmap(std::size_t index, uint32_t pid, uint64_t start) const;
};

// The session, started on first use (stage DUMP, or PRE_DUMP with predump: nothing written
// but the buffers' copies). Throws Error when /proc cannot be read.
DumpSession &dump_session(bool predump = false);
// Takes the manifests (GPUWATCH_MANIFEST, the daemons following the tasks, the action script's
// copy), writing them into the image when keep; the session does it when it starts, but for a
// stateless dump, which asks only when a task has i915 mappings to convert (keep: false).
// `without`: what the log says happens when there is none.
void acquire_manifests(DumpSession &s, bool keep, const char *without);

// DUMP_EXT_FILE for DRM files and dma-bufs: 0, -ENOTSUP (not ours) or -1 (logged).
int dump_drm_file(int lfd, uint32_t id);
int dump_dmabuf(int lfd, uint32_t id);
// Saves the contents of object n (size bytes) read through `map`, once per dump. With the key
// of a buffer a pre-dump copied (CRIU's parent/ holds its image), only the chunks that changed.
class BufferMap;
void save_object(DumpSession &s, uint64_t n, const BufferMap &map, const std::optional<ChunkKey> &key = {});
// One DRM file of the seized tasks at pre-dump: its handles (manifest, else probed) and each
// buffer's copy as gpuwatch-pre-<first holder pid>-<fd>-<handle>.
void predump_drm_file(DumpSession &s, int lfd);
// `criu pre-dump`: copies the buffers of every DRM file of the seized tasks into chunked
// images (chunks.hpp), once. Throws Error when an image cannot be written.
void predump_buffers();
// Rewrites gpuwatch-vmas.json from the session (after each file, and at the end: final).
void write_vmas_image(DumpSession &s, bool final);
// End of the dump (plugin exit): logs the mappings nobody claimed, writes the last images.
void finish_dump(int ret);

} // namespace gwcriu
