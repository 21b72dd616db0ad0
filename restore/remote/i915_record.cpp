// The conversion record gpuwatch-i915-maps.json: its JSON form and strict parser.
#include <map>
#include <set>
#include <sys/mman.h>

#include "i915_maps.hpp"
#include "manifest/json_reader.hpp"
#include "sysutil.hpp"

namespace gwremote
{

using nlohmann::json;

std::string prot_string(int prot)
{
	std::string s = gw::prot_string(static_cast<uint32_t>(prot));
	return s.empty() ? "none" : s;
}

const char *kind_name(MapKind k)
{
	return k == MapKind::Gem ? "gem" : "shmem";
}
const char *mode_name(MapMode m)
{
	return m == MapMode::Placeholder ? "placeholder" : "copy";
}

namespace
{

template <class T> json opt(const std::optional<T> &v)
{
	return v ? json(*v) : json(nullptr);
}

using gw::jsonin::Obj;

// an unsigned field within [min, max]
uint64_t ranged(const Obj &o, const char *key, uint64_t min, uint64_t max)
{
	uint64_t x = o.req_u64(key, max);
	if (x < min)
		o.fail(key, "is " + std::to_string(x) + ", less than " + std::to_string(min));
	return x;
}

// the same, or null
template <class T> std::optional<T> ranged_or_null(const Obj &o, const char *key, uint64_t min, uint64_t max)
{
	auto x = o.u64_or_null(key, true, max);
	if (x && *x < min)
		o.fail(key, "is " + std::to_string(*x) + ", less than " + std::to_string(min));
	return x ? std::optional<T>(static_cast<T>(*x)) : std::nullopt;
}

int parse_prot(const Obj &o, const char *key)
{
	std::string s = o.req_str(key, 8);
	if (s == "none")
		return PROT_NONE;
	static const std::map<std::string, int> ok = {{"r", PROT_READ},
						      {"w", PROT_WRITE},
						      {"x", PROT_EXEC},
						      {"rw", PROT_READ | PROT_WRITE},
						      {"rx", PROT_READ | PROT_EXEC},
						      {"wx", PROT_WRITE | PROT_EXEC},
						      {"rwx", PROT_READ | PROT_WRITE | PROT_EXEC}};
	auto it = ok.find(s);
	if (it == ok.end())
		o.fail(key, "is '" + s + "', not a protection (r, rw, rwx, ..., none)");
	return it->second;
}

constexpr uint64_t kPage = 4096;
constexpr uint64_t kUserTop = 1ULL << 56; // above any user address x86_64 has (5-level paging: 2^56)
constexpr uint64_t kPidMax = 4194304;     // PID_MAX_LIMIT on 64-bit

MapRecord parse_map(const Obj &o)
{
	o.only({"pid", "vpid", "start", "length", "prot", "kind", "mode", "offset", "fd", "file", "handle", "object",
		"mmap_type", "wc"});
	MapRecord m;
	m.pid = static_cast<uint32_t>(ranged(o, "pid", 1, kPidMax));
	m.vpid = static_cast<uint32_t>(ranged(o, "vpid", 1, kPidMax));
	m.start = ranged(o, "start", kPage, kUserTop);
	if (m.start % kPage)
		o.fail("start", "is not page-aligned");
	m.length = ranged(o, "length", kPage, kUserTop);
	if (m.length % kPage)
		o.fail("length", "is not a multiple of the page size");
	if (m.start + m.length > kUserTop)
		o.fail("length", "ends the mapping beyond the user address space");
	m.prot = parse_prot(o, "prot");
	std::string kind = o.req_str("kind", 16);
	if (kind == "gem")
		m.kind = MapKind::Gem;
	else if (kind == "shmem")
		m.kind = MapKind::Shmem;
	else
		o.fail("kind", "is '" + kind + "', neither gem nor shmem");
	std::string mode = o.req_str("mode", 16);
	if (mode == "placeholder")
		m.mode = MapMode::Placeholder;
	else if (mode == "copy")
		m.mode = MapMode::Copy;
	else
		o.fail("mode", "is '" + mode + "', neither placeholder nor copy");
	m.offset = o.req_u64("offset", UINT64_MAX - kPage);
	if (m.offset % kPage)
		o.fail("offset", "is not page-aligned");
	m.fd = ranged_or_null<int>(o, "fd", 0, INT32_MAX);
	m.file = ranged_or_null<uint32_t>(o, "file", 0, UINT32_MAX);
	m.handle = ranged_or_null<uint32_t>(o, "handle", 1, UINT32_MAX);
	m.object = ranged_or_null<uint64_t>(o, "object", 0, UINT64_MAX);
	if (!o.need("mmap_type").is_null()) {
		std::string s = o.req_str("mmap_type", 16);
		if (s != "gtt" && s != "wc" && s != "wb" && s != "uc" && s != "fixed")
			o.fail("mmap_type", "is '" + s + "', not an i915 mmap type (gtt, wc, wb, uc, fixed)");
		m.mmap_type = s;
	}
	m.wc = o.req_bool("wc");
	if (m.mode == MapMode::Placeholder) {
		if (!m.fd)
			o.fail("fd", "is null in a placeholder (nothing could map it back)");
		if (!m.handle)
			o.fail("handle", "is null in a placeholder (nothing could map it back)");
		if (!m.file)
			o.fail("file", "is null in a placeholder");
		if (m.kind == MapKind::Gem && m.offset < (1ULL << 32))
			o.fail("offset", "is below 4 GiB: not a GEM fake offset");
	}
	return m;
}

} // namespace

json to_json(const MapsRecord &r)
{
	json maps = json::array();
	for (const MapRecord &m : r.maps)
		maps.push_back({{"pid", m.pid},
				{"vpid", m.vpid},
				{"start", m.start},
				{"length", m.length},
				{"prot", prot_string(m.prot)},
				{"kind", kind_name(m.kind)},
				{"mode", mode_name(m.mode)},
				{"offset", m.offset},
				{"fd", opt(m.fd)},
				{"file", opt(m.file)},
				{"handle", opt(m.handle)},
				{"object", opt(m.object)},
				{"mmap_type", opt(m.mmap_type)},
				{"wc", m.wc}});
	return {{"schema", kMapsSchema},
		{"cgroup", r.cgroup},
		{"criu_pid", r.criu_pid},
		{"watcher_pid", opt(r.watcher_pid)},
		{"maps", maps}};
}

MapsRecord parse_maps_record(const std::string &text)
{
	try {
		json j = gw::jsonin::parse(text);
		Obj top(j, "");
		top.only({"schema", "cgroup", "criu_pid", "watcher_pid", "maps"});
		if (std::string s = top.req_str("schema", 64); s != kMapsSchema)
			top.fail("schema", "is '" + s + "', not " + kMapsSchema);
		MapsRecord r;
		r.cgroup = top.req_str("cgroup", 4096);
		if (r.cgroup.empty() || r.cgroup[0] != '/' || r.cgroup.find("/../") != std::string::npos ||
		    r.cgroup.find('\0') != std::string::npos)
			top.fail("cgroup", "is not an absolute path");
		r.criu_pid = static_cast<uint32_t>(ranged(top, "criu_pid", 1, kPidMax));
		r.watcher_pid = ranged_or_null<uint32_t>(top, "watcher_pid", 1, kPidMax);
		std::map<uint32_t, std::map<uint64_t, uint64_t>> seen; // pid -> start -> end
		top.each(top.req_array("maps"), "maps", [&](const Obj &o) {
			MapRecord m = parse_map(o);
			auto &mine = seen[m.pid];
			auto next = mine.lower_bound(m.start);
			if ((next != mine.end() && next->first < m.start + m.length) ||
			    (next != mine.begin() && std::prev(next)->second > m.start))
				o.fail("start", "overlaps another map of process " + std::to_string(m.pid));
			mine.emplace(m.start, m.start + m.length);
			r.maps.push_back(std::move(m));
		});
		return r;
	} catch (const gw::jsonin::FormatError &e) {
		throw gw::Error(std::string(kMapsRecordName) + ": " + e.what());
	}
}

} // namespace gwremote
