// gpuwatch-criu-action: CRIU's action script for gpuwatch (criu --action-script PATH).
// CRIU execs it with no arguments and CRTOOLS_SCRIPT_ACTION, CRTOOLS_IMAGE_DIR and
// CRTOOLS_INIT_PID in the environment; a non-zero exit aborts the dump or restore.
//   pre-dump          remove an earlier dump's gpuwatch images, mark the directory as this
//                     dump's; if the tree has i915 GEM mappings (anon_inode:i915.gem, legacy
//                     GEM_MMAP), which CRIU cannot dump: sync the daemon following
//                     CRTOOLS_INIT_PID, copy its manifest into the image dir
//                     (gpuwatch-manifest.json) and, when the CRIU running it is a 3.x (4.x runs
//                     the plugin's CHECKPOINT_DEVICES), freeze its cgroup, convert them in the
//                     tasks and leave a watcher behind (i915_predump.hpp;
//                     gpuwatch-i915-maps.json, gpuwatch-watcher.log). Otherwise the plugin syncs
//                     the daemons once CRIU has frozen the tasks
//   post-dump         fail the dump when the plugin found its images incomplete at the
//                     dump's end (gpuwatch-dump-failed.txt, dump_marker.hpp)
//   post-setup-namespaces  (CRIU >= 3.19) a restored container that no runtime hook follows
//                     (crun runs none at restore) gets its daemon, as the prestart hook starts it
//   post-restore      create the DRM nodes the tasks saw (the plugin's gpuwatch-devices.json)
//                     still missing in the restored root (the plugin has created those its
//                     files needed, from inside the tasks)
//   post-resume       if GPUWATCH_RESTORE_SIGNAL (or restore_signal in /etc/criu/gpuwatch.conf)
//                     is set (e.g. SIGUSR2), send it to the
//                     restored processes (CRTOOLS_INIT_PID and its descendants) that hold a
//                     DRM or dma-buf fd: their GPU engine state is gone
// In a stateless checkpoint (GPUWATCH_CHECKPOINT_MODE, /etc/criu/gpuwatch.conf) the
// pre-dump saves no manifest; it syncs the daemon only to convert i915 mappings.
// Knobs: GPUWATCH_RUN_DIR (daemon registrations, default /run/gpuwatch),
// GPUWATCH_WATCH_TIMEOUT_S (the i915 watcher's bound for the whole dump, default 600).
#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <optional>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <sys/sysmacros.h>
#include <vector>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include "criu_settings.hpp"
#include "containers.hpp"
#include "control_client.hpp"
#include "criu_abi.hpp"
#include "drm_devices.hpp"
#include "dump_marker.hpp"
#include "i915_predump.hpp"
#include "manifest/json_reader.hpp"
#include "manifest/manifest.hpp"
#include "nodes.hpp"
#include "proc_tree.hpp"
#include "sysutil.hpp"

using namespace gw;
namespace jsonin = gw::jsonin;

namespace
{

constexpr const char *kManifest = "gpuwatch-manifest.json";

void log(const std::string &msg)
{
	fprintf(stderr, "gpuwatch-criu-action: %s\n", msg.c_str());
}

std::string env(const char *name)
{
	const char *v = ::getenv(name);
	return v ? v : "";
}

uint32_t init_pid()
{
	std::string s = env("CRTOOLS_INIT_PID");
	char *end = nullptr;
	unsigned long v = std::strtoul(s.c_str(), &end, 10);
	if (s.empty() || *end || v == 0 || v > 0x7fffffff)
		throw Error("CRTOOLS_INIT_PID is not set to a pid ('" + s + "')");
	return (uint32_t)v;
}

std::string image_dir()
{
	std::string d = env("CRTOOLS_IMAGE_DIR");
	if (d.empty())
		throw Error("CRTOOLS_IMAGE_DIR is not set");
	return d;
}

// The i915 mapping conversion of the pre-dump, for CRIU 3.x only: from CRIU 4.0 the plugin
// converts the mappings itself at CHECKPOINT_DEVICES, in tasks CRIU has seized (no freeze, no
// watcher). Which CRIU runs is read from its binary (the same test the plugin makes).
void i915_predump_if_needed(uint32_t pid, pid_t criu, const std::string &dir, const manifest::Manifest *m)
{
	std::string exe = "/proc/" + std::to_string(criu) + "/exe";
	gwaction::CriuAbi abi = gwaction::criu_abi_of_binary(exe);
	if (!abi.is_criu) {
		/* run by hand or by a test harness: convert here, which suits every CRIU (on 4.x the
		 * plugin then finds nothing left to convert) */
		abi = {};
	} else if (!abi.refusal.empty()) {
		throw Error(abi.refusal);
	}
	if (abi.checkpoint_devices) {
		std::string which;
		for (uint32_t p : gwaction::process_tree(pid))
			if (gwaction::has_i915_mappings(p, &which)) {
				log("CRIU " + abi.versions + ": the i915 mappings (" + which +
				    ", ...) are converted by the plugin at CHECKPOINT_DEVICES, once CRIU has seized "
				    "the tasks");
				break;
			}
		return;
	}
	gwaction::i915_predump(pid, criu, dir, m);
}

// Whether a process holds a DRM character device or a dma-buf fd.
bool holds_drm(uint32_t pid)
{
	std::error_code ec;
	for (const auto &ent : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
		struct stat st {
		};
		if (::stat(ent.path().c_str(), &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == kDrmMajor)
			return true;
		std::string target = std::filesystem::read_symlink(ent.path(), ec).string();
		if (!ec && target.rfind("/dmabuf:", 0) == 0)
			return true;
	}
	return false;
}

// gpuwatch's settings (criu_settings.hpp). A damaged /etc/criu/gpuwatch.conf fails the
// action only where the processes hold DRM state: every other checkpoint of the host goes on,
// and the log says what is wrong with the file.
CriuSettings settings_for(uint32_t pid)
{
	try {
		return criu_settings();
	} catch (const Error &e) {
		for (uint32_t p : gwaction::process_tree(pid))
			if (holds_drm(p))
				throw;
		log(std::string(e.what()) + " (ignored: no DRM file among the processes)");
		return {};
	}
}

int pre_dump()
{
	uint32_t pid = init_pid();
	std::string dir = image_dir();
	pid_t criu = getppid(); /* criu execs this helper itself */
	/* what an earlier dump left in this directory is not this dump's (dump_marker.hpp) */
	{
		UniqueFd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
		if (!dfd)
			throw Error("cannot open the image directory " + dir + ": " + errno_text(errno));
		if (int n = gwaction::remove_gpuwatch_images(dfd.get()))
			log("removed " + std::to_string(n) + " gpuwatch image(s) of an earlier dump from " + dir);
		write_file_atomic(dir + "/" + gwaction::kDumpMarker,
				  gwaction::dump_marker(static_cast<uint32_t>(criu), pid), 0600);
	}
	/* a tool's own --libdir after gpuwatch's: CRIU would fail on the first DRM file with an
	 * error that does not say why; say it before anything is frozen */
	if (std::string why = gwaction::plugin_missing_from_libdir(criu); !why.empty()) {
		bool drm = false;
		for (uint32_t p : gwaction::process_tree(pid))
			drm = drm || holds_drm(p);
		if (drm)
			throw Error(why + "; the dumped processes hold DRM files, which CRIU cannot save without it");
		log(why + " (no DRM file among the dumped processes: the dump goes on)");
	}
	/* The manifest is asked for only to convert i915 mappings into placeholders (their
	 * handles say how to put them back): the plugin syncs the daemons itself once CRIU has
	 * frozen the tasks, and a copy taken here before the freeze cost every dump a round trip
	 * (0.2 s under TCG) for nothing. Stateless: no manifest is saved at all. */
	CriuSettings settings = settings_for(pid);
	bool stateless = settings.mode == CheckpointMode::stateless;
	bool i915 = false;
	for (uint32_t p : gwaction::process_tree(pid))
		i915 = i915 || gwaction::has_i915_mappings(p);
	if (stateless)
		log("stateless checkpoint (mode from " + settings.mode_from + "): no manifest is saved" +
		    (i915 ? "" : ", none is needed"));
	if (!i915)
		return 0;
	std::vector<std::string> skipped; // registrations not trusted, or stale: said, never used
	auto daemon = control::daemon_for_pid(control::default_run_dir(), pid, &skipped);
	for (const std::string &why : skipped)
		log(why);
	if (!daemon) {
		std::string cg;
		try {
			cg = " (" + cgroup_v2_dir_of_pid(pid) + ")";
		} catch (const Error &) { // no cgroup v2 here: no daemon could follow anything
		}
		log("no gpuwatch daemon follows process " + std::to_string(pid) + cg +
		    ": the dump goes on without a manifest; the CRIU plugin falls back to what it can probe");
		i915_predump_if_needed(pid, criu, dir, nullptr);
		return 0;
	}
	manifest::Manifest m = control::sync(*daemon);
	if (!stateless) {
		write_file_atomic(dir + "/" + kManifest, manifest::serialize(m), 0600);
		log("manifest of daemon " + std::to_string(daemon->pid) + " (" + daemon->cgroup + ", generation " +
		    std::to_string(m.generation) + ") saved in " + dir);
	}
	i915_predump_if_needed(pid, criu, dir, &m);
	return 0;
}

// A small regular file of the image directory, not through a symlink and never blocking on a
// FIFO (the image may come from elsewhere); nullopt when absent.
std::optional<std::string> read_small_image(const std::string &name, std::size_t max)
{
	std::string path = image_dir() + "/" + name;
	UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
	if (!fd) {
		if (errno == ENOENT)
			return std::nullopt;
		throw Error("cannot open " + name + " in the image: " + errno_text(errno));
	}
	struct stat st {
	};
	if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || static_cast<std::size_t>(st.st_size) > max)
		throw Error(name + " in the image is not a regular file of at most " + std::to_string(max) + " bytes");
	std::string text(static_cast<std::size_t>(st.st_size), '\0');
	if (::read(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()))
		throw Error("cannot read " + name + " in the image: " + errno_text(errno));
	return text;
}

// A backstop after the plugin (which creates the nodes the DRM files need): every recorded
// node the tasks had is back. Nothing here fails the restore: the files are restored by then;
// what cannot be checked or is refused is logged.
int check_nodes()
{
	uint32_t pid = init_pid();
	std::vector<SavedDevice> devices;
	try {
		auto text = read_small_image(kDevicesImage, 1 << 20);
		if (!text) {
			log("no " + std::string(kDevicesImage) + " in the image: no device nodes to check");
			return 0;
		}
		devices = parse_devices_image(*text);
	} catch (const std::exception &e) {
		log(std::string("post-restore: ") + kDevicesImage + ": " + e.what() + ": device nodes not checked");
		return 0;
	}
	for (const SavedDevice &n : devices) {
		if (!n.mode)
			continue; // the tasks did not see this node at its path
		try {
			if (action::node_in_root(pid, n.path))
				continue; // back already (the plugin made the nodes its files needed)
			std::string why;
			auto dev = choose_equivalent_device(n, &why);
			if (!dev)
				throw Error(why);
			struct stat host {
			};
			bool have = action::stat_host_node(dev->path(), dev->minor, &host);
			std::string bounded;
			SavedDevice node = action::as_host_allows(n, have ? &host : nullptr, &bounded);
			char mode[8];
			std::snprintf(mode, sizeof mode, "%03o", node.mode);
			if (action::create_node_in_root(pid, node, dev->minor))
				log("created " + n.path + " (" + std::to_string(kDrmMajor) + ":" +
				    std::to_string(dev->minor) + ", " + dev->driver + ", mode " + mode + ", owner " +
				    std::to_string(node.uid) + ":" + std::to_string(node.gid) +
				    ") in the root of process " + std::to_string(pid) + ": " + why +
				    (bounded.empty() ? "" : "; " + bounded));
		} catch (const std::exception &e) {
			log(std::string("post-restore: ") + e.what());
		}
	}
	return 0;
}

// The gpuwatch binary of this installation: next to the helper in a build tree, <prefix>/bin
// when installed (the helper is <prefix>/libexec/gpuwatch/gpuwatch-criu-action).
std::string gpuwatch_binary()
{
	std::error_code ec;
	std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
	if (ec)
		throw Error("cannot find this helper's path (/proc/self/exe): " + ec.message());
	for (const auto &c :
	     {self.parent_path() / "gpuwatch", self.parent_path().parent_path().parent_path() / "bin" / "gpuwatch"})
		if (::access(c.c_str(), X_OK) == 0)
			return c.lexically_normal().string();
	throw Error("no gpuwatch binary next to " + self.string() + " or in its prefix's bin/");
}

// post-setup-namespaces (CRIU >= 3.19 runs it under RPC too): the restored tree's root exists,
// CRIU has put it in its cgroup (at setup-namespaces it is still in criu's under crun), and no
// DRM file is restored yet. runc has run the container's prestart hooks at setup-namespaces,
// and they started its daemon; crun runs no hook at restore.
// A container whose hook daemon synced the dump (gpuwatch-container.json) and that nothing
// follows now gets its daemon here, as the hook would have started it: it sees the files come
// back. The id it is recorded under is the one the runtime put in the restored cgroup's name
// (the image's may be another container's: an import under a new name, or a forged image),
// and a daemon already recorded for that id is left alone.
int follow_restored_container()
{
	auto text = read_small_image(kContainerImage, 4096);
	if (!text)
		return 0;
	try {
		nlohmann::json j = jsonin::parse(*text);
		if (jsonin::Obj(j, "").req_str("schema", 64) != kContainerSchema)
			throw jsonin::FormatError("is not a " + std::string(kContainerSchema) + " record");
	} catch (const jsonin::FormatError &e) {
		throw Error(std::string(kContainerImage) + " in the image: " + e.what());
	}
	uint32_t pid = init_pid();
	std::string run = control::default_run_dir();
	if (auto d = control::daemon_for_pid(run, pid)) {
		log("the restored container (pid " + std::to_string(pid) + ") is followed by daemon " +
		    std::to_string(d->pid) + " (the runtime's prestart hook)");
		return 0;
	}
	std::string cg = cgroup_v2_dir_of_pid(pid);
	auto id = container_id_of_cgroup(cg);
	if (!id) {
		log("the restored process " + std::to_string(pid) + " was a followed container's, but its cgroup " +
		    cg + " names no container id: it is not followed (its next checkpoint has no manifest)");
		return 0;
	}
	auto d = follow_container(run, *id, pid, gpuwatch_binary(), false);
	if (!d) {
		log("container " + id->substr(0, 12) + " already has a gpuwatch daemon recorded: left as it is");
		return 0;
	}
	log("restored container " + id->substr(0, 12) + " (pid " + std::to_string(pid) +
	    "): no runtime hook followed it (crun runs none at restore): followed by gpuwatch daemon " +
	    std::to_string(*d));
	return 0;
}

// The plugin found its images incomplete at the dump's end, where CRIU takes no failure from
// it (dump_marker.hpp): the dump fails here.
int post_dump()
{
	std::optional<std::string> why = read_small_image(gwaction::kDumpFailed, 4096);
	if (!why)
		return 0;
	while (!why->empty() && why->back() == '\n')
		why->pop_back();
	log("the CRIU plugin's images are incomplete (" + (why->empty() ? "its log says why" : *why) +
	    "): the dump fails");
	return 1;
}

int post_resume()
{
	CriuSettings settings = settings_for(init_pid());
	std::string sig = settings.restore_signal;
	if (sig.empty())
		return 0;
	int signo = parse_signal(sig, settings.signal_from);
	/* the image directory (CRIU passes /proc/<criu>/fd/N) is closed by now: the restored
	 * tree itself says who holds DRM state */
	int sent = 0;
	for (uint32_t pid : gwaction::process_tree(init_pid())) {
		if (holds_drm(pid) && ::kill(pid, signo) == 0)
			sent++;
	}
	log("sent " + sig + " to " + std::to_string(sent) + " restored process(es): their GPU state was not restored");
	return 0;
}

} // namespace

int main()
{
	std::string action = env("CRTOOLS_SCRIPT_ACTION");
	try {
		if (action == "pre-dump")
			return pre_dump();
		/* CRIU 3.17 runs setup-namespaces and post-setup-namespaces before the root task has
		 * entered the restored mount namespace (restore_task_mnt_ns() comes after
		 * CR_STATE_FORKING): a node made then would land in criu's own /dev. The plugin
		 * creates the nodes a DRM file needs from inside the task; post-restore, when the
		 * tasks are in their namespaces, checks that every node they had is back. */
		if (action == "post-setup-namespaces")
			return follow_restored_container();
		if (action == "post-restore")
			return check_nodes();
		if (action == "post-resume")
			return post_resume();
		if (action == "post-dump")
			return post_dump();
		return 0; /* every other action: nothing to do */
	} catch (const std::exception &e) {
		log(action + ": " + e.what());
		return 1;
	}
}
