// Decoding of DRM ioctl records (gw_ev_ioctl) into typed operations the model applies.
//
// The kernel dispatches DRM ioctls on the number only (type 'd'). Numbers below
// DRM_COMMAND_BASE (0x40) and from DRM_COMMAND_END (0xa0) up are core ioctls, the same for
// every driver; 0x40-0x9f are driver-private and i915 and xe give one number different
// meanings. So decoding is a function of (driver name, nr): core numbers come from one
// table, driver-private numbers from the driver's table (driver_ioctls()). Inputs are read
// from in[] (the argument at syscall entry), outputs from out[] (at exit); the BPF side
// records successful ioctls only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "event_abi.hpp"

namespace gw::drm
{

// --- operations ----------------------------------------------------------------------------
struct CreateDumb { // MODE_CREATE_DUMB
	uint32_t height = 0, width = 0, bpp = 0, flags = 0;
	uint32_t handle = 0, pitch = 0;
	uint64_t size = 0;
};
struct MapDumb { // MODE_MAP_DUMB: fake offset granted for handle
	uint32_t handle = 0;
	uint64_t offset = 0;
};
struct DestroyDumb {
	uint32_t handle = 0;
}; // MODE_DESTROY_DUMB
struct GemClose {
	uint32_t handle = 0;
}; // GEM_CLOSE
struct GemFlink {
	uint32_t handle = 0, name = 0;
};
struct GemOpen {
	uint32_t name = 0, handle = 0;
	uint64_t size = 0;
};
struct PrimeExport { // PRIME_HANDLE_TO_FD: dmabuf is the new dma-buf's kernel file
	uint32_t handle = 0, flags = 0;
	int32_t fd = -1;
	bool cloexec = false;
	uint64_t dmabuf = 0;
};
struct PrimeImport { // PRIME_FD_TO_HANDLE: dmabuf is the imported dma-buf's kernel file
	int32_t fd = -1;
	uint32_t handle = 0;
	uint64_t dmabuf = 0;
};
struct SyncobjCreate {
	uint32_t flags = 0, handle = 0;
};
struct SyncobjExportSyncFile {
	uint32_t handle = 0;
	int32_t fd = -1;
}; // SYNCOBJ_HANDLE_TO_FD(EXPORT_SYNC_FILE)
struct SyncobjDestroy {
	uint32_t handle = 0;
};
struct SetClientCap {
	uint64_t capability = 0, value = 0;
};
// MODE_ADDFB / MODE_ADDFB2: framebuffer fb_id on the file's handles (one plane per buffer
// plane; ADDFB: one plane, the format given as bpp and depth)
struct FbPlane {
	uint32_t handle = 0, pitch = 0, offset = 0;
	uint64_t modifier = 0;
};
struct AddFb {
	uint32_t fb_id = 0, width = 0, height = 0;
	uint32_t pixel_format = 0, flags = 0; // ADDFB2
	uint32_t bpp = 0, depth = 0;          // ADDFB
	bool legacy = false;                  // ADDFB
	bool modifiers_known = true;          // false: DRM_MODE_FB_MODIFIERS but the tail was not captured
	std::vector<FbPlane> planes;
};
struct RmFb { // MODE_RMFB, MODE_CLOSEFB
	uint32_t fb_id = 0;
	bool close = false; // CLOSEFB: planes showing the framebuffer go on showing it
};
// MODE_GETFB / MODE_GETFB2: a new handle on each buffer of framebuffer fb_id (none when the
// caller may not have them: not master, no CAP_SYS_ADMIN)
struct GetFb {
	uint32_t fb_id = 0;
	std::vector<uint32_t> handles; // distinct, nonzero, in plane order
};
// MODE_SETCRTC: CRTC crtc_id shows framebuffer fb_id at (x, y) in the mode given, on
// `connectors` connectors (the array is not captured); no mode: the CRTC is switched off
struct ModeSummary {
	uint32_t clock = 0;
	uint16_t hdisplay = 0, vdisplay = 0;
	uint32_t vrefresh = 0;
};
struct SetCrtc {
	uint32_t crtc_id = 0, fb_id = 0, x = 0, y = 0;
	bool mode_valid = false;
	uint32_t connectors = 0;
	ModeSummary mode;
};
struct PageFlip { // MODE_PAGE_FLIP: CRTC crtc_id shows fb_id from the next vblank on
	uint32_t crtc_id = 0, fb_id = 0, flags = 0;
};
struct SetPlane { // MODE_SETPLANE; fb_id 0 switches the plane off
	uint32_t plane_id = 0, crtc_id = 0, fb_id = 0;
	int32_t crtc_x = 0, crtc_y = 0;
	uint32_t crtc_w = 0, crtc_h = 0;
	uint32_t src_x = 0, src_y = 0, src_w = 0, src_h = 0; // 16.16 fixed point
};
struct Master { // SET_MASTER (true) and DROP_MASTER (false) that succeeded
	bool set = false;
};
// MODE_CURSOR / MODE_CURSOR2 (legacy cursor of a CRTC): flags BO sets the buffer (handle 0:
// hidden) and its size (CURSOR2: and hotspot), MOVE the position
struct Cursor {
	uint32_t flags = 0, crtc_id = 0;
	int32_t x = 0, y = 0;
	uint32_t width = 0, height = 0, handle = 0;
	int32_t hot_x = 0, hot_y = 0; // CURSOR2
};
struct CreateBlob { // MODE_CREATEPROPBLOB: a property blob the file owns (its data is not captured)
	uint32_t blob_id = 0, length = 0;
};
struct DestroyBlob { // MODE_DESTROYPROPBLOB
	uint32_t blob_id = 0;
};
// MODE_ATOMIC that changed the display (not TEST_ONLY): the properties it set live behind user
// pointers and are not captured; the dump reads the configuration back from the kernel
struct AtomicCommit {
	uint32_t flags = 0, count_objs = 0;
};

// --- i915 (driver-private numbers; see drm_decode_i915.cpp) ----------------------------------
struct MemRegion {
	uint16_t mem_class = 0, instance = 0;
};
struct I915GemCreate {     // GEM_CREATE and GEM_CREATE_EXT
	uint64_t size = 0; // as the kernel returned it (rounded up)
	uint32_t handle = 0;
	bool ext = false;                   // GEM_CREATE_EXT
	uint32_t flags = 0;                 // GEM_CREATE_EXT flags (NEEDS_CPU_ACCESS)
	std::vector<MemRegion> placements;  // MEMORY_REGIONS extension, in priority order
	bool protected_content = false;     // PROTECTED_CONTENT extension
	std::optional<uint32_t> pat_index;  // SET_PAT extension
	std::vector<uint32_t> unknown_exts; // extension names not understood
	bool truncated = false;             // the chain or the regions array was not captured whole
};
struct I915MmapOffset { // GEM_MMAP_OFFSET, GEM_MMAP_GTT (legacy_gtt)
	uint32_t handle = 0;
	uint64_t offset = 0; // fake offset
	uint64_t type = 0;   // I915_MMAP_OFFSET_{GTT,WC,WB,UC,FIXED}
	bool legacy_gtt = false;
};
struct I915MmapLegacy { // GEM_MMAP: mapped inside the ioctl, no mmap() follows
	uint32_t handle = 0;
	uint64_t offset = 0, size = 0, addr = 0, flags = 0;
};
struct I915Userptr {
	uint64_t user_ptr = 0, size = 0;
	uint32_t flags = 0, handle = 0;
};
struct I915SetTiling {
	uint32_t handle = 0, mode = 0, stride = 0, swizzle = 0;
};
struct I915SetCaching {
	uint32_t handle = 0, caching = 0;
};
struct I915CtxParam { // a context parameter: value, or the bytes value pointed to
	uint32_t ctx_id = 0, size = 0;
	uint64_t param = 0, value = 0;
	std::optional<std::vector<uint8_t>> data; // size != 0 and captured
};
struct I915ContextCreate {
	uint32_t id = 0, flags = 0;
	bool ext = false;
	std::vector<I915CtxParam> params; // SETPARAM extensions, in chain order
	std::vector<uint32_t> unknown_exts;
	bool truncated = false;
};
struct I915ContextDestroy {
	uint32_t id = 0;
};
struct I915ContextSetParam {
	I915CtxParam p;
	bool truncated = false;
};
struct I915VmCreate {
	uint32_t id = 0, flags = 0;
	bool has_exts = false;
};
// CONTEXT_GETPARAM(VM): i915 gives the context's VM a new id in the file's VM table on every call
struct I915ContextVmId {
	uint32_t ctx_id = 0, vm_id = 0;
};
struct I915VmDestroy {
	uint32_t id = 0;
};
struct I915PerfOpen { // returns a perf stream fd
	int32_t fd = -1;
	uint32_t flags = 0;
	std::vector<std::pair<uint64_t, uint64_t>> properties;
	bool truncated = false;
};
struct I915ExecFence {
	int32_t fd = -1;
	uint32_t ctx_id = 0;
	uint64_t flags = 0;
}; // EXECBUFFER2_WR out-fence

// --- xe (see drm_decode_xe.cpp) ------------------------------------------------------------
struct XeExt {
	uint32_t name = 0, property = 0;
	uint64_t value = 0;
}; // SET_PROPERTY extensions
struct XeGemCreate {
	uint64_t size = 0;
	uint32_t placement = 0, flags = 0, vm_id = 0, handle = 0;
	uint16_t cpu_caching = 0;
	std::vector<XeExt> exts;
	bool truncated = false;
};
struct XeMmapOffset {
	uint32_t handle = 0;
	uint64_t flags = 0, offset = 0;
};
struct XeVmCreate {
	uint32_t flags = 0, id = 0;
	std::vector<XeExt> exts;
	bool truncated = false;
};
struct XeVmDestroy {
	uint32_t id = 0;
};
struct XeEngine {
	uint16_t engine_class = 0, instance = 0, gt = 0;
};
struct XeExecQueueCreate {
	uint16_t width = 0, num_placements = 0;
	uint32_t vm_id = 0, flags = 0, id = 0;
	std::vector<XeEngine> instances;
	std::vector<XeExt> exts;
	bool truncated = false;
};
struct XeExecQueueDestroy {
	uint32_t id = 0;
};
struct XeBindOp {
	uint32_t obj = 0; // GEM handle (0 for userptr / unmap)
	uint16_t pat_index = 0;
	uint64_t obj_offset = 0; // or the user address for MAP_USERPTR
	uint64_t range = 0, addr = 0;
	uint32_t op = 0, flags = 0;
};
struct XeVmBind {
	uint32_t vm_id = 0, exec_queue_id = 0, num_binds = 0;
	std::vector<XeBindOp> binds; // as captured (fewer than num_binds if truncated)
	bool truncated = false;
};

// --- virtio_gpu (see drm_decode_virtio_gpu.cpp) --------------------------------------------
// RESOURCE_CREATE: a GEM handle on a new host resource (2D without virgl: target 2, one
// level, one layer, one sample). res_handle is the device's resource id (virgl command
// streams name it).
struct VirtioResourceCreate {
	uint32_t target = 0, format = 0, bind = 0, width = 0, height = 0, depth = 0;
	uint32_t array_size = 0, last_level = 0, nr_samples = 0, flags = 0;
	uint32_t size = 0, stride = 0; // as given (size 0: one page)
	uint32_t handle = 0, res_handle = 0;
};
// TRANSFER_TO_HOST: the host copy of the handle's resource was written from its guest pages.
struct VirtioTransferToHost {
	uint32_t handle = 0;
};

// An ioctl the model does not track (not a DRM ioctl, or a number with no decoder yet).
struct Ignored {
	uint32_t nr = 0;
};
// An ioctl the decoder does not know, which may have changed the file's state, succeeded:
// only that is recorded (gw_ev_ioctl.undecoded). `name` names it for the manifest.
struct Undecoded {
	uint32_t cmd = 0;
	std::string name;
};
// A record that cannot be decoded as what its number says (argument too short, ...).
struct Malformed {
	std::string reason;
};

using Op = std::variant<Ignored, Undecoded, Malformed, CreateDumb, MapDumb, DestroyDumb, GemClose, GemFlink, GemOpen,
			PrimeExport, PrimeImport, SyncobjCreate, SyncobjDestroy, SyncobjExportSyncFile, SetClientCap,
			AddFb, RmFb, GetFb, SetCrtc, PageFlip, SetPlane, Master, Cursor, CreateBlob, DestroyBlob,
			AtomicCommit, I915GemCreate, I915MmapOffset, I915MmapLegacy, I915Userptr, I915SetTiling,
			I915SetCaching, I915ContextCreate, I915ContextDestroy, I915ContextSetParam, I915ContextVmId,
			I915VmCreate, I915VmDestroy, I915PerfOpen, I915ExecFence, XeGemCreate, XeMmapOffset, XeVmCreate,
			XeVmDestroy, XeExecQueueCreate, XeExecQueueDestroy, XeVmBind, VirtioResourceCreate,
			VirtioTransferToHost>;

// What an ioctl's record carries: the record, and the user memory its argument pointed to
// (GW_EV_IOCTL_EXT, captured for the ioctls that have any; nullptr otherwise).
struct IoctlRecord {
	const gw_ev_ioctl &ev;
	const gw_ev_ioctl_ext *ext = nullptr;
};

// --- tables ----------------------------------------------------------------------------------
struct IoctlDesc {
	uint32_t nr;
	const char *name;     // without the DRM_IOCTL_ prefix, e.g. "MODE_CREATE_DUMB"
	std::size_t arg_size; // bytes of the uapi struct the decoder reads (at most GW_IOCTL_ARG_MAX)
	Op (*decode)(const IoctlRecord &r);
	// Several structs share one number (i915 MMAP_GTT / MMAP_OFFSET, CONTEXT_CREATE / _EXT,
	// EXECBUFFER2 / _WR): the variant is chosen by the command's size and direction; 0 = any.
	uint32_t cmd = 0;
};

bool is_driver_nr(uint32_t nr); // 0x40 <= nr < 0xa0
std::span<const IoctlDesc> core_ioctls();
std::span<const IoctlDesc> driver_ioctls(std::string_view driver); // "i915", "xe", "virtio_gpu"; else empty
std::span<const IoctlDesc> i915_ioctls();
std::span<const IoctlDesc> xe_ioctls();
std::span<const IoctlDesc> virtio_gpu_ioctls();
// Numbers without a decoder that have a name: quiet ones change nothing a restore brings
// back (see is_quiet), the others are recorded as Undecoded under this name.
struct KnownIoctl {
	uint32_t nr;
	const char *name;
	bool quiet;
};
std::span<const KnownIoctl> core_known_ioctls();
std::span<const KnownIoctl> i915_known_ioctls();
std::span<const KnownIoctl> xe_known_ioctls();
std::span<const KnownIoctl> virtio_gpu_known_ioctls();
// The drivers with tables, indexed by enum gw_driver (GW_DRV_I915 -> "i915", ...).
std::string_view driver_name(uint8_t drv);

// The decoder for `cmd` on a file of `driver` ("" if unknown), or nullptr.
const IoctlDesc *find_ioctl(std::string_view driver, uint32_t cmd);

// Decodes one record. Never throws; bad input gives Malformed.
Op decode_ioctl(std::string_view driver, const IoctlRecord &r);
inline Op decode_ioctl(std::string_view driver, const gw_ev_ioctl &ev)
{
	return decode_ioctl(driver, IoctlRecord{ev});
}

// Helpers for the driver decoders (drm_decode_*.cpp).
namespace detail
{
// Copies a T out of a byte buffer at `off`; false if it does not fit in `len` bytes.
template <class T> bool load_at(const uint8_t *buf, std::size_t len, std::size_t off, T &out)
{
	if (off > len || len - off < sizeof(T))
		return false;
	std::memcpy(&out, buf + off, sizeof(T));
	return true;
}
// The captured extension-chain nodes, in order, as (name, node bytes); blobs by owner.
struct ExtView {
	const gw_ev_ioctl_ext *x = nullptr;
	std::size_t nodes() const { return x ? std::min<std::size_t>(x->n_nodes, GW_EXT_NODES_MAX) : 0; }
	const uint8_t *node(std::size_t i) const { return x->nodes[i].data; }
	uint32_t name(std::size_t i) const
	{
		uint32_t n = 0;
		load_at(node(i), GW_EXT_NODE_SIZE, 8, n);
		return n;
	}
	// the blob hanging off node `owner` (GW_EXT_OWNER_ARG: the argument) at user address
	// uaddr, or nullptr; len gets its captured length
	const gw_ext_blob *blob(uint16_t owner, uint64_t uaddr) const;
	bool truncated() const { return x && x->truncated; }
};
} // namespace detail

// "MODE_CREATE_DUMB"; for a number with no decoder its uapi name where the name table has
// it ("MODE_ADDFB"), else "<driver> ioctl 0x<nr>" (nr relative to DRM_COMMAND_BASE for a
// driver-private one, as the driver's uapi header numbers it) or "DRM ioctl 0x<nr>".
std::string ioctl_name(std::string_view driver, uint32_t cmd);

// The ioctl numbers (full nr, 0-255) on a file of `driver` ("" or a driver without a table:
// its private numbers are all unknown) that gpuwatch decodes, and those it knows to change
// nothing a restore brings back: queries, waits, submissions and fence payloads (GPU engine
// state, which is not restored). Every other successful DRM ioctl is recorded as Undecoded.
bool is_decoded(std::string_view driver, uint32_t nr);
bool is_quiet(std::string_view driver, uint32_t nr);

} // namespace gw::drm
