// Typed views of the driver-defined values a manifest keeps as recorded JSON (creation
// parameters, context parameters, queue properties, fence origins): lenient, what does not
// fit stays unset. The reader fills them (fill_views); the writer never reads them.
#include "manifest.hpp"
#include "json_reader.hpp"

#include <climits>
#include <cstdio>

namespace gw
{
namespace manifest
{
namespace
{

using json = nlohmann::json;
using jsonin::is_unsigned;

// --- typed views of driver-defined values (lenient: what does not fit stays unset) ---------
std::optional<uint64_t> unsigned_of(const json &o, const char *key)
{
	if (!o.is_object())
		return std::nullopt;
	auto it = o.find(key);
	return it != o.end() && is_unsigned(*it) ? std::optional<uint64_t>(it->get<uint64_t>()) : std::nullopt;
}

std::optional<uint32_t> u32_of(const json &o, const char *key)
{
	auto v = unsigned_of(o, key);
	return v && *v <= UINT32_MAX ? std::optional<uint32_t>(static_cast<uint32_t>(*v)) : std::nullopt;
}

const json &member(const json &o, const char *key)
{
	static const json null;
	if (!o.is_object())
		return null;
	auto it = o.find(key);
	return it == o.end() ? null : *it;
}

CreateParams create_params_of(const json &p)
{
	CreateParams c;
	c.flags = u32_of(p, "flags");
	c.protected_content = member(p, "protected") == true;
	c.pat_index = u32_of(p, "pat_index");
	if (member(p, "placements").is_array())
		for (const json &r : member(p, "placements")) {
			Placement pl;
			if (member(r, "class").is_string())
				pl.memory_class = member(r, "class").get<std::string>();
			if (auto i = unsigned_of(r, "instance"); i && *i <= UINT16_MAX)
				pl.instance = static_cast<uint16_t>(*i);
			c.placements.push_back(std::move(pl));
		}
	c.user_ptr = unsigned_of(p, "user_ptr");
	c.placement = u32_of(p, "placement");
	c.vm_id = u32_of(p, "vm_id");
	c.cpu_caching = u32_of(p, "cpu_caching");
	c.extensions = member(p, "properties").is_object() && !member(p, "properties").empty();
	return c;
}

std::optional<std::vector<uint8_t>> unhex(const json &v)
{
	if (!v.is_string())
		return std::nullopt;
	const std::string &s = v.get_ref<const std::string &>();
	if (s.size() % 2 != 0 || s.find_first_not_of("0123456789abcdef") != std::string::npos)
		return std::nullopt;
	std::vector<uint8_t> out;
	for (std::size_t i = 0; i < s.size(); i += 2)
		out.push_back(static_cast<uint8_t>(std::stoul(s.substr(i, 2), nullptr, 16)));
	return out;
}

void fill_param_view(ContextParam &p)
{
	const json &v = p.value;
	p.number.reset();
	if (v.is_number_unsigned())
		p.number = v.get<uint64_t>();
	else if (v.is_number_integer()) // negative priorities: the kernel takes the two's complement
		p.number = static_cast<uint64_t>(v.get<int64_t>());
	p.bytes = unhex(member(v, "bytes"));
	p.engines.reset();
	if (member(v, "engines").is_array()) {
		std::vector<Engine> l;
		bool whole = true;
		for (const json &e : member(v, "engines")) {
			auto c = unsigned_of(e, "class"), i = unsigned_of(e, "instance");
			whole = whole && c && i && *c <= UINT16_MAX && *i <= UINT16_MAX;
			if (whole)
				l.push_back({static_cast<uint16_t>(*c), static_cast<uint16_t>(*i)});
		}
		if (whole)
			p.engines = std::move(l);
	}
	p.extensions_not_recorded = member(v, "extensions_not_recorded") == true;
}

void fill_origin_view(FenceOrigin &f)
{
	const json &o = f.raw;
	f.properties.reset();
	if (member(o, "ioctl").is_string())
		f.ioctl = member(o, "ioctl").get<std::string>();
	f.file = unsigned_of(o, "file");
	f.complete = member(o, "complete") == true;
	f.flags = u32_of(o, "flags");
	if (member(o, "properties").is_array()) {
		f.properties.emplace();
		for (const json &p : member(o, "properties"))
			if (p.is_array() && p.size() == 2 && is_unsigned(p[0]) && is_unsigned(p[1]))
				f.properties->push_back({p[0].get<uint64_t>(), p[1].get<uint64_t>()});
	}
}

void fill_queue_view(ExecQueue &q)
{
	q.properties.clear();
	q.other_params.clear();
	for (const auto &[name, v] : q.params.items()) {
		unsigned long n = 0;
		int used = 0;
		if (name.rfind("property_", 0) == 0 && is_unsigned(v) &&
		    std::sscanf(name.c_str() + 9, "%lu%n", &n, &used) == 1 &&
		    name.size() == 9 + static_cast<std::size_t>(used) && n <= UINT32_MAX)
			q.properties.push_back({static_cast<uint32_t>(n), v.get<uint64_t>()});
		else
			q.other_params.push_back(name);
	}
}

} // namespace

void fill_views(Manifest &m)
{
	for (File &f : m.files) {
		for (Handle &h : f.handles)
			h.create = create_params_of(h.params);
		if (f.contexts)
			for (Context &c : *f.contexts)
				for (ContextParam &p : c.params)
					fill_param_view(p);
		if (f.exec_queues)
			for (ExecQueue &q : *f.exec_queues)
				fill_queue_view(q);
	}
	for (Process &p : m.processes)
		for (Fd &d : p.fds)
			fill_origin_view(d.origin);
}

} // namespace manifest
} // namespace gw
