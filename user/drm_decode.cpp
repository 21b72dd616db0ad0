// DRM ioctl decoding: core table (numbers shared by every driver) + per-driver tables.
#include "drm_decode.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fcntl.h> // O_CLOEXEC, behind DRM_CLOEXEC

#include <drm.h>
#include <drm_mode.h>

namespace gw::drm
{
namespace
{

// Copies the uapi struct T out of an argument buffer (in[] or out[]); the caller has
// checked that arg_size covers sizeof(T).
template <class T> T load(const __u8 (&buf)[GW_IOCTL_ARG_MAX])
{
	static_assert(sizeof(T) <= GW_IOCTL_ARG_MAX);
	T v;
	std::memcpy(&v, buf, sizeof v);
	return v;
}

Op dec_create_dumb(const IoctlRecord &r)
{
	const gw_ev_ioctl &ev = r.ev;
	auto in = load<drm_mode_create_dumb>(ev.in);
	auto out = load<drm_mode_create_dumb>(ev.out);
	return CreateDumb{in.height, in.width, in.bpp, in.flags, out.handle, out.pitch, out.size};
}

Op dec_map_dumb(const IoctlRecord &r)
{
	const gw_ev_ioctl &ev = r.ev;
	auto in = load<drm_mode_map_dumb>(ev.in);
	auto out = load<drm_mode_map_dumb>(ev.out);
	return MapDumb{in.handle, out.offset};
}

Op dec_destroy_dumb(const IoctlRecord &r)
{
	const gw_ev_ioctl &ev = r.ev;
	return DestroyDumb{load<drm_mode_destroy_dumb>(ev.in).handle};
}

Op dec_gem_close(const IoctlRecord &r)
{
	const gw_ev_ioctl &ev = r.ev;
	return GemClose{load<drm_gem_close>(ev.in).handle};
}

Op dec_gem_flink(const IoctlRecord &r)
{
	const gw_ev_ioctl &ev = r.ev;
	return GemFlink{load<drm_gem_flink>(ev.in).handle, load<drm_gem_flink>(ev.out).name};
}

Op dec_gem_open(const IoctlRecord &r)
{
	const gw_ev_ioctl &ev = r.ev;
	auto in = load<drm_gem_open>(ev.in);
	auto out = load<drm_gem_open>(ev.out);
	return GemOpen{in.name, out.handle, out.size};
}

Op dec_prime_handle_to_fd(const IoctlRecord &r)
{
	const gw_ev_ioctl &ev = r.ev;
	if (ev.aux_file == 0)
		return Malformed{"PRIME_HANDLE_TO_FD without the dma-buf's file"};
	auto in = load<drm_prime_handle>(ev.in);
	auto out = load<drm_prime_handle>(ev.out);
	if (out.fd < 0)
		return Malformed{"PRIME_HANDLE_TO_FD returned a negative fd"};
	return PrimeExport{in.handle, in.flags, out.fd, (in.flags & DRM_CLOEXEC) != 0, ev.aux_file};
}

Op dec_prime_fd_to_handle(const IoctlRecord &r)
{
	const gw_ev_ioctl &ev = r.ev;
	if (ev.aux_file == 0)
		return Malformed{"PRIME_FD_TO_HANDLE without the dma-buf's file"};
	auto in = load<drm_prime_handle>(ev.in);
	auto out = load<drm_prime_handle>(ev.out);
	return PrimeImport{in.fd, out.handle, ev.aux_file};
}

Op dec_syncobj_create(const IoctlRecord &r)
{
	const gw_ev_ioctl &ev = r.ev;
	return SyncobjCreate{load<drm_syncobj_create>(ev.in).flags, load<drm_syncobj_create>(ev.out).handle};
}

Op dec_syncobj_destroy(const IoctlRecord &r)
{
	const gw_ev_ioctl &ev = r.ev;
	return SyncobjDestroy{load<drm_syncobj_destroy>(ev.in).handle};
}

// Only the sync_file export makes a new fd that matters; a syncobj fd export changes nothing here.
Op dec_syncobj_handle_to_fd(const IoctlRecord &r)
{
	auto in = load<drm_syncobj_handle>(r.ev.in);
	if (!(in.flags & DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE))
		return Ignored{};
	return SyncobjExportSyncFile{in.handle, load<drm_syncobj_handle>(r.ev.out).fd};
}

Op dec_set_client_cap(const IoctlRecord &r)
{
	const gw_ev_ioctl &ev = r.ev;
	auto in = load<drm_set_client_cap>(ev.in);
	return SetClientCap{in.capability, in.value};
}

Op dec_addfb(const IoctlRecord &r)
{
	auto in = load<drm_mode_fb_cmd>(r.ev.in);
	auto out = load<drm_mode_fb_cmd>(r.ev.out);
	AddFb op;
	op.fb_id = out.fb_id;
	op.width = in.width;
	op.height = in.height;
	op.bpp = in.bpp;
	op.depth = in.depth;
	op.legacy = true;
	op.planes.push_back({in.handle, in.pitch, 0, 0});
	return op;
}

Op dec_rmfb(const IoctlRecord &r)
{
	uint32_t id = 0;
	std::memcpy(&id, r.ev.in, sizeof id); // RMFB: the id; CLOSEFB: struct drm_mode_closefb
	return RmFb{id, _IOC_NR(r.ev.cmd) == 0xd0};
}

#define GW_MODE_FB_MODIFIERS (1u << 1) /* DRM_MODE_FB_MODIFIERS */

Op dec_addfb2(const IoctlRecord &r)
{
	drm_mode_fb_cmd2 in{};
	std::memcpy(&in, r.ev.in, GW_IOCTL_ARG_MAX); // the rest from the capture of user memory
	AddFb op;
	std::memcpy(&op.fb_id, r.ev.out, sizeof op.fb_id);
	op.width = in.width;
	op.height = in.height;
	op.pixel_format = in.pixel_format;
	op.flags = in.flags;
	constexpr std::size_t tail = sizeof(drm_mode_fb_cmd2) - GW_IOCTL_ARG_MAX;
	const gw_ext_blob *b = nullptr; // the argument's own tail (its user address is not recorded)
	for (std::size_t i = 0; r.ext && i < std::min<std::size_t>(r.ext->n_blobs, GW_EXT_BLOBS_MAX) && !b; ++i)
		if (r.ext->blobs[i].owner == GW_EXT_OWNER_ARG && r.ext->blobs[i].len == tail)
			b = &r.ext->blobs[i];
	if (b)
		std::memcpy(reinterpret_cast<uint8_t *>(&in) + GW_IOCTL_ARG_MAX, b->data, tail);
	else if (op.flags & GW_MODE_FB_MODIFIERS)
		op.modifiers_known = false;
	for (int i = 0; i < 4 && in.handles[i]; ++i)
		op.planes.push_back({in.handles[i], in.pitches[i], i < 3 || b ? in.offsets[i] : 0,
				     op.flags & GW_MODE_FB_MODIFIERS ? in.modifier[i] : 0});
	return op;
}
static_assert(GW_MODE_FB_MODIFIERS == DRM_MODE_FB_MODIFIERS && offsetof(drm_mode_fb_cmd2, offsets) == 52 &&
		      sizeof(drm_mode_fb_cmd2) == 104 && offsetof(drm_mode_fb_cmd2, modifier) == 72,
	      "bpf/ioctl_args.bpf.h captures drm_mode_fb_cmd2 past GW_IOCTL_ARG_MAX");

Op dec_getfb(const IoctlRecord &r)
{
	auto out = load<drm_mode_fb_cmd>(r.ev.out);
	GetFb op{load<drm_mode_fb_cmd>(r.ev.in).fb_id, {}};
	if (out.handle)
		op.handles.push_back(out.handle);
	return op;
}

// The head of drm_mode_fb_cmd2 up to its handles (the whole struct is 104 bytes, more than
// the BPF side captures)
struct fb_cmd2_head {
	__u32 fb_id, width, height, pixel_format, flags;
	__u32 handles[4];
};
static_assert(offsetof(drm_mode_fb_cmd2, handles) == offsetof(fb_cmd2_head, handles));

Op dec_getfb2(const IoctlRecord &r)
{
	auto out = load<fb_cmd2_head>(r.ev.out);
	GetFb op{load<fb_cmd2_head>(r.ev.in).fb_id, {}};
	for (__u32 h : out.handles) // planes on one buffer share its handle
		if (h && std::find(op.handles.begin(), op.handles.end(), h) == op.handles.end())
			op.handles.push_back(h);
	return op;
}

// MODE_SETCRTC's drm_mode_crtc is 104 bytes: the capture ends within its mode, after vrefresh
// (the mode's flags, type and name are not captured; nor is the connector array)
Op dec_setcrtc(const IoctlRecord &r)
{
	drm_mode_crtc in{};
	std::memcpy(&in, r.ev.in, GW_IOCTL_ARG_MAX);
	SetCrtc op{in.crtc_id, in.fb_id, in.x, in.y, in.mode_valid != 0, in.count_connectors, {}};
	if (op.mode_valid)
		op.mode = {in.mode.clock, in.mode.hdisplay, in.mode.vdisplay, in.mode.vrefresh};
	return op;
}
static_assert(sizeof(drm_mode_crtc) == 104 &&
		      offsetof(drm_mode_crtc, mode) + offsetof(drm_mode_modeinfo, vrefresh) + sizeof(__u32) ==
			      GW_IOCTL_ARG_MAX,
	      "MODE_SETCRTC: vrefresh is the last field captured");

// MODE_PAGE_FLIP and its PAGE_FLIP_TARGET form (the same layout, `reserved` is the target)
Op dec_page_flip(const IoctlRecord &r)
{
	auto in = load<drm_mode_crtc_page_flip>(r.ev.in);
	return PageFlip{in.crtc_id, in.fb_id, in.flags};
}

Op dec_setplane(const IoctlRecord &r)
{
	auto in = load<drm_mode_set_plane>(r.ev.in);
	return SetPlane{in.plane_id, in.crtc_id, in.fb_id, in.crtc_x, in.crtc_y, in.crtc_w,
			in.crtc_h,   in.src_x,   in.src_y, in.src_w,  in.src_h};
}

Op dec_set_master(const IoctlRecord &)
{
	return Master{true};
}

Op dec_drop_master(const IoctlRecord &)
{
	return Master{false};
}

Op dec_cursor(const IoctlRecord &r)
{
	auto in = load<drm_mode_cursor>(r.ev.in);
	return Cursor{in.flags, in.crtc_id, in.x, in.y, in.width, in.height, in.handle, 0, 0};
}

Op dec_cursor2(const IoctlRecord &r)
{
	auto in = load<drm_mode_cursor2>(r.ev.in);
	return Cursor{in.flags, in.crtc_id, in.x, in.y, in.width, in.height, in.handle, in.hot_x, in.hot_y};
}

Op dec_create_blob(const IoctlRecord &r)
{
	return CreateBlob{load<drm_mode_create_blob>(r.ev.out).blob_id, load<drm_mode_create_blob>(r.ev.in).length};
}

Op dec_destroy_blob(const IoctlRecord &r)
{
	return DestroyBlob{load<drm_mode_destroy_blob>(r.ev.in).blob_id};
}

// A TEST_ONLY commit changes nothing
Op dec_atomic(const IoctlRecord &r)
{
	auto in = load<drm_mode_atomic>(r.ev.in);
	if (in.flags & DRM_MODE_ATOMIC_TEST_ONLY)
		return Ignored{_IOC_NR(r.ev.cmd)};
	return AtomicCommit{in.flags, in.count_objs};
}

#define GW_CORE(name, type, fn)                                                                                        \
	{                                                                                                              \
		_IOC_NR(DRM_IOCTL_##name), #name, sizeof(type), fn                                                     \
	}
constexpr IoctlDesc kCore[] = {
	GW_CORE(GEM_CLOSE, drm_gem_close, dec_gem_close),
	GW_CORE(GEM_FLINK, drm_gem_flink, dec_gem_flink),
	GW_CORE(GEM_OPEN, drm_gem_open, dec_gem_open),
	GW_CORE(SET_CLIENT_CAP, drm_set_client_cap, dec_set_client_cap),
	GW_CORE(PRIME_HANDLE_TO_FD, drm_prime_handle, dec_prime_handle_to_fd),
	GW_CORE(PRIME_FD_TO_HANDLE, drm_prime_handle, dec_prime_fd_to_handle),
	GW_CORE(MODE_CREATE_DUMB, drm_mode_create_dumb, dec_create_dumb),
	GW_CORE(MODE_MAP_DUMB, drm_mode_map_dumb, dec_map_dumb),
	GW_CORE(MODE_DESTROY_DUMB, drm_mode_destroy_dumb, dec_destroy_dumb),
	GW_CORE(SYNCOBJ_CREATE, drm_syncobj_create, dec_syncobj_create),
	GW_CORE(SYNCOBJ_DESTROY, drm_syncobj_destroy, dec_syncobj_destroy),
	GW_CORE(SYNCOBJ_HANDLE_TO_FD, drm_syncobj_handle, dec_syncobj_handle_to_fd),
	GW_CORE(MODE_ADDFB, drm_mode_fb_cmd, dec_addfb),
	{0xb8, "MODE_ADDFB2", GW_IOCTL_ARG_MAX, dec_addfb2},
	{0xaf, "MODE_RMFB", sizeof(uint32_t), dec_rmfb},
	{0xd0, "MODE_CLOSEFB", 2 * sizeof(uint32_t), dec_rmfb}, // 6.8+: no older header names it
	GW_CORE(MODE_GETFB, drm_mode_fb_cmd, dec_getfb),
	GW_CORE(MODE_GETFB2, fb_cmd2_head, dec_getfb2),
	{0xa2, "MODE_SETCRTC", GW_IOCTL_ARG_MAX, dec_setcrtc},
	GW_CORE(MODE_PAGE_FLIP, drm_mode_crtc_page_flip, dec_page_flip),
	GW_CORE(MODE_SETPLANE, drm_mode_set_plane, dec_setplane),
	{0x1e, "SET_MASTER", 0, dec_set_master},
	{0x1f, "DROP_MASTER", 0, dec_drop_master},
	GW_CORE(MODE_CURSOR, drm_mode_cursor, dec_cursor),
	GW_CORE(MODE_CURSOR2, drm_mode_cursor2, dec_cursor2),
	GW_CORE(MODE_CREATEPROPBLOB, drm_mode_create_blob, dec_create_blob),
	GW_CORE(MODE_DESTROYPROPBLOB, drm_mode_destroy_blob, dec_destroy_blob),
	GW_CORE(MODE_ATOMIC, drm_mode_atomic, dec_atomic),
};
#undef GW_CORE

// Core numbers without a decoder (drm.h). Quiet: queries and waits; SET_VERSION (the bus id
// format GET_UNIQUE reports); DIRTYFB (a flush); a queued vblank event; fence payloads of
// syncobjs (GPU engine state, which a restore does not bring back: docs/manifest.md).
// Numbers are spelled out: older uapi headers lack the newest names.
constexpr KnownIoctl kCoreKnown[] = {
	{0x00, "VERSION", true},
	{0x01, "GET_UNIQUE", true},
	{0x02, "GET_MAGIC", true},
	{0x03, "IRQ_BUSID", true},
	{0x04, "GET_MAP", true},
	{0x05, "GET_CLIENT", true},
	{0x06, "GET_STATS", true},
	{0x07, "SET_VERSION", true},
	{0x08, "MODESET_CTL", true},
	{0x0c, "GET_CAP", true},
	{0x10, "SET_UNIQUE", false},
	{0x11, "AUTH_MAGIC", false},
	{0x3a, "WAIT_VBLANK", true},
	{0x3b, "CRTC_GET_SEQUENCE", true},
	{0x3c, "CRTC_QUEUE_SEQUENCE", true},
	{0xa0, "MODE_GETRESOURCES", true},
	{0xa1, "MODE_GETCRTC", true},
	{0xa4, "MODE_GETGAMMA", true},
	{0xa5, "MODE_SETGAMMA", false},
	{0xa6, "MODE_GETENCODER", true},
	{0xa7, "MODE_GETCONNECTOR", true},
	{0xa8, "MODE_ATTACHMODE", false},
	{0xa9, "MODE_DETACHMODE", false},
	{0xaa, "MODE_GETPROPERTY", true},
	{0xab, "MODE_SETPROPERTY", false},
	{0xac, "MODE_GETPROPBLOB", true},
	{0xb1, "MODE_DIRTYFB", true},
	{0xb5, "MODE_GETPLANERESOURCES", true},
	{0xb6, "MODE_GETPLANE", true},
	{0xb9, "MODE_OBJ_GETPROPERTIES", true},
	{0xba, "MODE_OBJ_SETPROPERTY", false},
	{0xc2, "SYNCOBJ_FD_TO_HANDLE", false},
	{0xc3, "SYNCOBJ_WAIT", true},
	{0xc4, "SYNCOBJ_RESET", true},
	{0xc5, "SYNCOBJ_SIGNAL", true},
	{0xc6, "MODE_CREATE_LEASE", false},
	{0xc7, "MODE_LIST_LESSEES", true},
	{0xc8, "MODE_GET_LEASE", true},
	{0xc9, "MODE_REVOKE_LEASE", false},
	{0xca, "SYNCOBJ_TIMELINE_WAIT", true},
	{0xcb, "SYNCOBJ_QUERY", true},
	{0xcc, "SYNCOBJ_TRANSFER", true},
	{0xcd, "SYNCOBJ_TIMELINE_SIGNAL", true},
	{0xcf, "SYNCOBJ_EVENTFD", true},
	{0xd1, "SET_CLIENT_NAME", false},
	{0xd2, "GEM_CHANGE_HANDLE", false},
};
static_assert(_IOC_NR(DRM_IOCTL_MODE_ADDFB2) == 0xb8 && _IOC_NR(DRM_IOCTL_MODE_ATOMIC) == 0xbc &&
	      _IOC_NR(DRM_IOCTL_SET_MASTER) == 0x1e && _IOC_NR(DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL) == 0xcd &&
	      _IOC_NR(DRM_IOCTL_WAIT_VBLANK) == 0x3a);

static_assert(_IOC_NR(DRM_IOCTL_MODE_CREATE_DUMB) == 0xb2 && _IOC_NR(DRM_IOCTL_GEM_CLOSE) == 0x09);
static_assert(_IOC_NR(DRM_IOCTL_SYNCOBJ_DESTROY) == 0xc0 && _IOC_NR(DRM_IOCTL_PRIME_FD_TO_HANDLE) == 0x2e);
static_assert(_IOC_NR(DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD) == 0xc1 && DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE == 1 &&
		      offsetof(drm_syncobj_handle, flags) == 4 && offsetof(drm_syncobj_handle, fd) == 8,
	      "bpf/handlers.bpf.h reads these");

// The entry for `cmd`: same number, and the same full command where the entry names one
// (several structs share a number); an entry without a command matches any.
const IoctlDesc *find_cmd(std::span<const IoctlDesc> table, uint32_t cmd)
{
	const IoctlDesc *any = nullptr;
	for (const IoctlDesc &d : table) {
		if (d.nr != _IOC_NR(cmd))
			continue;
		if (d.cmd == cmd)
			return &d;
		if (d.cmd == 0 && !any)
			any = &d;
	}
	return any;
}

} // namespace

bool is_driver_nr(uint32_t nr)
{
	return nr >= DRM_COMMAND_BASE && nr < DRM_COMMAND_END;
}

std::span<const IoctlDesc> core_ioctls()
{
	return kCore;
}

namespace
{
// A driver's tables: its decoders and its named numbers without one.
struct DriverTables {
	std::string_view name;
	std::span<const IoctlDesc> (*ioctls)();
	std::span<const KnownIoctl> (*known)();
};
constexpr DriverTables kDrivers[] = {{"i915", i915_ioctls, i915_known_ioctls},
				     {"xe", xe_ioctls, xe_known_ioctls},
				     {"virtio_gpu", virtio_gpu_ioctls, virtio_gpu_known_ioctls}};

// Driver tables are looked up by the driver name the kernel reports (drm_driver.name),
// never guessed from the node.
const DriverTables *tables_of(std::string_view driver)
{
	for (const DriverTables &t : kDrivers)
		if (t.name == driver)
			return &t;
	return nullptr;
}
} // namespace

std::span<const IoctlDesc> driver_ioctls(std::string_view driver)
{
	const DriverTables *t = tables_of(driver);
	return t ? t->ioctls() : std::span<const IoctlDesc>{};
}

std::span<const KnownIoctl> core_known_ioctls()
{
	return kCoreKnown;
}

namespace
{
std::span<const KnownIoctl> known_ioctls(std::string_view driver, uint32_t nr)
{
	if (!is_driver_nr(nr))
		return kCoreKnown;
	const DriverTables *t = tables_of(driver);
	return t ? t->known() : std::span<const KnownIoctl>{};
}

const KnownIoctl *find_known(std::string_view driver, uint32_t nr)
{
	for (const KnownIoctl &k : known_ioctls(driver, nr))
		if (k.nr == nr)
			return &k;
	return nullptr;
}
} // namespace

bool is_decoded(std::string_view driver, uint32_t nr)
{
	auto table = is_driver_nr(nr) ? driver_ioctls(driver) : core_ioctls();
	return std::any_of(table.begin(), table.end(), [&](const IoctlDesc &d) { return d.nr == nr; });
}

bool is_quiet(std::string_view driver, uint32_t nr)
{
	const KnownIoctl *k = find_known(driver, nr);
	return k && k->quiet;
}

std::string_view driver_name(uint8_t drv)
{
	switch (drv) {
	case GW_DRV_I915: return "i915";
	case GW_DRV_XE: return "xe";
	case GW_DRV_VIRTIO_GPU: return "virtio_gpu";
	default: return "";
	}
}

namespace detail
{
const gw_ext_blob *ExtView::blob(uint16_t owner, uint64_t uaddr) const
{
	if (!x)
		return nullptr;
	for (std::size_t i = 0; i < std::min<std::size_t>(x->n_blobs, GW_EXT_BLOBS_MAX); ++i)
		if (x->blobs[i].owner == owner && x->blobs[i].uaddr == uaddr && x->blobs[i].len <= GW_EXT_BLOB_SIZE)
			return &x->blobs[i];
	return nullptr;
}
} // namespace detail

const IoctlDesc *find_ioctl(std::string_view driver, uint32_t cmd)
{
	if (_IOC_TYPE(cmd) != DRM_IOCTL_BASE)
		return nullptr;
	return is_driver_nr(_IOC_NR(cmd)) ? find_cmd(driver_ioctls(driver), cmd) : find_cmd(core_ioctls(), cmd);
}

Op decode_ioctl(std::string_view driver, const IoctlRecord &r)
{
	const gw_ev_ioctl &ev = r.ev;
	if (_IOC_TYPE(ev.cmd) != DRM_IOCTL_BASE)
		return Ignored{_IOC_NR(ev.cmd)};
	if (ev.undecoded) {
		if (ev.arg_size != 0)
			return Malformed{"an undecoded ioctl's record carries an argument"};
		return Undecoded{ev.cmd, ioctl_name(driver, ev.cmd)};
	}
	if (ev.arg_size > GW_IOCTL_ARG_MAX)
		return Malformed{"arg_size " + std::to_string(ev.arg_size) + " exceeds the capture buffer"};
	std::size_t cmd_size = std::min<std::size_t>(_IOC_SIZE(ev.cmd), GW_IOCTL_ARG_MAX);
	if (ev.arg_size != cmd_size)
		return Malformed{"arg_size " + std::to_string(ev.arg_size) + " disagrees with the command's size " +
				 std::to_string(_IOC_SIZE(ev.cmd))};
	const IoctlDesc *d = find_ioctl(driver, ev.cmd);
	if (!d)
		return Ignored{_IOC_NR(ev.cmd)};
	if (ev.arg_size < d->arg_size)
		return Malformed{std::string(d->name) + ": argument of " + std::to_string(ev.arg_size) +
				 " bytes, the struct needs " + std::to_string(d->arg_size)};
	if (r.ext && (r.ext->file != ev.file || r.ext->cmd != ev.cmd))
		return d->decode(IoctlRecord{ev, nullptr}); // not this ioctl's: decode without it
	return d->decode(r);
}

std::string ioctl_name(std::string_view driver, uint32_t cmd)
{
	uint32_t nr = _IOC_NR(cmd);
	if (const IoctlDesc *d = find_ioctl(driver, cmd))
		return d->name;
	if (const KnownIoctl *k = find_known(driver, nr); k && _IOC_TYPE(cmd) == DRM_IOCTL_BASE)
		return k->name;
	char buf[64];
	if (is_driver_nr(nr))
		std::snprintf(buf, sizeof buf, "%.24s ioctl 0x%02x", driver.empty() ? "driver" : driver.data(),
			      static_cast<unsigned>(nr - DRM_COMMAND_BASE));
	else
		std::snprintf(buf, sizeof buf, "DRM ioctl 0x%02x", static_cast<unsigned>(nr));
	return buf;
}

} // namespace gw::drm
