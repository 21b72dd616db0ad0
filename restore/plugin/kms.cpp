// KMS framebuffers and CRTC configuration of a DRM file: dump, image, restore (kms.hpp).
#include "kms.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>

#include <xf86drm.h>
#include <xf86drmMode.h>

#include "image_io.hpp"
#include "sysutil.hpp"

namespace gwcriu
{

namespace mf = gw::manifest;
using gw::jsonin::Obj;
using nlohmann::json;

namespace
{

template <class T, void (*Free)(T *)> struct Freer {
	void operator()(T *p) const { Free(p); }
};
using Res = std::unique_ptr<drmModeRes, Freer<drmModeRes, drmModeFreeResources>>;
using Crtc = std::unique_ptr<drmModeCrtc, Freer<drmModeCrtc, drmModeFreeCrtc>>;
using Conn = std::unique_ptr<drmModeConnector, Freer<drmModeConnector, drmModeFreeConnector>>;
using Enc = std::unique_ptr<drmModeEncoder, Freer<drmModeEncoder, drmModeFreeEncoder>>;
using PlaneRes = std::unique_ptr<drmModePlaneRes, Freer<drmModePlaneRes, drmModeFreePlaneResources>>;
using Plane = std::unique_ptr<drmModePlane, Freer<drmModePlane, drmModeFreePlane>>;
using Props = std::unique_ptr<drmModeObjectProperties, Freer<drmModeObjectProperties, drmModeFreeObjectProperties>>;
using Prop = std::unique_ptr<drmModePropertyRes, Freer<drmModePropertyRes, drmModeFreeProperty>>;
using Blob = std::unique_ptr<drmModePropertyBlobRes, Freer<drmModePropertyBlobRes, drmModeFreePropertyBlob>>;

constexpr uint32_t kMaxBlob = 1 << 20; // bytes of one property blob in an image (a gamma LUT: 32 KiB)

// a plane's "type" property (DRM_PLANE_TYPE_*), as fd sees it; -1 when fd is not shown it
// (a file without universal planes sees overlay planes only, and no types)
int64_t plane_type(int fd, uint32_t plane)
{
	Props props(drmModeObjectGetProperties(fd, plane, DRM_MODE_OBJECT_PLANE));
	for (uint32_t i = 0; props && i < props->count_props; ++i) {
		Prop p(drmModeGetProperty(fd, props->props[i]));
		if (p && std::strcmp(p->name, "type") == 0)
			return static_cast<int64_t>(props->prop_values[i]);
	}
	return -1;
}

json mode_json(const drmModeModeInfo &m)
{
	return {{"clock", m.clock},
		{"hdisplay", m.hdisplay},
		{"hsync_start", m.hsync_start},
		{"hsync_end", m.hsync_end},
		{"htotal", m.htotal},
		{"hskew", m.hskew},
		{"vdisplay", m.vdisplay},
		{"vsync_start", m.vsync_start},
		{"vsync_end", m.vsync_end},
		{"vtotal", m.vtotal},
		{"vscan", m.vscan},
		{"vrefresh", m.vrefresh},
		{"flags", m.flags},
		{"type", m.type},
		{"name", std::string(m.name, strnlen(m.name, sizeof m.name))}};
}

drmModeModeInfo mode_of(const json &j)
{
	drmModeModeInfo m{};
	auto u = [&](const char *k) { return j.at(k).get<uint32_t>(); };
	m.clock = u("clock");
	m.hdisplay = static_cast<uint16_t>(u("hdisplay"));
	m.hsync_start = static_cast<uint16_t>(u("hsync_start"));
	m.hsync_end = static_cast<uint16_t>(u("hsync_end"));
	m.htotal = static_cast<uint16_t>(u("htotal"));
	m.hskew = static_cast<uint16_t>(u("hskew"));
	m.vdisplay = static_cast<uint16_t>(u("vdisplay"));
	m.vsync_start = static_cast<uint16_t>(u("vsync_start"));
	m.vsync_end = static_cast<uint16_t>(u("vsync_end"));
	m.vtotal = static_cast<uint16_t>(u("vtotal"));
	m.vscan = static_cast<uint16_t>(u("vscan"));
	m.vrefresh = u("vrefresh");
	m.flags = u("flags");
	m.type = u("type");
	std::string name = j.at("name").get<std::string>();
	name.copy(m.name, sizeof m.name - 1);
	return m;
}

// ADDFB or ADDFB2 of fb; the new id, or 0 with errno
uint32_t add_fb(int fd, const KmsFramebuffer &fb)
{
	uint32_t id = 0;
	if (fb.legacy) {
		const KmsPlane &p = fb.planes.at(0);
		return drmModeAddFB(fd, fb.width, fb.height, static_cast<uint8_t>(fb.depth),
				    static_cast<uint8_t>(fb.bpp), p.pitch, p.handle, &id) == 0
			       ? id
			       : 0;
	}
	uint32_t handles[4] = {}, pitches[4] = {}, offsets[4] = {};
	uint64_t modifiers[4] = {};
	for (std::size_t i = 0; i < fb.planes.size() && i < 4; ++i) {
		handles[i] = fb.planes[i].handle;
		pitches[i] = fb.planes[i].pitch;
		offsets[i] = fb.planes[i].offset;
		modifiers[i] = fb.planes[i].modifier;
	}
	return drmModeAddFB2WithModifiers(fd, fb.width, fb.height, fb.pixel_format, handles, pitches, offsets,
					  (fb.flags & DRM_MODE_FB_MODIFIERS) ? modifiers : nullptr, &id, fb.flags) == 0
		       ? id
		       : 0;
}

} // namespace

KmsState kms_state_of(const mf::File &f, int lfd, std::vector<std::string> *degraded)
{
	KmsState k;
	if (drmGetNodeTypeFromFd(lfd) == DRM_NODE_PRIMARY)
		k.master = drmIsMaster(lfd) != 0; // AUTH_MAGIC of magic 0: EINVAL for a master, EACCES else
	for (const mf::DisplayBlob &b : f.display.blobs) {
		Blob blob(drmModeGetPropertyBlob(lfd, static_cast<uint32_t>(b.id)));
		if (!blob || blob->length > kMaxBlob)
			degraded->push_back("property blob " + num(b.id) + " is not recreated: " +
					    (blob ? "it is larger than 1 MiB"
						  : "its contents cannot be read (MODE_GETPROPBLOB: " +
							     gw::errno_text(errno) + ")"));
		else
			k.blobs.push_back({blob->id, std::vector<uint8_t>(static_cast<const uint8_t *>(blob->data),
									  static_cast<const uint8_t *>(blob->data) +
										  blob->length)});
	}
	for (const mf::DisplayCursor &c : f.display.cursors) {
		if (!c.handle) {
			degraded->push_back("the cursor of CRTC " + num(c.crtc) +
					    " is not set again: its buffer is unknown (its handle is closed, or it "
					    "was set before gpuwatch saw the file)");
			continue;
		}
		k.cursors.push_back({static_cast<uint32_t>(c.crtc), static_cast<uint32_t>(*c.handle), c.width, c.height,
				     c.hot_x, c.hot_y, c.position});
	}
	if (f.display.atomic_commits)
		degraded->push_back(
			"it made " + num(f.display.atomic_commits) +
			" atomic commits (MODE_ATOMIC), whose properties are not captured: the CRTCs showing its "
			"framebuffers are read back and set again, but other properties it set (a plane's rotation, "
			"zpos or blending, a CRTC's color management or VRR, a connector's) are not");
	for (const mf::Framebuffer &fb : f.framebuffers) {
		KmsFramebuffer r{static_cast<uint32_t>(fb.id),
				 fb.width,
				 fb.height,
				 fb.pixel_format == 0, // ADDFB: no fourcc
				 fb.bpp,
				 fb.depth,
				 fb.pixel_format,
				 fb.flags,
				 {}};
		std::string why = fb.planes.empty() || fb.planes.size() > 4 ? "it has no planes, or more than 4" : "";
		if (!fb.modifiers_known)
			why = "its modifiers were not captured";
		for (const mf::FramebufferPlane &p : fb.planes) {
			if (!p.handle)
				why = "a handle it was made from is closed";
			else
				r.planes.push_back({static_cast<uint32_t>(*p.handle), p.pitch, p.offset, p.modifier});
		}
		if (!why.empty()) {
			degraded->push_back("framebuffer " + num(fb.id) + " is not recreated: " + why);
			continue;
		}
		k.framebuffers.push_back(std::move(r));
	}
	if (k.framebuffers.empty())
		return k;
	Res res(drmModeGetResources(lfd));
	if (!res) {
		degraded->push_back("the CRTCs showing this file's framebuffers cannot be read (MODE_GETRESOURCES: " +
				    gw::errno_text(errno) + "): the display configuration is not applied again");
		return k;
	}
	for (int i = 0; i < res->count_crtcs; ++i) {
		Crtc c(drmModeGetCrtc(lfd, res->crtcs[i]));
		if (!c || !c->buffer_id || !c->mode_valid || !k.has_framebuffer(c->buffer_id))
			continue;
		KmsCrtc kc{c->crtc_id, c->buffer_id, c->x, c->y, {}, mode_json(c->mode)};
		for (int j = 0; j < res->count_connectors; ++j) {
			Conn cn(drmModeGetConnectorCurrent(lfd, res->connectors[j]));
			if (!cn || !cn->encoder_id)
				continue;
			Enc e(drmModeGetEncoder(lfd, cn->encoder_id));
			if (e && e->crtc_id == kc.crtc_id)
				kc.connectors.push_back(cn->connector_id);
		}
		k.crtcs.push_back(std::move(kc));
	}
	// Other planes (overlays, cursors) showing one of the file's framebuffers: GETPLANE tells
	// neither their place nor their source rectangle, so they come back where the file's own
	// SETPLANE put them (the manifest), and only when that is what the plane shows now. A
	// CRTC's primary plane is what GETCRTC read back.
	PlaneRes planes(drmModeGetPlaneResources(lfd));
	for (uint32_t i = 0; planes && i < planes->count_planes; ++i) {
		Plane p(drmModeGetPlane(lfd, planes->planes[i]));
		if (!p || !p->fb_id || !k.has_framebuffer(p->fb_id))
			continue;
		if (plane_type(lfd, p->plane_id) == DRM_PLANE_TYPE_PRIMARY &&
		    std::any_of(k.crtcs.begin(), k.crtcs.end(),
				[&](const KmsCrtc &c) { return c.crtc_id == p->crtc_id && c.fb_id == p->fb_id; }))
			continue;
		auto set =
			std::find_if(f.display.planes.begin(), f.display.planes.end(), [&](const mf::DisplayPlane &d) {
				return d.plane == p->plane_id && d.fb == p->fb_id && d.crtc == p->crtc_id;
			});
		if (set != f.display.planes.end()) {
			k.planes.push_back(*set);
			continue;
		}
		degraded->push_back("plane " + num(p->plane_id) + " shows framebuffer " + num(p->fb_id) + " on CRTC " +
				    num(p->crtc_id) +
				    ": it is not set again (no SETPLANE of this file's put it there: an atomic "
				    "commit, or a call gpuwatch did not see)");
	}
	return k;
}

namespace
{

// A KMS object made again with id `want` where the device lets it: ids are given lowest free
// first, so objects below the one wanted are made (make(): the id, or 0 with errno) and
// removed again (remove(id)). The id got (maybe another), or 0 with errno.
template <class Make, class Remove> uint32_t make_as(uint32_t want, Make make, Remove remove)
{
	std::vector<uint32_t> spare;
	uint32_t got = 0;
	while ((got = make()) != 0 && got < want && spare.size() < 256)
		spare.push_back(got);
	int err = errno;
	for (uint32_t s : spare)
		remove(s);
	errno = err;
	return got;
}

uint32_t add_fb_as(int fd, const KmsFramebuffer &fb)
{
	return make_as(
		fb.id, [&] { return add_fb(fd, fb); }, [&](uint32_t id) { drmModeRmFB(fd, id); });
}

uint32_t add_blob_as(int fd, const KmsBlob &b)
{
	return make_as(
		b.id,
		[&] {
			uint32_t id = 0;
			return drmModeCreatePropertyBlob(fd, b.data.data(), b.data.size(), &id) == 0 ? id : 0;
		},
		[&](uint32_t id) { drmModeDestroyPropertyBlob(fd, id); });
}

// SETCRTC of every CRTC showing framebuffer `from` (the dump's id) on `to`; false with errno
bool show(int fd, const KmsState &k, uint32_t from, uint32_t to, std::vector<std::string> *lost)
{
	bool ok = true;
	for (const KmsCrtc &c : k.crtcs) {
		if (c.fb_id != from)
			continue;
		drmModeModeInfo mode = mode_of(c.mode);
		std::vector<uint32_t> conns = c.connectors;
		if (drmModeSetCrtc(fd, c.crtc_id, to, c.x, c.y, conns.data(), static_cast<int>(conns.size()), &mode) ==
		    0)
			continue;
		ok = false;
		if (lost)
			lost->push_back("CRTC " + num(c.crtc_id) + " cannot show framebuffer " + num(to) +
					" again (MODE_SETCRTC: " + gw::errno_text(errno) +
					(errno == EACCES ? "; another file is DRM master" : "") + ")");
	}
	return ok;
}

} // namespace

std::vector<std::string> kms_restore(int fd, const KmsState &k)
{
	std::vector<std::string> lost;
	std::map<uint32_t, const KmsFramebuffer *> by_id; // ascending: lower ids are made first
	for (const KmsFramebuffer &fb : k.framebuffers)
		by_id[fb.id] = &fb;
	std::map<uint32_t, uint32_t> ids; // the dump's framebuffer id -> the restored one
	for (const auto &[want, fb] : by_id) {
		uint32_t got = add_fb_as(fd, *fb);
		if (!got)
			lost.push_back("framebuffer " + num(want) + " cannot be made again (" +
				       (fb->legacy ? "MODE_ADDFB" : "MODE_ADDFB2") + ": " + gw::errno_text(errno) +
				       ")");
		else
			ids[want] = got;
	}
	std::map<uint32_t, uint32_t> blob_ids; // the dump's blob id -> the restored one
	for (const KmsBlob &b : k.blobs) {     // ascending
		if (uint32_t got = add_blob_as(fd, b))
			blob_ids[b.id] = got;
		else
			lost.push_back("property blob " + num(b.id) +
				       " cannot be made again (MODE_CREATEPROPBLOB: " + gw::errno_text(errno) + ")");
	}
	for (const auto &[want, got] : ids)
		show(fd, k, want, got, &lost);
	// A wanted id is often held by the mode blob the console's modeset made after the dumped
	// process let go of the display: setting the CRTCs above replaced that blob. Try again.
	for (auto &[want, got] : blob_ids) {
		if (got == want)
			continue;
		const KmsBlob &b = *std::find_if(k.blobs.begin(), k.blobs.end(),
						 [w = want](const KmsBlob &x) { return x.id == w; });
		uint32_t again = add_blob_as(fd, b);
		if (again == want) {
			drmModeDestroyPropertyBlob(fd, got);
			got = again;
			continue;
		}
		if (again)
			drmModeDestroyPropertyBlob(fd, again);
		// Often by the very blob: the CRTC's state still holds the MODE_ID the file gave it
		// before the dump, and setting the same mode again keeps it
		Blob held(drmModeGetPropertyBlob(fd, want));
		bool same = held && held->length == b.data.size() &&
			    std::memcmp(held->data, b.data.data(), b.data.size()) == 0;
		lost.push_back("property blob " + num(want) + " comes back as property blob " + num(got) +
			       ": its id is taken on this device" +
			       (same ? " by a blob with the same contents (the display state the file left holds "
				       "it): blob " +
						num(want) + " reads the same, but the file does not own it"
				     : ""));
	}
	for (auto &[want, got] : ids) {
		if (got == want)
			continue;
		uint32_t again = add_fb_as(fd, *by_id.at(want));
		if (again == want && show(fd, k, want, again, nullptr)) {
			drmModeRmFB(fd, got);
			got = again;
			continue;
		}
		if (again == want) // the CRTCs keep the interim one
			show(fd, k, want, got, nullptr);
		if (again)
			drmModeRmFB(fd, again);
		lost.push_back("framebuffer " + num(want) + " comes back as framebuffer " + num(got) +
			       ": its id is taken on this device");
	}
	for (const KmsOverlay &o : k.planes) {
		auto got = ids.find(static_cast<uint32_t>(o.fb));
		if (got == ids.end())
			continue; // the framebuffer is lost, said above
		if (drmModeSetPlane(fd, static_cast<uint32_t>(o.plane), static_cast<uint32_t>(o.crtc), got->second, 0,
				    o.crtc_x, o.crtc_y, o.crtc_w, o.crtc_h, o.src_x, o.src_y, o.src_w, o.src_h) != 0)
			lost.push_back("plane " + num(o.plane) + " cannot show framebuffer " + num(got->second) +
				       " on CRTC " + num(o.crtc) + " again (MODE_SETPLANE: " + gw::errno_text(errno) +
				       ")");
	}
	for (const KmsCursor &c : k.cursors) {
		if (drmModeSetCursor2(fd, c.crtc_id, c.handle, c.width, c.height, c.hot_x, c.hot_y) != 0 &&
		    (c.hot_x || c.hot_y || drmModeSetCursor(fd, c.crtc_id, c.handle, c.width, c.height) != 0))
			lost.push_back("the cursor of CRTC " + num(c.crtc_id) + " (handle " + num(c.handle) +
				       ") cannot be set again (MODE_CURSOR2: " + gw::errno_text(errno) + ")");
		else if (c.position && drmModeMoveCursor(fd, c.crtc_id, (*c.position)[0], (*c.position)[1]) != 0)
			lost.push_back("the cursor of CRTC " + num(c.crtc_id) + " cannot be moved to " +
				       std::to_string((*c.position)[0]) + "," + std::to_string((*c.position)[1]) +
				       " again (MODE_CURSOR: " + gw::errno_text(errno) + ")");
	}
	// Master last: setting the CRTCs needed it, and a file that had dropped it drops it again
	if (k.master && *k.master != (drmIsMaster(fd) != 0)) {
		if (*k.master ? drmSetMaster(fd) != 0 : drmDropMaster(fd) != 0)
			lost.push_back(
				*k.master ? "DRM master is not taken back (SET_MASTER: " + gw::errno_text(errno) +
						    (errno == EBUSY ? "; another file holds it)" : ")")
					  : "DRM master is not dropped again (DROP_MASTER: " + gw::errno_text(errno) +
						    ")");
	}
	return lost;
}

json kms_json(const KmsState &k)
{
	if (k.empty())
		return nullptr;
	json fbs = json::array(), crtcs = json::array(), planes = json::array();
	for (const KmsFramebuffer &fb : k.framebuffers) {
		json planes = json::array();
		for (const KmsPlane &p : fb.planes)
			planes.push_back({{"handle", p.handle},
					  {"pitch", p.pitch},
					  {"offset", p.offset},
					  {"modifier", p.modifier}});
		fbs.push_back({{"id", fb.id},
			       {"width", fb.width},
			       {"height", fb.height},
			       {"legacy", fb.legacy},
			       {"bpp", fb.bpp},
			       {"depth", fb.depth},
			       {"pixel_format", fb.pixel_format},
			       {"flags", fb.flags},
			       {"planes", planes}});
	}
	for (const KmsCrtc &c : k.crtcs)
		crtcs.push_back({{"crtc_id", c.crtc_id},
				 {"fb_id", c.fb_id},
				 {"x", c.x},
				 {"y", c.y},
				 {"connectors", c.connectors},
				 {"mode", c.mode}});
	// crtc_x and crtc_y as the bits of the uapi's __s32
	for (const KmsOverlay &o : k.planes)
		planes.push_back({{"plane_id", o.plane},
				  {"crtc_id", o.crtc},
				  {"fb_id", o.fb},
				  {"crtc_x", static_cast<uint32_t>(o.crtc_x)},
				  {"crtc_y", static_cast<uint32_t>(o.crtc_y)},
				  {"crtc_w", o.crtc_w},
				  {"crtc_h", o.crtc_h},
				  {"src_x", o.src_x},
				  {"src_y", o.src_y},
				  {"src_w", o.src_w},
				  {"src_h", o.src_h}});
	json cursors = json::array(); // hotspot and position as the bits of the uapi's __s32
	for (const KmsCursor &c : k.cursors)
		cursors.push_back({{"crtc_id", c.crtc_id},
				   {"handle", c.handle},
				   {"width", c.width},
				   {"height", c.height},
				   {"hot_x", static_cast<uint32_t>(c.hot_x)},
				   {"hot_y", static_cast<uint32_t>(c.hot_y)},
				   {"position", c.position ? json{static_cast<uint32_t>((*c.position)[0]),
								  static_cast<uint32_t>((*c.position)[1])}
							   : json(nullptr)}});
	json blobs = json::array();
	for (const KmsBlob &b : k.blobs)
		blobs.push_back({{"id", b.id}, {"data", gw::jsonin::to_hex(b.data)}});
	return {{"framebuffers", fbs}, {"crtcs", crtcs}, {"planes", planes},
		{"cursors", cursors},  {"blobs", blobs}, {"master", k.master ? json(*k.master) : json(nullptr)}};
}

KmsState read_kms(const Obj &top, const std::vector<uint32_t> &handles)
{
	KmsState k;
	auto found = top.opt_object_at("kms");
	if (!found)
		return k;
	const Obj &o = *found;
	o.each(o.req_array("framebuffers"), "framebuffers", [&](const Obj &b) {
		KmsFramebuffer fb;
		fb.id = b.req_u32("id");
		fb.width = b.req_u32("width", 1 << 16);
		fb.height = b.req_u32("height", 1 << 16);
		fb.legacy = b.req_bool("legacy");
		fb.bpp = b.req_u32("bpp", 255);
		fb.depth = b.req_u32("depth", 255);
		fb.pixel_format = b.req_u32("pixel_format");
		fb.flags = b.req_u32("flags");
		const json &planes = b.req_array("planes");
		if (planes.empty() || planes.size() > 4)
			b.fail("planes", "must hold 1 to 4 planes");
		b.each(planes, "planes", [&](const Obj &p) {
			KmsPlane pl{p.req_u32("handle"), p.req_u32("pitch"), p.req_u32("offset"),
				    p.req_u64("modifier")};
			if (std::find(handles.begin(), handles.end(), pl.handle) == handles.end())
				p.fail("handle", "names no handle of the file");
			fb.planes.push_back(pl);
		});
		if (fb.legacy && fb.planes.size() != 1)
			b.fail("planes", "an ADDFB framebuffer has one plane");
		k.framebuffers.push_back(std::move(fb));
	});
	o.each(o.req_array("crtcs"), "crtcs", [&](const Obj &c) {
		KmsCrtc kc;
		kc.crtc_id = c.req_u32("crtc_id");
		kc.fb_id = c.req_u32("fb_id");
		if (!k.has_framebuffer(kc.fb_id))
			c.fail("fb_id", "names no framebuffer of the file");
		kc.x = c.req_u32("x", 1 << 16);
		kc.y = c.req_u32("y", 1 << 16);
		const json &conns = c.req_array("connectors");
		if (conns.size() > 16)
			c.fail("connectors", "lists more than 16");
		for (std::size_t i = 0; i < conns.size(); ++i) {
			if (!conns[i].is_number_unsigned() || conns[i].get<uint64_t>() > UINT32_MAX)
				gw::jsonin::fail(c.at("connectors", i), "is not a connector id");
			kc.connectors.push_back(conns[i].get<uint32_t>());
		}
		Obj m = c.req_object("mode");
		for (const char *f : {"hdisplay", "hsync_start", "hsync_end", "htotal", "hskew", "vdisplay",
				      "vsync_start", "vsync_end", "vtotal", "vscan"})
			m.req_u32(f, UINT16_MAX);
		for (const char *f : {"clock", "vrefresh", "flags", "type"})
			m.req_u32(f);
		m.req_str("name", 31);
		kc.mode = m.value();
		k.crtcs.push_back(std::move(kc));
	});
	if (const json *l = o.opt_array("planes")) // absent in images of earlier versions
		o.each(*l, "planes", [&](const Obj &p) {
			KmsOverlay ov{p.req_u32("plane_id"),
				      p.req_u32("crtc_id"),
				      p.req_u32("fb_id"),
				      static_cast<int32_t>(p.req_u32("crtc_x")),
				      static_cast<int32_t>(p.req_u32("crtc_y")),
				      p.req_u32("crtc_w", 1 << 16),
				      p.req_u32("crtc_h", 1 << 16),
				      p.req_u32("src_x"),
				      p.req_u32("src_y"),
				      p.req_u32("src_w"),
				      p.req_u32("src_h")};
			if (!k.has_framebuffer(static_cast<uint32_t>(ov.fb)))
				p.fail("fb_id", "names no framebuffer of the file");
			k.planes.push_back(ov);
		});
	if (const json *l = o.opt_array("cursors")) // absent in images of earlier versions
		o.each(*l, "cursors", [&](const Obj &c) {
			KmsCursor kc{c.req_u32("crtc_id"),
				     c.req_u32("handle"),
				     c.req_u32("width", 1 << 16),
				     c.req_u32("height", 1 << 16),
				     static_cast<int32_t>(c.req_u32("hot_x")),
				     static_cast<int32_t>(c.req_u32("hot_y")),
				     std::nullopt};
			if (std::find(handles.begin(), handles.end(), kc.handle) == handles.end())
				c.fail("handle", "names no handle of the file");
			if (const json *p = c.maybe("position")) { // the bits of two __s32
				auto [x, y] = gw::jsonin::pair_u64(*p, c.path("position"), UINT32_MAX, UINT32_MAX);
				kc.position = std::array<int32_t, 2>{static_cast<int32_t>(static_cast<uint32_t>(x)),
								     static_cast<int32_t>(static_cast<uint32_t>(y))};
			}
			k.cursors.push_back(kc);
		});
	if (const json *l = o.opt_array("blobs")) { // absent in images of earlier versions
		if (l->size() > 4096)
			o.fail("blobs", "lists more than 4096");
		o.each(*l, "blobs", [&](const Obj &b) {
			KmsBlob kb{b.req_u32("id"), b.req_hex("data", kMaxBlob)};
			if (kb.data.empty())
				b.fail("data", "is empty");
			if (!k.blobs.empty() && kb.id <= k.blobs.back().id)
				b.fail("id", "is not ascending");
			k.blobs.push_back(std::move(kb));
		});
	}
	if (const json *m = o.maybe("master")) {
		if (!m->is_boolean())
			gw::jsonin::wrong(o.path("master"), *m, "a boolean or null");
		k.master = m->get<bool>();
	}
	return k;
}

} // namespace gwcriu
