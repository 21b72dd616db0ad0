#include "dump_i915.hpp"

#include <algorithm>
#include <i915_drm.h>
#include <cerrno>

#include "dump.hpp"

namespace gwcriu {
namespace {

using json = nlohmann::json;

std::string num(uint64_t v) { return std::to_string(v); }

bool u64_of(const json &v, uint64_t *out)
{
	if (v.is_number_unsigned()) {
		*out = v.get<uint64_t>();
		return true;
	}
	if (v.is_number_integer()) { // negative priorities: the kernel takes the two's complement
		*out = static_cast<uint64_t>(v.get<int64_t>());
		return true;
	}
	return false;
}

std::vector<uint8_t> unhex(const std::string &s, bool *ok)
{
	std::vector<uint8_t> out;
	*ok = s.size() % 2 == 0 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
	for (std::size_t i = 0; *ok && i < s.size(); i += 2)
		out.push_back(static_cast<uint8_t>(std::stoul(s.substr(i, 2), nullptr, 16)));
	return out;
}

// One manifest context parameter into c; false (with *why) when it cannot be recreated.
bool add_param(I915Context &c, const std::string &name, const json &v, std::string *why)
{
	auto n = i915::context_param_number(name);
	if (!n) {
		*why = "unknown parameter " + name;
		return false;
	}
	if (*n == I915_CONTEXT_PARAM_ENGINES) {
		if (!v.is_object() || !jget(v, "engines").is_array()) {
			*why = "engine map not recorded";
			return false;
		}
		i915::EngineList l;
		for (const json &e : jget(v, "engines"))
			l.push_back({jget(e, "class").get<uint16_t>(), jget(e, "instance").get<uint16_t>()});
		c.engines = std::move(l);
		if (jget(v, "extensions_not_recorded") == true) {
			*why = "engine map extensions (load balancing, bonding, parallel submission) were not recorded: "
			       "the engine map comes back without them";
			return false;
		}
		return true;
	}
	i915::CtxParam p;
	p.param = *n;
	if (u64_of(v, &p.value)) {
		c.params.push_back(std::move(p));
		return true;
	}
	if (v.is_object() && jget(v, "bytes").is_string()) {
		bool ok = false;
		p.data = unhex(jget(v, "bytes").get<std::string>(), &ok);
		if (ok && !p.data.empty() && p.data.size() <= 1024) {
			c.params.push_back(std::move(p));
			return true;
		}
	}
	*why = name + " was set with data gpuwatch did not capture";
	return false;
}

} // namespace

bool is_i915(const DeviceRec &d) { return d.driver == "i915"; }

bool i915_handle_exists(int fd, uint32_t n) { return i915::busy(fd, n) != -ENOENT; }

I915Buffer i915_buffer_of(const json &h, std::vector<std::string> *degraded)
{
	I915Buffer b;
	std::string origin = jget(h, "origin").is_string() ? jget(h, "origin").get<std::string>() : "";
	const json &p = jget(h, "params");
	std::string who = "handle " + (jget(h, "handle").is_number() ? num(jget(h, "handle").get<uint64_t>()) : "?");
	if (origin == "i915.gem_create") {
		b.kind = "create";
	} else if (origin == "i915.gem_create_ext") {
		b.kind = "create_ext";
		if (jget(p, "flags").is_number_unsigned())
			b.flags = jget(p, "flags").get<uint32_t>();
		b.protected_content = jget(p, "protected") == true;
		if (jget(p, "pat_index").is_number_unsigned())
			b.pat = jget(p, "pat_index").get<uint32_t>();
		for (const json &r : jget(p, "placements")) {
			auto c = jget(r, "class").is_string() ? i915::mem_class_number(jget(r, "class").get<std::string>())
			                                      : std::nullopt;
			if (!c || !jget(r, "instance").is_number_unsigned()) {
				degraded->push_back(who + ": a memory region of unknown class is left out of its placements");
				continue;
			}
			b.placements.push_back({*c, jget(r, "instance").get<uint16_t>()});
		}
	} else if (origin == "i915.userptr") {
		b.kind = "userptr";
		if (jget(p, "flags").is_number_unsigned())
			b.flags = jget(p, "flags").get<uint32_t>();
		if (jget(p, "user_ptr").is_number_unsigned())
			b.user_ptr = jget(p, "user_ptr").get<uint64_t>();
	}
	const json &t = jget(h, "tiling");
	if (t.is_object()) {
		auto mode = jget(t, "mode").is_string() ? i915::tiling_number(jget(t, "mode").get<std::string>()) : std::nullopt;
		if (mode && jget(t, "stride").is_number_unsigned())
			b.tiling = {{*mode, jget(t, "stride").get<uint32_t>()}};
		else
			degraded->push_back(who + ": tiling of an unknown mode is not reapplied");
	}
	if (jget(h, "caching").is_number_unsigned())
		b.caching = jget(h, "caching").get<uint32_t>();
	return b;
}

I915FileState i915_state_of(const json &mf, std::vector<std::string> *degraded)
{
	I915FileState st;
	for (const json &v : jget(mf, "vms"))
		if (jget(v, "id").is_number_unsigned())
			st.vms.push_back(jget(v, "id").get<uint32_t>());
	std::sort(st.vms.begin(), st.vms.end());
	for (const json &cj : jget(mf, "contexts")) {
		if (!jget(cj, "id").is_number_unsigned())
			continue;
		I915Context c;
		c.id = jget(cj, "id").get<uint32_t>();
		if (jget(cj, "flags").is_number_unsigned())
			c.flags = jget(cj, "flags").get<uint32_t>();
		if (jget(cj, "vm").is_number_unsigned())
			c.vm = jget(cj, "vm").get<uint32_t>();
		c.vm_destroyed = jget(cj, "vm_destroyed") == true ||
		                 (c.vm && !std::binary_search(st.vms.begin(), st.vms.end(), *c.vm));
		if (jget(cj, "params").is_object())
			for (const auto &[name, v] : jget(cj, "params").items()) {
				std::string why;
				if (!add_param(c, name, v, &why))
					degraded->push_back("context " + num(c.id) + ": " + why);
			}
		st.contexts.push_back(std::move(c));
	}
	std::sort(st.contexts.begin(), st.contexts.end(), [](const I915Context &a, const I915Context &b) { return a.id < b.id; });
	return st;
}

} // namespace gwcriu
