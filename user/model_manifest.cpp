// The daemon's side of the manifest: the model's state as a gw::manifest::Manifest
// (user/manifest/ reads, validates and writes it).
#include <algorithm>
#include <iterator>
#include <tuple>
#include <utility>

#include "model.hpp"
#include "sysutil.hpp"

namespace gw
{

manifest::Manifest Model::manifest() const
{
	namespace mf = gw::manifest;
	std::map<uint64_t, uint32_t> names; // object -> flink name
	for (const auto &[key, obj] : flinks_)
		names.emplace(obj, key.second);
	auto flink_of = [&](uint64_t obj) -> std::optional<uint64_t> {
		auto n = names.find(obj);
		return n != names.end() ? std::optional<uint64_t>(n->second) : std::nullopt;
	};
	auto object_size = [&](uint64_t obj) {
		const GemObject *o = objects_.find(obj);
		return o ? o->size : uint64_t{0};
	};
	// The handle of `obj` in `f`: the one the mapping's offset grant names, else the lowest.
	auto handle_of = [&](const DrmFile &f, uint64_t obj, uint64_t offset) -> std::optional<uint64_t> {
		if (auto g = f.mmap_offsets.upper_bound(offset); g != f.mmap_offsets.begin()) {
			auto h = f.handles.find(std::prev(g)->second.handle);
			if (h != f.handles.end() && h->second.object == obj)
				return h->first;
		}
		for (const auto &[n, h] : f.handles)
			if (h.object == obj)
				return n;
		return std::nullopt;
	};

	mf::Manifest m;
	m.cgroup = cgroup_;
	m.generation = generation_;
	m.lost_events = lost_events_;
	m.failed_reads = failed_reads_;
	m.malformed_records = malformed_;
	std::vector<std::string> &reasons = m.incomplete_reasons;

	std::vector<const DrmFile *> by_id;
	for (const auto &[k, f] : files_)
		by_id.push_back(&f);
	std::sort(by_id.begin(), by_id.end(), [](auto *a, auto *b) { return a->id < b->id; });
	for (const DrmFile *f : by_id) {
		std::string who =
			"file " + std::to_string(f->id) + " (" + (f->path.empty() ? "node unknown" : f->path) + ")";
		if (!f->handles_known)
			reasons.push_back(who +
					  " was in use before tracing saw it opened: its handle table is partial");
		for (const std::string &name : f->undecoded)
			reasons.push_back(who + ": " + name +
					  " succeeded and gpuwatch does not decode it: the state it made is unknown");
		mf::File fj;
		fj.id = f->id;
		fj.path = f->path;
		fj.major = f->major;
		fj.minor = f->minor;
		fj.driver = f->driver;
		fj.flags = flags_string(f->f_flags);
		fj.f_flags = f->f_flags;
		fj.handles_known = f->handles_known;
		// each handle's fake offsets, ascending: one pass over the grants, not one per handle
		std::map<uint32_t, std::vector<std::pair<uint64_t, const Grant *>>> grants;
		for (const auto &[offset, g] : f->mmap_offsets)
			grants[g.handle].emplace_back(offset, &g);
		for (const auto &[n, h] : f->handles) {
			mf::Handle hj;
			hj.handle = n;
			hj.size = object_size(h.object);
			hj.origin = std::string(h.origin());
			hj.object = h.object;
			if (nlohmann::json params = h.params(); !params.is_null())
				hj.params = std::move(params);
			hj.imports = h.imports();
			hj.flink_name = flink_of(h.object);
			if (auto g = grants.find(n); g != grants.end())
				for (const auto &[offset, grant] : g->second) {
					hj.mmap_offsets.push_back(offset);
					if (std::string_view t = grant->i915_type_name(); !t.empty())
						hj.mmap_types[offset] = std::string(t);
				}
			nlohmann::json attrs = h.attrs();
			if (auto t = attrs.find("tiling"); attrs.is_object() && t != attrs.end()) {
				mf::Tiling tl;
				tl.mode = t->value("mode", std::string());
				tl.stride = t->value("stride", uint32_t{0});
				tl.swizzle = t->value("swizzle", uint32_t{0});
				hj.tiling = tl;
			}
			if (auto c = attrs.find("caching"); attrs.is_object() && c != attrs.end())
				hj.caching = c->get<uint32_t>();
			hj.host_uploaded = attrs.is_object() && attrs.value("host_uploaded", false);
			fj.handles.push_back(std::move(hj));
		}
		for (const auto &[h, flags] : f->syncobjs)
			fj.syncobjs.push_back({h, flags});
		for (const auto &[cap, value] : f->caps)
			fj.caps.push_back({cap, value});
		fj.undecoded_ioctls.assign(f->undecoded.begin(), f->undecoded.end());
		// A handle and the buffer it was given for, as the manifest names them: the handle while
		// it still names that buffer, the buffer while it lives
		auto still_held = [&](uint64_t handle, uint64_t object) {
			auto h = f->handles.find(static_cast<uint32_t>(handle));
			return std::make_pair(h != f->handles.end() && h->second.object == object
						      ? std::optional<uint64_t>(handle)
						      : std::nullopt,
					      objects_.count(object) ? std::optional<uint64_t>(object) : std::nullopt);
		};
		for (const auto &[id, fb] : f->framebuffers) {
			mf::Framebuffer b{id,       fb.width, fb.height, fb.pixel_format,    {},
					  fb.flags, fb.bpp,   fb.depth,  fb.modifiers_known, {}};
			b.format = fb.legacy ? "bpp " + std::to_string(fb.bpp) + " depth " + std::to_string(fb.depth)
					     : mf::fourcc_text(fb.pixel_format);
			for (const FramebufferPlane &p : fb.planes) {
				auto [handle, object] = still_held(p.handle, p.object);
				b.planes.push_back({handle, object, p.pitch, p.offset, p.modifier});
			}
			fj.framebuffers.push_back(std::move(b));
		}
		for (const auto &[id, c] : f->crtcs)
			fj.display.crtcs.push_back(c);
		for (const auto &[id, p] : f->planes)
			fj.display.planes.push_back(p);
		fj.display.master = f->master;
		for (const auto &[id, length] : f->blobs)
			fj.display.blobs.push_back({id, length});
		for (const auto &[crtc, c] : f->cursors) {
			mf::DisplayCursor dc = c; // handle and object: both set (BO seen) or neither
			if (dc.handle && dc.object)
				std::tie(dc.handle, dc.object) = still_held(*dc.handle, *dc.object);
			fj.display.cursors.push_back(dc);
		}
		fj.display.atomic_commits = f->atomic_commits;
		// driver state, present for the drivers that have it
		if (!f->contexts.empty() || f->driver == "i915") {
			fj.contexts.emplace();
			for (const auto &[id, c] : f->contexts) {
				mf::Context cj;
				cj.id = id;
				cj.flags = c.flags;
				cj.vm = c.vm;
				cj.vm_destroyed =
					c.vm && !f->vms.count(*c.vm); // the context keeps the VM; its id is gone
				cj.truncated = c.truncated;
				for (const auto &[name, v] : c.params.items())
					cj.params.push_back({name, v});
				fj.contexts->push_back(std::move(cj));
			}
		}
		if (!f->vms.empty() || f->driver == "i915" || f->driver == "xe") {
			fj.vms.emplace();
			for (const auto &[id, vm] : f->vms) {
				mf::Vm vj;
				vj.id = id;
				vj.flags = vm.flags;
				vj.params = vm.params;
				for (const auto &[addr, b] : vm.bindings) {
					mf::Binding bj;
					bj.addr = b.addr;
					bj.range = b.range;
					bj.pat_index = b.pat_index;
					bj.flags = b.flags;
					if (b.userptr) {
						bj.userptr = b.offset;
					} else {
						auto h = f->handles.find(b.handle);
						if (h != f->handles.end() && h->second.object == b.object)
							bj.handle = b.handle;
						if (b.object) // NULL (sparse) bindings have none
							bj.object = b.object;
						bj.offset = b.offset;
					}
					vj.bindings.push_back(bj);
				}
				fj.vms->push_back(std::move(vj));
			}
		}
		if (!f->exec_queues.empty() || f->driver == "xe") {
			fj.exec_queues.emplace();
			for (const auto &[id, q] : f->exec_queues) {
				mf::ExecQueue qj;
				qj.id = id;
				qj.vm = q.vm;
				qj.flags = q.flags;
				qj.width = q.width;
				qj.num_placements = q.num_placements;
				for (const auto &e : q.instances)
					qj.instances.push_back({e.value("class", uint16_t{0}),
								e.value("instance", uint16_t{0}),
								e.value("gt", uint16_t{0})});
				qj.params = q.params;
				fj.exec_queues->push_back(std::move(qj));
			}
		}
		m.files.push_back(std::move(fj));
	}

	for (const auto &[pid, p] : procs_) {
		reasons.insert(reasons.end(), p.incomplete.begin(), p.incomplete.end());
		if (p.fds.empty() && p.mmaps.empty())
			continue;
		mf::Process pj;
		pj.pid = pid;
		pj.comm = p.comm;
		for (const auto &[fd, e] : p.fds) {
			mf::Fd d;
			d.fd = static_cast<uint64_t>(fd);
			d.cloexec = e.cloexec;
			if (e.other) {
				d.kind = e.other == GW_FILE_SYNC ? mf::Fd::Kind::sync_file : mf::Fd::Kind::i915_perf;
				auto o = others_.find(e.kfile);
				d.origin.raw = o != others_.end() ? o->second.origin : nlohmann::json(nullptr);
			} else if (!e.dmabuf) {
				auto f = files_.find(e.kfile);
				if (f == files_.end())
					continue;
				d.kind = mf::Fd::Kind::drm;
				d.file = f->second.id;
			} else {
				d.kind = mf::Fd::Kind::dmabuf;
				if (auto b = dmabufs_.find(e.kfile); b != dmabufs_.end()) {
					d.object = b->second.object;
					if (auto f = files_.find(b->second.exporter_kfile); f != files_.end()) {
						d.file = f->second.id;
						auto h = f->second.handles.find(b->second.exporter_handle);
						if (h != f->second.handles.end() &&
						    h->second.object == b->second.object)
							d.handle = h->first;
					}
				}
			}
			pj.fds.push_back(std::move(d));
		}
		for (const auto &[start, mp] : p.mmaps) {
			auto fit = files_.find(mp.kfile);
			if (fit == files_.end())
				continue; // cannot happen: a mapping keeps its file
			const DrmFile &f = fit->second;
			mf::Mmap mj;
			mj.start = mp.start;
			mj.length = mp.length;
			mj.prot = prot_string(mp.prot);
			mj.shared = mp.shared;
			mj.file = f.id;
			mj.offset = mp.offset;
			mj.handle = mp.object ? handle_of(f, *mp.object, mp.offset) : std::nullopt;
			mj.object = mp.object;
			mj.via = std::string(mp.via_name());
			pj.mmaps.push_back(std::move(mj));
		}
		m.processes.push_back(std::move(pj));
	}

	std::vector<std::pair<uint64_t, const GemObject *>> objs; // by id: a reused slot's id is larger
	for (const auto &[id, o] : objects_)
		objs.emplace_back(id, &o);
	std::sort(objs.begin(), objs.end());
	for (const auto &[id, op] : objs)
		m.objects.push_back({id, op->size, flink_of(id)});

	if (lost_events_)
		reasons.push_back(std::to_string(lost_events_) + " events lost (ring buffer full)");
	if (failed_reads_)
		reasons.push_back(std::to_string(failed_reads_) + " kernel reads failed");
	if (malformed_)
		reasons.push_back(std::to_string(malformed_) + " malformed records");
	reasons.insert(reasons.end(), incomplete_.begin(), incomplete_.end());
	m.complete = reasons.empty();
	manifest::fill_views(m);
	return m;
}

} // namespace gw
