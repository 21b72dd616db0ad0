// The control channel, daemon side: registration and the listening socket.
#include "control_server.hpp"

#include <cerrno>
#include <filesystem>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace gw::control
{

sockaddr_un unix_addr(const std::string &path);

Registration::Registration(const std::string &run_dir, const std::string &cgroup, const std::string &manifest)
{
	if (::mkdir(run_dir.c_str(), 0700) != 0 && errno != EEXIST)
		throw Error("runtime directory " + run_dir + ": " + errno_text(errno));
	// the CRIU plugin and action script (root) trust a registration only in a directory that
	// nobody but root may write (control_client.hpp): one here would be ignored
	struct stat st {
	};
	if (::stat(run_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || !owned_and_not_shared(st))
		throw Error("runtime directory " + run_dir +
			    " is not a directory that only root may write: a registration there would not be trusted "
			    "(GPUWATCH_RUN_DIR)");
	info_.pid = ::getpid();
	info_.start_time = proc_start_time(info_.pid);
	info_.pid_ns = own_pid_ns();
	info_.cgroup = cgroup;
	info_.manifest = fs::absolute(manifest).lexically_normal().string();
	std::string base = run_dir + "/" + std::to_string(info_.pid);
	info_.socket = base + ".sock";
	json_path_ = base + ".json";
	// the registration's text first: nothing is left behind when it cannot be written
	if (!is_utf8(info_.cgroup) || !is_utf8(info_.manifest))
		throw Error("manifest path " + info_.manifest + " or cgroup " + info_.cgroup +
			    ": not valid UTF-8, which the registration (JSON) cannot hold");
	std::string text =
		nlohmann::json{{"pid", info_.pid},       {"start_time", info_.start_time}, {"pid_ns", info_.pid_ns},
			       {"cgroup", info_.cgroup}, {"manifest", info_.manifest},     {"socket", info_.socket}}
			.dump() +
		"\n";

	::unlink(info_.socket.c_str()); /* a stale one from a dead daemon that had our pid */
	listen_ = UniqueFd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
	if (!listen_)
		throw Error("control socket: " + errno_text(errno));
	sockaddr_un a = unix_addr(info_.socket);
	mode_t old = ::umask(0177);
	int rc = ::bind(listen_.get(), reinterpret_cast<sockaddr *>(&a), sizeof(a));
	::umask(old);
	if (rc != 0)
		throw Error("control socket " + info_.socket + ": " + errno_text(errno));
	try {
		if (::listen(listen_.get(), 8) != 0)
			throw Error("control socket " + info_.socket + ": " + errno_text(errno));
		write_file_atomic(json_path_, text, 0600);
	} catch (...) {
		::unlink(info_.socket.c_str()); // the destructor does not run for a constructor that threw
		throw;
	}
}

Registration::~Registration()
{
	::unlink(json_path_.c_str());
	::unlink(info_.socket.c_str());
}

} // namespace gw::control
