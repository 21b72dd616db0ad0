// The `gpuwatch show` text of a manifest.
#include <map>
#include <sstream>

#include "manifest.hpp"

namespace gw::manifest
{
namespace
{

std::string hex(uint64_t v)
{
	std::ostringstream s;
	s << "0x" << std::hex << v;
	return s.str();
}

std::string plural(std::size_t n, const char *one, const char *many)
{
	return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string num_or(const std::optional<uint64_t> &v, const char *none)
{
	return v ? std::to_string(*v) : none;
}

// Text for a terminal: C0 control characters (newlines too, unless kept), DEL and the C1 controls
// U+0080..U+009F (UTF-8 C2 80..C2 9F, which terminals take as escape sequences) as \xNN or
// \u00NN. A container sets its comm, its cgroup's and its device nodes' names.
std::string printable(const std::string &s, bool keep_newlines = false)
{
	static const char digits[] = "0123456789abcdef";
	std::string out;
	out.reserve(s.size());
	for (std::size_t i = 0; i < s.size(); i++) {
		auto c = static_cast<unsigned char>(s[i]);
		if ((c < 0x20 && !(keep_newlines && c == '\n')) || c == 0x7f) {
			out += "\\x";
			out += digits[c >> 4];
			out += digits[c & 15];
		} else if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
			   static_cast<unsigned char>(s[i + 1]) <= 0x9f) {
			auto c1 = static_cast<unsigned char>(s[++i]);
			out += "\\u00";
			out += digits[c1 >> 4];
			out += digits[c1 & 15];
		} else {
			out += static_cast<char>(c);
		}
	}
	return out;
}

} // namespace

std::string format_summary(const Manifest &m)
{
	std::ostringstream out;
	out << "cgroup " << printable(m.cgroup) << ": " << plural(m.processes.size(), "process", "processes") << ", "
	    << plural(m.files.size(), "file", "files") << ", " << (m.complete ? "complete" : "INCOMPLETE") << "\n";
	for (const std::string &reason : m.incomplete_reasons)
		out << "  incomplete: " << printable(reason) << "\n";

	auto file_ref = [&](const std::optional<uint64_t> &id) {
		if (!id)
			return std::string("unknown file");
		const File *f = m.find_file(*id);
		return "file " + std::to_string(*id) + (f ? " " + printable(f->path) : "");
	};

	for (const Process &p : m.processes) {
		out << "\nprocess " << p.pid << " (" << printable(p.comm) << "): " << plural(p.fds.size(), "fd", "fds")
		    << ", " << plural(p.mmaps.size(), "mapping", "mappings") << "\n";
		for (const Fd &fd : p.fds) {
			out << "  fd " << fd.fd << ": ";
			switch (fd.kind) {
			case Fd::Kind::dmabuf:
				out << "dma-buf of " << file_ref(fd.file) << " handle " << num_or(fd.handle, "unknown");
				break;
			case Fd::Kind::sync_file:
			case Fd::Kind::i915_perf:
				out << (fd.kind == Fd::Kind::sync_file ? "out-fence (sync_file)" : "i915 perf stream");
				if (fd.origin.raw.is_object())
					out << " from " << (fd.origin.ioctl.empty() ? "?" : fd.origin.ioctl) << " on "
					    << file_ref(fd.origin.file);
				break;
			case Fd::Kind::drm: out << file_ref(fd.file); break;
			}
			out << (fd.cloexec ? " cloexec" : "") << "\n";
		}
		for (const Mmap &mp : p.mmaps) {
			out << "  map " << hex(mp.start) << "-" << hex(mp.start + mp.length) << " "
			    << (mp.prot.empty() ? "---" : mp.prot) << (mp.shared ? " shared " : " private ")
			    << file_ref(mp.file) << " offset " << hex(mp.offset) << " handle "
			    << num_or(mp.handle, "none");
			if (mp.via != "device")
				out << " via " << mp.via;
			out << "\n";
		}
	}

	for (const File &f : m.files) {
		std::map<uint64_t, uint64_t> objects; // distinct objects: shared buffers count once
		for (const Handle &h : f.handles)
			objects[h.object] = h.size;
		uint64_t total = 0;
		for (const auto &[o, size] : objects)
			total += size;
		out << "\nfile " << f.id << ": " << printable(f.path) << " (" << f.major << ":" << f.minor
		    << ") driver " << f.driver << " " << f.flags << ": "
		    << plural(f.handles.size(), "handle", "handles") << ", " << total << " bytes"
		    << (!f.handles_known ? " (handles before tracing unknown)" : "") << "\n";
		for (const Handle &h : f.handles) {
			out << "  handle " << h.handle << ": " << h.size << " bytes, " << h.origin << ", object "
			    << h.object;
			if (h.imports > 0)
				out << ", re-imported " << h.imports << "x";
			const CreateParams &c = h.create;
			if (!c.placements.empty()) {
				out << ", placements";
				for (const Placement &pl : c.placements)
					out << " " << pl.memory_class.value_or("?") << ":"
					    << (pl.instance ? std::to_string(*pl.instance) : std::string("?"));
			}
			if (c.pat_index)
				out << ", pat " << *c.pat_index;
			if (c.user_ptr)
				out << ", user memory at " << hex(*c.user_ptr);
			if (h.tiling)
				out << ", tiling " << h.tiling->mode.value_or("?") << " stride "
				    << (h.tiling->stride ? std::to_string(*h.tiling->stride) : std::string("?"));
			if (h.origin == "virtio_gpu.resource_create" && h.params.is_object())
				out << ", resource " << h.params.value("res_handle", nlohmann::json()).dump() << " "
				    << h.params.value("width", nlohmann::json()).dump() << "x"
				    << h.params.value("height", nlohmann::json()).dump() << " format "
				    << h.params.value("format", nlohmann::json()).dump();
			if (h.host_uploaded)
				out << ", host copy written";
			out << "\n";
		}
		for (const Framebuffer &fb : f.framebuffers) {
			out << "  framebuffer " << fb.id << ": " << fb.width << "x" << fb.height << " " << fb.format
			    << " on";
			for (const FramebufferPlane &p : fb.planes)
				out << (p.handle ? " handle " + std::to_string(*p.handle)
						 : std::string(" a closed handle"));
			out << "\n";
		}
		for (const DisplayCrtc &c : f.display.crtcs) {
			out << "  CRTC " << c.crtc << ": ";
			if (c.configured && !c.mode)
				out << "switched off";
			else
				out << (c.fb ? "shows framebuffer " + std::to_string(c.fb)
					     : std::string("shows nothing"));
			if (c.mode)
				out << ", " << c.mode->hdisplay << "x" << c.mode->vdisplay << "@" << c.mode->vrefresh
				    << " at " << c.x << "," << c.y << " on " << c.connectors << " connector(s)";
			else if (!c.configured)
				out << " (only page flips seen: its mode and place are unknown)";
			out << "\n";
		}
		for (const DisplayPlane &p : f.display.planes)
			out << "  plane " << p.plane << ": framebuffer " << p.fb << " on CRTC " << p.crtc << " at "
			    << p.crtc_x << "," << p.crtc_y << " " << p.crtc_w << "x" << p.crtc_h << "\n";
		for (const DisplayCursor &c : f.display.cursors) {
			out << "  cursor of CRTC " << c.crtc << ": "
			    << (c.handle ? "handle " + std::to_string(*c.handle) + " (" + std::to_string(c.width) +
						   "x" + std::to_string(c.height) + ")"
					 : std::string("buffer unknown (only MODE_CURSOR moves seen)"));
			if (c.position)
				out << " at " << (*c.position)[0] << "," << (*c.position)[1];
			out << "\n";
		}
		for (const DisplayBlob &b : f.display.blobs)
			out << "  property blob " << b.id << ": " << b.length << " bytes\n";
		if (f.display.atomic_commits)
			out << "  atomic commits: " << f.display.atomic_commits
			    << " (their properties are not captured: the dump reads the display back)\n";
		if (f.display.master)
			out << "  DRM master: " << (*f.display.master ? "taken (SET_MASTER)" : "dropped (DROP_MASTER)")
			    << "\n";
		if (!f.undecoded_ioctls.empty()) {
			out << "  not decoded (what they made is unknown):";
			for (const std::string &n : f.undecoded_ioctls)
				out << " " << n;
			out << "\n";
		}
		for (const Context &c : f.contexts.value_or(std::vector<Context>{})) {
			out << "  context " << c.id << ": vm " << num_or(c.vm, "own");
			for (const ContextParam &p : c.params)
				out << ", " << p.name << " "
				    << p.value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
			out << "\n";
		}
		for (const Vm &vm : f.vms.value_or(std::vector<Vm>{})) {
			out << "  vm " << vm.id << ": flags " << hex(vm.flags) << ", "
			    << plural(vm.bindings.size(), "binding", "bindings") << "\n";
			for (const Binding &b : vm.bindings)
				out << "    bind " << hex(b.addr) << " +" << hex(b.range) << " "
				    << (b.userptr ? "userptr " + hex(*b.userptr)
						  : "handle " + num_or(b.handle, "closed") + " offset " + hex(b.offset))
				    << "\n";
		}
		for (const ExecQueue &q : f.exec_queues.value_or(std::vector<ExecQueue>{}))
			out << "  exec queue " << q.id << ": vm " << q.vm << ", width " << q.width << ", "
			    << q.num_placements << " placements\n";
	}
	// every other string of the manifest (driver, origin, format, ...: gpuwatch writes them from
	// the kernel's values, but a manifest may come from elsewhere) through the same filter
	return printable(out.str(), true);
}

} // namespace gw::manifest
