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
	info_.pid = ::getpid();
	info_.cgroup = cgroup;
	info_.manifest = fs::absolute(manifest).lexically_normal().string();
	std::string base = run_dir + "/" + std::to_string(info_.pid);
	info_.socket = base + ".sock";
	json_path_ = base + ".json";

	::unlink(info_.socket.c_str()); /* a stale one from a dead daemon that had our pid */
	listen_ = UniqueFd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
	if (!listen_)
		throw Error("control socket: " + errno_text(errno));
	sockaddr_un a = unix_addr(info_.socket);
	mode_t old = ::umask(0177);
	int rc = ::bind(listen_.get(), reinterpret_cast<sockaddr *>(&a), sizeof(a));
	::umask(old);
	if (rc != 0 || ::listen(listen_.get(), 8) != 0)
		throw Error("control socket " + info_.socket + ": " + errno_text(errno));
	nlohmann::json j = {
		{"pid", info_.pid}, {"cgroup", info_.cgroup}, {"manifest", info_.manifest}, {"socket", info_.socket}};
	write_file_atomic(json_path_, j.dump() + "\n", 0600);
}

Registration::~Registration()
{
	::unlink(json_path_.c_str());
	::unlink(info_.socket.c_str());
}

} // namespace gw::control
