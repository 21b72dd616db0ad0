// The control channel, client side: find the daemon that follows a process, ask it to sync.
#include "control_client.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <filesystem>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "manifest/json_reader.hpp"
#include "manifest/manifest.hpp"

namespace fs = std::filesystem;
namespace jsonin = gw::jsonin;

namespace gw::control
{

std::string default_run_dir()
{
	const char *env = ::getenv("GPUWATCH_RUN_DIR");
	return env && *env ? env : "/run/gpuwatch";
}

sockaddr_un unix_addr(const std::string &path)
{
	sockaddr_un a{};
	a.sun_family = AF_UNIX;
	if (path.size() >= sizeof(a.sun_path))
		throw Error("control socket path too long: " + path);
	std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
	return a;
}

std::vector<DaemonInfo> list_daemons(const std::string &run_dir)
{
	std::vector<DaemonInfo> out;
	std::error_code ec;
	for (const auto &ent : fs::directory_iterator(run_dir, ec)) {
		if (ent.path().extension() != ".json")
			continue;
		auto text = read_text(ent.path().string());
		if (!text)
			continue;
		DaemonInfo d;
		try { // a registration being written or left half-written is skipped
			nlohmann::json j = jsonin::parse(*text);
			jsonin::Obj o(j, "");
			d.pid = o.req_u32("pid");
			d.cgroup = o.req_str("cgroup", 4096);
			d.manifest = o.req_str("manifest", 4096);
			d.socket = o.req_str("socket", 4096);
		} catch (const jsonin::FormatError &) {
			continue;
		}
		if (d.pid == 0 || (::kill(d.pid, 0) != 0 && errno == ESRCH))
			continue; /* stale registration */
		out.push_back(std::move(d));
	}
	return out;
}

std::optional<DaemonInfo> daemon_for_pid(const std::string &run_dir, uint32_t pid)
{
	std::string cg = cgroup_v2_dir_of_pid(pid);
	std::optional<DaemonInfo> best;
	for (auto &d : list_daemons(run_dir)) {
		bool inside =
			cg == d.cgroup || (cg.size() > d.cgroup.size() &&
					   cg.compare(0, d.cgroup.size(), d.cgroup) == 0 && cg[d.cgroup.size()] == '/');
		if (inside && (!best || d.cgroup.size() > best->cgroup.size()))
			best = std::move(d);
	}
	return best;
}

manifest::Manifest sync(const DaemonInfo &d, int timeout_ms)
{
	UniqueFd s(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
	if (!s)
		throw Error("control socket: " + errno_text(errno));
	sockaddr_un a = unix_addr(d.socket);
	if (::connect(s.get(), reinterpret_cast<sockaddr *>(&a), sizeof(a)) != 0)
		throw Error("gpuwatch daemon " + std::to_string(d.pid) + " (" + d.socket + "): " + errno_text(errno));
	const char req[] = "sync\n";
	if (::send(s.get(), req, sizeof(req) - 1, MSG_NOSIGNAL) != (ssize_t)sizeof(req) - 1)
		throw Error("gpuwatch daemon " + std::to_string(d.pid) +
			    ": sending the sync request: " + errno_text(errno));
	std::string reply;
	char buf[256];
	while (reply.find('\n') == std::string::npos) {
		pollfd p{s.get(), POLLIN, 0};
		int n = ::poll(&p, 1, timeout_ms);
		if (n == 0)
			throw Error("gpuwatch daemon " + std::to_string(d.pid) +
				    " did not answer the sync request in " + std::to_string(timeout_ms) + " ms");
		if (n < 0 && errno == EINTR)
			continue;
		ssize_t r = ::recv(s.get(), buf, sizeof(buf), 0);
		if (r <= 0)
			throw Error("gpuwatch daemon " + std::to_string(d.pid) +
				    " closed the control connection without answering");
		reply.append(buf, r);
		if (reply.size() > 4096)
			throw Error("gpuwatch daemon " + std::to_string(d.pid) + ": reply too long");
	}
	reply.resize(reply.find('\n'));
	if (reply.rfind("ok", 0) != 0)
		throw Error("gpuwatch daemon " + std::to_string(d.pid) + ": sync failed: " + reply);
	try {
		return manifest::read_file(d.manifest);
	} catch (const ManifestError &e) {
		throw Error(e.what());
	}
}

} // namespace gw::control
