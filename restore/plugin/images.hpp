// The plugin's images, written into CRIU's image directory next to CRIU's own:
//
//   gpuwatch-file-<ID>.json     one DRM file (ID = CRIU's file id of DUMP/RESTORE_EXT_FILE)
//   gpuwatch-dmabuf-<ID>.json   one dma-buf file exporting a buffer we dumped
//   gpuwatch-vmas.json          every DRM mapping of the dumped tasks
//   gpuwatch-devices.json       every device the others name, once (they hold its index)
//   gpuwatch-object-<N>.bin     the contents of buffer object N (each object once), then a
//                               trailer of their size and XXH64 (object_image.hpp), checked
//                               at restore while the contents are read into the buffer. Images
//                               of earlier versions: the raw contents, their checksum in
//                               gpuwatch-object-<N>.xxh64 ("<xxh64, 16 hex digits> <size>\n")
//                               or .crc32 ("<zlib crc32 hex> <size>\n"), still read. Or, after
//                               a pre-dump that copied the buffer, the chunks that changed
//                               since in the .bin (no trailer) and
//   gpuwatch-object-<N>.map     every chunk's hash and where it is (chunks.hpp)
//   gpuwatch-pre-<P>-<F>-<H>.bin/.map  a `criu pre-dump`'s copy of a buffer (chunks.hpp)
//   gpuwatch-manifest.json      the synced manifest (more daemons: gpuwatch-manifest.<i>.json)
//
// Object numbers N are the dump's own: one per buffer object, shared by every handle (in any
// file), dma-buf and mapping that names the object. Everything read back is untrusted: the
// parsers (images.cpp, file_image.cpp, on gw::jsonin's strict reader) check every field, count
// and size and throw ImageError with one line naming the image and the field.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "drm_devices.hpp"
#include "i915_ioctls.hpp"
#include "kms.hpp"
#include "xe_ops.hpp"
#include "image_io.hpp"

namespace gwcriu
{

struct ImageError : Error {
	using Error::Error;
};

// Bounds applied when reading images (knobs: GPUWATCH_MAX_HANDLE, GPUWATCH_MAX_OBJECT_SIZE).
uint32_t max_handle();
uint64_t max_object_size();
constexpr std::size_t kMaxJsonImage = 64 << 20;
// The filler objects a restore may create in all (GPUWATCH_MAX_FILLERS, default 65536): holes
// in handle, VM, context and exec-queue numbers are filled, then the fillers closed.
uint64_t max_fillers();

// pid: as CRIU's dump saw it; vpid: in the task's own pid namespace (what getpid() returns
// in the restored task). fds: the task's fd numbers for the file (kcmp-verified at dump).
struct Holder {
	uint32_t pid = 0, vpid = 0;
	std::vector<int> fds;
};

// A device as the task saw it: gw::SavedDevice (user/drm_devices.hpp), one record everywhere.
using gw::SavedDevice;

// How an i915 buffer was made and what was set on it since (handles of i915 files).
struct I915Buffer {
	std::string kind;   // "create", "create_ext", "userptr"; "" when made otherwise (dumb, import)
	uint32_t flags = 0; // GEM_CREATE_EXT flags, or USERPTR flags
	std::vector<i915::Region> placements; // GEM_CREATE_EXT memory regions, in order
	bool protected_content = false;
	std::optional<uint32_t> pat;                         // GEM_CREATE_EXT PAT index
	uint64_t user_ptr = 0;                               // USERPTR address (the task's memory, restored by CRIU)
	std::optional<std::pair<uint32_t, uint32_t>> tiling; // SET_TILING mode, stride
	std::optional<uint32_t> caching;                     // SET_CACHING
};

// An i915 context as the file had it: ids are recreated exactly (context 0 exists from open).
struct I915Context {
	uint32_t id = 0, flags = 0; // flags: CONTEXT_CREATE_EXT flags (single timeline, ...)
	std::optional<uint32_t> vm; // the VM id it uses; nullopt: its own VM
	bool vm_destroyed = false;  // that VM id was destroyed since; the context keeps the VM
	std::optional<i915::EngineList> engines;
	std::vector<i915::CtxParam> params; // every other parameter set, by number
};

struct I915FileState {
	std::vector<uint32_t> vms;         // live VM ids, ascending
	std::vector<I915Context> contexts; // ascending ids
};

// How an xe buffer was made (handles of xe files made by GEM_CREATE).
struct XeBuffer {
	uint32_t placement = 0;   // bitmask of memory region instances
	uint32_t flags = 0;       // GEM_CREATE flags
	uint32_t vm_id = 0;       // VM-private buffer: its VM (0: none)
	uint16_t cpu_caching = 0; // WB 1, WC 2
};

// One VM_BIND mapping of an xe VM, replayed with MAP (a buffer or a NULL binding) or MAP_USERPTR.
struct XeBinding {
	uint64_t addr = 0, range = 0;
	std::optional<uint32_t> handle;  // the file's handle of the bound buffer
	std::optional<uint64_t> userptr; // MAP_USERPTR: the task's address (memory restored by CRIU)
	uint64_t offset = 0;             // into the buffer (MAP)
	uint16_t pat_index = 0;
	uint32_t flags = 0; // VM_BIND flags (NULL: a sparse binding, no handle)
};

struct XeVm {
	uint32_t id = 0, flags = 0;
	std::vector<XeBinding> bindings; // ascending addresses, not overlapping
};

// An xe exec queue: recreated with the same id on its VM (vm_destroyed: on a VM whose id was
// destroyed since; the queue keeps that VM).
struct XeQueue {
	uint32_t id = 0, vm = 0, flags = 0;
	bool vm_destroyed = false;
	uint16_t width = 0, num_placements = 0;
	std::vector<xe::Engine> instances; // width * num_placements
	xe::Properties properties;         // SET_PROPERTY extensions, in the order they were given
};

struct XeFileState {
	std::vector<XeVm> vms;       // ascending ids
	std::vector<XeQueue> queues; // ascending ids
};

// A virtio_gpu resource as RESOURCE_CREATE made it (handles of virtio_gpu files; the
// manifest's params of origin "virtio_gpu.resource_create").
struct VirtioResource {
	uint32_t target = 0, format = 0, bind = 0, width = 0, height = 0, depth = 0;
	uint32_t array_size = 0, last_level = 0, nr_samples = 0, flags = 0, size = 0, stride = 0;
	uint32_t res_handle = 0; // the device's resource id at dump (only virgl command streams name it)
};

struct HandleRec {
	uint32_t handle = 0;
	uint64_t size = 0;
	std::string origin; // "dumb", "prime", "flink", "unknown"
	uint64_t object = 0;
	bool saved = false;                               // gpuwatch-object-<object>.bin was written by this dump
	nlohmann::json params = nlohmann::json::object(); // dumb: width, height, bpp, flags, pitch
	std::optional<I915Buffer> i915;
	std::optional<XeBuffer> xe;
	std::optional<VirtioResource> virtio;
	bool host_uploaded = false; // virtio_gpu: the host copy was written (TRANSFER_TO_HOST): upload it again
};

struct FileImage {
	uint32_t criu_id = 0;
	SavedDevice device;
	uint32_t f_flags = 0;                            // fcntl(F_GETFL) of the dumped file
	std::string source;                              // "manifest", "probe" or "stateless"
	bool handles_known = false;                      // false: the handle table may lack entries
	std::vector<HandleRec> handles;                  // ascending handle numbers
	std::optional<I915FileState> i915;               // contexts and VMs of an i915 file (from the manifest)
	std::optional<XeFileState> xe;                   // VMs with bindings and exec queues of an xe file
	KmsState kms;                                    // framebuffers and the CRTCs showing them (kms.hpp)
	std::vector<std::pair<uint64_t, uint64_t>> caps; // SET_CLIENT_CAP (capability, value), ascending
	std::vector<Holder> holders;
	std::vector<std::string> degraded; // what will not come back exactly, one line each
};

struct DmabufImage {
	uint32_t criu_id = 0;
	uint64_t object = 0, size = 0;
	bool saved = false;
	uint32_t f_flags = 0;
	SavedDevice device; // where to recreate the buffer when no restored file holds it
	std::vector<Holder> holders;
	std::vector<std::string> degraded;
};

// How many filler objects restoring f creates: the numbers below each of its highest handle,
// i915 VM and context, and xe VM and exec queue ids that are not its own.
uint64_t fillers_needed(const FileImage &f);
// Throws ImageError when the files together need more fillers than max_fillers(): an image
// with one handle numbered 65536 would otherwise make the restore create 65535 objects, as
// root, per file, before anything else could refuse it.
void check_filler_budget(const std::vector<const FileImage *> &files);

// An i915 mapping CRIU 3.17 cannot dump (anon_inode:i915.gem, or the legacy GEM_MMAP shmem
// mapping): the action script replaced it with a placeholder before the dump
// (gpuwatch-i915-maps.json); RESUME_DEVICES_LATE maps the buffer back into the stopped task.
struct LateMap {
	std::string kind;                  // "gem" or "shmem"
	std::optional<uint32_t> mmap_type; // gem: I915_MMAP_OFFSET_* of the mapping
	int fd = -1;                       // the task's fd of the file (restored at the same number)
	bool wc = false;                   // shmem: mapped with I915_MMAP_WC
};

struct VmaRec {
	uint32_t pid = 0, vpid = 0;
	uint64_t start = 0, length = 0, offset = 0; // offset: the fake offset + delta at dump
	std::string prot;                           // "rw", "r", ...
	std::optional<uint32_t> file;               // CRIU id of the DRM file mapped, when one was dumped
	SavedDevice device;
	std::optional<uint32_t> handle; // the file's handle of the object, when it has one
	uint64_t object = 0;            // 0: the buffer behind the mapping is unknown
	uint64_t object_size = 0;
	uint64_t delta = 0; // mapping start - the object's fake offset (bytes)
	bool saved = false;
	std::optional<LateMap> late;
	bool stateless = false; // a stateless checkpoint's: comes back as zero-filled memory, no device behind it
};

// An out-fence (sync_file) or an i915 perf stream fd. Neither has state that survives: a
// sync_file comes back already signalled (the GPU work it waited for is lost), a perf stream is
// opened again with the same properties.
struct FenceImage {
	uint32_t criu_id = 0;
	std::string kind; // "sync_file" or "i915_perf"
	uint32_t f_flags = 0;
	SavedDevice device;                                    // the DRM device to make it on
	uint32_t perf_flags = 0;                               // i915_perf: DRM_I915_PERF_OPEN flags
	std::vector<std::pair<uint64_t, uint64_t>> properties; // i915_perf: (property, value)
	std::vector<Holder> holders;
};

std::string file_image_name(uint32_t criu_id);
std::string fence_image_name(uint32_t criu_id);
std::string dmabuf_image_name(uint32_t criu_id);
std::string object_base_name(uint64_t object); // gpuwatch-object-<N>
std::string object_image_name(uint64_t object);
std::string object_checksum_name(uint64_t object); // .xxh64, images of earlier versions
std::string object_crc32_name(uint64_t object);    // .crc32, images of earlier versions still
constexpr const char *kVmasImage = "gpuwatch-vmas.json";
std::string manifest_image_name(std::size_t index); // 0: gpuwatch-manifest.json

// The images name their device by its index in gpuwatch-devices.json (gw::kDevicesImage): the
// writers are given the dump's index of a device, the parsers the devices image's list.
using DeviceIndex = std::function<uint32_t(const SavedDevice &)>;
using Devices = std::vector<SavedDevice>;
nlohmann::json to_json(const FileImage &f, const DeviceIndex &device_index);
nlohmann::json to_json(const DmabufImage &d, const DeviceIndex &device_index);
nlohmann::json to_json(const std::vector<VmaRec> &vmas, const DeviceIndex &device_index);
nlohmann::json to_json(const FenceImage &f, const DeviceIndex &device_index);
// `name` prefixes every error message.
FenceImage parse_fence_image(const std::string &text, const std::string &name, const Devices &devices);
FileImage parse_file_image(const std::string &text, const std::string &name, const Devices &devices);
DmabufImage parse_dmabuf_image(const std::string &text, const std::string &name, const Devices &devices);
std::vector<VmaRec> parse_vmas_image(const std::string &text, const std::string &name, const Devices &devices);
Devices parse_devices_image(const std::string &text, const std::string &name);

} // namespace gwcriu
