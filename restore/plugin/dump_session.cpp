// The dump session: seized tasks, the manifest(s), object numbering, the mappings image.
#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <optional>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "device.hpp"
#include "dump_marker.hpp"
#include "drm_ops.hpp"
#include "dump.hpp"
#include "i915_late_maps.hpp"
#include "log.hpp"
#include "criu_settings.hpp"
#include "containers.hpp"
#include "control_client.hpp"
#include "manifest/manifest.hpp"

namespace gwcriu
{
namespace
{

using json = nlohmann::json;
std::optional<DumpSession> g_session;

// Every daemon following a cgroup of the dumped tasks drains its events and re-snapshots the
// (frozen) tasks, then hands over its manifest. Returns, for each manifest added, its text as
// the daemon wrote it, to be copied into the image as is ("": to be serialized again, its pids
// renamed for this pid namespace).
std::vector<std::string> from_daemons(DumpSession &s)
{
	std::vector<std::string> texts;
	std::string run = gw::control::default_run_dir();
	std::set<uint32_t> asked;
	// registrations not trusted, or stale: said once, never used
	std::vector<std::string> skipped;
	std::vector<gw::control::DaemonInfo> daemons;
	try {
		daemons = gw::control::list_daemons(run, &skipped);
	} catch (const std::exception &e) {
		log_warn("cannot list the gpuwatch daemons in %s: %s", run.c_str(), e.what());
	}
	for (const std::string &why : skipped)
		log_warn("%s", why.c_str());
	for (const Task &t : s.tasks) {
		std::optional<gw::control::DaemonInfo> d;
		try {
			d = gw::control::daemon_for_pid(daemons, t.pid);
		} catch (const std::exception &e) {
			log_warn("cannot look for the daemon following pid %u in %s: %s", t.pid, run.c_str(), e.what());
		}
		if (!d || !asked.insert(d->pid).second)
			continue;
		try {
			std::string text;
			s.manifests.push_back(gw::control::sync(*d, 10000, &text));
			texts.push_back(std::move(text));
			log_info("synced the manifest of daemon %u (cgroup %s)", d->pid, d->cgroup.c_str());
			// a container's hook daemon: the restore follows that container again even where
			// the runtime runs no hook (crun)
			if (auto id = gw::container_of_manifest(run, d->manifest); id && asked.size() == 1) {
				write_image(gw::kContainerImage,
					    json{{"schema", gw::kContainerSchema}, {"id", *id}}.dump() + "\n");
				log_info("daemon %u follows container %s", d->pid, id->c_str());
			}
		} catch (const std::exception &e) {
			log_warn("daemon %u (cgroup %s) did not sync: %s", d->pid, d->cgroup.c_str(), e.what());
		}
	}
	if (!s.manifests.empty())
		s.manifest_origin = "daemon";
	return texts;
}

} // namespace

// keep: write the manifests used into the image (not in a stateless dump, which only needs
// them to convert i915 mappings)
void acquire_manifests(DumpSession &s, bool keep, const char *without)
{
	if (std::string env = env_or("GPUWATCH_MANIFEST", ""); !env.empty()) {
		try {
			s.manifests.push_back(gw::manifest::read_file(env));
			s.manifest_origin = "GPUWATCH_MANIFEST";
		} catch (const std::exception &e) {
			log_warn("GPUWATCH_MANIFEST: %s", e.what());
		}
	}
	std::vector<std::string> texts; // the daemons' manifests as written (from_daemons)
	if (s.manifests.empty())
		texts = from_daemons(s);
	if (s.manifests.empty()) {
		for (std::size_t i = 0; image_exists(manifest_image_name(i)); ++i) {
			std::string name = manifest_image_name(i);
			try {
				s.manifests.push_back(
					gw::manifest::parse(read_image(name, gw::manifest::kMaxManifestBytes), name));
			} catch (const std::exception &e) {
				log_warn("%s in the image directory is unusable: %s", name.c_str(), e.what());
			}
		}
		if (!s.manifests.empty()) {
			s.manifest_origin = "image directory";
			log_warn("no daemon synced: using the manifest the action script left in the image directory "
				 "(taken before the tasks were frozen: it may miss the last changes)");
		}
	}
	if (s.manifests.empty()) {
		log_warn("no manifest (no gpuwatch daemon follows these tasks, see GPUWATCH_RUN_DIR): %s", without);
		return;
	}
	for (std::size_t i = 0; i < s.manifests.size(); ++i) {
		const gw::manifest::Manifest &m = s.manifests[i];
		if (!m.complete)
			log_warn("manifest %zu is incomplete%s%s", i, m.incomplete_reasons.empty() ? "" : ": ",
				 m.incomplete_reasons.empty() ? "" : m.incomplete_reasons[0].c_str());
		if (keep && s.manifest_origin != "image directory")
			write_image(manifest_image_name(i),
				    i < texts.size() && !texts[i].empty() ? texts[i] : gw::manifest::serialize(m));
	}
}

bool DumpSession::has_parent()
{
	if (!parent_link)
		parent_link = image_exists("parent");
	return *parent_link;
}

uint64_t DumpSession::object_of_manifest(std::size_t index, uint64_t id)
{
	auto [it, fresh] = manifest_objects.try_emplace({index, id}, 0);
	if (fresh)
		it->second = new_object();
	return it->second;
}

uint64_t DumpSession::object_of_dmabuf(uint64_t ino)
{
	auto [it, fresh] = dmabuf_objects.try_emplace(ino, 0);
	if (fresh)
		it->second = new_object();
	return it->second;
}

uint64_t DumpSession::new_object()
{
	return next_object++;
}

uint32_t DumpSession::device_index(const SavedDevice &d)
{
	// a mapping not yet attributed (an intermediate vmas image, rewritten at the end) names no
	// device: an index that names none, not an empty record in the devices image
	if (d.path.empty())
		return UINT32_MAX;
	auto it = std::find(image_devices.begin(), image_devices.end(), d);
	if (it != image_devices.end())
		return static_cast<uint32_t>(it - image_devices.begin());
	image_devices.push_back(d);
	write_image(gw::kDevicesImage, gw::devices_image_json(image_devices).dump(1));
	return static_cast<uint32_t>(image_devices.size() - 1);
}

const SavedDevice &DumpSession::device_of_minor(uint32_t minor, uint32_t pid)
{
	auto it = devices.find(minor);
	if (it == devices.end())
		it = devices.emplace(minor, describe_device(gw::kDrmMajor, minor, "", -1, "", pid)).first;
	return it->second;
}

const gw::manifest::Fd *DumpSession::manifest_fd(uint32_t pid, int fd, std::size_t *index) const
{
	if (fd < 0)
		return nullptr;
	for (std::size_t i = 0; i < manifests.size(); ++i)
		if (const gw::manifest::Process *p = manifests[i].find_process(pid))
			if (const gw::manifest::Fd *f = p->find_fd(static_cast<uint64_t>(fd))) {
				*index = i;
				return f;
			}
	return nullptr;
}

const gw::manifest::File *DumpSession::manifest_file(std::size_t index, uint64_t id) const
{
	return index < manifests.size() ? manifests[index].find_file(id) : nullptr;
}

const gw::manifest::Mmap *DumpSession::manifest_mmap(std::size_t index, uint32_t pid, uint64_t start) const
{
	if (index >= manifests.size())
		return nullptr;
	const gw::manifest::Process *p = manifests[index].find_process(pid);
	return p ? p->find_mmap(start) : nullptr;
}

DumpSession &dump_session(bool predump)
{
	if (g_session)
		return *g_session;
	gw::CriuSettings settings = gw::criu_settings();
	bool stateless = settings.mode == gw::CheckpointMode::stateless;
	DumpSession &s = g_session.emplace();
	s.stateless = stateless;
	std::size_t nfds = 0;
	// the tree's root: from the action script's marker (which CRIU gives CRTOOLS_INIT_PID, under
	// RPC too), else from criu's command line
	std::optional<uint32_t> root = gwaction::dump_marker_root(image_dir(), static_cast<uint32_t>(getpid()));
	for (uint32_t pid : seized_tasks(root && *root ? *root : tree_root_from_cmdline())) {
		s.tasks.push_back(scan_task(pid));
		nfds += s.tasks.back().fds.size();
		for (const TaskVma &v : s.tasks.back().vmas) {
			VmaRec r;
			r.pid = pid;
			r.vpid = s.tasks.back().vpid;
			r.start = v.start;
			r.length = v.end - v.start;
			r.offset = v.offset;
			r.prot = v.prot;
			// its device is described when its file is dumped (that file's), or at the
			// dump's end when no dumped file holds it (finish_dump)
			r.device.major = gw::kDrmMajor;
			r.device.minor = v.minor;
			r.stateless = stateless;
			s.vmas.push_back(r);
		}
	}
	s.attributed.assign(s.vmas.size(), false);
	add_converted_vmas(s);
	log_info("dump: %zu seized tasks, %zu DRM/dma-buf fds, %zu DRM mappings", s.tasks.size(), nfds, s.vmas.size());
	if (stateless) {
		log_info("stateless checkpoint (mode from %s): the DRM fds come back with their numbers and flags, "
			 "without buffers, handles or driver state; mappings come back as zero-filled memory",
			 settings.mode_from.c_str());
		return s;
	}
	if (predump)
		acquire_manifests(s, false, "the pre-dump finds their buffers by probing handles");
	else
		acquire_manifests(
			s, true, "DRM files are dumped in degraded mode (handles probed, creation parameters unknown)");
	return s;
}

void predump_buffers()
{
	static bool done = false; // the first device mapping's hook: every task is seized by then
	if (done)
		return;
	done = true;
	DumpSession &s = dump_session(true);
	if (s.stateless) {
		log_info("pre-dump: stateless mode: no buffer is copied");
		return;
	}
	std::vector<UniqueFd> seen; // one copy per open file, whoever holds it
	std::size_t files = 0;
	for (const Task &t : s.tasks)
		for (const TaskFd &f : t.fds) {
			if (f.dmabuf)
				continue;
			UniqueFd lfd(pidfd_getfd_of(static_cast<int>(t.pid), f.fd));
			if (!lfd) {
				log_warn("pre-dump: cannot take fd %d of pid %u (%s): its buffers are saved whole by "
					 "the final dump",
					 f.fd, t.pid, gw::errno_text(errno).c_str());
				continue;
			}
			bool again = false;
			for (const UniqueFd &o : seen)
				again = again || same_file(getpid(), o.get(), getpid(), lfd.get());
			if (again)
				continue;
			predump_drm_file(s, lfd.get());
			seen.push_back(std::move(lfd));
			++files;
		}
	log_info("pre-dump: %zu DRM files, %zu buffers: %llu bytes copied, %llu left to the previous pre-dump", files,
		 s.saved.size(), (unsigned long long)s.bytes_stored, (unsigned long long)s.bytes_reused);
}

void write_vmas_image(DumpSession &s, bool final)
{
	std::vector<VmaRec> out = s.vmas; // sizes may still be learnt from files dumped later
	for (VmaRec &v : out) {
		if (v.object && !v.object_size)
			v.object_size = s.object_sizes[v.object];
		if (v.object && (!v.object_size || v.delta % page_size() || v.delta >= v.object_size ||
				 v.length > v.object_size - v.delta)) {
			if (final)
				log_warn("mapping %#llx of pid %u does not fit in buffer %llu: its buffer is treated "
					 "as unknown",
					 (unsigned long long)v.start, v.pid, (unsigned long long)v.object);
			v.object = 0;
			v.handle.reset();
		}
		if (!v.object) {
			v.object_size = 0;
			v.delta = 0;
		}
		v.saved = v.object && s.saved.count(v.object);
	}
	write_image(kVmasImage, to_json(out, s.device_indexer()).dump(1));
}

void finish_dump(int ret)
{
	if (!g_session)
		return;
	DumpSession &s = *g_session;
	// CRIU takes no failure from the plugin's exit: the post-dump action script fails the dump
	auto incomplete = [](const std::string &why) {
		log_error("dump: %s: the restore would fail; the action script's post-dump fails the dump",
			  why.c_str());
		// created in place, not through a temporary file: on a full disk an empty file is made
		// where a write is refused, and its being there is what counts
		UniqueFd fd(openat(image_dir(), gwaction::kDumpFailed,
				   O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
		if (!fd) {
			log_error("dump: cannot create %s: %s", gwaction::kDumpFailed, gw::errno_text(errno).c_str());
			return;
		}
		// the file's being there fails the dump; a reason it cannot take is in this log
		std::string text = why + "\n";
		(void)!write(fd.get(), text.data(), text.size());
	};
	try {
		if (ret == 0) {
			for (std::size_t i = 0; i < s.vmas.size(); ++i) {
				VmaRec &v = s.vmas[i];
				if (s.attributed[i])
					continue;
				if (!v.late && v.device.path.empty())
					v.device = s.device_of_minor(v.device.minor, v.pid);
				if (v.late) {
					log_error("mapping %#llx-%#llx of pid %u was replaced by a placeholder before "
						  "the dump, but no dumped file holds its %s: after a restore it stays "
						  "an "
						  "inaccessible hole",
						  (unsigned long long)v.start, (unsigned long long)(v.start + v.length),
						  v.pid, s.stateless ? "fd" : "handle");
					v.late.reset();
					continue;
				}
				if (s.stateless)
					continue; // comes back as zero-filled memory, whatever its buffer was
				for (std::size_t m = 0; m < s.manifests.size() && !v.object; ++m)
					if (const gw::manifest::Mmap *e = s.manifest_mmap(m, v.pid, v.start);
					    e && e->object)
						v.object = s.object_of_manifest(m, *e->object);
				v.object_size = v.object ? s.object_sizes[v.object] : 0;
				if (v.object && (!v.object_size || v.length > v.object_size))
					v.object = 0;
				if (!v.object)
					v.object_size = 0;
				log_warn("mapping %#llx-%#llx of pid %u (%s): no dumped fd holds its file; it comes "
					 "back %s",
					 (unsigned long long)v.start, (unsigned long long)(v.start + v.length), v.pid,
					 v.device.path.c_str(),
					 v.object && s.saved.count(v.object) ? "on a copy of its buffer"
									     : "zero-filled");
			}
			write_vmas_image(s, true);
			if (s.bytes_reused)
				log_info("buffers: %llu bytes saved, %llu bytes unchanged since the pre-dump (left to "
					 "its "
					 "images in parent/)",
					 (unsigned long long)s.bytes_stored, (unsigned long long)s.bytes_reused);
		}
	} catch (const std::exception &e) {
		incomplete(std::string("cannot write ") + kVmasImage + ": " + e.what());
	}
	g_session.reset();
}

} // namespace gwcriu
