#include "manifest/manifest.hpp"
#include "drm_devices.hpp"
#include "images.hpp"

#include <algorithm>
#include <fcntl.h>
#include <regex>
#include <set>

namespace gwcriu
{
namespace
{

using json = nlohmann::json;
constexpr const char *kFileSchema = "gpuwatch.criu.file/v1";
constexpr const char *kDmabufSchema = "gpuwatch.criu.dmabuf/v1";
constexpr const char *kVmasSchema = "gpuwatch.criu.vmas/v1";
constexpr const char *kFenceSchema = "gpuwatch.criu.fence/v1";

// --- reading: every accessor names the image and the field it rejects ------------------------
struct Reader {
	const std::string &name;

	[[noreturn]] void fail(const std::string &where, const std::string &what) const
	{
		throw ImageError(name + ": field " + where + " " + what);
	}
	const json &field(const json &o, const std::string &where, const char *key) const
	{
		if (!o.is_object())
			fail(where, "is not an object");
		auto it = o.find(key);
		if (it == o.end())
			throw ImageError(name + ": missing field " + (where.empty() ? "" : where + ".") + key);
		return *it;
	}
	uint64_t u64(const json &o, const std::string &where, const char *key, uint64_t max = UINT64_MAX) const
	{
		const json &v = field(o, where, key);
		if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
			fail(join(where, key), "is not an unsigned integer");
		uint64_t n = v.get<uint64_t>();
		if (n > max)
			fail(join(where, key), "is " + std::to_string(n) + ", more than " + std::to_string(max));
		return n;
	}
	uint32_t u32(const json &o, const std::string &where, const char *key, uint64_t max = UINT32_MAX) const
	{
		return static_cast<uint32_t>(u64(o, where, key, std::min<uint64_t>(max, UINT32_MAX)));
	}
	std::optional<uint64_t> opt_u64(const json &o, const std::string &where, const char *key, uint64_t max) const
	{
		if (field(o, where, key).is_null())
			return std::nullopt;
		return u64(o, where, key, max);
	}
	std::string str(const json &o, const std::string &where, const char *key, std::size_t max = 256) const
	{
		const json &v = field(o, where, key);
		if (!v.is_string())
			fail(join(where, key), "is not a string");
		if (v.get_ref<const std::string &>().size() > max)
			fail(join(where, key), "is longer than " + std::to_string(max) + " characters");
		return v.get<std::string>();
	}
	bool boolean(const json &o, const std::string &where, const char *key) const
	{
		const json &v = field(o, where, key);
		if (!v.is_boolean())
			fail(join(where, key), "is not a boolean");
		return v.get<bool>();
	}
	const json &array(const json &o, const std::string &where, const char *key) const
	{
		const json &v = field(o, where, key);
		if (!v.is_array())
			fail(join(where, key), "is not an array");
		return v;
	}
	static std::string join(const std::string &where, const char *key)
	{
		return where.empty() ? key : where + "." + key;
	}
	static std::string at(const std::string &where, const char *key, std::size_t i)
	{
		return join(where, key) + "[" + std::to_string(i) + "]";
	}
	json parse(const std::string &text, const char *schema) const
	{
		json j;
		try {
			j = json::parse(text);
		} catch (const json::parse_error &e) {
			throw ImageError(name + ": not valid JSON (truncated or corrupt) at byte " +
					 std::to_string(e.byte));
		}
		if (!j.is_object())
			throw ImageError(name + ": not a JSON object");
		if (str(j, "", "schema") != schema)
			fail("schema", "is not " + std::string(schema));
		return j;
	}

	DeviceRec device(const json &o, const std::string &where) const
	{
		DeviceRec d;
		const json &j = field(o, where, "device");
		std::string w = join(where, "device");
		d.path = str(j, w, "path");
		if (!gw::is_drm_node_path(d.path, &d.kind))
			fail(w + ".path", "is not /dev/dri/cardN or /dev/dri/renderDN");
		if (str(j, w, "kind") != d.kind)
			fail(w + ".kind", "does not match the path");
		d.major = u32(j, w, "major");
		if (d.major != gw::kDrmMajor)
			fail(w + ".major", "is not the DRM major " + std::to_string(gw::kDrmMajor));
		d.minor = u32(j, w, "minor", (1u << 20) - 1);
		d.driver = str(j, w, "driver", 64);
		if (d.driver.empty())
			fail(w + ".driver", "is empty");
		d.bus = str(j, w, "bus", 64);
		d.pci_id = str(j, w, "pci_id", 64);
		d.pci_slot = str(j, w, "pci_slot", 64);
		d.platform = str(j, w, "platform", 128);
		d.mode = u32(j, w, "mode");
		d.uid = u32(j, w, "uid");
		d.gid = u32(j, w, "gid");
		return d;
	}
	std::vector<Holder> holders(const json &o) const
	{
		std::vector<Holder> out;
		const json &a = array(o, "", "holders");
		for (std::size_t i = 0; i < a.size(); ++i) {
			std::string w = at("", "holders", i);
			Holder h;
			h.pid = u32(a[i], w, "pid", 1u << 30);
			h.vpid = u32(a[i], w, "vpid", 1u << 30);
			const json &fds = array(a[i], w, "fds");
			for (std::size_t k = 0; k < fds.size(); ++k) {
				if (!fds[k].is_number_integer() || fds[k].get<int64_t>() < 0 ||
				    fds[k].get<int64_t>() >= (1 << 30))
					fail(at(w, "fds", k), "is not an fd number");
				h.fds.push_back(fds[k].get<int>());
			}
			if (h.pid == 0 || h.vpid == 0)
				fail(w + ".pid", "is 0");
			out.push_back(std::move(h));
		}
		return out;
	}
	std::vector<std::string> lines(const json &o, const char *key) const
	{
		std::vector<std::string> out;
		const json &a = array(o, "", key);
		for (std::size_t i = 0; i < a.size(); ++i) {
			if (!a[i].is_string())
				fail(at("", key, i), "is not a string");
			out.push_back(a[i].get<std::string>());
		}
		return out;
	}
	// An optional member: absent or null -> nullptr (images written before it existed).
	const json *maybe(const json &o, const std::string &where, const char *key) const
	{
		if (!o.is_object())
			fail(where, "is not an object");
		auto it = o.find(key);
		return it == o.end() || it->is_null() ? nullptr : &*it;
	}
	std::pair<uint32_t, uint32_t> pair_u32(const json &v, const std::string &w, uint64_t max0, uint64_t max1) const
	{
		if (!v.is_array() || v.size() != 2 || !v[0].is_number_unsigned() || !v[1].is_number_unsigned())
			fail(w, "is not a pair of unsigned integers");
		if (v[0].get<uint64_t>() > max0 || v[1].get<uint64_t>() > max1)
			fail(w, "is out of range");
		return {v[0].get<uint32_t>(), v[1].get<uint32_t>()};
	}
	std::pair<uint64_t, uint64_t> pair_u64(const json &v, const std::string &w) const
	{
		if (!v.is_array() || v.size() != 2 || !v[0].is_number_unsigned() || !v[1].is_number_unsigned())
			fail(w, "is not a pair of unsigned integers");
		return {v[0].get<uint64_t>(), v[1].get<uint64_t>()};
	}
	std::optional<uint32_t> opt_u32(const json &o, const std::string &where, const char *key, uint64_t max) const
	{
		if (!maybe(o, where, key))
			return std::nullopt;
		return u32(o, where, key, max);
	}
	std::optional<I915Buffer> i915_buffer(const json &o, const std::string &where) const
	{
		const json *p = maybe(o, where, "i915");
		if (!p)
			return std::nullopt;
		std::string w = join(where, "i915");
		I915Buffer b;
		b.kind = str(*p, w, "kind", 16);
		if (b.kind != "create" && b.kind != "create_ext" && b.kind != "userptr" && !b.kind.empty())
			fail(w + ".kind", "is not create, create_ext, userptr or empty");
		b.flags = u32(*p, w, "flags");
		const json &pl = array(*p, w, "placements");
		if (pl.size() > 16)
			fail(w + ".placements", "has more than 16 regions");
		for (std::size_t i = 0; i < pl.size(); ++i) {
			auto [c, n] = pair_u32(pl[i], at(w, "placements", i), UINT16_MAX, UINT16_MAX);
			b.placements.push_back({static_cast<uint16_t>(c), static_cast<uint16_t>(n)});
		}
		b.protected_content = boolean(*p, w, "protected");
		b.pat = opt_u32(*p, w, "pat", UINT32_MAX);
		b.user_ptr = u64(*p, w, "user_ptr");
		if (b.kind == "userptr" && (b.user_ptr == 0 || b.user_ptr % page_size()))
			fail(w + ".user_ptr", "is not a page-aligned address");
		if (const json *t = maybe(*p, w, "tiling"))
			b.tiling = pair_u32(*t, w + ".tiling", 16, UINT32_MAX);
		b.caching = opt_u32(*p, w, "caching", 16);
		return b;
	}
	std::optional<I915FileState> i915_state(const json &o) const
	{
		const json *p = maybe(o, "", "i915");
		if (!p)
			return std::nullopt;
		I915FileState st;
		const json &vms = array(*p, "i915", "vms");
		for (std::size_t i = 0; i < vms.size(); ++i) {
			if (!vms[i].is_number_unsigned() || vms[i].get<uint64_t>() == 0 ||
			    vms[i].get<uint64_t>() > max_handle())
				fail(at("i915", "vms", i), "is not a VM id between 1 and GPUWATCH_MAX_HANDLE");
			uint32_t id = vms[i].get<uint32_t>();
			if (!st.vms.empty() && id <= st.vms.back())
				fail(at("i915", "vms", i), "is not ascending");
			st.vms.push_back(id);
		}
		const json &cs = array(*p, "i915", "contexts");
		for (std::size_t i = 0; i < cs.size(); ++i) {
			std::string w = at("i915", "contexts", i);
			I915Context c;
			c.id = u32(cs[i], w, "id", max_handle());
			if (!st.contexts.empty() && c.id <= st.contexts.back().id)
				fail(w + ".id", "is not ascending");
			c.flags = u32(cs[i], w, "flags");
			c.vm = opt_u32(cs[i], w, "vm", max_handle());
			c.vm_destroyed = boolean(cs[i], w, "vm_destroyed");
			if (c.vm && !c.vm_destroyed && !std::binary_search(st.vms.begin(), st.vms.end(), *c.vm))
				fail(w + ".vm", "names VM " + std::to_string(*c.vm) + ", which is not in i915.vms");
			if (const json *e = maybe(cs[i], w, "engines")) {
				if (!e->is_array() || e->size() > 64)
					fail(w + ".engines", "is not an array of at most 64 engines");
				i915::EngineList l;
				for (std::size_t k = 0; k < e->size(); ++k) {
					auto [cl, in] = pair_u32((*e)[k], at(w, "engines", k), UINT16_MAX, UINT16_MAX);
					l.push_back({static_cast<uint16_t>(cl), static_cast<uint16_t>(in)});
				}
				c.engines = std::move(l);
			}
			const json &ps = array(cs[i], w, "params");
			for (std::size_t k = 0; k < ps.size(); ++k) {
				std::string pw = at(w, "params", k);
				i915::CtxParam cp;
				cp.param = u64(ps[k], pw, "param", 0xffff);
				cp.value = u64(ps[k], pw, "value");
				if (const json *d = maybe(ps[k], pw, "data")) {
					if (!d->is_string() || d->get_ref<const std::string &>().size() % 2 ||
					    d->get_ref<const std::string &>().size() > 2048 ||
					    d->get_ref<const std::string &>().find_first_not_of("0123456789abcdef") !=
						    std::string::npos)
						fail(pw + ".data", "is not at most 1 KiB of lowercase hex");
					const std::string &hx = d->get_ref<const std::string &>();
					for (std::size_t x = 0; x < hx.size(); x += 2)
						cp.data.push_back(
							static_cast<uint8_t>(std::stoul(hx.substr(x, 2), nullptr, 16)));
				}
				c.params.push_back(std::move(cp));
			}
			st.contexts.push_back(std::move(c));
		}
		return st;
	}
	std::optional<XeBuffer> xe_buffer(const json &o, const std::string &where) const
	{
		const json *p = maybe(o, where, "xe");
		if (!p)
			return std::nullopt;
		std::string w = join(where, "xe");
		XeBuffer b;
		b.placement = u32(*p, w, "placement");
		if (b.placement == 0)
			fail(w + ".placement", "is 0: no memory region");
		b.flags = u32(*p, w, "flags");
		b.vm_id = u32(*p, w, "vm_id", max_handle());
		b.cpu_caching = static_cast<uint16_t>(u32(*p, w, "cpu_caching", 2));
		if (b.cpu_caching == 0)
			fail(w + ".cpu_caching", "is 0 (neither WB 1 nor WC 2)");
		return b;
	}
	XeBinding xe_binding(const json &o, const std::string &w) const
	{
		XeBinding b;
		b.addr = u64(o, w, "addr");
		b.range = u64(o, w, "range");
		if (b.addr % page_size() || b.range == 0 || b.range % page_size() || b.addr + b.range < b.addr)
			fail(w, "is not a page-aligned, non-empty range");
		b.handle = opt_u32(o, w, "handle", max_handle());
		if (b.handle && *b.handle == 0)
			fail(w + ".handle", "is 0");
		if (maybe(o, w, "userptr"))
			b.userptr = u64(o, w, "userptr");
		if (b.userptr && (*b.userptr == 0 || *b.userptr % page_size()))
			fail(w + ".userptr", "is not a page-aligned address");
		if (b.userptr && b.handle)
			fail(w, "has both a handle and a userptr");
		b.offset = u64(o, w, "offset");
		if (b.offset % page_size())
			fail(w + ".offset", "is not page-aligned");
		b.pat_index = static_cast<uint16_t>(u32(o, w, "pat_index", UINT16_MAX));
		b.flags = u32(o, w, "flags");
		return b;
	}
	std::optional<XeFileState> xe_state(const json &o, const std::vector<HandleRec> &handles) const
	{
		const json *p = maybe(o, "", "xe");
		if (!p)
			return std::nullopt;
		XeFileState st;
		const json &vms = array(*p, "xe", "vms");
		for (std::size_t i = 0; i < vms.size(); ++i) {
			std::string w = at("xe", "vms", i);
			XeVm vm;
			vm.id = u32(vms[i], w, "id", max_handle());
			if (vm.id == 0 || (!st.vms.empty() && vm.id <= st.vms.back().id))
				fail(w + ".id", "is 0 or not ascending");
			vm.flags = u32(vms[i], w, "flags");
			const json &bs = array(vms[i], w, "bindings");
			for (std::size_t k = 0; k < bs.size(); ++k) {
				std::string bw = at(w, "bindings", k);
				XeBinding b = xe_binding(bs[k], bw);
				if (!vm.bindings.empty() && b.addr < vm.bindings.back().addr + vm.bindings.back().range)
					fail(bw + ".addr", "overlaps the previous binding or is not ascending");
				if (b.handle && !std::any_of(handles.begin(), handles.end(),
							     [&](const HandleRec &h) { return h.handle == *b.handle; }))
					fail(bw + ".handle",
					     "names handle " + std::to_string(*b.handle) + ", which is not in handles");
				vm.bindings.push_back(b);
			}
			st.vms.push_back(std::move(vm));
		}
		auto live = [&](uint32_t id) {
			return std::any_of(st.vms.begin(), st.vms.end(), [&](const XeVm &v) { return v.id == id; });
		};
		const json &qs = array(*p, "xe", "exec_queues");
		for (std::size_t i = 0; i < qs.size(); ++i) {
			std::string w = at("xe", "exec_queues", i);
			XeQueue q;
			q.id = u32(qs[i], w, "id", max_handle());
			if (q.id == 0 || (!st.queues.empty() && q.id <= st.queues.back().id))
				fail(w + ".id", "is 0 or not ascending");
			q.vm = u32(qs[i], w, "vm", max_handle());
			q.flags = u32(qs[i], w, "flags");
			q.vm_destroyed = boolean(qs[i], w, "vm_destroyed");
			q.width = static_cast<uint16_t>(u32(qs[i], w, "width", UINT16_MAX));
			q.num_placements = static_cast<uint16_t>(u32(qs[i], w, "num_placements", UINT16_MAX));
			if (q.width == 0 || q.num_placements == 0 || uint32_t{q.width} * q.num_placements > 64)
				fail(w + ".width", "and num_placements give no engine or more than 64");
			const json &in = array(qs[i], w, "instances");
			if (in.size() != uint32_t{q.width} * q.num_placements)
				fail(w + ".instances", "does not hold width * num_placements engines");
			for (std::size_t k = 0; k < in.size(); ++k) {
				const json &e = in[k];
				if (!e.is_array() || e.size() != 3 || !e[0].is_number_unsigned() ||
				    !e[1].is_number_unsigned() || !e[2].is_number_unsigned() ||
				    e[0].get<uint64_t>() > UINT16_MAX || e[1].get<uint64_t>() > UINT16_MAX ||
				    e[2].get<uint64_t>() > UINT16_MAX)
					fail(at(w, "instances", k), "is not [class, instance, gt] of 16-bit numbers");
				q.instances.push_back(
					{e[0].get<uint16_t>(), e[1].get<uint16_t>(), e[2].get<uint16_t>()});
			}
			bool bind_queue = q.instances[0].engine_class == 5; // VM_BIND: no VM taken
			if (!bind_queue && !q.vm_destroyed && !live(q.vm))
				fail(w + ".vm", "names VM " + std::to_string(q.vm) + ", which is not in xe.vms");
			if (q.vm_destroyed && (q.vm == 0 || live(q.vm)))
				fail(w + ".vm_destroyed", "is set for a VM id that is live or 0");
			const json &ps = array(qs[i], w, "properties");
			if (ps.size() > 16)
				fail(w + ".properties", "has more than 16 extensions");
			for (std::size_t k = 0; k < ps.size(); ++k) {
				const json &e = ps[k];
				if (!e.is_array() || e.size() != 2 || !e[0].is_number_unsigned() ||
				    !e[1].is_number_unsigned() || e[0].get<uint64_t>() > UINT32_MAX)
					fail(at(w, "properties", k), "is not a pair [property, value]");
				q.properties.push_back({e[0].get<uint32_t>(), e[1].get<uint64_t>()});
			}
			st.queues.push_back(std::move(q));
		}
		return st;
	}
	std::optional<LateMap> late_map(const json &o, const std::string &where) const
	{
		const json *p = maybe(o, where, "late");
		if (!p)
			return std::nullopt;
		std::string w = join(where, "late");
		LateMap l;
		l.kind = str(*p, w, "kind", 8);
		if (l.kind != "gem" && l.kind != "shmem")
			fail(w + ".kind", "is neither gem nor shmem");
		l.mmap_type = opt_u32(*p, w, "mmap_type", 4);
		if (l.kind == "gem" && !l.mmap_type)
			fail(w + ".mmap_type", "is missing for a gem mapping");
		l.fd = static_cast<int>(u32(*p, w, "fd", INT32_MAX));
		l.wc = boolean(*p, w, "wc");
		return l;
	}
	uint64_t object_size(const json &o, const std::string &where, const char *key) const
	{
		uint64_t s = u64(o, where, key, max_object_size());
		if (s == 0 || s % page_size())
			fail(join(where, key),
			     "is " + std::to_string(s) + ", not a positive multiple of the page size");
		return s;
	}
};

json device_json(const DeviceRec &d)
{
	return {{"path", d.path},         {"kind", d.kind}, {"major", d.major},   {"minor", d.minor},
		{"driver", d.driver},     {"bus", d.bus},   {"pci_id", d.pci_id}, {"pci_slot", d.pci_slot},
		{"platform", d.platform}, {"mode", d.mode}, {"uid", d.uid},       {"gid", d.gid}};
}

json holders_json(const std::vector<Holder> &hs)
{
	json a = json::array();
	for (const Holder &h : hs)
		a.push_back({{"pid", h.pid}, {"vpid", h.vpid}, {"fds", h.fds}});
	return a;
}

json opt(const std::optional<uint32_t> &v)
{
	return v ? json(*v) : json(nullptr);
}

json engines_json(const i915::EngineList &e)
{
	json a = json::array();
	for (const auto &[c, i] : e)
		a.push_back({c, i});
	return a;
}

std::string hex(const std::vector<uint8_t> &b)
{
	static const char digits[] = "0123456789abcdef";
	std::string s;
	for (uint8_t c : b) {
		s += digits[c >> 4];
		s += digits[c & 15];
	}
	return s;
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
				      {"data", p.data.empty() ? json(nullptr) : json(hex(p.data))}});
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

json late_json(const std::optional<LateMap> &l)
{
	if (!l)
		return nullptr;
	return {{"kind", l->kind}, {"mmap_type", opt(l->mmap_type)}, {"fd", l->fd}, {"wc", l->wc}};
}

} // namespace

uint32_t max_handle()
{
	return static_cast<uint32_t>(std::min<uint64_t>(env_u64("GPUWATCH_MAX_HANDLE", 65536), 1u << 24));
}
uint64_t max_object_size()
{
	return env_u64("GPUWATCH_MAX_OBJECT_SIZE", uint64_t{1} << 40);
}

std::string file_image_name(uint32_t id)
{
	return "gpuwatch-file-" + std::to_string(id) + ".json";
}
std::string dmabuf_image_name(uint32_t id)
{
	return "gpuwatch-dmabuf-" + std::to_string(id) + ".json";
}
std::string fence_image_name(uint32_t id)
{
	return "gpuwatch-fence-" + std::to_string(id) + ".json";
}
std::string object_image_name(uint64_t n)
{
	return "gpuwatch-object-" + std::to_string(n) + ".bin";
}
std::string object_checksum_name(uint64_t n)
{
	return "gpuwatch-object-" + std::to_string(n) + ".crc32";
}
std::string manifest_image_name(std::size_t i)
{
	return i == 0 ? "gpuwatch-manifest.json" : "gpuwatch-manifest." + std::to_string(i) + ".json";
}

// --- writing -----------------------------------------------------------------------------------
json to_json(const FileImage &f)
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
			      {"xe", xe_buffer_json(h.xe)}});
	return {{"schema", kFileSchema},
		{"criu_id", f.criu_id},
		{"device", device_json(f.device)},
		{"f_flags", f.f_flags},
		{"flags", gw::flags_string(f.f_flags)},
		{"source", f.source},
		{"handles_known", f.handles_known},
		{"handles", hs},
		{"holders", holders_json(f.holders)},
		{"degraded", f.degraded},
		{"i915", i915_state_json(f.i915)},
		{"xe", xe_state_json(f.xe)}};
}

json to_json(const DmabufImage &d)
{
	return {{"schema", kDmabufSchema},
		{"criu_id", d.criu_id},
		{"object", d.object},
		{"size", d.size},
		{"saved", d.saved},
		{"f_flags", d.f_flags},
		{"device", device_json(d.device)},
		{"holders", holders_json(d.holders)},
		{"degraded", d.degraded}};
}

json to_json(const std::vector<VmaRec> &vmas)
{
	json a = json::array();
	for (const VmaRec &v : vmas)
		a.push_back({{"pid", v.pid},
			     {"vpid", v.vpid},
			     {"start", v.start},
			     {"length", v.length},
			     {"offset", v.offset},
			     {"prot", v.prot},
			     {"file", opt(v.file)},
			     {"device", device_json(v.device)},
			     {"handle", opt(v.handle)},
			     {"object", v.object},
			     {"object_size", v.object_size},
			     {"delta", v.delta},
			     {"saved", v.saved},
			     {"late", late_json(v.late)}});
	return {{"schema", kVmasSchema}, {"vmas", a}};
}

json to_json(const FenceImage &f)
{
	json props = json::array();
	for (const auto &[k, v] : f.properties)
		props.push_back({k, v});
	return {{"schema", kFenceSchema},
		{"criu_id", f.criu_id},
		{"kind", f.kind},
		{"f_flags", f.f_flags},
		{"device", device_json(f.device)},
		{"perf_flags", f.perf_flags},
		{"properties", props},
		{"holders", holders_json(f.holders)}};
}

// --- parsing -----------------------------------------------------------------------------------
FenceImage parse_fence_image(const std::string &text, const std::string &name)
{
	Reader r{name};
	json j = r.parse(text, kFenceSchema);
	FenceImage f;
	f.criu_id = r.u32(j, "", "criu_id");
	f.kind = r.str(j, "", "kind", 16);
	if (f.kind != "sync_file" && f.kind != "i915_perf")
		r.fail("kind", "is neither sync_file nor i915_perf");
	f.f_flags = r.u32(j, "", "f_flags");
	f.device = r.device(j, "");
	f.perf_flags = r.u32(j, "", "perf_flags");
	const json &ps = r.array(j, "", "properties");
	if (ps.size() > 64)
		r.fail("properties", "has more than 64 entries");
	for (std::size_t i = 0; i < ps.size(); ++i)
		f.properties.push_back(r.pair_u64(ps[i], Reader::at("", "properties", i)));
	if (f.kind == "i915_perf" && f.properties.empty())
		r.fail("properties", "is empty for a perf stream");
	f.holders = r.holders(j);
	return f;
}

FileImage parse_file_image(const std::string &text, const std::string &name)
{
	Reader r{name};
	json j = r.parse(text, kFileSchema);
	FileImage f;
	f.criu_id = r.u32(j, "", "criu_id");
	f.device = r.device(j, "");
	f.f_flags = r.u32(j, "", "f_flags");
	f.source = r.str(j, "", "source");
	if (f.source != "manifest" && f.source != "probe")
		r.fail("source", "is neither \"manifest\" nor \"probe\"");
	f.handles_known = r.boolean(j, "", "handles_known");
	const json &hs = r.array(j, "", "handles");
	uint32_t prev = 0;
	for (std::size_t i = 0; i < hs.size(); ++i) {
		std::string w = Reader::at("", "handles", i);
		HandleRec h;
		h.handle = r.u32(hs[i], w, "handle", max_handle());
		if (h.handle <= prev)
			r.fail(w + ".handle",
			       "is " + std::to_string(h.handle) + ": handles must be ascending and non-zero");
		prev = h.handle;
		h.size = r.object_size(hs[i], w, "size");
		h.origin = r.str(hs[i], w, "origin", 32);
		h.object = r.u64(hs[i], w, "object");
		if (h.object == 0)
			r.fail(w + ".object", "is 0");
		h.saved = r.boolean(hs[i], w, "saved");
		h.params = r.field(hs[i], w, "params");
		if (!h.params.is_object())
			r.fail(w + ".params", "is not an object");
		h.i915 = r.i915_buffer(hs[i], w);
		h.xe = r.xe_buffer(hs[i], w);
		f.handles.push_back(std::move(h));
	}
	f.holders = r.holders(j);
	f.degraded = r.lines(j, "degraded");
	f.i915 = r.i915_state(j);
	f.xe = r.xe_state(j, f.handles);
	if (f.xe)
		for (std::size_t i = 0; i < f.handles.size(); ++i)
			if (f.handles[i].xe && f.handles[i].xe->vm_id &&
			    std::none_of(f.xe->vms.begin(), f.xe->vms.end(),
					 [&](const XeVm &v) { return v.id == f.handles[i].xe->vm_id; }))
				r.fail(Reader::at("", "handles", i) + ".xe.vm_id", "names a VM that is not in xe.vms");
	return f;
}

DmabufImage parse_dmabuf_image(const std::string &text, const std::string &name)
{
	Reader r{name};
	json j = r.parse(text, kDmabufSchema);
	DmabufImage d;
	d.criu_id = r.u32(j, "", "criu_id");
	d.object = r.u64(j, "", "object");
	if (d.object == 0)
		r.fail("object", "is 0");
	d.size = r.object_size(j, "", "size");
	d.saved = r.boolean(j, "", "saved");
	d.f_flags = r.u32(j, "", "f_flags");
	d.device = r.device(j, "");
	d.holders = r.holders(j);
	d.degraded = r.lines(j, "degraded");
	return d;
}

std::vector<VmaRec> parse_vmas_image(const std::string &text, const std::string &name)
{
	Reader r{name};
	json j = r.parse(text, kVmasSchema);
	const json &a = r.array(j, "", "vmas");
	std::vector<VmaRec> out;
	std::set<std::pair<uint32_t, uint64_t>> seen;
	for (std::size_t i = 0; i < a.size(); ++i) {
		std::string w = Reader::at("", "vmas", i);
		VmaRec v;
		v.pid = r.u32(a[i], w, "pid", 1u << 30);
		v.vpid = r.u32(a[i], w, "vpid", 1u << 30);
		v.start = r.u64(a[i], w, "start");
		v.length = r.u64(a[i], w, "length", max_object_size());
		v.offset = r.u64(a[i], w, "offset");
		if (v.start % page_size() || v.length == 0 || v.length % page_size() || v.start + v.length < v.start ||
		    v.offset % page_size())
			r.fail(w, "is not a page-aligned, non-empty range");
		if (!seen.insert({v.vpid, v.start}).second)
			r.fail(w + ".start", "repeats another mapping of the same task");
		v.prot = r.str(a[i], w, "prot", 8);
		if (auto f = r.opt_u64(a[i], w, "file", UINT32_MAX))
			v.file = static_cast<uint32_t>(*f);
		v.device = r.device(a[i], w);
		if (auto h = r.opt_u64(a[i], w, "handle", max_handle()))
			v.handle = static_cast<uint32_t>(*h);
		v.object = r.u64(a[i], w, "object");
		v.object_size = v.object ? r.object_size(a[i], w, "object_size") : r.u64(a[i], w, "object_size");
		v.delta = r.u64(a[i], w, "delta");
		if (v.object &&
		    (v.delta % page_size() || v.delta >= v.object_size || v.length > v.object_size - v.delta))
			r.fail(w + ".delta", "puts the mapping outside its object");
		v.saved = r.boolean(a[i], w, "saved");
		v.late = r.late_map(a[i], w);
		if (v.late && (!v.file || !v.handle || !v.object))
			r.fail(w + ".late", "is set on a mapping without a file, handle and buffer");
		out.push_back(std::move(v));
	}
	return out;
}

} // namespace gwcriu
