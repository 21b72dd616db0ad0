// The DRM file image (gpuwatch-file-<ID>.json): the file's device, handles with how their
// buffers were made, its holders, and the i915 contexts and VMs or the xe VMs and exec queues.
#include "image_records.hpp"
#include "manifest/manifest.hpp"

#include <algorithm>
#include <set>

namespace gwcriu
{

using records::json;
using records::Obj;
using records::opt;
namespace jsonin = gw::jsonin;

namespace
{
constexpr const char *kFileSchema = "gpuwatch.criu.file/v1";

// --- writing -------------------------------------------------------------------------------------
json engines_json(const i915::EngineList &e)
{
	json a = json::array();
	for (const auto &[c, i] : e)
		a.push_back({c, i});
	return a;
}

json i915_buffer_json(const std::optional<I915Buffer> &b)
{
	if (!b)
		return nullptr;
	json pl = json::array();
	for (const i915::Region &r : b->placements)
		pl.push_back({r.mem_class, r.instance});
	return {{"kind", b->kind},
		{"flags", b->flags},
		{"placements", pl},
		{"protected", b->protected_content},
		{"pat", opt(b->pat)},
		{"user_ptr", b->user_ptr},
		{"tiling", b->tiling ? json{b->tiling->first, b->tiling->second} : json(nullptr)},
		{"caching", opt(b->caching)}};
}

json i915_state_json(const std::optional<I915FileState> &st)
{
	if (!st)
		return nullptr;
	json ctxs = json::array();
	for (const I915Context &c : st->contexts) {
		json ps = json::array();
		for (const i915::CtxParam &p : c.params)
			ps.push_back({{"param", p.param},
				      {"value", p.value},
				      {"data", p.data.empty() ? json(nullptr) : json(gw::jsonin::to_hex(p.data))}});
		ctxs.push_back({{"id", c.id},
				{"flags", c.flags},
				{"vm", opt(c.vm)},
				{"vm_destroyed", c.vm_destroyed},
				{"engines", c.engines ? engines_json(*c.engines) : json(nullptr)},
				{"params", ps}});
	}
	return {{"vms", st->vms}, {"contexts", ctxs}};
}

json xe_buffer_json(const std::optional<XeBuffer> &b)
{
	if (!b)
		return nullptr;
	return {{"placement", b->placement}, {"flags", b->flags}, {"vm_id", b->vm_id}, {"cpu_caching", b->cpu_caching}};
}

json xe_state_json(const std::optional<XeFileState> &st)
{
	if (!st)
		return nullptr;
	json vms = json::array(), qs = json::array();
	for (const XeVm &v : st->vms) {
		json bs = json::array();
		for (const XeBinding &b : v.bindings)
			bs.push_back({{"addr", b.addr},
				      {"range", b.range},
				      {"handle", opt(b.handle)},
				      {"userptr", b.userptr ? json(*b.userptr) : json(nullptr)},
				      {"offset", b.offset},
				      {"pat_index", b.pat_index},
				      {"flags", b.flags}});
		vms.push_back({{"id", v.id}, {"flags", v.flags}, {"bindings", bs}});
	}
	for (const XeQueue &q : st->queues) {
		json in = json::array(), ps = json::array();
		for (const xe::Engine &e : q.instances)
			in.push_back({e.engine_class, e.instance, e.gt});
		for (const auto &[k, v] : q.properties)
			ps.push_back({k, v});
		qs.push_back({{"id", q.id},
			      {"vm", q.vm},
			      {"vm_destroyed", q.vm_destroyed},
			      {"flags", q.flags},
			      {"width", q.width},
			      {"num_placements", q.num_placements},
			      {"instances", in},
			      {"properties", ps}});
	}
	return {{"vms", vms}, {"exec_queues", qs}};
}

// --- reading -------------------------------------------------------------------------------------
std::optional<I915Buffer> read_i915_buffer(const Obj &handle)
{
	auto found = handle.opt_object_at("i915");
	if (!found)
		return std::nullopt;
	const Obj &o = *found;
	I915Buffer b;
	b.kind = o.req_str("kind", 16);
	if (b.kind != "create" && b.kind != "create_ext" && b.kind != "userptr" && !b.kind.empty())
		o.fail("kind", "is not create, create_ext, userptr or empty");
	b.flags = o.req_u32("flags");
	const json &pl = o.req_array("placements");
	if (pl.size() > 16)
		o.fail("placements", "has more than 16 regions");
	for (std::size_t i = 0; i < pl.size(); ++i) {
		auto [c, n] = jsonin::pair_u64(pl[i], o.at("placements", i), UINT16_MAX, UINT16_MAX);
		b.placements.push_back({static_cast<uint16_t>(c), static_cast<uint16_t>(n)});
	}
	b.protected_content = o.req_bool("protected");
	b.pat = o.u32_or_null("pat", false);
	b.user_ptr = o.req_u64("user_ptr");
	if (b.kind == "userptr" && (b.user_ptr == 0 || b.user_ptr % page_size()))
		o.fail("user_ptr", "is not a page-aligned address");
	if (const json *t = o.maybe("tiling")) {
		auto [mode, stride] = jsonin::pair_u64(*t, o.path("tiling"), 16, UINT32_MAX);
		b.tiling = {static_cast<uint32_t>(mode), static_cast<uint32_t>(stride)};
	}
	b.caching = o.u32_or_null("caching", false, 16);
	return b;
}

I915Context read_i915_context(const Obj &c, const I915FileState &st)
{
	I915Context ctx;
	ctx.id = c.req_u32("id", max_handle());
	if (!st.contexts.empty() && ctx.id <= st.contexts.back().id)
		c.fail("id", "is not ascending");
	ctx.flags = c.req_u32("flags");
	ctx.vm = c.u32_or_null("vm", false, max_handle());
	ctx.vm_destroyed = c.req_bool("vm_destroyed");
	if (ctx.vm && !ctx.vm_destroyed && !std::binary_search(st.vms.begin(), st.vms.end(), *ctx.vm))
		c.fail("vm", "names VM " + std::to_string(*ctx.vm) + ", which is not in i915.vms");
	if (const json *e = c.maybe("engines")) {
		if (!e->is_array() || e->size() > 64)
			c.fail("engines", "is not an array of at most 64 engines");
		i915::EngineList l;
		for (std::size_t k = 0; k < e->size(); ++k) {
			auto [cl, in] = jsonin::pair_u64((*e)[k], c.at("engines", k), UINT16_MAX, UINT16_MAX);
			l.push_back({static_cast<uint16_t>(cl), static_cast<uint16_t>(in)});
		}
		ctx.engines = std::move(l);
	}
	c.each(c.req_array("params"), "params", [&](const Obj &p) {
		i915::CtxParam cp;
		cp.param = p.req_u64("param", 0xffff);
		cp.value = p.req_u64("value");
		if (p.maybe("data"))
			cp.data = p.req_hex("data", 1024);
		ctx.params.push_back(std::move(cp));
	});
	return ctx;
}

std::optional<I915FileState> read_i915_state(const Obj &top)
{
	auto found = top.opt_object_at("i915");
	if (!found)
		return std::nullopt;
	const Obj &o = *found;
	I915FileState st;
	const json &vms = o.req_array("vms");
	for (std::size_t i = 0; i < vms.size(); ++i) {
		if (!vms[i].is_number_unsigned() || vms[i].get<uint64_t>() == 0 ||
		    vms[i].get<uint64_t>() > max_handle())
			jsonin::fail(o.at("vms", i), "is not a VM id between 1 and GPUWATCH_MAX_HANDLE");
		uint32_t id = vms[i].get<uint32_t>();
		if (!st.vms.empty() && id <= st.vms.back())
			jsonin::fail(o.at("vms", i), "is not ascending");
		st.vms.push_back(id);
	}
	o.each(o.req_array("contexts"), "contexts",
	       [&](const Obj &c) { st.contexts.push_back(read_i915_context(c, st)); });
	return st;
}

std::optional<XeBuffer> read_xe_buffer(const Obj &handle)
{
	auto found = handle.opt_object_at("xe");
	if (!found)
		return std::nullopt;
	const Obj &o = *found;
	XeBuffer b;
	b.placement = o.req_u32("placement");
	if (b.placement == 0)
		o.fail("placement", "is 0: no memory region");
	b.flags = o.req_u32("flags");
	b.vm_id = o.req_u32("vm_id", max_handle());
	b.cpu_caching = static_cast<uint16_t>(o.req_u32("cpu_caching", 2));
	if (b.cpu_caching == 0)
		o.fail("cpu_caching", "is 0 (neither WB 1 nor WC 2)");
	return b;
}

XeBinding read_xe_binding(const Obj &o)
{
	XeBinding b;
	b.addr = o.req_u64("addr");
	b.range = o.req_u64("range");
	if (b.addr % page_size() || b.range == 0 || b.range % page_size() || b.addr + b.range < b.addr)
		jsonin::fail(o.where(), "is not a page-aligned, non-empty range");
	b.handle = o.u32_or_null("handle", false, max_handle());
	if (b.handle && *b.handle == 0)
		o.fail("handle", "is 0");
	b.userptr = o.u64_or_null("userptr", false);
	if (b.userptr && (*b.userptr == 0 || *b.userptr % page_size()))
		o.fail("userptr", "is not a page-aligned address");
	if (b.userptr && b.handle)
		jsonin::fail(o.where(), "has both a handle and a userptr");
	b.offset = o.req_u64("offset");
	if (b.offset % page_size())
		o.fail("offset", "is not page-aligned");
	b.pat_index = static_cast<uint16_t>(o.req_u32("pat_index", UINT16_MAX));
	b.flags = o.req_u32("flags");
	return b;
}

XeQueue read_xe_queue(const Obj &o, const XeFileState &st)
{
	XeQueue q;
	q.id = o.req_u32("id", max_handle());
	if (q.id == 0 || (!st.queues.empty() && q.id <= st.queues.back().id))
		o.fail("id", "is 0 or not ascending");
	q.vm = o.req_u32("vm", max_handle());
	q.flags = o.req_u32("flags");
	q.vm_destroyed = o.req_bool("vm_destroyed");
	q.width = static_cast<uint16_t>(o.req_u32("width", UINT16_MAX));
	q.num_placements = static_cast<uint16_t>(o.req_u32("num_placements", UINT16_MAX));
	if (q.width == 0 || q.num_placements == 0 || uint32_t{q.width} * q.num_placements > 64)
		o.fail("width", "and num_placements give no engine or more than 64");
	const json &in = o.req_array("instances");
	if (in.size() != uint32_t{q.width} * q.num_placements)
		o.fail("instances", "does not hold width * num_placements engines");
	for (std::size_t k = 0; k < in.size(); ++k) {
		const json &e = in[k];
		if (!e.is_array() || e.size() != 3 || !e[0].is_number_unsigned() || !e[1].is_number_unsigned() ||
		    !e[2].is_number_unsigned() || e[0].get<uint64_t>() > UINT16_MAX ||
		    e[1].get<uint64_t>() > UINT16_MAX || e[2].get<uint64_t>() > UINT16_MAX)
			jsonin::fail(o.at("instances", k), "is not [class, instance, gt] of 16-bit numbers");
		q.instances.push_back({e[0].get<uint16_t>(), e[1].get<uint16_t>(), e[2].get<uint16_t>()});
	}
	auto live = [&](uint32_t id) {
		return std::any_of(st.vms.begin(), st.vms.end(), [&](const XeVm &v) { return v.id == id; });
	};
	bool bind_queue = q.instances[0].engine_class == 5; // VM_BIND: no VM taken
	if (!bind_queue && !q.vm_destroyed && !live(q.vm))
		o.fail("vm", "names VM " + std::to_string(q.vm) + ", which is not in xe.vms");
	if (q.vm_destroyed && (q.vm == 0 || live(q.vm)))
		o.fail("vm_destroyed", "is set for a VM id that is live or 0");
	const json &ps = o.req_array("properties");
	if (ps.size() > 16)
		o.fail("properties", "has more than 16 extensions");
	for (std::size_t k = 0; k < ps.size(); ++k) {
		const json &e = ps[k];
		if (!e.is_array() || e.size() != 2 || !e[0].is_number_unsigned() || !e[1].is_number_unsigned() ||
		    e[0].get<uint64_t>() > UINT32_MAX)
			jsonin::fail(o.at("properties", k), "is not a pair [property, value]");
		q.properties.push_back({e[0].get<uint32_t>(), e[1].get<uint64_t>()});
	}
	return q;
}

std::optional<XeFileState> read_xe_state(const Obj &top, const std::vector<HandleRec> &handles)
{
	auto found = top.opt_object_at("xe");
	if (!found)
		return std::nullopt;
	const Obj &o = *found;
	XeFileState st;
	o.each(o.req_array("vms"), "vms", [&](const Obj &v) {
		XeVm vm;
		vm.id = v.req_u32("id", max_handle());
		if (vm.id == 0 || (!st.vms.empty() && vm.id <= st.vms.back().id))
			v.fail("id", "is 0 or not ascending");
		vm.flags = v.req_u32("flags");
		v.each(v.req_array("bindings"), "bindings", [&](const Obj &bo) {
			XeBinding b = read_xe_binding(bo);
			if (!vm.bindings.empty() && b.addr < vm.bindings.back().addr + vm.bindings.back().range)
				bo.fail("addr", "overlaps the previous binding or is not ascending");
			// handles are ascending (checked as read): a search, not a scan per binding (10^5
			// bindings cost minutes of root's CPU at restore init)
			auto h = b.handle
					 ? std::lower_bound(handles.begin(), handles.end(), *b.handle,
							    [](const HandleRec &r, uint32_t n) { return r.handle < n; })
					 : handles.end();
			if (b.handle && (h == handles.end() || h->handle != *b.handle))
				bo.fail("handle",
					"names handle " + std::to_string(*b.handle) + ", which is not in handles");
			vm.bindings.push_back(b);
		});
		st.vms.push_back(std::move(vm));
	});
	o.each(o.req_array("exec_queues"), "exec_queues",
	       [&](const Obj &q) { st.queues.push_back(read_xe_queue(q, st)); });
	return st;
}

std::optional<VirtioResource> read_virtio_resource(const Obj &handle, const std::string &origin)
{
	if (origin != "virtio_gpu.resource_create")
		return std::nullopt;
	Obj p = handle.req_object("params");
	VirtioResource r;
	r.target = p.req_u32("target");
	r.format = p.req_u32("format");
	r.bind = p.req_u32("bind");
	r.width = p.req_u32("width");
	r.height = p.req_u32("height");
	r.depth = p.req_u32("depth");
	r.array_size = p.req_u32("array_size");
	r.last_level = p.req_u32("last_level");
	r.nr_samples = p.req_u32("nr_samples");
	r.flags = p.req_u32("flags");
	r.size = p.req_u32("size");
	r.stride = p.req_u32("stride");
	r.res_handle = p.req_u32("res_handle");
	return r;
}

HandleRec read_handle(const Obj &o, uint32_t prev)
{
	HandleRec h;
	h.handle = o.req_u32("handle", max_handle());
	if (h.handle <= prev)
		o.fail("handle", "is " + std::to_string(h.handle) + ": handles must be ascending and non-zero");
	h.size = records::object_size(o, "size");
	h.origin = o.req_str("origin", 32);
	h.object = o.req_u64("object");
	if (h.object == 0)
		o.fail("object", "is 0");
	h.saved = o.req_bool("saved");
	h.params = o.req_object("params").value();
	h.i915 = read_i915_buffer(o);
	h.xe = read_xe_buffer(o);
	h.virtio = read_virtio_resource(o, h.origin);
	h.host_uploaded = o.opt_bool("host_uploaded", false);
	return h;
}

} // namespace

json to_json(const FileImage &f, const DeviceIndex &device_index)
{
	json hs = json::array();
	for (const HandleRec &h : f.handles)
		hs.push_back({{"handle", h.handle},
			      {"size", h.size},
			      {"origin", h.origin},
			      {"object", h.object},
			      {"saved", h.saved},
			      {"params", h.params},
			      {"i915", i915_buffer_json(h.i915)},
			      {"xe", xe_buffer_json(h.xe)},
			      {"host_uploaded", h.host_uploaded}});
	return {{"schema", kFileSchema},
		{"criu_id", f.criu_id},
		{"device", device_index(f.device)},
		{"f_flags", f.f_flags},
		{"flags", gw::flags_string(f.f_flags)},
		{"source", f.source},
		{"handles_known", f.handles_known},
		{"handles", hs},
		{"holders", records::holders_json(f.holders)},
		{"caps", f.caps},
		{"degraded", f.degraded},
		{"i915", i915_state_json(f.i915)},
		{"xe", xe_state_json(f.xe)},
		{"kms", kms_json(f.kms)}};
}

FileImage parse_file_image(const std::string &text, const std::string &name, const Devices &devices)
{
	return records::read_image(text, name, kFileSchema, [&](const Obj &top) {
		FileImage f;
		f.criu_id = top.req_u32("criu_id");
		f.device = records::read_device(top, devices);
		f.f_flags = top.req_u32("f_flags");
		f.source = top.req_str("source", 16);
		if (f.source != "manifest" && f.source != "probe" && f.source != "stateless")
			top.fail("source", "is neither \"manifest\", \"probe\" nor \"stateless\"");
		f.handles_known = top.req_bool("handles_known");
		top.each(top.req_array("handles"), "handles", [&](const Obj &h) {
			f.handles.push_back(read_handle(h, f.handles.empty() ? 0 : f.handles.back().handle));
		});
		f.holders = records::read_holders(top);
		if (const json *caps = top.opt_array("caps")) { // absent in images before caps were kept
			if (caps->size() > 16)
				top.fail("caps", "lists more than 16 client caps");
			for (std::size_t i = 0; i < caps->size(); ++i) {
				auto [cap, value] = gw::jsonin::pair_u64((*caps)[i], top.at("caps", i), 64, UINT32_MAX);
				if (!f.caps.empty() && cap <= f.caps.back().first)
					jsonin::fail(top.at("caps", i), "is not in ascending capability order");
				f.caps.emplace_back(cap, value);
			}
		}
		f.degraded = top.req_strings("degraded");
		f.i915 = read_i915_state(top);
		f.xe = read_xe_state(top, f.handles);
		std::vector<uint32_t> numbers;
		for (const HandleRec &h : f.handles)
			numbers.push_back(h.handle);
		f.kms = read_kms(top, numbers);
		// a driver's private ioctls are issued only on that driver's device: the same numbers
		// mean something else on another
		auto only_on = [&](const std::string &path, const char *driver, const char *what) {
			if (f.device.driver != driver)
				jsonin::fail(path, std::string("is ") + what + " on a " + f.device.driver + " device");
		};
		for (std::size_t i = 0; i < f.handles.size(); ++i) {
			const HandleRec &h = f.handles[i];
			if (h.virtio || h.host_uploaded)
				only_on(top.at("handles", i), "virtio_gpu", "a virtio_gpu resource");
			if (h.i915)
				only_on(top.at("handles", i), "i915", "an i915 buffer");
			if (h.xe)
				only_on(top.at("handles", i), "xe", "an xe buffer");
		}
		if (f.i915)
			only_on(top.path("i915"), "i915", "i915 state");
		if (f.xe)
			only_on(top.path("xe"), "xe", "xe state");
		if (f.xe) {
			std::set<uint32_t> vms;
			for (const XeVm &v : f.xe->vms)
				vms.insert(v.id);
			for (std::size_t i = 0; i < f.handles.size(); ++i)
				if (f.handles[i].xe && f.handles[i].xe->vm_id && !vms.count(f.handles[i].xe->vm_id))
					jsonin::fail(top.at("handles", i) + ".xe.vm_id",
						     "names a VM that is not in xe.vms");
		}
		if (f.source == "stateless" &&
		    (!f.handles.empty() || f.handles_known || f.i915 || f.xe || !f.kms.empty() || !f.caps.empty()))
			top.fail("source", "is \"stateless\" in a file image with handles, caps or driver state");
		return f;
	});
}

} // namespace gwcriu
