#include "dump_i915.hpp"

#include <algorithm>
#include <i915_drm.h>
#include <cerrno>

#include "dump.hpp"

namespace gwcriu
{
namespace
{

namespace mf = gw::manifest;

// One manifest context parameter into c; false (with *why) when it cannot be recreated.
bool add_param(I915Context &c, const mf::ContextParam &v, std::string *why)
{
	auto n = i915::context_param_number(v.name);
	if (!n) {
		*why = "unknown parameter " + v.name;
		return false;
	}
	if (*n == I915_CONTEXT_PARAM_ENGINES) {
		if (!v.engines) {
			*why = "engine map not recorded";
			return false;
		}
		i915::EngineList l;
		for (const mf::Engine &e : *v.engines)
			l.push_back({e.engine_class, e.instance});
		c.engines = std::move(l);
		if (v.extensions_not_recorded) {
			*why = "engine map extensions (load balancing, bonding, parallel submission) were not "
			       "recorded: "
			       "the engine map comes back without them";
			return false;
		}
		return true;
	}
	i915::CtxParam p;
	p.param = *n;
	if (v.number) {
		p.value = *v.number;
		c.params.push_back(std::move(p));
		return true;
	}
	if (v.bytes && !v.bytes->empty() && v.bytes->size() <= 1024) {
		p.data = *v.bytes;
		c.params.push_back(std::move(p));
		return true;
	}
	*why = v.name + " was set with data gpuwatch did not capture";
	return false;
}

} // namespace

bool is_i915(const SavedDevice &d)
{
	return d.driver == "i915";
}

bool i915_handle_exists(int fd, uint32_t n)
{
	return i915::busy(fd, n) != -ENOENT;
}

I915Buffer i915_buffer_of(const mf::Handle &h, std::vector<std::string> *degraded)
{
	I915Buffer b;
	const mf::CreateParams &p = h.create;
	std::string who = "handle " + num(h.handle);
	if (h.origin == "i915.gem_create") {
		b.kind = "create";
	} else if (h.origin == "i915.gem_create_ext") {
		b.kind = "create_ext";
		if (p.flags)
			b.flags = *p.flags;
		b.protected_content = p.protected_content;
		if (p.pat_index)
			b.pat = *p.pat_index;
		for (const mf::Placement &r : p.placements) {
			auto c = r.memory_class ? i915::mem_class_number(*r.memory_class) : std::nullopt;
			if (!c || !r.instance) {
				degraded->push_back(who +
						    ": a memory region of unknown class is left out of its placements");
				continue;
			}
			b.placements.push_back({*c, *r.instance});
		}
	} else if (h.origin == "i915.userptr") {
		b.kind = "userptr";
		if (p.flags)
			b.flags = *p.flags;
		if (p.user_ptr)
			b.user_ptr = *p.user_ptr;
	}
	if (h.tiling) {
		auto mode = h.tiling->mode ? i915::tiling_number(*h.tiling->mode) : std::nullopt;
		if (mode && h.tiling->stride)
			b.tiling = {{*mode, *h.tiling->stride}};
		else
			degraded->push_back(who + ": tiling of an unknown mode is not reapplied");
	}
	if (h.caching)
		b.caching = *h.caching;
	return b;
}

I915FileState i915_state_of(const mf::File &f, std::vector<std::string> *degraded)
{
	I915FileState st;
	for (const mf::Vm &v : f.vms.value_or(std::vector<mf::Vm>{}))
		if (v.id <= UINT32_MAX)
			st.vms.push_back(static_cast<uint32_t>(v.id));
	std::sort(st.vms.begin(), st.vms.end());
	for (const mf::Context &cj : f.contexts.value_or(std::vector<mf::Context>{})) {
		if (cj.id > UINT32_MAX)
			continue;
		I915Context c;
		c.id = static_cast<uint32_t>(cj.id);
		c.flags = cj.flags;
		if (cj.vm && *cj.vm <= UINT32_MAX)
			c.vm = static_cast<uint32_t>(*cj.vm);
		c.vm_destroyed = cj.vm_destroyed || (c.vm && !std::binary_search(st.vms.begin(), st.vms.end(), *c.vm));
		for (const mf::ContextParam &p : cj.params) {
			std::string why;
			if (!add_param(c, p, &why))
				degraded->push_back("context " + num(c.id) + ": " + why);
		}
		st.contexts.push_back(std::move(c));
	}
	std::sort(st.contexts.begin(), st.contexts.end(),
		  [](const I915Context &a, const I915Context &b) { return a.id < b.id; });
	return st;
}

} // namespace gwcriu
