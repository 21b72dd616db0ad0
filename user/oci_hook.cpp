// `gpuwatch oci-hook` and following a container (run time; containers.hpp).
#include "containers.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <regex>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "control_client.hpp"
#include "criu_args.hpp"
#include "drm_devices.hpp"
#include "sysutil.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace gw
{
// --- oci-hook --------------------------------------------------------------------------------

namespace
{

// 226, also when written 226.0 (JSON does not tell the two apart; runtimes may write either)
bool is_drm_major(const json &v)
{
	return v.is_number() && v.get<double>() == static_cast<double>(gw::kDrmMajor);
}

// /dev/dri or a path under it, however written (/dev//dri/, /dev/./dri/card0)
bool under_dev_dri(const json &v)
{
	if (!v.is_string())
		return false;
	std::string p = std::filesystem::path(v.get<std::string>()).lexically_normal().string();
	return p == "/dev/dri" || p == "/dev/dri/" || p.rfind("/dev/dri/", 0) == 0;
}

template <typename F> bool any_of(const json &parent, const char *key, F &&pred)
{
	auto a = parent.find(key);
	if (a == parent.end() || !a->is_array())
		return false;
	for (const json &e : *a)
		if (e.is_object() && pred(e))
			return true;
	return false;
}

} // namespace

bool oci_config_has_drm_device(const json &config)
{
	if (!config.is_object())
		return false;
	// a device node the runtime creates: DRM's character major, or a /dev/dri path
	auto linux_ = config.find("linux");
	if (linux_ != config.end() && linux_->is_object() && any_of(*linux_, "devices", [](const json &d) {
		    auto type = d.find("type");
		    bool chr =
			    type == d.end() ||
			    (type->is_string() && (type->get<std::string>() == "c" || type->get<std::string>() == "u"));
		    auto major = d.find("major");
		    return chr && ((major != d.end() && is_drm_major(*major)) ||
				   (major == d.end() && d.contains("path") && under_dev_dri(d["path"])));
	    }))
		return true;
	// the host's /dev/dri (or one node of it) bind-mounted in
	return any_of(config, "mounts", [](const json &m) {
		return (m.contains("source") && under_dev_dri(m["source"])) ||
		       (m.contains("destination") && under_dev_dri(m["destination"]));
	});
}

namespace
{

bool plain_container_id(const std::string &s)
{
	static const std::regex ok("[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}");
	return std::regex_match(s, ok);
}

} // namespace

std::string checked_container_id(const json &state)
{
	auto id = state.find("id");
	if (id == state.end() || !id->is_string())
		throw Error("the OCI state on stdin has no container id");
	std::string s = id->get<std::string>();
	if (!plain_container_id(s))
		throw Error("container id \"" + s.substr(0, 64) + "\" is not a plain name");
	return s;
}

std::optional<std::string> container_id_of_cgroup(const std::string &cgroup_dir)
{
	std::string last = cgroup_dir.substr(cgroup_dir.find_last_of('/') + 1);
	static const std::regex id_re("(?:(?:libpod|crio|docker|cri-containerd)-)?([0-9a-f]{64})(?:\\.scope)?");
	std::smatch m;
	if (!std::regex_match(last, m, id_re))
		return std::nullopt;
	return m[1].str();
}

std::optional<std::string> container_of_manifest(const std::string &run_dir, const std::string &manifest)
{
	std::string prefix = run_dir + "/containers/", suffix = "/manifest.json";
	if (manifest.size() <= prefix.size() + suffix.size() || manifest.compare(0, prefix.size(), prefix) != 0 ||
	    manifest.compare(manifest.size() - suffix.size(), suffix.size(), suffix) != 0)
		return std::nullopt;
	std::string id = manifest.substr(prefix.size(), manifest.size() - prefix.size() - suffix.size());
	if (!plain_container_id(id))
		return std::nullopt;
	return id;
}

namespace
{

struct HookPaths {
	std::string dir, manifest, log, pidfile;
};

HookPaths hook_paths(const std::string &run_dir, const std::string &id)
{
	std::string dir = run_dir + "/containers/" + id;
	return {dir, dir + "/manifest.json", dir + "/gpuwatch.log", dir + "/daemon.pid"};
}

// The daemon recorded for this container, if it still runs as gpuwatch.
std::optional<pid_t> recorded_daemon(const HookPaths &p)
{
	auto text = read_text(p.pidfile, 64);
	if (!text)
		return std::nullopt;
	// "PID START": the daemon's pid and start time (proc_start_time); a daemon killed by
	// SIGKILL leaves the file behind, and its pid may name another process now
	char *end = nullptr;
	long pid = std::strtol(text->c_str(), &end, 10);
	unsigned long long start = std::strtoull(end, nullptr, 10);
	if (pid <= 1 || pid > 0x3fffffff)
		return std::nullopt;
	if (proc_comm(static_cast<uint32_t>(pid)) != "gpuwatch" || proc_start_time(static_cast<uint32_t>(pid)) != start)
		return std::nullopt; // gone, or the pid now belongs to another process
	return static_cast<pid_t>(pid);
}

bool wait_gone(pid_t pid, std::chrono::milliseconds limit)
{
	auto until = std::chrono::steady_clock::now() + limit;
	while (std::chrono::steady_clock::now() < until) {
		if (::kill(pid, 0) != 0 && errno == ESRCH)
			return true;
		std::this_thread::sleep_for(std::chrono::milliseconds(20));
	}
	return false;
}

void stop_daemon(const HookPaths &p, const std::string &id)
{
	if (auto pid = recorded_daemon(p)) {
		::kill(*pid, SIGTERM);
		if (!wait_gone(*pid, std::chrono::seconds(20))) {
			::kill(*pid, SIGKILL);
			wait_gone(*pid, std::chrono::seconds(5));
			std::cerr << "gpuwatch oci-hook: the daemon of container " << id << " (pid " << *pid
				  << ") did not stop on SIGTERM within 20 s: killed\n";
		}
	}
	std::error_code ec;
	fs::remove_all(p.dir, ec);
}

std::string tail_of(const std::string &path)
{
	auto text = read_text(path, 1 << 16);
	if (!text || text->empty())
		return "(no output)";
	std::string t = *text;
	while (!t.empty() && t.back() == '\n')
		t.pop_back();
	std::size_t nl = t.rfind('\n');
	return nl == std::string::npos ? t : t.substr(nl + 1);
}

// Starts `gpuwatch attach --pid PID` detached (its own session, stdio on the log, in the
// cgroup v2 root: outside the container and outside the runtime's cgroups, which the runtime
// removes when it is done) and waits until it registered and wrote its first manifest.
pid_t start_daemon(const HookPaths &p, uint32_t pid, const std::string &run_dir, const std::string &exe)
{
	std::string pid_s = std::to_string(pid);
	std::string root;
	try {
		root = cgroup2_mount_point();
	} catch (const Error &) {
	}
	pid_t child = ::fork();
	if (child < 0)
		throw Error("fork: " + errno_text(errno));
	if (child == 0) {
		::setsid();
		int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
		int log = ::open(p.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (null < 0 || log < 0 || ::dup2(null, 0) < 0 || ::dup2(log, 1) < 0 || ::dup2(log, 2) < 0)
			::_exit(127);
		::close_range(3, ~0u, 0);
		if (!root.empty()) {
			try {
				join_cgroup_v2(root);
			} catch (const Error &e) {
				std::fprintf(stderr,
					     "gpuwatch oci-hook: could not move the daemon to the cgroup root: %s\n",
					     e.what());
			}
		}
		::setenv("GPUWATCH_RUN_DIR", run_dir.c_str(), 1);
		const char *argv[] = {"gpuwatch",   "attach",           "--pid", pid_s.c_str(),
				      "--manifest", p.manifest.c_str(), nullptr};
		::execv(exe.c_str(), const_cast<char *const *>(argv));
		std::fprintf(stderr, "gpuwatch oci-hook: exec %s: %s\n", exe.c_str(), std::strerror(errno));
		::_exit(127);
	}
	auto limit = std::chrono::seconds(std::max(
		1L, std::strtol(std::getenv("GPUWATCH_HOOK_TIMEOUT_S") ? std::getenv("GPUWATCH_HOOK_TIMEOUT_S") : "90",
				nullptr, 10)));
	auto until = std::chrono::steady_clock::now() + limit;
	for (;;) {
		int status = 0;
		if (::waitpid(child, &status, WNOHANG) == child)
			throw Error("the gpuwatch daemon for pid " + pid_s + " exited at start: " + tail_of(p.log));
		bool registered = false;
		for (const auto &d : control::list_daemons(run_dir))
			registered |= d.pid == static_cast<uint32_t>(child);
		if (registered && ::access(p.manifest.c_str(), F_OK) == 0)
			return child;
		if (std::chrono::steady_clock::now() >= until) {
			::kill(child, SIGKILL);
			::waitpid(child, &status, 0);
			throw Error("the gpuwatch daemon for pid " + pid_s + " was not ready within " +
				    std::to_string(limit.count()) + " s (GPUWATCH_HOOK_TIMEOUT_S): " + tail_of(p.log));
		}
		std::this_thread::sleep_for(std::chrono::milliseconds(50));
	}
}

// The largest config.json read (a larger one is not read: nothing of it is followed).
constexpr std::size_t kMaxOciConfig = 256u << 20;

json read_json_file(const std::string &path, std::size_t max)
{
	auto text = read_text(path, max + 1);
	if (!text)
		throw Error("cannot read " + path + ": " + errno_text(errno));
	if (text->size() > max)
		throw Error(path + " is larger than " + std::to_string(max >> 20) + " MiB");
	json j = json::parse(*text, nullptr, false);
	if (j.is_discarded() || !j.is_object())
		throw Error(path + ": not a JSON object");
	return j;
}

} // namespace

int run_oci_hook(const std::string &stage, const std::string &run_dir)
{
	std::string input{std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
	json state = json::parse(input, nullptr, false);
	if (state.is_discarded() || !state.is_object())
		throw Error("oci-hook " + stage + ": stdin is not the OCI state (a JSON object)");
	std::string id = checked_container_id(state);
	HookPaths paths = hook_paths(run_dir, id);

	if (stage == "poststop") {
		stop_daemon(paths, id); // nothing recorded: a container without a DRM device
		return 0;
	}
	auto bundle = state.find("bundle");
	if (bundle == state.end() || !bundle->is_string() || bundle->get<std::string>().empty())
		throw Error("oci-hook prestart: the OCI state of container " + id + " names no bundle");
	// every container runs this hook, GPU or not: a config.json it cannot read whole (larger than
	// the bound: the runtime writes the container's whole environment and annotations there) is
	// said on stderr, and the container starts unfollowed rather than refused
	std::string config_path = bundle->get<std::string>() + "/config.json";
	json config;
	try {
		config = read_json_file(config_path, kMaxOciConfig);
	} catch (const Error &e) {
		std::cerr << "gpuwatch oci-hook: container " << id << ": " << e.what()
			  << ": not followed (a DRM device it has would go unseen)\n";
		return 0;
	}
	if (!oci_config_has_drm_device(config))
		return 0; // not ours: no daemon, nothing written
	auto pid = state.find("pid");
	if (pid == state.end() || !pid->is_number_unsigned() || pid->get<uint64_t>() == 0 ||
	    pid->get<uint64_t>() > 0x3fffffff)
		throw Error("oci-hook prestart: the OCI state of container " + id + " has no pid");
	pid_t d = *follow_container(run_dir, id, static_cast<uint32_t>(pid->get<uint64_t>()), self_exe(), true);
	std::cerr << "gpuwatch oci-hook: container " << id << " (pid " << pid->get<uint64_t>()
		  << ") has a DRM device: followed by gpuwatch daemon " << d << ", manifest " << paths.manifest << "\n";
	return 0;
}

std::optional<pid_t> follow_container(const std::string &run_dir, const std::string &id, uint32_t pid,
				      const std::string &gpuwatch, bool replace)
{
	if (!plain_container_id(id))
		throw Error("container id \"" + id.substr(0, 64) + "\" is not a plain name");
	HookPaths paths = hook_paths(run_dir, id);
	if (!replace && recorded_daemon(paths))
		return std::nullopt;
	// at restore the previous daemon stopped at poststop; one left over (a failed stop) is
	// replaced: it follows a cgroup that may be gone
	stop_daemon(paths, id);
	// the run directory is the daemons' (control sockets): 0700, as the daemon makes it
	for (const std::string &d : {run_dir, run_dir + "/containers", paths.dir})
		if (::mkdir(d.c_str(), 0700) != 0 && errno != EEXIST)
			throw Error("cannot create " + d + ": " + errno_text(errno));
	pid_t d = start_daemon(paths, pid, run_dir, gpuwatch);
	write_file_atomic(paths.pidfile,
			  std::to_string(d) + " " + std::to_string(proc_start_time(static_cast<uint32_t>(d))) + "\n",
			  0600);
	return d;
}

} // namespace gw
