// The manifest's reader: JSON -> types, validating while it converts (each error names the
// field's path); lookups; parse and read_file. The writer is writer.cpp, the typed views of
// driver-defined values views.cpp.
#include "manifest.hpp"
#include "json_reader.hpp"

#include <array>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <cstdio>
#include <fcntl.h>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace gw
{

// f_flags as text: the access mode, then the status flags that survive open and matter
// when the file is reopened. O_CLOEXEC is per fd; O_LARGEFILE is forced on 64-bit.
std::string flags_string(uint32_t f)
{
	std::string s = (f & O_ACCMODE) == O_RDONLY ? "O_RDONLY" : (f & O_ACCMODE) == O_WRONLY ? "O_WRONLY" : "O_RDWR";
	static const std::pair<uint32_t, const char *> bits[] = {
		{O_NONBLOCK, "O_NONBLOCK"}, {O_APPEND, "O_APPEND"}, {O_SYNC, "O_SYNC"},       {O_DSYNC, "O_DSYNC"},
		{O_ASYNC, "O_ASYNC"},       {O_DIRECT, "O_DIRECT"}, {O_NOATIME, "O_NOATIME"}, {O_PATH, "O_PATH"},
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

namespace manifest
{

std::string fourcc_text(uint32_t fourcc)
{
	std::string s;
	for (int i = 0; i < 4; ++i) {
		char c = static_cast<char>((fourcc >> (8 * i)) & 0xff);
		if (c < 0x20 || c > 0x7e) {
			char buf[16];
			std::snprintf(buf, sizeof buf, "0x%08x", fourcc);
			return buf;
		}
		s += c;
	}
	return s;
}

namespace
{

using json = nlohmann::json;
using jsonin::is_unsigned;
using jsonin::Obj;
using jsonin::type_name;
using jsonin::wrong;

// --- reading, entity by entity ------------------------------------------------------------
Handle read_handle(const Obj &o)
{
	Handle h;
	h.handle = o.req_u64("handle");
	h.size = o.req_u64("size");
	h.origin = o.req_str("origin");
	h.object = o.req_u64("object");
	h.params = o.opt_object("params");
	h.imports = o.opt_u64("imports", 0);
	h.flink_name = o.u64_or_null("flink_name", false);
	if (const json *offs = o.opt_array("mmap_offsets"))
		for (std::size_t i = 0; i < offs->size(); ++i)
			h.mmap_offsets.push_back(jsonin::to_u64((*offs)[i], o.at("mmap_offsets", i)));
	for (const auto &[off, type] : o.opt_object("mmap_types").items()) {
		uint64_t n = 0;
		if (std::sscanf(off.c_str(), "%lu", &n) != 1 || std::to_string(n) != off || !type.is_string())
			throw ManifestError("field " + o.path("mmap_types") + "." + off +
					    " is not an offset's mmap type");
		h.mmap_types[n] = type.get<std::string>();
	}
	if (const json *t = o.find("tiling")) {
		Obj to(*t, o.path("tiling"));
		Tiling tl;
		tl.mode = to.opt_str("mode");
		if (const json *s = to.find("stride"); s && is_unsigned(*s) && s->get<uint64_t>() <= UINT32_MAX)
			tl.stride = s->get<uint32_t>();
		tl.swizzle = to.opt_u32("swizzle", 0);
		h.tiling = tl;
	}
	if (o.find("caching"))
		h.caching = o.req_u32("caching");
	h.host_uploaded = o.opt_bool("host_uploaded", false);
	return h;
}

Context read_context(const Obj &o)
{
	Context c;
	c.id = o.req_u64("id");
	c.flags = o.opt_u32("flags", 0);
	c.vm = o.u64_or_null("vm", true);
	c.vm_destroyed = o.opt_bool("vm_destroyed", false);
	c.truncated = o.opt_bool("truncated", false);
	for (const auto &[name, v] : o.opt_object("params").items())
		c.params.push_back({name, v});
	return c;
}

Binding read_binding(const Obj &o)
{
	Binding b;
	b.addr = o.req_u64("addr");
	b.range = o.req_u64("range");
	b.pat_index = o.opt_u32("pat_index", 0);
	b.flags = o.opt_u32("flags", 0);
	b.userptr = o.u64_or_null("userptr", false);
	b.handle = o.u64_or_null("handle", false);
	b.object = o.u64_or_null("object", false);
	b.offset = o.opt_u64("offset", 0);
	return b;
}

Vm read_vm(const Obj &o)
{
	Vm vm;
	vm.id = o.req_u64("id");
	vm.flags = o.opt_u32("flags", 0);
	vm.params = o.opt_object("params");
	o.each(o.req_array("bindings"), "bindings", [&](const Obj &b) { vm.bindings.push_back(read_binding(b)); });
	return vm;
}

// An array of N 32-bit integers written as `shape` ("[x, y, w, h]"): the first n_signed
// signed (a place on a CRTC), the rest unsigned
template <std::size_t N>
std::array<int64_t, N> read_ints(const Obj &o, const char *key, const char *shape, std::size_t n_signed)
{
	const json &v = o.need(key);
	if (!v.is_array() || v.size() != N)
		o.fail(key, std::string("is not ") + shape);
	std::array<int64_t, N> r{};
	for (std::size_t i = 0; i < N; ++i) {
		bool is_signed = i < n_signed;
		if (!v[i].is_number_integer() || (!is_signed && !is_unsigned(v[i])))
			o.fail(key, std::string("is not ") + shape + " of integers");
		int64_t n =
			v[i].is_number_unsigned() && v[i].get<uint64_t>() > INT64_MAX ? INT64_MAX : v[i].get<int64_t>();
		if (is_signed ? (n < INT32_MIN || n > INT32_MAX) : n > UINT32_MAX)
			o.fail(key, "is out of range");
		r[i] = n;
	}
	return r;
}

// [x, y] of signed 32-bit integers (a cursor's hotspot or position)
std::array<int32_t, 2> read_xy(const Obj &o, const char *key)
{
	auto xy = read_ints<2>(o, key, "[x, y]", 2);
	return {static_cast<int32_t>(xy[0]), static_cast<int32_t>(xy[1])};
}

Display read_display(const Obj &o)
{
	Display d;
	if (o.maybe("master"))
		d.master = o.req_bool("master");
	o.each(o.req_array("crtcs"), "crtcs", [&](const Obj &c) {
		DisplayCrtc dc;
		dc.crtc = c.req_u32("crtc");
		dc.fb = c.req_u32("fb");
		dc.configured = c.req_bool("configured");
		if (dc.configured) {
			dc.x = c.req_u32("x");
			dc.y = c.req_u32("y");
			dc.connectors = c.req_u32("connectors");
			if (std::optional<Obj> m = c.opt_object_at("mode"))
				dc.mode = DisplayMode{m->req_u32("clock"), m->req_u32("hdisplay"),
						      m->req_u32("vdisplay"), m->req_u32("vrefresh")};
		}
		d.crtcs.push_back(dc);
	});
	o.each(o.req_array("planes"), "planes", [&](const Obj &p) {
		auto at = read_ints<4>(p, "crtc_rect", "[x, y, w, h]", 2);
		auto src = read_ints<4>(p, "src_rect", "[x, y, w, h]", 0);
		d.planes.push_back({p.req_u32("plane"), p.req_u32("crtc"), p.req_u32("fb"), static_cast<int32_t>(at[0]),
				    static_cast<int32_t>(at[1]), static_cast<uint32_t>(at[2]),
				    static_cast<uint32_t>(at[3]), static_cast<uint32_t>(src[0]),
				    static_cast<uint32_t>(src[1]), static_cast<uint32_t>(src[2]),
				    static_cast<uint32_t>(src[3])});
	});
	if (const json *blobs = o.opt_array("blobs")) // absent in manifests of earlier versions
		o.each(*blobs, "blobs", [&](const Obj &b) {
			d.blobs.push_back({b.req_u32("id"), b.req_u32("length")});
		});
	if (const json *cursors = o.opt_array("cursors")) // absent in manifests of earlier versions
		o.each(*cursors, "cursors", [&](const Obj &c) {
			DisplayCursor dc;
			dc.crtc = c.req_u32("crtc");
			dc.handle = c.u32_or_null("handle", true);
			dc.object = c.u64_or_null("object", false);
			dc.width = c.req_u32("width");
			dc.height = c.req_u32("height");
			auto hot = read_xy(c, "hotspot");
			dc.hot_x = hot[0];
			dc.hot_y = hot[1];
			if (c.maybe("position"))
				dc.position = read_xy(c, "position");
			d.cursors.push_back(dc);
		});
	d.atomic_commits = o.opt_u64("atomic_commits", 0);
	return d;
}

ExecQueue read_queue(const Obj &o)
{
	ExecQueue q;
	q.id = o.req_u64("id");
	q.vm = o.opt_u64("vm", 0);
	q.flags = o.opt_u32("flags", 0);
	q.width = o.opt_u16("width");
	q.num_placements = o.opt_u16("num_placements");
	if (const json *list = o.opt_array("instances"))
		o.each(*list, "instances", [&](const Obj &e) {
			q.instances.push_back({e.opt_u16("class"), e.opt_u16("instance"), e.opt_u16("gt")});
		});
	q.params = o.opt_object("params");
	return q;
}

File read_file_entry(const Obj &o, std::set<uint64_t> &ids)
{
	File f;
	f.id = o.req_u64("id");
	if (!ids.insert(f.id).second)
		throw ManifestError("field " + o.path("id") + " is " + std::to_string(f.id) +
				    ", already used by another file");
	f.path = o.req_str("path");
	std::string rdev = o.req_str("rdev");
	f.driver = o.req_str("driver");
	f.flags = o.req_str("flags");
	unsigned major = 0, minor = 0;
	int used = 0;
	if (std::sscanf(rdev.c_str(), "%u:%u%n", &major, &minor, &used) != 2 ||
	    static_cast<std::size_t>(used) != rdev.size())
		throw ManifestError("field " + o.path("rdev") + " is '" + rdev + "', expected major:minor");
	f.major = major;
	f.minor = minor;
	f.f_flags = o.opt_u32("f_flags", 0);
	f.handles_known = o.opt_bool("handles_known", false);
	o.each(o.req_array("handles"), "handles", [&](const Obj &h) { f.handles.push_back(read_handle(h)); });
	if (const json *l = o.opt_array("syncobjs"))
		o.each(*l, "syncobjs", [&](const Obj &s) {
			f.syncobjs.push_back({s.req_u64("handle"), s.opt_u32("flags", 0)});
		});
	if (const json *l = o.opt_array("caps"))
		o.each(*l, "caps", [&](const Obj &c) {
			f.caps.push_back({c.req_u64("capability"), c.opt_u64("value", 0)});
		});
	if (o.opt_array("undecoded_ioctls"))
		f.undecoded_ioctls = o.req_strings("undecoded_ioctls");
	if (const json *l = o.opt_array("framebuffers"))
		o.each(*l, "framebuffers", [&](const Obj &b) {
			Framebuffer fb;
			fb.id = b.req_u64("id");
			fb.width = b.opt_u32("width", 0);
			fb.height = b.opt_u32("height", 0);
			fb.format = b.opt_str("format").value_or("");
			fb.pixel_format = b.opt_u32("pixel_format", 0);
			fb.flags = b.opt_u32("flags", 0);
			fb.bpp = b.opt_u32("bpp", 0);
			fb.depth = b.opt_u32("depth", 0);
			fb.modifiers_known = b.opt_bool("modifiers_known", true);
			b.each(b.req_array("planes"), "planes", [&](const Obj &p) {
				fb.planes.push_back({p.u64_or_null("handle", false), p.u64_or_null("object", false),
						     p.opt_u32("pitch", 0), p.opt_u32("offset", 0),
						     p.opt_u64("modifier", 0)});
			});
			f.framebuffers.push_back(std::move(fb));
		});
	if (std::optional<Obj> d = o.opt_object_at("display"))
		f.display = read_display(*d);
	if (const json *l = o.opt_array("contexts")) {
		f.contexts.emplace();
		o.each(*l, "contexts", [&](const Obj &c) { f.contexts->push_back(read_context(c)); });
	}
	if (const json *l = o.opt_array("vms")) {
		f.vms.emplace();
		o.each(*l, "vms", [&](const Obj &v) { f.vms->push_back(read_vm(v)); });
	}
	if (const json *l = o.opt_array("exec_queues")) {
		f.exec_queues.emplace();
		o.each(*l, "exec_queues", [&](const Obj &q) { f.exec_queues->push_back(read_queue(q)); });
	}
	return f;
}

void check_file_ref(std::optional<uint64_t> id, const std::set<uint64_t> &ids, const std::string &path)
{
	if (id && !ids.count(*id))
		throw ManifestError("field " + path + " is " + std::to_string(*id) + ", which names no entry of files");
}

Fd read_fd(const Obj &o, const std::set<uint64_t> &ids)
{
	Fd d;
	d.fd = o.req_u64("fd");
	d.cloexec = o.req_bool("cloexec");
	if (o.find("sync_file") || o.find("i915_perf")) {
		bool sync = o.find("sync_file") != nullptr;
		d.kind = sync ? Fd::Kind::sync_file : Fd::Kind::i915_perf;
		const char *key = sync ? "sync_file" : "i915_perf";
		Obj f(o.need(key), o.path(key));
		d.origin.raw = f.find("origin") ? *f.find("origin") : json();
	} else if (o.find("dmabuf")) {
		d.kind = Fd::Kind::dmabuf;
		Obj b(o.need("dmabuf"), o.path("dmabuf"));
		d.file = b.u64_or_null("file", true);
		check_file_ref(d.file, ids, b.path("file"));
		d.handle = b.u64_or_null("handle", true);
		d.object = b.u64_or_null("object", false);
	} else {
		d.kind = Fd::Kind::drm;
		d.file = o.req_u64("file");
		check_file_ref(d.file, ids, o.path("file"));
	}
	return d;
}

Mmap read_mmap(const Obj &o, const std::set<uint64_t> &ids)
{
	Mmap m;
	m.start = o.req_u64("start");
	m.length = o.req_u64("length");
	m.offset = o.req_u64("offset");
	m.prot = o.req_str("prot");
	m.shared = o.req_bool("shared");
	m.file = o.req_u64("file");
	check_file_ref(m.file, ids, o.path("file"));
	m.handle = o.u64_or_null("handle", true);
	m.object = o.u64_or_null("object", false);
	m.via = o.opt_str("via").value_or("device");
	return m;
}

} // namespace

// --- lookups ----------------------------------------------------------------------------
const Handle *File::find_handle(uint64_t n) const
{
	for (const Handle &h : handles)
		if (h.handle == n)
			return &h;
	return nullptr;
}

bool File::has_vm(uint64_t vm_id) const
{
	if (vms)
		for (const Vm &v : *vms)
			if (v.id == vm_id)
				return true;
	return false;
}

const Fd *Process::find_fd(uint64_t fd) const
{
	for (const Fd &d : fds)
		if (d.fd == fd)
			return &d;
	return nullptr;
}

const Mmap *Process::find_mmap(uint64_t start) const
{
	for (const Mmap &m : mmaps)
		if (m.start == start)
			return &m;
	return nullptr;
}

const File *Manifest::find_file(uint64_t id) const
{
	for (const File &f : files)
		if (f.id == id)
			return &f;
	return nullptr;
}

const Process *Manifest::find_process(uint64_t pid) const
{
	for (const Process &p : processes)
		if (p.pid == pid)
			return &p;
	return nullptr;
}

// --- JSON -> types --------------------------------------------------------------------------
namespace
{
Manifest read_manifest(const json &j)
{
	if (!j.is_object())
		throw ManifestError("the manifest is " + std::string(type_name(j)) + ", expected an object");
	Obj top(j, "");
	std::string schema = top.req_str("schema");
	if (schema != kSchema)
		throw ManifestError("schema is '" + schema + "', expected " + kSchema);
	Manifest m;
	m.cgroup = top.req_str("cgroup");
	m.complete = top.req_bool("complete");
	m.lost_events = top.req_u64("lost_events");
	if (top.find("hooks")) { // the daemon's hook path per group; older manifests lack it
		m.hooks.emplace();
		for (const auto &[group, path] : top.opt_object("hooks").items()) {
			if (!path.is_string())
				wrong("hooks." + group, path, "a string");
			(*m.hooks)[group] = path.get<std::string>();
		}
	}
	const json &files = top.req_array("files");
	const json &procs = top.req_array("processes");
	if (const json *r = top.opt_array("incomplete_reasons"))
		for (std::size_t i = 0; i < r->size(); ++i) {
			if (!(*r)[i].is_string())
				wrong(top.at("incomplete_reasons", i), (*r)[i], "a string");
			m.incomplete_reasons.push_back((*r)[i].get<std::string>());
		}
	m.generation = top.opt_u64("generation", 0);
	m.failed_reads = top.opt_u64("failed_reads", 0);
	m.malformed_records = top.opt_u64("malformed_records", 0);

	std::set<uint64_t> ids;
	top.each(files, "files", [&](const Obj &f) { m.files.push_back(read_file_entry(f, ids)); });
	top.each(procs, "processes", [&](const Obj &o) {
		Process p;
		p.pid = o.req_u64("pid");
		p.comm = o.req_str("comm");
		p.pid_ns = o.opt_u64("pid_ns", 0);
		p.ns_pid = o.opt_u64("ns_pid", 0, UINT32_MAX);
		const json &fds = o.req_array("fds");
		const json &mmaps = o.req_array("mmaps");
		o.each(fds, "fds", [&](const Obj &d) { p.fds.push_back(read_fd(d, ids)); });
		o.each(mmaps, "mmaps", [&](const Obj &mp) { p.mmaps.push_back(read_mmap(mp, ids)); });
		m.processes.push_back(std::move(p));
	});
	if (const json *objs = top.opt_array("objects"))
		top.each(*objs, "objects", [&](const Obj &o) {
			m.objects.push_back(
				{o.req_u64("id"), o.opt_u64("size", 0), o.u64_or_null("flink_name", false)});
		});
	fill_views(m);
	return m;
}

} // namespace

Manifest from_json(const json &j)
{
	try {
		return read_manifest(j);
	} catch (const jsonin::FormatError &e) {
		throw ManifestError(e.what());
	}
}

void validate(const json &j)
{
	(void)from_json(j);
}

Manifest parse(const std::string &text, const std::string &what)
{
	json j;
	try {
		j = jsonin::parse(text);
	} catch (const jsonin::FormatError &e) {
		throw ManifestError(what + ": " + e.what());
	}
	try {
		return from_json(j);
	} catch (const ManifestError &e) {
		throw ManifestError(what + ": " + e.what());
	}
}

Manifest read_file(const std::string &path, std::string *text_out)
{
	// never blocks on a FIFO, never reads a device or grows without end (/dev/zero)
	int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		throw ManifestError("cannot read " + path + ": " + std::strerror(errno));
	auto refuse = [&](const std::string &why) {
		::close(fd);
		throw ManifestError("cannot read " + path + ": " + why);
	};
	const std::string too_big =
		"larger than the " + std::to_string(kMaxManifestBytes >> 20) + " MiB a manifest may have";
	struct stat st {
	};
	if (::fstat(fd, &st) != 0)
		refuse(std::strerror(errno));
	if (S_ISDIR(st.st_mode))
		refuse(std::strerror(EISDIR));
	if (!S_ISREG(st.st_mode))
		refuse("not a regular file");
	std::string text;
	char buf[65536];
	for (;;) {
		ssize_t n = ::read(fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			refuse(std::strerror(errno));
		if (n == 0)
			break;
		text.append(buf, static_cast<std::size_t>(n));
		if (text.size() > kMaxManifestBytes)
			refuse(too_big);
	}
	::close(fd);
	Manifest m = parse(text, path);
	if (text_out)
		*text_out = std::move(text);
	return m;
}

} // namespace manifest
} // namespace gw
