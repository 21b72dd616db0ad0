#include "sysutil.hpp"

#include "drm_devices.hpp"

#include <cerrno>
#include <climits>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <linux/magic.h>
#include <nlohmann/json.hpp>
#include <sstream>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace gw
{

std::string errno_text(int err)
{
	return std::strerror(err);
}

UniqueFd &UniqueFd::operator=(UniqueFd &&o) noexcept
{
	if (this != &o) {
		if (fd_ >= 0)
			::close(fd_);
		fd_ = std::exchange(o.fd_, -1);
	}
	return *this;
}

UniqueFd::~UniqueFd()
{
	if (fd_ >= 0)
		::close(fd_);
}

bool is_utf8(const std::string &s)
{
	try {
		(void)nlohmann::json(s).dump(); // the strict encoder refuses invalid UTF-8 (type_error 316)
		return true;
	} catch (const nlohmann::json::type_error &) {
		return false;
	}
}

CgroupDir open_cgroup_v2(const std::string &path)
{
	struct statfs sfs {
	};
	struct stat st {
	};
	CgroupDir cg;
	// the path the kernel gives for the cgroup (/proc/PID/cgroup): a symlink to it would be
	// registered under a name no task's cgroup matches, and the pre-dump would find no daemon
	std::error_code ec;
	cg.path = fs::canonical(path, ec).string();
	if (ec)
		throw Error("cgroup " + path + ": " + ec.message());
	if (!is_utf8(cg.path))
		throw Error("cgroup " + path +
			    ": its path is not valid UTF-8, which the manifest and the daemon's "
			    "registration (JSON) cannot hold");
	if (::stat(cg.path.c_str(), &st) != 0)
		throw Error("cgroup " + path + ": " + errno_text(errno));
	if (!S_ISDIR(st.st_mode))
		throw Error("cgroup " + path + ": not a directory");
	if (::statfs(cg.path.c_str(), &sfs) != 0)
		throw Error("cgroup " + path + ": " + errno_text(errno));
	if (sfs.f_type != CGROUP2_SUPER_MAGIC)
		throw Error("cgroup " + path +
			    ": not a cgroup v2 directory (cgroup v1 and other filesystems are not supported; "
			    "on hybrid hosts the v2 tree is usually /sys/fs/cgroup/unified)");
	cg.id = st.st_ino;
	cg.fd = UniqueFd(::open(cg.path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	if (!cg.fd)
		throw Error("cgroup " + path + ": " + errno_text(errno));
	return cg;
}

std::string cgroup2_mount_point()
{
	std::ifstream in("/proc/self/mountinfo");
	std::string line;
	while (std::getline(in, line)) {
		auto dash = line.find(" - ");
		if (dash == std::string::npos)
			continue;
		std::istringstream rest(line.substr(dash + 3));
		std::string fstype;
		rest >> fstype;
		if (fstype != "cgroup2")
			continue;
		std::istringstream head(line.substr(0, dash));
		std::string id, parent, devno, root, mnt;
		head >> id >> parent >> devno >> root >> mnt;
		if (root == "/")
			return mnt;
	}
	throw Error("no cgroup v2 filesystem is mounted (see /proc/self/mountinfo)");
}

std::string cgroup_v2_dir_of_pid(uint32_t pid)
{
	std::ifstream in("/proc/" + std::to_string(pid) + "/cgroup");
	if (!in)
		throw Error("process " + std::to_string(pid) + ": no such process");
	std::string line;
	while (std::getline(in, line)) {
		if (line.rfind("0::", 0) == 0)
			return cgroup2_mount_point() + line.substr(3);
	}
	throw Error("process " + std::to_string(pid) + " is in no cgroup v2 (no '0::' line in /proc/" +
		    std::to_string(pid) + "/cgroup)");
}

void join_cgroup_v2(const std::string &dir)
{
	std::string procs = dir + "/cgroup.procs";
	UniqueFd fd(::open(procs.c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC));
	if (!fd || ::write(fd.get(), "0", 1) != 1)
		throw Error(procs + ": " + errno_text(errno));
}

void scan_cgroup_tree(const std::string &dir, std::set<uint32_t> &pids, std::set<uint64_t> &cgroup_ids)
{
	struct stat st {
	};
	if (::stat(dir.c_str(), &st) != 0)
		return; /* removed while we looked */
	cgroup_ids.insert(st.st_ino);
	std::ifstream procs(dir + "/cgroup.procs");
	uint32_t pid;
	while (procs >> pid)
		pids.insert(pid);
	std::error_code ec;
	for (const auto &ent : fs::directory_iterator(dir, ec)) {
		if (ent.is_directory(ec) && !ent.is_symlink(ec))
			scan_cgroup_tree(ent.path().string(), pids, cgroup_ids);
	}
}

void require_root(const char *what)
{
	if (::geteuid() != 0)
		throw Error(std::string(what) +
			    " needs root (it loads BPF programs: CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN)");
}

void require_kernel_btf()
{
	if (::access("/sys/kernel/btf/vmlinux", R_OK) != 0)
		throw Error("this kernel exposes no BTF (/sys/kernel/btf/vmlinux: " + errno_text(errno) +
			    "); gpuwatch needs a kernel built with CONFIG_DEBUG_INFO_BTF=y");
}

std::string ensure_tracefs()
{
	const std::string path = "/sys/kernel/tracing";
	if (::access((path + "/events").c_str(), F_OK) == 0)
		return path;
	if (::mount("tracefs", path.c_str(), "tracefs", 0, nullptr) != 0)
		throw Error("tracefs is not mounted at " + path + " and mounting it failed: " + errno_text(errno));
	return path;
}

void check_writable_dir_for(const std::string &path)
{
	fs::path p(path);
	std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
	struct stat st {
	};
	if (::stat(dir.c_str(), &st) != 0)
		throw Error("manifest " + path + ": directory " + dir + ": " + errno_text(errno));
	if (!S_ISDIR(st.st_mode))
		throw Error("manifest " + path + ": " + dir + " is not a directory");
	if (::access(dir.c_str(), W_OK) != 0)
		throw Error("manifest " + path + ": directory " + dir + " is not writable: " + errno_text(errno));
	if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
		throw Error("manifest " + path + ": is a directory");
}

void write_file_atomic(const std::string &path, const std::string &content, unsigned mode)
{
	fs::path p(path);
	std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
	std::string tmpl = dir + "/." + p.filename().string() + ".tmp.XXXXXX";
	std::string buf(tmpl);
	int fd = ::mkstemp(buf.data());
	if (fd < 0)
		throw Error("cannot write " + path + ": creating a temp file in " + dir + ": " + errno_text(errno));
	auto fail = [&](const std::string &what) {
		int err = errno;
		::close(fd);
		::unlink(buf.c_str());
		throw Error("cannot write " + path + ": " + what + ": " + errno_text(err));
	};
	size_t done = 0;
	while (done < content.size()) {
		ssize_t n = ::write(fd, content.data() + done, content.size() - done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fail("write");
		}
		done += n;
	}
	if (::fchmod(fd, mode) != 0)
		fail("fchmod");
	if (::fsync(fd) != 0)
		fail("fsync");
	if (::close(fd) != 0) {
		int err = errno;
		::unlink(buf.c_str());
		throw Error("cannot write " + path + ": close: " + errno_text(err));
	}
	if (::rename(buf.c_str(), path.c_str()) != 0) {
		int err = errno;
		::unlink(buf.c_str());
		throw Error("cannot write " + path + ": rename: " + errno_text(err));
	}
}

std::vector<std::string> names_in_dir(int dirfd, const std::string &prefix, const std::string &suffix,
				      const std::string &what)
{
	int dfd = ::openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		throw Error("cannot list " + what + ": " + errno_text(errno));
	DIR *d = ::fdopendir(dfd);
	if (!d) {
		::close(dfd);
		throw Error("cannot list " + what + ": " + errno_text(errno));
	}
	std::vector<std::string> out;
	while (struct dirent *e = ::readdir(d)) {
		std::string n = e->d_name;
		if (n.size() > prefix.size() + suffix.size() && n.compare(0, prefix.size(), prefix) == 0 &&
		    n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
			out.push_back(n);
	}
	::closedir(d);
	return out;
}

std::string self_exe()
{
	std::error_code ec;
	fs::path exe = fs::read_symlink("/proc/self/exe", ec);
	if (ec)
		throw Error("cannot find the gpuwatch binary (/proc/self/exe): " + ec.message());
	return exe.string();
}

uint64_t proc_start_time(uint32_t pid)
{
	auto st = read_text("/proc/" + std::to_string(pid) + "/stat", 4096);
	auto rp = st ? st->rfind(')') : std::string::npos;
	if (rp == std::string::npos || rp + 2 > st->size())
		return 0;
	std::istringstream in(st->substr(rp + 2)); // fields from 3 (state) on; comm may hold ')'
	std::string f;
	for (int i = 3; i < 22 && in >> f; i++) {
	}
	uint64_t v = 0;
	in >> v;
	return v;
}

bool owned_and_not_shared(const struct stat &st)
{
	return (st.st_uid == 0 || st.st_uid == ::geteuid()) && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

std::string proc_comm(uint32_t pid)
{
	std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
	std::string comm;
	std::getline(in, comm);
	return comm;
}

std::string drm_node_path(uint32_t major, uint32_t minor)
{
	char link[PATH_MAX];
	std::string sys = "/sys/dev/char/" + std::to_string(major) + ":" + std::to_string(minor);
	ssize_t n = ::readlink(sys.c_str(), link, sizeof(link) - 1);
	if (n > 0) {
		link[n] = 0;
		return "/dev/dri/" + fs::path(link).filename().string();
	}
	return major == kDrmMajor ? drm_node_path_of_minor(minor) : std::string();
}

std::optional<std::string> read_text(const std::string &path, std::size_t max)
{
	UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
	if (!fd)
		return std::nullopt;
	std::string out;
	char buf[4096];
	while (out.size() < max) {
		ssize_t n = ::read(fd.get(), buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return std::nullopt;
		if (n == 0)
			break;
		out.append(buf, static_cast<std::size_t>(n));
	}
	if (out.size() > max)
		out.resize(max);
	return out;
}

std::string status_field(const std::string &status_text, const char *key)
{
	std::istringstream in(status_text);
	std::string k = std::string(key) + ":";
	for (std::string line; std::getline(in, line);) {
		if (line.rfind(k, 0) != 0)
			continue;
		auto first = line.find_first_not_of(" \t", k.size());
		return first == std::string::npos ? std::string() : line.substr(first);
	}
	return {};
}

uint32_t inner_pid(const std::string &status_text, uint32_t pid)
{
	std::istringstream ns(status_field(status_text, "NSpid"));
	uint32_t v = 0, last = pid;
	while (ns >> v)
		last = v;
	return last;
}

std::optional<std::vector<std::string>> proc_cmdline(const std::string &pid)
{
	auto text = read_text("/proc/" + pid + "/cmdline", 1 << 20);
	if (!text)
		return std::nullopt;
	std::vector<std::string> args;
	for (std::size_t at = 0; at < text->size();) {
		std::size_t end = text->find('\0', at);
		if (end == std::string::npos)
			end = text->size();
		args.push_back(text->substr(at, end - at));
		at = end + 1;
	}
	return args;
}

PidNsKey pid_ns_key(uint32_t pid)
{
	std::string dir = "/proc/" + std::to_string(pid);
	struct stat st {
	};
	auto status = read_text(dir + "/status", 64 << 10);
	if (!status || ::stat((dir + "/ns/pid").c_str(), &st) != 0)
		return {};
	return {static_cast<uint64_t>(st.st_ino), inner_pid(*status, pid)};
}

uint64_t own_pid_ns()
{
	struct stat st {
	};
	return ::stat("/proc/self/ns/pid", &st) == 0 ? static_cast<uint64_t>(st.st_ino) : 0;
}

std::string prot_string(uint32_t prot)
{
	std::string s;
	if (prot & PROT_READ)
		s += 'r';
	if (prot & PROT_WRITE)
		s += 'w';
	if (prot & PROT_EXEC)
		s += 'x';
	return s;
}

} // namespace gw
