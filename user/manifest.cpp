// The manifest: the model's JSON form (schema gpuwatch.manifest/v1), its reader and
// validator (for `gpuwatch show` and the CRIU side) and the `show` text.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <iterator>
#include <sstream>
#include <sys/mman.h>
#include <unistd.h>

#include "model.hpp"
#include "sysutil.hpp"

namespace gw {
namespace {

using json = nlohmann::json;
constexpr const char *kSchema = "gpuwatch.manifest/v1";


json opt(std::optional<uint64_t> v) { return v ? json(*v) : json(nullptr); }

} // namespace

// f_flags as text: the access mode, then the status flags that survive open and matter
// when the file is reopened. O_CLOEXEC is per fd; O_LARGEFILE is forced on 64-bit.
std::string flags_string(uint32_t f) {
	std::string s = (f & O_ACCMODE) == O_RDONLY ? "O_RDONLY" : (f & O_ACCMODE) == O_WRONLY ? "O_WRONLY" : "O_RDWR";
	static const std::pair<uint32_t, const char *> bits[] = {
		{O_NONBLOCK, "O_NONBLOCK"}, {O_APPEND, "O_APPEND"}, {O_SYNC, "O_SYNC"}, {O_DSYNC, "O_DSYNC"},
		{O_ASYNC, "O_ASYNC"}, {O_DIRECT, "O_DIRECT"}, {O_NOATIME, "O_NOATIME"}, {O_PATH, "O_PATH"},
	};
	for (auto [bit, name] : bits) {
		if ((f & bit) != bit)
			continue;
		s += '|';
		s += name;
		if (bit == O_SYNC)
			f &= ~O_DSYNC; // O_SYNC includes O_DSYNC's bit
	}
	return s;
}

// --- building ----------------------------------------------------------------------------
nlohmann::json Model::manifest() const {
	std::map<uint64_t, uint32_t> names; // object -> flink name
	for (const auto &[key, obj] : flinks_)
		names.emplace(obj, key.second);
	auto object_size = [&](uint64_t obj) {
		auto it = objects_.find(obj);
		return it == objects_.end() ? uint64_t{0} : it->second.size;
	};
	// The handle of `obj` in `f`: the one the mapping's offset grant names, else the lowest.
	auto handle_of = [&](const DrmFile &f, uint64_t obj, uint64_t offset) -> std::optional<uint64_t> {
		if (auto g = f.mmap_offsets.upper_bound(offset); g != f.mmap_offsets.begin()) {
			auto h = f.handles.find(std::prev(g)->second);
			if (h != f.handles.end() && h->second.object == obj)
				return h->first;
		}
		for (const auto &[n, h] : f.handles)
			if (h.object == obj)
				return n;
		return std::nullopt;
	};

	json files = json::array();
	std::vector<std::string> reasons;
	std::vector<const DrmFile *> by_id;
	for (const auto &[k, f] : files_)
		by_id.push_back(&f);
	std::sort(by_id.begin(), by_id.end(), [](auto *a, auto *b) { return a->id < b->id; });
	for (const DrmFile *f : by_id) {
		if (!f->handles_known)
			reasons.push_back("file " + std::to_string(f->id) + " (" + (f->path.empty() ? "node unknown" : f->path) +
			                  ") was in use before tracing saw it opened: its handle table is partial");
		// each handle's fake offsets, ascending: one pass over the grants, not one per handle
		std::map<uint32_t, std::vector<uint64_t>> grants;
		const std::vector<uint64_t> no_grants;
		for (const auto &[off, hn] : f->mmap_offsets)
			grants[hn].push_back(off);
		json handles = json::array();
		for (const auto &[n, h] : f->handles) {
			auto g = grants.find(n);
			const std::vector<uint64_t> &mine = g != grants.end() ? g->second : no_grants;
			json offsets = json::array();
			for (uint64_t off : mine)
				offsets.push_back(off);
			auto name = names.find(h.object);
			json params = h.params();
			json hj = {{"handle", n}, {"size", object_size(h.object)}, {"origin", std::string(h.origin())},
			           {"object", h.object}, {"params", params.is_null() ? json::object() : std::move(params)},
			           {"imports", h.imports()},
			           {"flink_name", name != names.end() ? json(name->second) : json(nullptr)},
			           {"mmap_offsets", offsets}};
			json types = json::object();
			for (uint64_t off : mine)
				if (auto t = f->mmap_types.find(off); t != f->mmap_types.end())
					types[std::to_string(off)] = t->second;
			if (!types.empty())
				hj["mmap_types"] = types;           // fake offset -> i915 mmap type
			json attrs = h.attrs();
			if (attrs.contains("tiling"))
				hj["tiling"] = attrs["tiling"];
			if (attrs.contains("caching"))
				hj["caching"] = attrs["caching"];
			handles.push_back(std::move(hj));
		}
		json syncobjs = json::array(), caps = json::array();
		for (const auto &[h, flags] : f->syncobjs)
			syncobjs.push_back({{"handle", h}, {"flags", flags}});
		for (const auto &[cap, value] : f->caps)
			caps.push_back({{"capability", cap}, {"value", value}});
		json contexts = json::array(), vms = json::array(), queues = json::array();
		for (const auto &[id, c] : f->contexts) {
			json cj = {{"id", id}, {"flags", c.flags}, {"vm", c.vm ? json(*c.vm) : json(nullptr)},
			           {"params", c.params}};
			if (c.vm && !f->vms.count(*c.vm))
				cj["vm_destroyed"] = true; // the context keeps the VM; its id is gone
			if (c.truncated)
				cj["truncated"] = true;
			contexts.push_back(std::move(cj));
		}
		for (const auto &[id, vm] : f->vms) {
			json binds = json::array();
			for (const auto &[addr, b] : vm.bindings) {
				json bj = {{"addr", b.addr}, {"range", b.range}, {"pat_index", b.pat_index}, {"flags", b.flags}};
				if (b.userptr) {
					bj["userptr"] = b.offset;
				} else {
					auto h = f->handles.find(b.handle);
					bj["handle"] = h != f->handles.end() && h->second.object == b.object ? json(b.handle) : json(nullptr);
					bj["object"] = b.object ? json(b.object) : json(nullptr); // NULL (sparse) bindings have none
					bj["offset"] = b.offset;
				}
				binds.push_back(std::move(bj));
			}
			vms.push_back({{"id", id}, {"flags", vm.flags}, {"params", vm.params}, {"bindings", binds}});
		}
		for (const auto &[id, q] : f->exec_queues)
			queues.push_back({{"id", id}, {"vm", q.vm}, {"flags", q.flags}, {"width", q.width},
			                  {"num_placements", q.num_placements}, {"instances", q.instances}, {"params", q.params}});
		json fj = {{"id", f->id}, {"path", f->path},
		           {"rdev", std::to_string(f->major) + ":" + std::to_string(f->minor)},
		           {"driver", f->driver}, {"flags", flags_string(f->f_flags)}, {"f_flags", f->f_flags},
		           {"handles_known", f->handles_known}, {"handles", handles},
		           {"syncobjs", syncobjs}, {"caps", caps}};
		// driver state, present for the drivers that have it
		if (!contexts.empty() || f->driver == "i915")
			fj["contexts"] = contexts;
		if (!vms.empty() || f->driver == "i915" || f->driver == "xe")
			fj["vms"] = vms;
		if (!queues.empty() || f->driver == "xe")
			fj["exec_queues"] = queues;
		files.push_back(std::move(fj));
	}

	json procs = json::array();
	for (const auto &[pid, p] : procs_) {
		reasons.insert(reasons.end(), p.incomplete.begin(), p.incomplete.end());
		if (p.fds.empty() && p.mmaps.empty())
			continue;
		json fds = json::array(), mmaps = json::array();
		for (const auto &[fd, e] : p.fds) {
			if (e.other) {
				auto o = others_.find(e.kfile);
				json origin = o != others_.end() ? o->second.origin : json(nullptr);
				fds.push_back({{"fd", fd}, {e.other == GW_FILE_SYNC ? "sync_file" : "i915_perf", {{"origin", origin}}},
				               {"cloexec", e.cloexec}});
				continue;
			}
			if (!e.dmabuf) {
				if (auto f = files_.find(e.kfile); f != files_.end())
					fds.push_back({{"fd", fd}, {"file", f->second.id}, {"cloexec", e.cloexec}});
				continue;
			}
			std::optional<uint64_t> file, handle, object;
			if (auto d = dmabufs_.find(e.kfile); d != dmabufs_.end()) {
				object = d->second.object;
				if (auto f = files_.find(d->second.exporter_kfile); f != files_.end()) {
					file = f->second.id;
					auto h = f->second.handles.find(d->second.exporter_handle);
					if (h != f->second.handles.end() && h->second.object == d->second.object)
						handle = h->first;
				}
			}
			fds.push_back({{"fd", fd}, {"dmabuf", {{"file", opt(file)}, {"handle", opt(handle)}, {"object", opt(object)}}},
			               {"cloexec", e.cloexec}});
		}
		for (const auto &[start, mp] : p.mmaps) {
			auto fit = files_.find(mp.kfile);
			if (fit == files_.end())
				continue; // cannot happen: a mapping keeps its file
			const DrmFile &f = fit->second;
			std::optional<uint64_t> handle = mp.object ? handle_of(f, *mp.object, mp.offset) : std::nullopt;
			mmaps.push_back({{"start", mp.start}, {"length", mp.length}, {"prot", prot_string(mp.prot)},
			                 {"shared", mp.shared}, {"file", f.id}, {"offset", mp.offset},
			                 {"handle", opt(handle)}, {"object", opt(mp.object)},
			                 {"via", std::string(mp.via.empty() ? "device" : mp.via)}});
		}
		procs.push_back({{"pid", pid}, {"comm", p.comm}, {"fds", fds}, {"mmaps", mmaps}});
	}

	json objects = json::array();
	std::vector<std::pair<uint64_t, const GemObject *>> objs; // by id: the table is unordered
	for (const auto &[id, o] : objects_)
		objs.emplace_back(id, &o);
	std::sort(objs.begin(), objs.end());
	for (const auto &[id, op] : objs) {
		const GemObject &o = *op;
		auto name = names.find(id);
		objects.push_back({{"id", id}, {"size", o.size},
		                   {"flink_name", name != names.end() ? json(name->second) : json(nullptr)}});
	}

	if (lost_events_)
		reasons.push_back(std::to_string(lost_events_) + " events lost (ring buffer full)");
	if (failed_reads_)
		reasons.push_back(std::to_string(failed_reads_) + " kernel reads failed");
	if (malformed_)
		reasons.push_back(std::to_string(malformed_) + " malformed records");
	reasons.insert(reasons.end(), incomplete_.begin(), incomplete_.end());

	return {{"schema", kSchema}, {"cgroup", cgroup_}, {"complete", reasons.empty()},
	        {"incomplete_reasons", reasons}, {"generation", generation_}, {"lost_events", lost_events_},
	        {"failed_reads", failed_reads_}, {"malformed_records", malformed_}, {"processes", procs},
	        {"files", files}, {"objects", objects}};
}

// --- validating --------------------------------------------------------------------------
namespace {

enum class Want { string, boolean, unsigned_int, unsigned_or_null, array, object };

const char *want_name(Want w) {
	switch (w) {
	case Want::string: return "a string";
	case Want::boolean: return "a boolean";
	case Want::unsigned_int: return "an unsigned integer";
	case Want::unsigned_or_null: return "an unsigned integer or null";
	case Want::array: return "an array";
	case Want::object: return "an object";
	}
	return "?";
}

const char *type_name(const json &v) {
	if (v.is_number_integer())
		return v.get<int64_t>() < 0 && !v.is_number_unsigned() ? "a negative integer" : "an unsigned integer";
	if (v.is_number_float())
		return "a fractional number";
	switch (v.type()) {
	case json::value_t::null: return "null";
	case json::value_t::string: return "a string";
	case json::value_t::boolean: return "a boolean";
	case json::value_t::array: return "an array";
	case json::value_t::object: return "an object";
	default: return "something else";
	}
}

bool is_unsigned(const json &v) {
	return v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
}

bool matches(const json &v, Want w) {
	switch (w) {
	case Want::string: return v.is_string();
	case Want::boolean: return v.is_boolean();
	case Want::unsigned_int: return is_unsigned(v);
	case Want::unsigned_or_null: return is_unsigned(v) || v.is_null();
	case Want::array: return v.is_array();
	case Want::object: return v.is_object();
	}
	return false;
}

// `obj`[`key`], which must exist and be of kind `w`; `where` is the path of `obj` ("" for
// the top, "processes[2]" for an element).
const json &need(const json &obj, const std::string &where, const char *key, Want w) {
	std::string path = where.empty() ? key : where + "." + key;
	auto it = obj.find(key);
	if (it == obj.end())
		throw ManifestError("missing field " + path);
	if (!matches(*it, w))
		throw ManifestError("field " + path + " is " + type_name(*it) + ", expected " + want_name(w));
	return *it;
}

std::string at(const std::string &where, const char *key, std::size_t i) {
	return (where.empty() ? std::string(key) : where + "." + key) + "[" + std::to_string(i) + "]";
}

void check_element(const json &v, const std::string &path) {
	if (!v.is_object())
		throw ManifestError("field " + path + " is " + type_name(v) + ", expected an object");
}

void check_file_ref(const json &v, const std::set<uint64_t> &ids, const std::string &path) {
	if (is_unsigned(v) && !ids.count(v.get<uint64_t>()))
		throw ManifestError("field " + path + " is " + std::to_string(v.get<uint64_t>()) +
		                    ", which names no entry of files");
}

} // namespace

void validate_manifest(const nlohmann::json &m) {
	if (!m.is_object())
		throw ManifestError("the manifest is " + std::string(type_name(m)) + ", expected an object");
	const json &schema = need(m, "", "schema", Want::string);
	if (schema != kSchema)
		throw ManifestError("schema is '" + schema.get<std::string>() + "', expected " + kSchema);
	need(m, "", "cgroup", Want::string);
	need(m, "", "complete", Want::boolean);
	need(m, "", "lost_events", Want::unsigned_int);
	if (m.contains("hooks")) { /* the daemon's hook path per group; older manifests lack it */
		for (const auto &[group, path] : need(m, "", "hooks", Want::object).items())
			if (!path.is_string())
				throw ManifestError("field hooks." + group + " is " + type_name(path) + ", expected a string");
	}
	const json &files = need(m, "", "files", Want::array);
	const json &procs = need(m, "", "processes", Want::array);

	std::set<uint64_t> ids;
	for (std::size_t i = 0; i < files.size(); ++i) {
		std::string w = at("", "files", i);
		check_element(files[i], w);
		uint64_t id = need(files[i], w, "id", Want::unsigned_int).get<uint64_t>();
		if (!ids.insert(id).second)
			throw ManifestError("field " + w + ".id is " + std::to_string(id) + ", already used by another file");
		for (const char *k : {"path", "rdev", "driver", "flags"})
			need(files[i], w, k, Want::string);
		const json &handles = need(files[i], w, "handles", Want::array);
		for (std::size_t j = 0; j < handles.size(); ++j) {
			std::string wh = at(w, "handles", j);
			check_element(handles[j], wh);
			need(handles[j], wh, "handle", Want::unsigned_int);
			need(handles[j], wh, "size", Want::unsigned_int);
			need(handles[j], wh, "origin", Want::string);
			need(handles[j], wh, "object", Want::unsigned_int);
		}
		// driver state (optional: absent for drivers without it and in older manifests)
		for (const char *k : {"contexts", "vms", "exec_queues"}) {
			if (!files[i].contains(k))
				continue;
			const json &list = need(files[i], w, k, Want::array);
			for (std::size_t j = 0; j < list.size(); ++j) {
				std::string we = at(w, k, j);
				check_element(list[j], we);
				need(list[j], we, "id", Want::unsigned_int);
				if (std::string(k) == "contexts")
					need(list[j], we, "vm", Want::unsigned_or_null);
				if (std::string(k) == "vms")
					need(list[j], we, "bindings", Want::array);
			}
		}
	}
	for (std::size_t i = 0; i < procs.size(); ++i) {
		std::string w = at("", "processes", i);
		check_element(procs[i], w);
		need(procs[i], w, "pid", Want::unsigned_int);
		need(procs[i], w, "comm", Want::string);
		const json &fds = need(procs[i], w, "fds", Want::array);
		const json &mmaps = need(procs[i], w, "mmaps", Want::array);
		for (std::size_t j = 0; j < fds.size(); ++j) {
			std::string wf = at(w, "fds", j);
			check_element(fds[j], wf);
			need(fds[j], wf, "fd", Want::unsigned_int);
			need(fds[j], wf, "cloexec", Want::boolean);
			if (fds[j].contains("sync_file") || fds[j].contains("i915_perf")) {
				need(fds[j], wf, fds[j].contains("sync_file") ? "sync_file" : "i915_perf", Want::object);
			} else if (fds[j].contains("dmabuf")) {
				const json &d = need(fds[j], wf, "dmabuf", Want::object);
				check_file_ref(need(d, wf + ".dmabuf", "file", Want::unsigned_or_null), ids, wf + ".dmabuf.file");
				need(d, wf + ".dmabuf", "handle", Want::unsigned_or_null);
			} else {
				check_file_ref(need(fds[j], wf, "file", Want::unsigned_int), ids, wf + ".file");
			}
		}
		for (std::size_t j = 0; j < mmaps.size(); ++j) {
			std::string wm = at(w, "mmaps", j);
			check_element(mmaps[j], wm);
			for (const char *k : {"start", "length", "offset"})
				need(mmaps[j], wm, k, Want::unsigned_int);
			need(mmaps[j], wm, "prot", Want::string);
			need(mmaps[j], wm, "shared", Want::boolean);
			check_file_ref(need(mmaps[j], wm, "file", Want::unsigned_int), ids, wm + ".file");
			need(mmaps[j], wm, "handle", Want::unsigned_or_null);
		}
	}
}

nlohmann::json read_manifest_file(const std::string &path) {
	int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		throw ManifestError("cannot read " + path + ": " + std::strerror(errno));
	std::string text;
	char buf[65536];
	for (;;) {
		ssize_t n = ::read(fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = errno;
			::close(fd);
			throw ManifestError("cannot read " + path + ": " + std::strerror(err));
		}
		if (n == 0)
			break;
		text.append(buf, static_cast<std::size_t>(n));
	}
	::close(fd);
	json m;
	try {
		m = json::parse(text);
	} catch (const json::parse_error &e) {
		throw ManifestError(path + ": not valid JSON at byte " + std::to_string(e.byte));
	}
	try {
		validate_manifest(m);
	} catch (const ManifestError &e) {
		throw ManifestError(path + ": " + e.what());
	}
	return m;
}

// --- the `gpuwatch show` text ---------------------------------------------------------
namespace {

std::string num(const json &v) {
	if (is_unsigned(v))
		return std::to_string(v.get<uint64_t>());
	if (v.is_number_integer())
		return std::to_string(v.get<int64_t>());
	return "?";
}

std::string hex(const json &v) {
	if (!is_unsigned(v))
		return "?";
	std::ostringstream s;
	s << "0x" << std::hex << v.get<uint64_t>();
	return s.str();
}

std::string str(const json &obj, const char *key) {
	auto it = obj.find(key);
	return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string("?");
}

const json &get(const json &obj, const char *key) {
	static const json null;
	auto it = obj.find(key);
	return it == obj.end() ? null : *it;
}

std::string plural(std::size_t n, const char *one, const char *many) {
	return std::to_string(n) + " " + (n == 1 ? one : many);
}

} // namespace

std::string format_manifest_summary(const nlohmann::json &m) {
	std::ostringstream out;
	const json &procs = get(m, "processes"), &files = get(m, "files");
	std::size_t np = procs.is_array() ? procs.size() : 0, nf = files.is_array() ? files.size() : 0;
	bool complete = get(m, "complete").is_boolean() && get(m, "complete").get<bool>();
	out << "cgroup " << str(m, "cgroup") << ": " << plural(np, "process", "processes") << ", "
	    << plural(nf, "file", "files") << ", " << (complete ? "complete" : "INCOMPLETE") << "\n";
	if (const json &r = get(m, "incomplete_reasons"); r.is_array())
		for (const json &reason : r)
			out << "  incomplete: " << (reason.is_string() ? reason.get<std::string>() : "?") << "\n";

	std::map<uint64_t, std::string> paths;
	for (std::size_t i = 0; i < nf; ++i)
		if (is_unsigned(get(files[i], "id")))
			paths[get(files[i], "id").get<uint64_t>()] = str(files[i], "path");
	auto file_ref = [&](const json &id) {
		if (!is_unsigned(id))
			return std::string("unknown file");
		auto p = paths.find(id.get<uint64_t>());
		return "file " + num(id) + (p != paths.end() ? " " + p->second : "");
	};

	for (std::size_t i = 0; i < np; ++i) {
		const json &p = procs[i], &fds = get(p, "fds"), &mmaps = get(p, "mmaps");
		std::size_t nfd = fds.is_array() ? fds.size() : 0, nmm = mmaps.is_array() ? mmaps.size() : 0;
		out << "\nprocess " << num(get(p, "pid")) << " (" << str(p, "comm") << "): " << plural(nfd, "fd", "fds") << ", "
		    << plural(nmm, "mapping", "mappings") << "\n";
		for (std::size_t j = 0; j < nfd; ++j) {
			const json &fd = fds[j], &d = get(fd, "dmabuf");
			out << "  fd " << num(get(fd, "fd")) << ": ";
			if (d.is_object())
				out << "dma-buf of " << file_ref(get(d, "file")) << " handle "
				    << (get(d, "handle").is_null() ? "unknown" : num(get(d, "handle")));
			else if (get(fd, "sync_file").is_object() || get(fd, "i915_perf").is_object()) {
				bool sync = get(fd, "sync_file").is_object();
				const json &o = get(get(fd, sync ? "sync_file" : "i915_perf"), "origin");
				out << (sync ? "out-fence (sync_file)" : "i915 perf stream");
				if (o.is_object())
					out << " from " << str(o, "ioctl") << " on " << file_ref(get(o, "file"));
			} else
				out << file_ref(get(fd, "file"));
			out << (get(fd, "cloexec") == true ? " cloexec" : "") << "\n";
		}
		for (std::size_t j = 0; j < nmm; ++j) {
			const json &mp = mmaps[j];
			uint64_t start = is_unsigned(get(mp, "start")) ? get(mp, "start").get<uint64_t>() : 0;
			uint64_t len = is_unsigned(get(mp, "length")) ? get(mp, "length").get<uint64_t>() : 0;
			std::string prot = str(mp, "prot");
			out << "  map " << hex(json(start)) << "-" << hex(json(start + len)) << " "
			    << (prot.empty() ? "---" : prot) << (get(mp, "shared") == true ? " shared " : " private ")
			    << file_ref(get(mp, "file")) << " offset " << hex(get(mp, "offset")) << " handle "
			    << (get(mp, "handle").is_null() ? "none" : num(get(mp, "handle")));
			if (std::string via = str(mp, "via"); via != "device" && via != "?")
				out << " via " << via;
			out << "\n";
		}
	}

	for (std::size_t i = 0; i < nf; ++i) {
		const json &f = files[i], &handles = get(f, "handles");
		std::size_t nh = handles.is_array() ? handles.size() : 0;
		std::map<std::string, uint64_t> objects; // distinct objects: shared buffers count once
		for (std::size_t j = 0; j < nh; ++j)
			if (is_unsigned(get(handles[j], "size")))
				objects[num(get(handles[j], "object"))] = get(handles[j], "size").get<uint64_t>();
		uint64_t total = 0;
		for (const auto &[o, size] : objects)
			total += size;
		out << "\nfile " << num(get(f, "id")) << ": " << str(f, "path") << " (" << str(f, "rdev") << ") driver "
		    << str(f, "driver") << " " << str(f, "flags") << ": " << plural(nh, "handle", "handles") << ", " << total
		    << " bytes" << (get(f, "handles_known") == false ? " (handles before tracing unknown)" : "") << "\n";
		for (std::size_t j = 0; j < nh; ++j) {
			const json &h = handles[j];
			out << "  handle " << num(get(h, "handle")) << ": " << num(get(h, "size")) << " bytes, "
			    << str(h, "origin") << ", object " << num(get(h, "object"));
			if (is_unsigned(get(h, "imports")) && get(h, "imports").get<uint64_t>() > 0)
				out << ", re-imported " << num(get(h, "imports")) << "x";
			const json &pr = get(h, "params"), &t = get(h, "tiling");
			if (get(pr, "placements").is_array() && !get(pr, "placements").empty()) {
				out << ", placements";
				for (const json &pl : get(pr, "placements"))
					out << " " << str(pl, "class") << ":" << num(get(pl, "instance"));
			}
			if (!get(pr, "pat_index").is_null())
				out << ", pat " << num(get(pr, "pat_index"));
			if (!get(pr, "user_ptr").is_null())
				out << ", user memory at " << hex(get(pr, "user_ptr"));
			if (t.is_object())
				out << ", tiling " << str(t, "mode") << " stride " << num(get(t, "stride"));
			out << "\n";
		}
		for (const json &c : get(f, "contexts").is_array() ? get(f, "contexts") : json::array()) {
			out << "  context " << num(get(c, "id")) << ": vm "
			    << (get(c, "vm").is_null() ? "own" : num(get(c, "vm")));
			if (get(c, "params").is_object())
				for (const auto &[k, v] : get(c, "params").items())
					out << ", " << k << " " << v.dump();
			out << "\n";
		}
		for (const json &vm : get(f, "vms").is_array() ? get(f, "vms") : json::array()) {
			const json &b = get(vm, "bindings");
			out << "  vm " << num(get(vm, "id")) << ": flags " << hex(get(vm, "flags")) << ", "
			    << plural(b.is_array() ? b.size() : 0, "binding", "bindings") << "\n";
			for (const json &bj : b.is_array() ? b : json::array())
				out << "    bind " << hex(get(bj, "addr")) << " +" << hex(get(bj, "range")) << " "
				    << (get(bj, "userptr").is_null() ? "handle " + (get(bj, "handle").is_null() ? std::string("closed") : num(get(bj, "handle"))) +
				                                           " offset " + hex(get(bj, "offset"))
				                                     : "userptr " + hex(get(bj, "userptr")))
				    << "\n";
		}
		for (const json &q : get(f, "exec_queues").is_array() ? get(f, "exec_queues") : json::array())
			out << "  exec queue " << num(get(q, "id")) << ": vm " << num(get(q, "vm")) << ", width "
			    << num(get(q, "width")) << ", " << num(get(q, "num_placements")) << " placements\n";
	}
	return out.str();
}

std::string serialize_manifest(const nlohmann::json &m)
{
	return m.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

} // namespace gw
