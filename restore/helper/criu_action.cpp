// gpuwatch-criu-action: CRIU's action script for gpuwatch (criu --action-script PATH).
// CRIU execs it with no arguments and CRTOOLS_SCRIPT_ACTION, CRTOOLS_IMAGE_DIR and
// CRTOOLS_INIT_PID in the environment; a non-zero exit aborts the dump or restore.
//   pre-dump          sync the daemon following CRTOOLS_INIT_PID, copy its manifest into the
//                     image dir (gpuwatch-manifest.json) and record the DRM nodes the tasks
//                     see (gpuwatch-nodes.json); then, if the tree has i915 GEM mappings
//                     (anon_inode:i915.gem, legacy GEM_MMAP), which CRIU cannot dump, and the
//                     CRIU running it is a 3.x (4.x runs the plugin's CHECKPOINT_DEVICES),
//                     freeze its cgroup, convert them in the tasks and leave a watcher behind
//                     (i915_predump.hpp; gpuwatch-i915-maps.json, gpuwatch-watcher.log)
//   post-restore      create the recorded DRM nodes still missing in the restored root (the
//                     plugin has created those its files needed, from inside the tasks)
//   post-resume       if GPUWATCH_RESTORE_SIGNAL is set (e.g. SIGUSR2), send it to the
//                     restored processes (CRTOOLS_INIT_PID and its descendants) that hold a
//                     DRM or dma-buf fd: their GPU engine state is gone
// Knobs: GPUWATCH_RUN_DIR (daemon registrations, default /run/gpuwatch),
// GPUWATCH_WATCH_TIMEOUT_S (the i915 watcher's bound for the whole dump, default 600).
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <filesystem>
#include <map>
#include <set>
#include <sys/sysmacros.h>
#include <vector>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include "control.hpp"
#include "criu_abi.hpp"
#include "drm_devices.hpp"
#include "i915_predump.hpp"
#include "model.hpp"
#include "nodes.hpp"
#include "proc_tree.hpp"
#include "sysutil.hpp"

using namespace gw;

namespace {

constexpr const char *kManifest = "gpuwatch-manifest.json";
constexpr const char *kNodes = "gpuwatch-nodes.json";

void log(const std::string &msg) { fprintf(stderr, "gpuwatch-criu-action: %s\n", msg.c_str()); }

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
void i915_predump_if_needed(uint32_t pid, pid_t criu, const std::string &dir, const nlohmann::json *m)
{
	gwaction::CriuAbi abi = gwaction::criu_abi_of_binary("/proc/" + std::to_string(criu) + "/exe");
	if (!abi.refusal.empty())
		throw Error(abi.refusal);
	if (abi.checkpoint_devices) {
		std::string which;
		for (uint32_t p : gwaction::process_tree(pid))
			if (gwaction::has_i915_mappings(p, &which)) {
				log("CRIU " + abi.versions + ": the i915 mappings (" + which +
				    ", ...) are converted by the plugin at CHECKPOINT_DEVICES, once CRIU has seized the tasks");
				break;
			}
		return;
	}
	gwaction::i915_predump(pid, criu, dir, m);
}

int pre_dump()
{
	uint32_t pid = init_pid();
	std::string dir = image_dir();
	pid_t criu = getppid(); /* criu execs this helper itself */
	auto daemon = control::daemon_for_pid(control::default_run_dir(), pid);
	if (!daemon) {
		log("no gpuwatch daemon follows process " + std::to_string(pid) + " (" + cgroup_v2_dir_of_pid(pid) +
		    "): the dump goes on without a manifest; the CRIU plugin falls back to what it can probe");
		i915_predump_if_needed(pid, criu, dir, nullptr);
		return 0;
	}
	nlohmann::json m = control::sync(*daemon);
	write_file_atomic(dir + "/" + kManifest, serialize_manifest(m), 0600);

	nlohmann::json nodes = nlohmann::json::array();
	std::set<std::string> seen;
	for (const auto &f : m.at("files")) {
		std::string path = f.value("path", "");
		if (!is_drm_node_path(path) || !seen.insert(path).second)
			continue;
		if (auto n = action::stat_node_in_root(pid, path))
			nodes.push_back(action::to_json(*n));
		else
			log(path + " is not visible in the root of process " + std::to_string(pid) + ": not recorded");
	}
	write_file_atomic(dir + "/" + kNodes, nodes.dump() + "\n", 0600);
	log("manifest of daemon " + std::to_string(daemon->pid) + " (" + daemon->cgroup + ", generation " +
	    std::to_string(m.value("generation", 0)) + ") and " + std::to_string(nodes.size()) +
	    " device node(s) saved in " + dir);
	i915_predump_if_needed(pid, criu, dir, &m);
	return 0;
}

nlohmann::json read_json(const std::string &path)
{
	std::ifstream in(path);
	if (!in)
		throw Error("cannot read " + path + ": " + errno_text(errno));
	nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
	if (j.is_discarded())
		throw Error(path + ": not valid JSON");
	return j;
}

// A backstop after the plugin (which creates the nodes the DRM files need): every recorded
// node the tasks had is back. Nothing here fails the restore: the files are restored by then;
// what cannot be checked or is refused is logged.
int check_nodes()
{
	uint32_t pid = init_pid();
	std::string dir = image_dir();
	struct stat st;
	if (::stat((dir + "/" + kNodes).c_str(), &st) != 0) {
		log("no " + std::string(kNodes) + " in the image: no device nodes to check");
		return 0;
	}
	nlohmann::json nodes;
	try {
		nodes = read_json(dir + "/" + kNodes);
		if (!nodes.is_array())
			throw Error(std::string(kNodes) + ": not a list of nodes");
	} catch (const std::exception &e) {
		log(std::string("post-restore: ") + e.what() + ": device nodes not checked");
		return 0;
	}
	for (const auto &j : nodes) {
		try {
			action::NodeInfo n = action::node_from_json(j);
			SavedDevice saved {n.path, n.major, n.minor, n.driver, n.pci_id};
			std::string why;
			auto dev = choose_equivalent_device(saved, &why);
			if (!dev)
				throw Error(why);
			if (action::create_node_in_root(pid, n, dev->minor))
				log("created " + n.path + " (226:" + std::to_string(dev->minor) + ", " + dev->driver +
				    ") in the root of process " + std::to_string(pid) + ": " + why);
		} catch (const std::exception &e) {
			log(std::string("post-restore: ") + e.what());
		}
	}
	return 0;
}

// Whether a process holds a DRM character device or a dma-buf fd.
bool holds_drm(uint32_t pid)
{
	std::error_code ec;
	for (const auto &ent : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
		struct stat st {};
		if (::stat(ent.path().c_str(), &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == 226)
			return true;
		std::string target = std::filesystem::read_symlink(ent.path(), ec).string();
		if (!ec && target.rfind("/dmabuf:", 0) == 0)
			return true;
	}
	return false;
}

int parse_signal(const std::string &s)
{
	static const std::pair<const char *, int> names[] = {{"SIGUSR1", SIGUSR1}, {"SIGUSR2", SIGUSR2}, {"SIGHUP", SIGHUP},
							      {"SIGTERM", SIGTERM}, {"SIGINT", SIGINT},   {"SIGCONT", SIGCONT}};
	for (auto &[n, v] : names) {
		if (s == n || s == n + 3)
			return v;
	}
	char *end = nullptr;
	long v = std::strtol(s.c_str(), &end, 10);
	if (*end || v <= 0 || v > SIGRTMAX)
		throw Error("GPUWATCH_RESTORE_SIGNAL=" + s + " is not a signal name (SIGUSR2) or number");
	return (int)v;
}

int post_resume()
{
	std::string sig = env("GPUWATCH_RESTORE_SIGNAL");
	if (sig.empty())
		return 0;
	int signo = parse_signal(sig);
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
		if (action == "post-restore")
			return check_nodes();
		if (action == "post-resume")
			return post_resume();
		return 0; /* every other action: nothing to do */
	} catch (const std::exception &e) {
		log(action + ": " + e.what());
		return 1;
	}
}
