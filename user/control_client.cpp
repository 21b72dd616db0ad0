// The control channel, client side: find the daemon that follows a process, ask it to sync.
#include "control_client.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <filesystem>
#include <map>
#include <set>
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

namespace
{

// A registration file read through a descriptor that is what was checked: a regular file of
// at most 64 KiB that root (or this user) owns and nobody else may write; never through a
// symlink, never blocking on a FIFO.
std::optional<std::string> read_registration(const fs::path &p)
{
	UniqueFd fd(::open(p.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
	struct stat st {
	};
	if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || !owned_and_not_shared(st) ||
	    st.st_size > (64 << 10))
		return std::nullopt;
	std::string text(static_cast<std::size_t>(st.st_size), '\0');
	std::size_t got = 0;
	while (got < text.size()) {
		ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return std::nullopt;
		got += static_cast<std::size_t>(n);
	}
	return text;
}

// A connection to the daemon's socket whose peer is root (or this user); else an empty fd, and `why`.
UniqueFd connect_daemon(const DaemonInfo &d, ucred &peer, std::string &why)
{
	UniqueFd s(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
	if (!s) {
		why = "control socket: " + errno_text(errno);
		return {};
	}
	sockaddr_un a = unix_addr(d.socket);
	if (::connect(s.get(), reinterpret_cast<sockaddr *>(&a), sizeof(a)) != 0) {
		why = errno_text(errno);
		return {};
	}
	socklen_t len = sizeof(peer);
	if (::getsockopt(s.get(), SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0 ||
	    (peer.uid != 0 && peer.uid != ::geteuid())) {
		why = "the process listening there is not root's (uid " + std::to_string(peer.uid) + ")";
		return {};
	}
	return s;
}

// The manifest of a daemon in another pid namespace, in this namespace's pids: each task is
// found among the followed cgroups' tasks (cgroup.procs names them as this namespace does) by
// its own pid namespace and its pid there, which no namespace renames.
void rename_pids(manifest::Manifest &m, const DaemonInfo &d)
{
	std::set<uint32_t> here;
	std::set<uint64_t> ids;
	scan_cgroup_tree(d.cgroup, here, ids);
	std::map<PidNsKey, uint32_t> local;
	for (uint32_t pid : here)
		if (PidNsKey k = pid_ns_key(pid); k.ns)
			local.emplace(k, pid);
	std::vector<manifest::Process> kept;
	for (manifest::Process &p : m.processes) {
		auto it = p.pid_ns ? local.find({p.pid_ns, static_cast<uint32_t>(p.ns_pid)}) : local.end();
		if (it == local.end())
			continue; // not visible here (or an older daemon's record): CRIU here cannot dump it
		p.pid = it->second;
		kept.push_back(std::move(p));
	}
	m.processes = std::move(kept);
}

} // namespace

std::vector<DaemonInfo> list_daemons(const std::string &run_dir, std::vector<std::string> *skipped)
{
	std::vector<DaemonInfo> out;
	auto skip = [&](const std::string &why) {
		if (skipped)
			skipped->push_back(why);
	};
	struct stat dst {
	};
	if (::stat(run_dir.c_str(), &dst) != 0)
		return out; // no run directory: no daemon ever registered
	if (!S_ISDIR(dst.st_mode) || !owned_and_not_shared(dst)) {
		skip("run directory " + run_dir + " is not a directory that only root may write: its registrations " +
		     "are not trusted");
		return out;
	}
	std::error_code ec;
	const uint64_t my_ns = own_pid_ns();
	for (const auto &ent : fs::directory_iterator(run_dir, ec)) {
		if (ent.path().extension() != ".json")
			continue;
		std::string name = ent.path().filename().string();
		auto text = read_registration(ent.path());
		if (!text) {
			skip("registration " + name + " is not a regular file that only root may write: ignored");
			continue;
		}
		DaemonInfo d;
		try { // registrations are written whole (rename): one that does not read is damaged
			nlohmann::json j = jsonin::parse(*text);
			jsonin::Obj o(j, "");
			d.pid = o.req_u32("pid");
			d.start_time = o.opt_u64("start_time", 0);
			d.pid_ns = o.opt_u64("pid_ns", 0);
			d.cgroup = o.req_str("cgroup", 4096);
			d.manifest = o.req_str("manifest", 4096);
			d.socket = o.req_str("socket", 4096);
		} catch (const jsonin::FormatError &e) {
			skip("registration " + name + ": " + e.what() + ": ignored");
			continue;
		}
		fs::path sock(d.socket);
		if (d.pid == 0 || sock.filename() != std::to_string(d.pid) + ".sock" ||
		    !fs::equivalent(sock.parent_path(), run_dir, ec)) {
			skip("registration " + name + " names a socket outside the run directory (" + d.socket +
			     "): ignored");
			continue;
		}
		d.elsewhere = d.pid_ns != 0 && my_ns != 0 && d.pid_ns != my_ns;
		if (d.elsewhere) { // its pid names nothing here: it is alive when root answers on its socket
			ucred peer{};
			std::string why;
			if (!connect_daemon(d, peer, why)) {
				skip("registration " + name + " is stale: daemon " + std::to_string(d.pid) +
				     " (of another pid namespace) does not answer on " + d.socket + ": " + why);
				continue;
			}
			out.push_back(std::move(d));
			continue;
		}
		uint64_t started = proc_start_time(d.pid);
		if (started == 0 || (d.start_time != 0 && started != d.start_time)) {
			skip("registration " + name + " is stale: daemon " + std::to_string(d.pid) +
			     (started == 0 ? " is gone" : " is gone and its pid was reused"));
			continue;
		}
		out.push_back(std::move(d));
	}
	return out;
}

std::optional<DaemonInfo> daemon_for_pid(const std::string &run_dir, uint32_t pid, std::vector<std::string> *skipped)
{
	// no daemon, no question: a host without cgroup v2 (where no daemon can run) answers
	// "none" rather than failing on the pid's cgroup, so a checkpoint without GPU goes on
	return daemon_for_pid(list_daemons(run_dir, skipped), pid);
}

std::optional<DaemonInfo> daemon_for_pid(const std::vector<DaemonInfo> &daemons, uint32_t pid)
{
	if (daemons.empty())
		return std::nullopt;
	std::string cg = cgroup_v2_dir_of_pid(pid);
	std::optional<DaemonInfo> best;
	for (const auto &d : daemons) {
		bool inside =
			cg == d.cgroup || (cg.size() > d.cgroup.size() &&
					   cg.compare(0, d.cgroup.size(), d.cgroup) == 0 && cg[d.cgroup.size()] == '/');
		if (inside && (!best || d.cgroup.size() > best->cgroup.size()))
			best = d;
	}
	return best;
}

namespace
{
// Connects to the daemon that registered d and sends it "sync": the connection, for the reply.
UniqueFd send_sync(const DaemonInfo &d)
{
	ucred peer{};
	std::string why;
	UniqueFd s = connect_daemon(d, peer, why);
	if (!s)
		throw Error("gpuwatch daemon " + std::to_string(d.pid) + " (" + d.socket + "): " + why);
	// in another pid namespace, the peer's pid is its pid here (0 if it has none)
	if (!d.elsewhere && peer.pid != static_cast<pid_t>(d.pid))
		throw Error("gpuwatch daemon " + std::to_string(d.pid) + " (" + d.socket +
			    "): the process listening there is not the daemon that registered (pid " +
			    std::to_string(peer.pid) + ", uid " + std::to_string(peer.uid) + ")");
	const char req[] = "sync\n";
	if (::send(s.get(), req, sizeof(req) - 1, MSG_NOSIGNAL) != (ssize_t)sizeof(req) - 1)
		throw Error("gpuwatch daemon " + std::to_string(d.pid) +
			    ": sending the sync request: " + errno_text(errno));
	return s;
}
} // namespace

void request_sync_nowait(const DaemonInfo &d)
{
	send_sync(d);
}

void request_sync(const DaemonInfo &d, int timeout_ms)
{
	UniqueFd s = send_sync(d);
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
}

manifest::Manifest sync(const DaemonInfo &d, int timeout_ms, std::string *text)
{
	request_sync(d, timeout_ms);
	try {
		manifest::Manifest m = manifest::read_file(d.manifest, d.elsewhere ? nullptr : text);
		if (d.elsewhere) {
			rename_pids(m, d);
			if (text)
				text->clear();
		}
		return m;
	} catch (const ManifestError &e) {
		throw Error(e.what());
	}
}

} // namespace gw::control
