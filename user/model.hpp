// The device-state model: events in, state out. Pure (no syscalls, no BPF), unit-testable.
//
// Every record the tracer produces (bpf/gpuwatch.h) is fed to Model::apply(). The model keys
// DRM state by the identity of the open file (the kernel's struct file pointer, `file` in the
// ABI), never by (pid, fd): dup, fork and SCM_RIGHTS share one file. It keeps a separate
// (tgid, fd) -> file table per process.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "event_abi.hpp"
#include "btree_map.hpp"
#include "handle_table.hpp"
#include "object_table.hpp"
#include "manifest/manifest.hpp"

namespace gw
{

// A GEM buffer object. Several handles (in one or several files) may name one object:
// PRIME export/import and FLINK/OPEN share objects across files. Ids are model-assigned.
struct GemObject {         // keyed by its model-assigned id in Model::objects()
	uint64_t size = 0; // bytes, 0 if unknown
	// references the model keeps count of, so that a closed handle or a removed mapping
	// is collected without a walk over the whole model: handles (in any file) and mappings
	// (in any process) naming this object
	uint32_t handles = 0;
	uint32_t mappings : 29 = 0;
	// an xe VM binding has named it (never reset): only such an object may be held by a
	// binding, which collecting it must then look for
	bool bound : 1 = false;
	// a flink name (Model::flinks_) or a dma-buf (Model::dmabufs_) may name it: only then does
	// collecting it walk those tables. Set when one is made; cleared when a walk finds none.
	bool flinked : 1 = false;
	bool exported : 1 = false;
};
static_assert(sizeof(GemObject) == 16, "10^5 objects: keep GemObject at 16 bytes");

// What a handle carries beyond the common fields; rare (see Handle), so held out of line.
struct HandleExtra {
	nlohmann::json params;   // creation parameters not held in Handle::small
	nlohmann::json attrs;    // set after creation (i915 SET_TILING, SET_CACHING; virtio_gpu
				 // TRANSFER_TO_HOST): {"tiling": {...}, "caching": n, "host_uploaded": true}
	uint32_t imports = 0;    // PRIME_FD_TO_HANDLE calls that returned this existing handle
	uint32_t flink_name = 0; // GEM_FLINK name (names start at 1): 0 when none
};

// A GEM handle of a file. Kept small (40 bytes): a model of 10^5 handles holds 10^5 of these.
// The common creation parameters (dumb buffers, xe GEM_CREATE) are four 32-bit values whose
// names the origin gives; anything else (flink names, imports, attributes, other origins'
// parameters, a dumb buffer's flags when not 0) lives in a HandleExtra allocated only for the
// handles that have one.
struct Handle {
	// grant(): kNoGrant, the one fake offset (DrmFile::mmap_offsets) granted for this handle, or
	// kManyGrants (several, or not known: dropping the handle scans the file's grants). Held as
	// a page number: an offset that is not one (the kernel's fake offsets are) is "many".
	static constexpr uint64_t kNoGrant = 0, kManyGrants = ~0ull;
	// origins: what created the handle ("dumb", "prime", "flink", "unknown", "i915.gem_create", ...)
	enum class Origin : uint8_t {
		unknown,
		dumb,
		prime,
		flink,
		i915_gem_create,
		i915_gem_create_ext,
		i915_userptr,
		xe_gem_create,
		getfb, // MODE_GETFB / GETFB2: a new handle on a framebuffer's buffer
		virtio_gpu_resource_create
	};

	uint64_t object = 0;    // GemObject id
	uint32_t small[4] = {}; // dumb (flags 0): width, height, bpp, pitch; xe: placement, flags, vm_id, cpu_caching
	Origin kind = Origin::unknown;
	bool has_small : 1 = false; // `small` holds the origin's parameters
	bool primed : 1 = false;    // DrmFile::prime may name it: dropping it walks the file's prime map

	uint64_t grant() const { return grant_page_ == kManyPages ? kManyGrants : uint64_t{grant_page_} << kPageShift; }
	void set_grant(uint64_t offset)
	{
		bool page = offset % (uint64_t{1} << kPageShift) == 0 && (offset >> kPageShift) < kManyPages;
		grant_page_ = page ? static_cast<uint32_t>(offset >> kPageShift) : kManyPages;
	}

	std::string_view origin() const;
	static Origin origin_of(std::string_view name); // Origin::unknown for a name not listed

	// creation parameters: dumb: width, height, bpp, flags, pitch; prime: source dma-buf;
	// flink: name; ...: copied into the manifest; null when there are none (shown as {})
	nlohmann::json params() const;
	void set_params(nlohmann::json p); // parameters not in `small`; null: none
	nlohmann::json attrs() const { return extra_ ? extra_->attrs : nlohmann::json(); }
	void set_attr(const std::string &name, nlohmann::json value) { extra().attrs[name] = std::move(value); }
	uint32_t imports() const { return extra_ ? extra_->imports : 0; }
	void add_import() { ++extra().imports; }
	std::optional<uint32_t> flink_name() const
	{
		return extra_ && extra_->flink_name ? std::optional<uint32_t>(extra_->flink_name) : std::nullopt;
	}
	void set_flink_name(uint32_t name) { extra().flink_name = name; }

	Handle() = default;
	Handle(const Handle &o)
	    : object(o.object), kind(o.kind), has_small(o.has_small), primed(o.primed), grant_page_(o.grant_page_),
	      extra_(o.extra_ ? std::make_unique<HandleExtra>(*o.extra_) : nullptr)
	{
		std::copy(std::begin(o.small), std::end(o.small), small);
	}
	Handle(Handle &&) = default;
	Handle &operator=(const Handle &o) { return *this = Handle(o); }
	Handle &operator=(Handle &&) = default;

private:
	HandleExtra &extra()
	{
		if (!extra_)
			extra_ = std::make_unique<HandleExtra>();
		return *extra_;
	}
	static constexpr unsigned kPageShift = 12;
	static constexpr uint32_t kManyPages = ~0u;
	uint32_t grant_page_ = 0; // grant() >> kPageShift, or kManyPages
	std::unique_ptr<HandleExtra> extra_;
};
static_assert(sizeof(Handle) <= 40, "10^5 handles: keep Handle at 40 bytes");

// i915 contexts, i915/xe VMs and their bindings, xe exec queues: per DRM file, by id.
struct Context {
	uint32_t id = 0;
	uint32_t flags = 0;                               // CONTEXT_CREATE_EXT flags (SINGLE_TIMELINE, ...)
	std::optional<uint32_t> vm;                       // I915_CONTEXT_PARAM_VM; none: the context's own implicit VM
	nlohmann::json params = nlohmann::json::object(); // parameter name -> value, as set
	bool truncated = false;                           // some parameter bytes were not captured
};

struct Binding { // xe VM_BIND: [addr, addr + range) of a VM
	uint64_t addr = 0, range = 0;
	bool userptr = false;
	uint32_t handle = 0; // GEM handle (not userptr)
	uint64_t object = 0; // GemObject id (not userptr; 0 if unknown)
	uint64_t offset = 0; // offset into the object, or the user address for userptr
	uint16_t pat_index = 0;
	uint32_t flags = 0;
};

struct Vm {
	uint32_t id = 0;
	uint32_t flags = 0;
	nlohmann::json params = nlohmann::json::object();
	std::map<uint64_t, Binding> bindings; // addr -> binding; ranges never overlap
};

struct ExecQueue {
	uint32_t id = 0, vm = 0, flags = 0;
	uint16_t width = 0, num_placements = 0;
	nlohmann::json instances = nlohmann::json::array(); // [{class, instance, gt}]
	nlohmann::json params = nlohmann::json::object();   // SET_PROPERTY extensions
};

// A framebuffer the file made (MODE_ADDFB, ADDFB2); the kernel removes it with the file.
struct FramebufferPlane {
	uint32_t handle = 0, pitch = 0, offset = 0;
	uint64_t modifier = 0;
	uint64_t object = 0; // GemObject id of the handle at ADDFB time (the framebuffer holds it)
};
struct Framebuffer {
	uint32_t width = 0, height = 0, pixel_format = 0, flags = 0, bpp = 0, depth = 0;
	bool legacy = false, modifiers_known = true;
	std::vector<FramebufferPlane> planes;
};

// A fake offset's grant (MAP_DUMB, MMAP_OFFSET): its handle and, for i915, the mmap type.
struct Grant {
	uint32_t handle = 0;
	uint8_t i915_type = 0;                   // 0: none (not an i915 MMAP_OFFSET), else I915_MMAP_OFFSET_* + 1
	std::string_view i915_type_name() const; // "gtt", "wc", "wb", "uc", "fixed", "unknown"; "": none
};

struct DrmFile {
	uint64_t id = 0;    // model-assigned, stable for the file's life, starts at 1
	uint64_t kfile = 0; // kernel struct file pointer (never in the manifest)
	std::string path;   // "/dev/dri/card0": from rdev, see Model::set_node_namer
	uint32_t major = 0, minor = 0;
	std::string driver;
	uint32_t f_flags = 0;
	bool handles_known = true;   // false when the file was first seen after it was opened
	uint32_t mappings = 0;       // mappings of this file in any process: one no fd holds lives while it has any
	HandleTable<Handle> handles; // handle number -> handle
	std::map<uint32_t, uint32_t> syncobjs;               // syncobj handle -> creation flags
	std::map<uint64_t, uint32_t> caps;                   // SET_CLIENT_CAP capability -> value
	std::set<std::string> undecoded;                     // ioctls not decoded that succeeded (their names)
	std::map<uint32_t, Framebuffer> framebuffers;        // KMS framebuffer id (per device) -> framebuffer
	std::map<uint32_t, manifest::DisplayCrtc> crtcs;     // CRTCs the file set (SETCRTC, PAGE_FLIP)
	std::map<uint32_t, manifest::DisplayPlane> planes;   // planes the file set (SETPLANE)
	std::optional<bool> master;                          // the last SET_MASTER / DROP_MASTER
	std::map<uint32_t, uint32_t> blobs;                  // property blob id (per device) -> length
	std::map<uint32_t, manifest::DisplayCursor> cursors; // legacy cursors the file set, by CRTC
	uint64_t atomic_commits = 0;                         // MODE_ATOMIC, not TEST_ONLY
	BTreeMap<uint64_t, Grant> mmap_offsets; // fake offset -> grant; a change moves the others (btree_map.hpp)
	std::map<uint64_t, uint32_t> prime;     // dma-buf kfile -> handle (exports and imports)
	uint64_t dev = 0; // kernel struct drm_device * (joins i915.gem mappings; not in the manifest)
	std::map<uint32_t, Context> contexts;      // i915
	std::map<uint32_t, Vm> vms;                // i915, xe
	std::map<uint32_t, ExecQueue> exec_queues; // xe
};

struct FdEntry {
	uint64_t kfile = 0; // DRM or dma-buf kernel file (or sync_file / perf stream)
	bool cloexec = false;
	bool dmabuf = false;
	uint8_t other = 0; // GW_FILE_SYNC or GW_FILE_PERF: see Model::others()
};

// An out-fence (sync_file) or i915 perf stream fd: not DRM state, but an fd the process
// holds because of a DRM ioctl; `origin` says which (file, ioctl, parameters).
struct OtherFile {
	uint64_t kfile = 0;
	uint8_t type = 0; // GW_FILE_SYNC, GW_FILE_PERF
	nlohmann::json origin = nullptr;
};

// A GemObject id or none, in 8 bytes (ids are never 0), with std::optional's interface: a
// model of 10^5 mappings holds 10^5 of these.
class ObjectRef
{
public:
	ObjectRef() = default;
	ObjectRef(std::nullopt_t) {}
	ObjectRef(uint64_t id) : id_(id) {}
	ObjectRef(std::optional<uint64_t> id) : id_(id.value_or(0)) {}
	explicit operator bool() const { return id_ != 0; }
	bool has_value() const { return id_ != 0; }
	uint64_t operator*() const { return id_; }
	operator std::optional<uint64_t>() const { return id_ ? std::optional<uint64_t>(id_) : std::nullopt; }
	friend bool operator==(ObjectRef a, ObjectRef b) { return a.id_ == b.id_; }

private:
	uint64_t id_ = 0;
};

struct Mapping { // 48 bytes: a model of 10^5 mappings holds 10^5 of these
	// how the mapping reaches its buffer: the DRM file itself; "anon_inode:i915.gem" (i915
	// swaps the VMA's file); "i915.gem_mmap" (legacy GEM_MMAP: the object's shmem file)
	enum class Via : uint8_t {
		device,
		i915_gem,
		i915_gem_mmap
	};
	uint64_t start = 0, length = 0;
	uint64_t kfile = 0;  // the DRM file
	uint64_t offset = 0; // byte offset (fake offset)
	ObjectRef object;    // GemObject id when known
	uint32_t prot = 0;   // PROT_* bits
	bool shared = false;
	Via via = Via::device;
	std::string_view via_name() const; // as the manifest names it: "device", ...
};
static_assert(sizeof(Mapping) == 48, "10^5 mappings: keep Mapping at 48 bytes");

struct Process {
	uint32_t pid = 0;
	std::string comm;
	std::map<int, FdEntry> fds;
	BTreeMap<uint64_t, Mapping> mmaps;   // start -> mapping; ranges never overlap; a change moves the others
	std::vector<std::string> incomplete; // what is missing about this process (gone with it)
};

// What a dma-buf file is known to carry: the object it exports.
struct DmaBuf {
	uint64_t kfile = 0;
	uint64_t object = 0;         // GemObject id (0 if unknown)
	uint64_t exporter_kfile = 0; // DRM file that exported it (0 if unknown)
	uint32_t exporter_handle = 0;
};

enum class ApplyStatus {
	ok,
	malformed,      // bad kind or size: counted, the manifest becomes incomplete
	unknown_process // the record's tgid is not known: the caller should snapshot it, then re-apply
};

class Model
{
public:
	explicit Model(std::string cgroup = {});

	// Apply one raw record (ring buffer or snapshot). Records of an unknown process return
	// unknown_process without side effects, except GW_EV_FD/MMAP records with source
	// GW_FD_SNAPSHOT / hook GW_HOOK_ITER, GW_EV_FORK from a known parent, and
	// GW_EV_CGROUP_MOVE, which are always applied.
	ApplyStatus apply(std::span<const std::byte> record);

	// Process bookkeeping driven by the daemon (snapshot, cgroup moves).
	void add_process(uint32_t tgid, std::string comm); // no-op if known (comm updated)
	void remove_process(uint32_t tgid);                // as if it exited
	bool has_process(uint32_t tgid) const;
	// Records waiting for their follow-up (an ext record for its ioctl, the origin of an fd
	// not yet installed): none outlives its process.
	std::size_t pending_records() const { return pending_ext_.size() + pending_origin_.size(); }
	std::vector<uint32_t> pids() const;

	// Kernel counters (lost events, failed reads): nonzero makes the manifest incomplete.
	void set_kernel_counters(uint64_t lost_events, uint64_t failed_reads);
	void mark_incomplete(const std::string &reason); // listed in "incomplete_reasons"

	// Maps (major, minor) to a node path, "" when it has none. Default: DRM's numbering
	// (gw::drm_node_path_of_minor). The daemon installs one that reads sysfs first.
	using NodeNamer = std::string (*)(uint32_t major, uint32_t minor);
	void set_node_namer(NodeNamer namer);

	// Bumped on every change that alters the manifest (the daemon debounces writes on it).
	uint64_t generation() const { return generation_; }

	// The manifest (schema gpuwatch.manifest/v1): user/model_manifest.cpp.
	manifest::Manifest manifest() const;

	// Read-only views for tests and for the CRIU side.
	const std::map<uint32_t, Process> &processes() const { return procs_; }
	const std::map<uint64_t, DrmFile> &files() const { return files_; } // keyed by kfile
	uint64_t malformed_records() const { return malformed_; }
	const std::map<uint64_t, DmaBuf> &dmabufs() const { return dmabufs_; } // keyed by kfile
	std::size_t flink_names() const { return flinks_.size(); }
	const ObjectTable<GemObject> &objects() const { return objects_; }      // keyed by id
	const std::map<uint64_t, OtherFile> &others() const { return others_; } // keyed by kfile
	uint64_t ignored_ioctls() const { return ignored_ioctls_; }             // recorded, but not decoded

private:
	// implementation details are the model's own
	friend struct ModelOps; // model_ops.hpp: the per-record state changes
	std::string cgroup_;
	std::map<uint32_t, Process> procs_;
	std::map<uint64_t, DrmFile> files_;
	std::map<uint64_t, DmaBuf> dmabufs_;
	ObjectTable<GemObject> objects_;                           // id -> object: user/object_table.hpp
	std::map<std::pair<uint64_t, uint32_t>, uint64_t> flinks_; // (device key, name) -> object
	std::map<uint64_t, OtherFile> others_;
	std::map<std::pair<uint32_t, int>, nlohmann::json> pending_origin_; // (tgid, fd) -> origin
	std::map<uint32_t, gw_ev_ioctl_ext> pending_ext_;                   // tid -> the ext record before its ioctl
	std::vector<std::string> incomplete_;
	uint64_t next_file_id_ = 1;
	uint64_t lost_events_ = 0, failed_reads_ = 0, malformed_ = 0, ignored_ioctls_ = 0;
	uint64_t generation_ = 0;
	NodeNamer namer_ = nullptr;

	// The last process and file looked up: records come in bursts from one task, and a round
	// of the churn is five records of one process on one file. Reset by every erase from
	// procs_ / files_, and by a copy (the pointers are into this model's maps).
	template <class K, class V> struct LastHit {
		K key{};
		V *value = nullptr;
		LastHit() = default;
		LastHit(const LastHit &) {}
		LastHit &operator=(const LastHit &)
		{
			value = nullptr;
			return *this;
		}
		// map's value for k (nullptr when none), remembered
		template <class Map> V *find(Map &map, K k)
		{
			if (value && key == k)
				return value;
			auto it = map.find(k);
			if (it == map.end())
				return nullptr;
			key = k, value = &it->second;
			return value;
		}
	};
	LastHit<uint32_t, Process> last_proc_;
	LastHit<uint64_t, DrmFile> last_file_;
};

} // namespace gw
