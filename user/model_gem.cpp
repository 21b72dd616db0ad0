// The model's side of DRM ioctls: GEM handles, objects, flink names, dma-bufs, syncobjs and
// client caps of one file, as drm_decode.cpp's operations describe them.

#include "model_ops.hpp"

#include <drm_mode.h>

namespace gw
{
namespace
{

// Flink names are global per device and only usable on primary nodes (GEM_FLINK and
// GEM_OPEN are not render-node ioctls), so the primary node's rdev identifies the device.
uint64_t flink_key(const DrmFile &f)
{
	return (uint64_t{f.major} << 32) | f.minor;
}

template <class... Ts> struct overloaded : Ts... {
	using Ts::operator()...;
};
template <class... Ts> overloaded(Ts...) -> overloaded<Ts...>;

} // namespace

namespace
{
constexpr std::string_view kOrigins[] = {"unknown",         "dumb",
					 "prime",           "flink",
					 "i915.gem_create", "i915.gem_create_ext",
					 "i915.userptr",    "xe.gem_create",
					 "getfb",           "virtio_gpu.resource_create"};
// the names of Handle::small's values, by origin
constexpr const char *kDumbSmall[] = {"width", "height", "bpp", "pitch"}; // and flags 0
constexpr const char *kXeSmall[] = {"placement", "flags", "vm_id", "cpu_caching"};
} // namespace

std::string_view Handle::origin() const
{
	return kOrigins[static_cast<std::size_t>(kind)];
}

Handle::Origin Handle::origin_of(std::string_view name)
{
	for (std::size_t i = 0; i < std::size(kOrigins); ++i)
		if (kOrigins[i] == name)
			return static_cast<Origin>(i);
	return Origin::unknown;
}

nlohmann::json Handle::params() const
{
	nlohmann::json p;
	if (has_small && kind == Origin::dumb) {
		for (std::size_t i = 0; i < std::size(kDumbSmall); ++i)
			p[kDumbSmall[i]] = small[i];
		p["flags"] = 0;
	} else if (has_small && kind == Origin::xe_gem_create) {
		for (std::size_t i = 0; i < std::size(kXeSmall); ++i)
			p[kXeSmall[i]] = small[i];
		p["properties"] = nlohmann::json::object(); // extra params name them when there are any
	}
	if (extra_ && extra_->params.is_object())
		for (const auto &[k, v] : extra_->params.items())
			p[k] = v;
	else if (extra_ && !extra_->params.is_null())
		return extra_->params;
	return p;
}

void Handle::set_params(nlohmann::json p)
{
	if (!p.is_null() || extra_)
		extra().params = std::move(p);
}

ApplyStatus ModelOps::on_ioctl(const gw_ev_ioctl &ev)
{
	// a successful ioctl went through an fd (the kernel's is an unsigned int, and a number
	// from 2^31 on is never open): a negative one is not the tracer's (issue 16, finding 10:
	// it left a file no fd held, which only a full collection dropped)
	if (ev.file == 0 || ev.aux_file == ev.file || ev.fd < 0)
		return malformed();
	Process *p = process(ev.hdr.tgid);
	if (!p)
		return ApplyStatus::unknown_process;
	// the driver an fd record named, else the one the tracer found for this ioctl (a file
	// first met by its ioctls, e.g. received over a socket, has no name yet)
	const DrmFile *known = file(ev.file);
	std::string_view driver =
		known && !known->driver.empty() ? std::string_view(known->driver) : drm::driver_name(ev.drv);
	// the ext record, taken out of the table (2.7 KiB: not copied, nor a copy's room zeroed)
	decltype(m.pending_ext_)::node_type ext;
	if (auto x = m.pending_ext_.find(ev.hdr.tid); x != m.pending_ext_.end())
		ext = m.pending_ext_.extract(x);
	drm::Op op = drm::decode_ioctl(driver, drm::IoctlRecord{ev, ext ? &ext.mapped() : nullptr});
	if (std::holds_alternative<drm::Malformed>(op))
		return malformed();
	DrmFile &f = file_seen(ev.file);
	learn_fd(*p, ev.fd, ev.file, false);
	apply_op(*p, f, op);
	return ApplyStatus::ok;
}

uint64_t ModelOps::new_object(uint64_t size)
{
	return m.objects_.insert(GemObject{size});
}

std::string_view Grant::i915_type_name() const
{
	constexpr std::string_view kNames[] = {"", "gtt", "wc", "wb", "uc", "fixed", "unknown"};
	return i915_type < std::size(kNames) ? kNames[i915_type] : "unknown";
}

void ModelOps::drop_handle(DrmFile &f, uint32_t handle)
{
	auto hit = f.handles.find(handle);
	if (hit == f.handles.end())
		return;
	count_handle(hit->second.object, -1);
	uint64_t g = hit->second.grant();
	bool primed = hit->second.primed;
	f.handles.erase(hit);
	if (g == Handle::kManyGrants) {
		for (auto it = f.mmap_offsets.begin(); it != f.mmap_offsets.end();) {
			if (it->second.handle != handle) {
				++it;
				continue;
			}
			it = f.mmap_offsets.erase(it);
		}
	} else if (auto it = f.mmap_offsets.find(g);
		   g != Handle::kNoGrant && it != f.mmap_offsets.end() && it->second.handle == handle) {
		f.mmap_offsets.erase(it);
	}
	if (primed) // else no walk of the file's dma-bufs per close
		std::erase_if(f.prime, [&](const auto &kv) {
			if (kv.second != handle)
				return false;
			lost_bufs.push_back(kv.first);
			return true;
		});
	changed = true;
}

// `offset` now maps `handle` of f (MAP_DUMB, MMAP_OFFSET). The handle (known_handle first)
// remembers its grant, so that dropping it does not scan every grant of the file.
Grant &ModelOps::grant(DrmFile &f, uint64_t offset, uint32_t handle)
{
	auto [it, inserted] = f.mmap_offsets.try_emplace(offset, Grant{handle});
	if (!inserted && it->second.handle != handle) { // a stale grant: its handle's list is no longer known
		if (auto old = f.handles.find(it->second.handle); old != f.handles.end())
			old->second.set_grant(Handle::kManyGrants);
		it->second = Grant{handle};
	}
	if (auto h = f.handles.find(handle); h != f.handles.end() && h->second.grant() != offset)
		h->second.set_grant(h->second.grant() == Handle::kNoGrant && offset != Handle::kNoGrant
					    ? offset
					    : Handle::kManyGrants);
	changed = true;
	return it->second;
}

Handle &ModelOps::add_handle(DrmFile &f, uint32_t handle, uint64_t object, std::string_view origin,
			     nlohmann::json params)
{
	drop_handle(f, handle); // a stale entry: its close was missed
	Handle h;
	h.object = object;
	h.kind = Handle::origin_of(origin);
	h.set_params(std::move(params));
	changed = true;
	count_handle(object, +1);
	return f.handles[handle] = std::move(h);
}

// A handle an ioctl names: if the model never saw it created, it existed before tracing
// began or came from an ioctl not decoded, and the file's handle table is incomplete.
Handle &ModelOps::known_handle(DrmFile &f, uint32_t handle)
{
	if (auto it = f.handles.find(handle); it != f.handles.end())
		return it->second;
	f.handles_known = false;
	return add_handle(f, handle, new_object(0), "unknown");
}

void ModelOps::apply_op(Process &p, DrmFile &f, const drm::Op &o)
{
	using namespace drm;
	if (apply_intel(p, f, o) || apply_virtio_gpu(f, o))
		return;
	std::visit(overloaded{
			   [&](const CreateDumb &x) {
				   if (x.flags) { // no flag is defined: kept, out of line
					   add_handle(f, x.handle, new_object(x.size), "dumb",
						      nlohmann::json{{"width", x.width},
								     {"height", x.height},
								     {"bpp", x.bpp},
								     {"flags", x.flags},
								     {"pitch", x.pitch}});
					   return;
				   }
				   Handle &h = add_handle(f, x.handle, new_object(x.size), "dumb");
				   h.has_small = true;
				   uint32_t v[] = {x.width, x.height, x.bpp, x.pitch};
				   std::copy(std::begin(v), std::end(v), h.small);
			   },
			   [&](const MapDumb &x) {
				   known_handle(f, x.handle);
				   grant(f, x.offset, x.handle);
			   },
			   [&](const DestroyDumb &x) { drop_handle(f, x.handle); },
			   [&](const GemClose &x) { drop_handle(f, x.handle); }, // whatever its imports, as the kernel
			   [&](const GemFlink &x) {
				   Handle &h = known_handle(f, x.handle);
				   h.set_flink_name(x.name);
				   name_flink({flink_key(f), x.name}, h.object);
				   changed = true;
			   },
			   [&](const GemOpen &x) { op(f, x); },
			   [&](const PrimeExport &x) { op(p, f, x); },
			   [&](const PrimeImport &x) { op(p, f, x); },
			   [&](const SyncobjCreate &x) {
				   f.syncobjs[x.handle] = x.flags;
				   changed = true;
			   },
			   [&](const SyncobjDestroy &x) { changed = f.syncobjs.erase(x.handle) > 0 || changed; },
			   [&](const SyncobjExportSyncFile &x) {
				   m.pending_origin_[{p.pid, x.fd}] = {
					   {"file", f.id}, {"ioctl", "SYNCOBJ_HANDLE_TO_FD"}, {"syncobj", x.handle}};
			   },
			   [&](const AddFb &x) { op(f, x); },
			   [&](const GetFb &x) { op(f, x); },
			   [&](const RmFb &x) { op(f, x); },
			   [&](const SetCrtc &x) { op(f, x); },
			   [&](const PageFlip &x) { op(f, x); },
			   [&](const SetPlane &x) { op(f, x); },
			   [&](const Master &x) {
				   f.master = x.set;
				   changed = true;
			   },
			   [&](const Cursor &x) { op(f, x); },
			   [&](const CreateBlob &x) {
				   f.blobs[x.blob_id] = x.length;
				   changed = true;
			   },
			   [&](const DestroyBlob &x) { changed = f.blobs.erase(x.blob_id) > 0 || changed; },
			   [&](const AtomicCommit &) {
				   ++f.atomic_commits;
				   changed = true;
			   },
			   [&](const SetClientCap &x) {
				   f.caps[x.capability] = static_cast<uint32_t>(x.value);
				   changed = true;
			   },
			   [&](const Ignored &) { ++m.ignored_ioctls_; },
			   [&](const Undecoded &x) { changed = f.undecoded.insert(x.name).second || changed; },
			   [&](const Malformed &) {}, // rejected by on_ioctl before any state changed
			   [&](const auto &) {},      // driver operations: apply_intel, apply_virtio_gpu
		   },
		   o);
}

// MODE_RMFB: the kernel switches off the CRTCs and planes that showed the framebuffer (any
// file's); CLOSEFB leaves them showing it.
void ModelOps::op(DrmFile &f, const drm::RmFb &x)
{
	changed = f.framebuffers.erase(x.fb_id) > 0 || changed;
	if (x.close)
		return;
	for (auto &[id, c] : f.crtcs)
		if (c.fb == x.fb_id) {
			c.fb = 0;
			c.mode.reset(); // off: a configured CRTC keeps its place, a flipped-only one too
			changed = true;
		}
	changed = std::erase_if(f.planes, [&](const auto &p) { return p.second.fb == x.fb_id; }) > 0 || changed;
}

// MODE_SETCRTC: the CRTC's whole configuration (fb_id 0 without a mode switches it off)
void ModelOps::op(DrmFile &f, const drm::SetCrtc &x)
{
	manifest::DisplayCrtc c{x.crtc_id, x.mode_valid ? x.fb_id : 0, true, x.x, x.y, x.connectors, std::nullopt};
	if (x.mode_valid)
		c.mode = manifest::DisplayMode{x.mode.clock, x.mode.hdisplay, x.mode.vdisplay, x.mode.vrefresh};
	f.crtcs[x.crtc_id] = c;
	changed = true;
}

// MODE_PAGE_FLIP: the CRTC shows another framebuffer; its mode and place stay
void ModelOps::op(DrmFile &f, const drm::PageFlip &x)
{
	manifest::DisplayCrtc &c = f.crtcs[x.crtc_id];
	c.crtc = x.crtc_id;
	c.fb = x.fb_id;
	changed = true;
}

// MODE_CURSOR(2): BO sets the buffer (handle 0 hides the cursor: it is no longer the file's),
// MOVE the position; either alone keeps what the other set
void ModelOps::op(DrmFile &f, const drm::Cursor &x)
{
	if ((x.flags & DRM_MODE_CURSOR_BO) && !x.handle) {
		changed = f.cursors.erase(x.crtc_id) > 0 || changed;
		return;
	}
	manifest::DisplayCursor &c = f.cursors[x.crtc_id];
	c.crtc = x.crtc_id;
	if (x.flags & DRM_MODE_CURSOR_BO) {
		c.handle = x.handle;
		c.object = known_handle(f, x.handle).object;
		c.width = x.width;
		c.height = x.height;
		c.hot_x = x.hot_x;
		c.hot_y = x.hot_y;
	}
	if (x.flags & DRM_MODE_CURSOR_MOVE)
		c.position = std::array<int32_t, 2>{x.x, x.y};
	changed = true;
}

// MODE_SETPLANE: fb_id 0 switches the plane off (it is no longer the file's)
void ModelOps::op(DrmFile &f, const drm::SetPlane &x)
{
	if (!x.fb_id) {
		changed = f.planes.erase(x.plane_id) > 0 || changed;
		return;
	}
	f.planes[x.plane_id] = {x.plane_id, x.crtc_id, x.fb_id, x.crtc_x, x.crtc_y, x.crtc_w,
				x.crtc_h,   x.src_x,   x.src_y, x.src_w,  x.src_h};
	changed = true;
}

// MODE_ADDFB(2): the framebuffer holds the objects of the handles it was made from.
void ModelOps::op(DrmFile &f, const drm::AddFb &x)
{
	Framebuffer fb{x.width, x.height, x.pixel_format, x.flags, x.bpp, x.depth, x.legacy, x.modifiers_known, {}};
	for (const drm::FbPlane &pl : x.planes)
		fb.planes.push_back({pl.handle, pl.pitch, pl.offset, pl.modifier, known_handle(f, pl.handle).object});
	if (!x.modifiers_known)
		m.mark_incomplete("file " + std::to_string(f.id) + ": MODE_ADDFB2 of framebuffer " +
				  std::to_string(x.fb_id) + ": its modifiers were not captured");
	f.framebuffers[x.fb_id] = std::move(fb);
	changed = true;
}

// MODE_GETFB(2): a new handle on each buffer of the framebuffer, which any file of the device
// may name (framebuffer ids are per device); the objects are known when a followed file made it.
void ModelOps::op(DrmFile &f, const drm::GetFb &x)
{
	const Framebuffer *fb = nullptr;
	for (const auto &[k, g] : m.files_)
		if (flink_key(g) == flink_key(f))
			if (auto it = g.framebuffers.find(x.fb_id); it != g.framebuffers.end())
				fb = &it->second;
	std::vector<uint64_t> objects; // the framebuffer's distinct buffers, in plane order, as GETFB2 lists them
	for (std::size_t i = 0; fb && i < fb->planes.size(); ++i)
		if (std::find(objects.begin(), objects.end(), fb->planes[i].object) == objects.end())
			objects.push_back(fb->planes[i].object);
	for (std::size_t i = 0; i < x.handles.size(); ++i) {
		uint64_t obj = i < objects.size() && m.objects_.count(objects[i]) ? objects[i] : new_object(0);
		add_handle(f, x.handles[i], obj, "getfb", {{"fb_id", x.fb_id}});
	}
}

// Flink name `key` names `obj` (GEM_FLINK, or a GEM_OPEN of a name not seen).
void ModelOps::name_flink(std::pair<uint64_t, uint32_t> key, uint64_t obj)
{
	m.flinks_[key] = obj;
	if (GemObject *o = m.objects_.find(obj))
		o->flinked = true;
}

// d now carries v; its object is marked as one a dma-buf names (collect() looks for it then).
void ModelOps::set_dmabuf(DmaBuf &d, const DmaBuf &v)
{
	d = v;
	if (GemObject *o = m.objects_.find(d.object))
		o->exported = true;
}

// Dma-buf `dmabuf` is handle `handle` (h) of f, by export or import; h is marked, so that
// dropping it walks f's prime map.
void ModelOps::name_prime(DrmFile &f, uint64_t dmabuf, uint32_t handle, Handle &h)
{
	f.prime[dmabuf] = handle;
	h.primed = true;
}

// GEM_OPEN: a new handle (always a new one) on the object the name refers to.
void ModelOps::op(DrmFile &f, const drm::GemOpen &x)
{
	auto key = std::make_pair(flink_key(f), x.name);
	auto it = m.flinks_.find(key);
	uint64_t obj = 0;
	if (it != m.flinks_.end() && m.objects_.count(it->second)) {
		obj = it->second;
		if (GemObject &o = *m.objects_.find(obj); o.size == 0)
			o.size = x.size;
	} else {
		obj = new_object(x.size);
		name_flink(key, obj);
	}
	Handle &h = add_handle(f, x.handle, obj, "flink", {{"name", x.name}});
	h.set_flink_name(x.name);
}

// PRIME_HANDLE_TO_FD: the object's dma-buf (x.dmabuf, the same one on every export of an
// object) and a new fd for it in p.
void ModelOps::op(Process &p, DrmFile &f, const drm::PrimeExport &x)
{
	if (m.files_.count(x.dmabuf))
		purge(x.dmabuf); // a DRM file we thought alive was freed and its address reused
	Handle &h = known_handle(f, x.handle);
	auto [it, inserted] = m.dmabufs_.try_emplace(x.dmabuf);
	DmaBuf &d = it->second;
	auto exp = m.files_.find(d.exporter_kfile);
	bool exporter_alive = !inserted && exp != m.files_.end() && exp->second.handles.count(d.exporter_handle);
	if (!inserted && d.object != h.object)
		lost_objs.push_back(d.object); // a stale entry: its object may be held by nothing else
	if (inserted || d.object != h.object || !exporter_alive)
		set_dmabuf(d, DmaBuf{x.dmabuf, h.object, f.kfile, x.handle});
	name_prime(f, x.dmabuf, x.handle, h);
	install_fd(p, x.fd, FdEntry{x.dmabuf, x.cloexec, true});
	changed = true;
}

// PRIME_FD_TO_HANDLE: the file's existing handle for this dma-buf (the kernel returns it
// again: count the import), or a new handle on the dma-buf's object.
void ModelOps::op(Process &p, DrmFile &f, const drm::PrimeImport &x)
{
	if (m.files_.count(x.dmabuf))
		purge(x.dmabuf);
	learn_fd(p, x.fd, x.dmabuf, true);
	changed = true;
	if (auto pr = f.prime.find(x.dmabuf); pr != f.prime.end()) {
		auto h = f.handles.find(pr->second);
		if (pr->second == x.handle && h != f.handles.end()) {
			h->second.add_import();
			return;
		}
		f.prime.erase(pr); // stale
	}
	auto [it, inserted] = m.dmabufs_.try_emplace(x.dmabuf);
	DmaBuf &d = it->second;
	nlohmann::json params = {{"import_fd", x.fd}};
	if (inserted || !m.objects_.count(d.object)) {
		set_dmabuf(d, DmaBuf{x.dmabuf, new_object(0), 0, 0});
		params["note"] = "dma-buf of unknown origin: size unknown";
	} else if (auto e = m.files_.find(d.exporter_kfile); e != m.files_.end()) {
		params["exporter_file"] = e->second.id;
		params["exporter_handle"] = d.exporter_handle;
	}
	name_prime(f, x.dmabuf, x.handle, add_handle(f, x.handle, d.object, "prime", std::move(params)));
}

} // namespace gw
