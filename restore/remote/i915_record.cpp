// The conversion record gpuwatch-i915-maps.json: its JSON form and strict parser.
#include <map>
#include <set>
#include <sys/mman.h>

#include "i915_maps.hpp"
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

[[noreturn]] void bad(const std::string &field, const std::string &why)
{
	throw gw::Error(std::string(kMapsRecordName) + ": field " + field + ": " + why);
}

const json &need(const json &o, const std::string &path, const char *key)
{
	auto it = o.find(key);
	if (it == o.end())
		bad(path + key, "missing");
	return *it;
}

uint64_t u64(const json &o, const std::string &path, const char *key, uint64_t min, uint64_t max)
{
	const json &v = need(o, path, key);
	if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
		bad(path + key, "not a non-negative integer");
	uint64_t x = v.get<uint64_t>();
	if (x < min || x > max)
		bad(path + key,
		    std::to_string(x) + " out of range [" + std::to_string(min) + ", " + std::to_string(max) + "]");
	return x;
}

template <class T>
std::optional<T> opt_u(const json &o, const std::string &path, const char *key, uint64_t min, uint64_t max)
{
	if (need(o, path, key).is_null())
		return std::nullopt;
	return static_cast<T>(u64(o, path, key, min, max));
}

std::string str(const json &o, const std::string &path, const char *key)
{
	const json &v = need(o, path, key);
	if (!v.is_string())
		bad(path + key, "not a string");
	return v.get<std::string>();
}

void only_keys(const json &o, const std::string &path, std::initializer_list<const char *> keys)
{
	std::set<std::string> known(keys.begin(), keys.end());
	for (auto it = o.begin(); it != o.end(); ++it)
		if (!known.count(it.key()))
			bad(path + it.key(), "unknown field");
}

int parse_prot(const std::string &s, const std::string &field)
{
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
		bad(field, "'" + s + "' is not a protection (r, rw, rwx, ..., none)");
	return it->second;
}

constexpr uint64_t kPage = 4096;
constexpr uint64_t kUserTop = 1ULL << 56; // above any user address x86_64 has (5-level paging: 2^56)
constexpr uint64_t kPidMax = 4194304;     // PID_MAX_LIMIT on 64-bit

MapRecord parse_map(const json &j, const std::string &p)
{
	if (!j.is_object())
		bad(p.substr(0, p.size() - 1), "not an object");
	only_keys(j, p,
		  {"pid", "vpid", "start", "length", "prot", "kind", "mode", "offset", "fd", "file", "handle", "object",
		   "mmap_type", "wc"});
	MapRecord m;
	m.pid = (uint32_t)u64(j, p, "pid", 1, kPidMax);
	m.vpid = (uint32_t)u64(j, p, "vpid", 1, kPidMax);
	m.start = u64(j, p, "start", kPage, kUserTop);
	if (m.start % kPage)
		bad(p + "start", "not page-aligned");
	m.length = u64(j, p, "length", kPage, kUserTop);
	if (m.length % kPage)
		bad(p + "length", "not a multiple of the page size");
	if (m.start + m.length > kUserTop)
		bad(p + "length", "the mapping ends beyond the user address space");
	m.prot = parse_prot(str(j, p, "prot"), p + "prot");
	std::string kind = str(j, p, "kind");
	if (kind == "gem")
		m.kind = MapKind::Gem;
	else if (kind == "shmem")
		m.kind = MapKind::Shmem;
	else
		bad(p + "kind", "'" + kind + "' is neither gem nor shmem");
	std::string mode = str(j, p, "mode");
	if (mode == "placeholder")
		m.mode = MapMode::Placeholder;
	else if (mode == "copy")
		m.mode = MapMode::Copy;
	else
		bad(p + "mode", "'" + mode + "' is neither placeholder nor copy");
	m.offset = u64(j, p, "offset", 0, UINT64_MAX - kPage);
	if (m.offset % kPage)
		bad(p + "offset", "not page-aligned");
	m.fd = opt_u<int>(j, p, "fd", 0, INT32_MAX);
	m.file = opt_u<uint32_t>(j, p, "file", 0, UINT32_MAX);
	m.handle = opt_u<uint32_t>(j, p, "handle", 1, UINT32_MAX);
	m.object = opt_u<uint64_t>(j, p, "object", 0, UINT64_MAX);
	const json &t = need(j, p, "mmap_type");
	if (!t.is_null()) {
		std::string s = str(j, p, "mmap_type");
		if (s != "gtt" && s != "wc" && s != "wb" && s != "uc" && s != "fixed")
			bad(p + "mmap_type", "'" + s + "' is not an i915 mmap type (gtt, wc, wb, uc, fixed)");
		m.mmap_type = s;
	}
	const json &wc = need(j, p, "wc");
	if (!wc.is_boolean())
		bad(p + "wc", "not a boolean");
	m.wc = wc.get<bool>();
	if (m.mode == MapMode::Placeholder) {
		if (!m.fd)
			bad(p + "fd", "null in a placeholder (nothing could map it back)");
		if (!m.handle)
			bad(p + "handle", "null in a placeholder (nothing could map it back)");
		if (!m.file)
			bad(p + "file", "null in a placeholder");
		if (m.kind == MapKind::Gem && m.offset < (1ULL << 32))
			bad(p + "offset", "below 4 GiB: not a GEM fake offset");
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
	json j = json::parse(text, nullptr, false);
	if (j.is_discarded())
		throw gw::Error(std::string(kMapsRecordName) + ": not valid JSON");
	if (!j.is_object())
		bad("(top)", "not an object");
	only_keys(j, "", {"schema", "cgroup", "criu_pid", "watcher_pid", "maps"});
	if (std::string s = str(j, "", "schema"); s != kMapsSchema)
		bad("schema", "'" + s + "' is not " + kMapsSchema);
	MapsRecord r;
	r.cgroup = str(j, "", "cgroup");
	if (r.cgroup.empty() || r.cgroup[0] != '/' || r.cgroup.find("/../") != std::string::npos ||
	    r.cgroup.find('\0') != std::string::npos)
		bad("cgroup", "not an absolute path");
	r.criu_pid = (uint32_t)u64(j, "", "criu_pid", 1, kPidMax);
	r.watcher_pid = opt_u<uint32_t>(j, "", "watcher_pid", 1, kPidMax);
	const json &maps = need(j, "", "maps");
	if (!maps.is_array())
		bad("maps", "not a list");
	std::map<uint32_t, std::map<uint64_t, uint64_t>> seen; // pid -> start -> end
	for (std::size_t i = 0; i < maps.size(); i++) {
		std::string p = "maps[" + std::to_string(i) + "].";
		MapRecord m = parse_map(maps[i], p);
		auto &mine = seen[m.pid];
		auto next = mine.lower_bound(m.start);
		if ((next != mine.end() && next->first < m.start + m.length) ||
		    (next != mine.begin() && std::prev(next)->second > m.start))
			bad(p + "start", "overlaps another map of process " + std::to_string(m.pid));
		mine.emplace(m.start, m.start + m.length);
		r.maps.push_back(std::move(m));
	}
	return r;
}

} // namespace gwremote
