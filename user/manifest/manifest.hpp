// The device-state manifest (schema gpuwatch.manifest/v1) as types: the one contract between
// the daemon, which fills a Manifest from its model and writes it, and everything that reads
// one (`gpuwatch show`, the control client, the CRIU plugin and action script). Reading
// (parse/read_file) validates as it converts: a field the types need that is missing or of the
// wrong kind is a one-line ManifestError naming it ("field files[0].handles[2].size is a
// string, expected an unsigned integer"). No other code looks manifest keys up by name.
//
// docs/manifest.md describes every field.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace gw
{

struct ManifestError : std::runtime_error {
	using std::runtime_error::runtime_error;
};

// f_flags as text ("O_RDWR|O_NONBLOCK"): the manifest's and the plugin images' "flags".
std::string flags_string(uint32_t f_flags);

namespace manifest
{

inline constexpr const char *kSchema = "gpuwatch.manifest/v1";

// i915 SET_TILING, as last set on the handle's object.
struct Tiling {
	std::optional<std::string> mode; // "none", "x", "y"; absent: a mode gpuwatch has no name for
	std::optional<uint32_t> stride;
	uint32_t swizzle = 0;
};

// An i915 GEM_CREATE_EXT memory region.
struct Placement {
	std::optional<std::string> memory_class; // "system", "device"; absent: unknown class
	std::optional<uint16_t> instance;
};

// What a restore replays of a handle's creation parameters, by origin. The parameters as the
// decoder recorded them stay in Handle::params (written back unchanged); these are their typed
// view, filled by the reader (fields a driver does not have stay empty).
struct CreateParams {
	std::optional<uint32_t> flags;                         // i915.gem_create_ext, i915.userptr, xe.gem_create
	bool protected_content = false;                        // i915 PXP
	std::optional<uint32_t> pat_index;                     // i915.gem_create_ext
	std::vector<Placement> placements;                     // i915.gem_create_ext
	std::optional<uint64_t> user_ptr;                      // i915.userptr
	std::optional<uint32_t> placement, vm_id, cpu_caching; // xe.gem_create
	bool extensions = false;                               // xe.gem_create: GEM_CREATE extensions (PXP) were used
};

struct Handle {
	uint64_t handle = 0;
	uint64_t size = 0;
	std::string origin;                               // "dumb", "prime", "flink", "i915.gem_create", ...
	uint64_t object = 0;                              // Object::id
	nlohmann::json params = nlohmann::json::object(); // creation parameters, driver-defined
	CreateParams create;                              // their typed view (fill_views)
	uint64_t imports = 0;
	std::optional<uint64_t> flink_name;
	std::vector<uint64_t> mmap_offsets;         // fake offsets granted for it, ascending
	std::map<uint64_t, std::string> mmap_types; // fake offset -> i915/xe mmap type ("wb", ...)
	std::optional<Tiling> tiling;               // i915
	std::optional<uint32_t> caching;            // i915 SET_CACHING
	bool host_uploaded = false;                 // virtio_gpu TRANSFER_TO_HOST was called on it
};

struct Syncobj {
	uint64_t handle = 0;
	uint32_t flags = 0;
};

struct Cap {
	uint64_t capability = 0;
	uint64_t value = 0;
};

struct Engine {
	uint16_t engine_class = 0, instance = 0;
};

// "XR24" for DRM_FORMAT_XRGB8888; the number in hex when not four printable characters
std::string fourcc_text(uint32_t fourcc);

// A KMS framebuffer the file made (MODE_ADDFB, ADDFB2)
struct FramebufferPlane {
	std::optional<uint64_t> handle; // the file's handle it was made from (null: closed since)
	std::optional<uint64_t> object; // the buffer (the framebuffer holds it)
	uint32_t pitch = 0, offset = 0;
	uint64_t modifier = 0;
};
struct Framebuffer {
	uint64_t id = 0; // per device
	uint32_t width = 0, height = 0;
	uint32_t pixel_format = 0;   // fourcc (ADDFB2); 0 for ADDFB
	std::string format;          // the fourcc as text ("XR24"), or "bpp 32 depth 24" for ADDFB
	uint32_t flags = 0;          // ADDFB2 flags
	uint32_t bpp = 0, depth = 0; // ADDFB
	bool modifiers_known = true;
	std::vector<FramebufferPlane> planes;
};

// The display configuration a file set (decoded KMS calls), as far as it still holds: what
// the file's later calls, or the removal of its framebuffers, changed is applied.
struct DisplayMode { // the captured part of a drm_mode_modeinfo
	uint32_t clock = 0, hdisplay = 0, vdisplay = 0, vrefresh = 0;
};
struct DisplayCrtc {
	uint64_t crtc = 0;
	uint64_t fb = 0;         // shown (0: none)
	bool configured = false; // MODE_SETCRTC seen; false: only page flips (x, y, mode unknown)
	uint32_t x = 0, y = 0, connectors = 0;
	std::optional<DisplayMode> mode; // configured: none when the CRTC was switched off
};
struct DisplayPlane { // MODE_SETPLANE
	uint64_t plane = 0, crtc = 0, fb = 0;
	int32_t crtc_x = 0, crtc_y = 0;
	uint32_t crtc_w = 0, crtc_h = 0;
	uint32_t src_x = 0, src_y = 0, src_w = 0, src_h = 0; // 16.16 fixed point
};
struct DisplayCursor { // MODE_CURSOR / MODE_CURSOR2 of a CRTC, as the file's last calls left it
	uint64_t crtc = 0;
	std::optional<uint64_t> handle; // the buffer shown (BO); none when only MOVE was seen, or
					// once that handle is closed or names another buffer
	std::optional<uint64_t> object; // the buffer (manifest object id) when known
	uint32_t width = 0, height = 0;
	int32_t hot_x = 0, hot_y = 0;                   // CURSOR2's hotspot
	std::optional<std::array<int32_t, 2>> position; // MOVE; none when not seen
};
struct DisplayBlob {         // MODE_CREATEPROPBLOB, not destroyed since
	uint64_t id = 0;     // per device, like framebuffers
	uint32_t length = 0; // bytes
};
struct Display {
	std::optional<bool> master;         // the last SET_MASTER (true) or DROP_MASTER (false) seen
	std::vector<DisplayCrtc> crtcs;     // by id
	std::vector<DisplayPlane> planes;   // by id
	std::vector<DisplayBlob> blobs;     // by id
	std::vector<DisplayCursor> cursors; // by CRTC; a cursor the file hid is not listed
	// MODE_ATOMIC commits (not TEST_ONLY) seen: their properties are not captured, so crtcs and
	// planes are what legacy calls set and may since have been changed by these
	uint64_t atomic_commits = 0;
	bool empty() const
	{
		return !master && crtcs.empty() && planes.empty() && blobs.empty() && cursors.empty() &&
		       !atomic_commits;
	}
};

// An i915 context parameter as recorded: a number, raw bytes, or an engine map.
struct ContextParam {
	std::string name;                           // "priority", "engines", ...
	nlohmann::json value;                       // as recorded (written back unchanged)
	std::optional<uint64_t> number;             // a numeric value (negative: two's complement)
	std::optional<std::vector<uint8_t>> bytes;  // {"bytes": "hex"}: well-formed hex only
	std::optional<std::vector<Engine>> engines; // {"engines": [...]}
	bool extensions_not_recorded = false;       // the engine map had extensions gpuwatch did not record
};

struct Context { // i915
	uint64_t id = 0;
	uint32_t flags = 0;
	std::optional<uint64_t> vm; // null: the context's own VM
	bool vm_destroyed = false;  // the context keeps a VM whose id was destroyed
	bool truncated = false;
	std::vector<ContextParam> params;
};

struct Binding { // xe VM_BIND
	uint64_t addr = 0, range = 0;
	uint32_t pat_index = 0, flags = 0;
	std::optional<uint64_t> userptr; // a userptr binding: the user address
	std::optional<uint64_t> handle;  // else the buffer's handle, if the file still has it
	std::optional<uint64_t> object;  // and its object (none: a NULL, sparse binding)
	uint64_t offset = 0;
};

struct Vm { // i915, xe
	uint64_t id = 0;
	uint32_t flags = 0;
	nlohmann::json params = nlohmann::json::object(); // VM_CREATE extensions as recorded
	std::vector<Binding> bindings;
};

struct QueueInstance {
	uint16_t engine_class = 0, instance = 0, gt = 0;
};

struct ExecQueue { // xe
	uint64_t id = 0;
	uint64_t vm = 0;
	uint32_t flags = 0;
	uint16_t width = 0, num_placements = 0;
	std::vector<QueueInstance> instances;
	nlohmann::json params = nlohmann::json::object(); // SET_PROPERTY extensions as recorded
	// typed view: "property_N": value pairs, and the names of the others
	std::vector<std::pair<uint32_t, uint64_t>> properties;
	std::vector<std::string> other_params;
};

struct File {
	uint64_t id = 0;
	std::string path;              // "/dev/dri/card0"
	uint32_t major = 0, minor = 0; // "rdev": "major:minor"
	std::string driver;
	std::string flags; // flags_string(f_flags)
	uint32_t f_flags = 0;
	bool handles_known = true;
	std::vector<Handle> handles;
	std::vector<Syncobj> syncobjs;
	std::vector<Cap> caps;
	// DRM ioctls that succeeded on the file and that gpuwatch does not decode (uapi names,
	// sorted): whatever state they made is unknown, and the manifest is not complete
	std::vector<std::string> undecoded_ioctls;
	std::vector<Framebuffer> framebuffers; // by id
	Display display;                       // "display", written when not empty
	// driver state: present (possibly empty) for the drivers that have it
	std::optional<std::vector<Context>> contexts;
	std::optional<std::vector<Vm>> vms;
	std::optional<std::vector<ExecQueue>> exec_queues;

	const Handle *find_handle(uint64_t n) const;
	bool has_vm(uint64_t vm_id) const;
};

// Where an out-fence (sync_file) or i915 perf stream fd came from.
struct FenceOrigin {
	nlohmann::json raw;            // as recorded (null: not seen), written back unchanged
	std::string ioctl;             // "SYNCOBJ_HANDLE_TO_FD", "PERF_OPEN", "EXECBUFFER2_WR"
	std::optional<uint64_t> file;  // the DRM file it came from
	bool complete = false;         // PERF_OPEN: every property was captured
	std::optional<uint32_t> flags; // PERF_OPEN
	std::optional<std::vector<std::pair<uint64_t, uint64_t>>> properties; // PERF_OPEN
};

struct Fd {
	enum class Kind {
		drm,
		dmabuf,
		sync_file,
		i915_perf
	};
	uint64_t fd = 0;
	bool cloexec = false;
	Kind kind = Kind::drm;
	std::optional<uint64_t> file;           // drm: the file; dmabuf: its exporter, if known
	std::optional<uint64_t> handle, object; // dmabuf: the exporter's handle and the object
	FenceOrigin origin;                     // sync_file, i915_perf
};

struct Mmap {
	uint64_t start = 0, length = 0;
	std::string prot; // "rw", "r", ...
	bool shared = false;
	uint64_t file = 0;
	uint64_t offset = 0;
	std::optional<uint64_t> handle, object;
	std::string via = "device"; // how it was mapped: "device", "i915.gem_mmap", ...
};

struct Process {
	uint64_t pid = 0; // as the daemon sees it (its pid namespace)
	std::string comm;
	// The task's own (innermost) pid namespace (the inode of /proc/PID/ns/pid) and its pid
	// there (the last NSpid): the same task in every namespace's view, so a reader in another
	// pid namespace (CRIU in one) finds its pids (control::sync). 0: not recorded.
	uint64_t pid_ns = 0;
	uint64_t ns_pid = 0;
	std::vector<Fd> fds;
	std::vector<Mmap> mmaps;

	const Fd *find_fd(uint64_t fd) const;
	const Mmap *find_mmap(uint64_t start) const;
};

struct Object {
	uint64_t id = 0, size = 0;
	std::optional<uint64_t> flink_name;
};

struct Manifest {
	std::string cgroup;
	bool complete = true;
	std::vector<std::string> incomplete_reasons;
	uint64_t generation = 0;
	uint64_t lost_events = 0, failed_reads = 0, malformed_records = 0;
	std::optional<std::map<std::string, std::string>> hooks; // hook path per group (daemon)
	std::vector<Process> processes;
	std::vector<File> files;
	std::vector<Object> objects;

	const File *find_file(uint64_t id) const;
	const Process *find_process(uint64_t pid) const;
};

// Fills the typed views (Handle::create, ContextParam's number/bytes/engines, ExecQueue's
// properties, FenceOrigin's fields) from the recorded values they view. from_json does it; a
// writer that fills a Manifest itself (Model::manifest) calls it last.
void fill_views(Manifest &m);
// JSON <-> types. from_json validates (throws ManifestError); to_json writes what from_json reads.
Manifest from_json(const nlohmann::json &j);
nlohmann::json to_json(const Manifest &m);
// Checks a JSON manifest without keeping the result (throws ManifestError).
void validate(const nlohmann::json &j);
// The manifest's on-disk text. Strings a traced process controls (comm) may hold invalid
// UTF-8: they are written with U+FFFD replacements instead of failing the write.
std::string serialize(const Manifest &m);
// Parses manifest text; errors name `what` ("gpuwatch-manifest-0.json: not valid JSON at byte 7").
Manifest parse(const std::string &text, const std::string &what);
// The largest manifest read_file takes (the plugin takes as much from the image directory).
constexpr uint64_t kMaxManifestBytes = 256ull << 20;
// Reads and validates a manifest file, a regular file of at most kMaxManifestBytes (a FIFO, a
// device or a larger file is refused); throws ManifestError naming the file. *text, when
// given, gets the file's text as read (what was validated).
Manifest read_file(const std::string &path, std::string *text = nullptr);
// The `gpuwatch show` text.
std::string format_summary(const Manifest &m);

} // namespace manifest
} // namespace gw
