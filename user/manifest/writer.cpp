// The manifest's types -> JSON: writes exactly what the reader (manifest.cpp) reads.
#include "manifest.hpp"

namespace gw
{
namespace manifest
{
namespace
{

using json = nlohmann::json;

json opt(const std::optional<uint64_t> &v)
{
	return v ? json(*v) : json(nullptr);
}

json handle_json(const Handle &h)
{
	json hj = {{"handle", h.handle},
		   {"size", h.size},
		   {"origin", h.origin},
		   {"object", h.object},
		   {"params", h.params.is_null() ? json::object() : h.params},
		   {"imports", h.imports},
		   {"flink_name", opt(h.flink_name)},
		   {"mmap_offsets", h.mmap_offsets}};
	if (!h.mmap_types.empty()) {
		json types = json::object();
		for (const auto &[off, type] : h.mmap_types)
			types[std::to_string(off)] = type;
		hj["mmap_types"] = types;
	}
	if (h.tiling) {
		json t = {{"swizzle", h.tiling->swizzle}};
		if (h.tiling->mode)
			t["mode"] = *h.tiling->mode;
		if (h.tiling->stride)
			t["stride"] = *h.tiling->stride;
		hj["tiling"] = t;
	}
	if (h.caching)
		hj["caching"] = *h.caching;
	if (h.host_uploaded)
		hj["host_uploaded"] = true;
	return hj;
}

json display_json(const Display &d)
{
	json crtcs = json::array(), planes = json::array();
	for (const DisplayCrtc &c : d.crtcs) {
		json cj = {{"crtc", c.crtc}, {"fb", c.fb}, {"configured", c.configured}};
		if (c.configured) {
			cj["x"] = c.x;
			cj["y"] = c.y;
			cj["connectors"] = c.connectors;
			cj["mode"] = c.mode ? json{{"clock", c.mode->clock},
						   {"hdisplay", c.mode->hdisplay},
						   {"vdisplay", c.mode->vdisplay},
						   {"vrefresh", c.mode->vrefresh}}
					    : json(nullptr);
		}
		crtcs.push_back(std::move(cj));
	}
	for (const DisplayPlane &p : d.planes)
		planes.push_back({{"plane", p.plane},
				  {"crtc", p.crtc},
				  {"fb", p.fb},
				  {"crtc_rect", {p.crtc_x, p.crtc_y, p.crtc_w, p.crtc_h}},
				  {"src_rect", {p.src_x, p.src_y, p.src_w, p.src_h}}});
	json blobs = json::array();
	for (const DisplayBlob &b : d.blobs)
		blobs.push_back({{"id", b.id}, {"length", b.length}});
	json cursors = json::array();
	for (const DisplayCursor &c : d.cursors)
		cursors.push_back(
			{{"crtc", c.crtc},
			 {"handle", c.handle ? json(*c.handle) : json(nullptr)},
			 {"object", c.object ? json(*c.object) : json(nullptr)},
			 {"width", c.width},
			 {"height", c.height},
			 {"hotspot", {c.hot_x, c.hot_y}},
			 {"position", c.position ? json{(*c.position)[0], (*c.position)[1]} : json(nullptr)}});
	json dj = {{"crtcs", crtcs},
		   {"planes", planes},
		   {"blobs", blobs},
		   {"cursors", cursors},
		   {"atomic_commits", d.atomic_commits}};
	if (d.master)
		dj["master"] = *d.master;
	return dj;
}

json file_json(const File &f)
{
	json handles = json::array(), syncobjs = json::array(), caps = json::array();
	for (const Handle &h : f.handles)
		handles.push_back(handle_json(h));
	for (const Syncobj &s : f.syncobjs)
		syncobjs.push_back({{"handle", s.handle}, {"flags", s.flags}});
	for (const Cap &c : f.caps)
		caps.push_back({{"capability", c.capability}, {"value", c.value}});
	json fj = {{"id", f.id},
		   {"path", f.path},
		   {"rdev", std::to_string(f.major) + ":" + std::to_string(f.minor)},
		   {"driver", f.driver},
		   {"flags", f.flags},
		   {"f_flags", f.f_flags},
		   {"handles_known", f.handles_known},
		   {"handles", handles},
		   {"syncobjs", syncobjs},
		   {"caps", caps}};
	if (!f.undecoded_ioctls.empty())
		fj["undecoded_ioctls"] = f.undecoded_ioctls;
	if (!f.framebuffers.empty()) {
		json list = json::array();
		for (const Framebuffer &fb : f.framebuffers) {
			json planes = json::array();
			for (const FramebufferPlane &p : fb.planes)
				planes.push_back({{"handle", opt(p.handle)},
						  {"object", opt(p.object)},
						  {"pitch", p.pitch},
						  {"offset", p.offset},
						  {"modifier", p.modifier}});
			json fbj = {{"id", fb.id},
				    {"width", fb.width},
				    {"height", fb.height},
				    {"format", fb.format},
				    {"pixel_format", fb.pixel_format},
				    {"flags", fb.flags},
				    {"bpp", fb.bpp},
				    {"depth", fb.depth},
				    {"planes", planes}};
			if (!fb.modifiers_known)
				fbj["modifiers_known"] = false;
			list.push_back(std::move(fbj));
		}
		fj["framebuffers"] = list;
	}
	if (!f.display.empty())
		fj["display"] = display_json(f.display);
	if (f.contexts) {
		json list = json::array();
		for (const Context &c : *f.contexts) {
			json params = json::object();
			for (const ContextParam &p : c.params)
				params[p.name] = p.value;
			json cj = {{"id", c.id}, {"flags", c.flags}, {"vm", opt(c.vm)}, {"params", params}};
			if (c.vm_destroyed)
				cj["vm_destroyed"] = true;
			if (c.truncated)
				cj["truncated"] = true;
			list.push_back(std::move(cj));
		}
		fj["contexts"] = list;
	}
	if (f.vms) {
		json list = json::array();
		for (const Vm &vm : *f.vms) {
			json binds = json::array();
			for (const Binding &b : vm.bindings) {
				json bj = {{"addr", b.addr},
					   {"range", b.range},
					   {"pat_index", b.pat_index},
					   {"flags", b.flags}};
				if (b.userptr) {
					bj["userptr"] = *b.userptr;
				} else {
					bj["handle"] = opt(b.handle);
					bj["object"] = opt(b.object);
					bj["offset"] = b.offset;
				}
				binds.push_back(std::move(bj));
			}
			list.push_back(
				{{"id", vm.id}, {"flags", vm.flags}, {"params", vm.params}, {"bindings", binds}});
		}
		fj["vms"] = list;
	}
	if (f.exec_queues) {
		json list = json::array();
		for (const ExecQueue &q : *f.exec_queues) {
			json inst = json::array();
			for (const QueueInstance &e : q.instances)
				inst.push_back({{"class", e.engine_class}, {"instance", e.instance}, {"gt", e.gt}});
			list.push_back({{"id", q.id},
					{"vm", q.vm},
					{"flags", q.flags},
					{"width", q.width},
					{"num_placements", q.num_placements},
					{"instances", inst},
					{"params", q.params}});
		}
		fj["exec_queues"] = list;
	}
	return fj;
}

json fd_json(const Fd &d)
{
	switch (d.kind) {
	case Fd::Kind::drm: return {{"fd", d.fd}, {"file", opt(d.file)}, {"cloexec", d.cloexec}};
	case Fd::Kind::dmabuf:
		return {{"fd", d.fd},
			{"dmabuf", {{"file", opt(d.file)}, {"handle", opt(d.handle)}, {"object", opt(d.object)}}},
			{"cloexec", d.cloexec}};
	case Fd::Kind::sync_file:
	case Fd::Kind::i915_perf:
		return {{"fd", d.fd},
			{d.kind == Fd::Kind::sync_file ? "sync_file" : "i915_perf", {{"origin", d.origin.raw}}},
			{"cloexec", d.cloexec}};
	}
	return nullptr;
}

} // namespace

json to_json(const Manifest &m)
{
	json procs = json::array(), files = json::array(), objects = json::array();
	for (const Process &p : m.processes) {
		json fds = json::array(), mmaps = json::array();
		for (const Fd &d : p.fds)
			fds.push_back(fd_json(d));
		for (const Mmap &mp : p.mmaps)
			mmaps.push_back({{"start", mp.start},
					 {"length", mp.length},
					 {"prot", mp.prot},
					 {"shared", mp.shared},
					 {"file", mp.file},
					 {"offset", mp.offset},
					 {"handle", opt(mp.handle)},
					 {"object", opt(mp.object)},
					 {"via", mp.via}});
		json pj = {{"pid", p.pid}, {"comm", p.comm}, {"fds", fds}, {"mmaps", mmaps}};
		if (p.pid_ns) {
			pj["pid_ns"] = p.pid_ns;
			pj["ns_pid"] = p.ns_pid;
		}
		procs.push_back(std::move(pj));
	}
	for (const File &f : m.files)
		files.push_back(file_json(f));
	for (const Object &o : m.objects)
		objects.push_back({{"id", o.id}, {"size", o.size}, {"flink_name", opt(o.flink_name)}});
	json j = {{"schema", kSchema},
		  {"cgroup", m.cgroup},
		  {"complete", m.complete},
		  {"incomplete_reasons", m.incomplete_reasons},
		  {"generation", m.generation},
		  {"lost_events", m.lost_events},
		  {"failed_reads", m.failed_reads},
		  {"malformed_records", m.malformed_records},
		  {"processes", procs},
		  {"files", files},
		  {"objects", objects}};
	if (m.hooks)
		j["hooks"] = *m.hooks;
	return j;
}

std::string serialize(const Manifest &m)
{
	return to_json(m).dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

} // namespace manifest
} // namespace gw
