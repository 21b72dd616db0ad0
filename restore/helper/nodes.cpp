#include "nodes.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <csignal>
#include <linux/openat2.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "drm_devices.hpp"
#include "sysutil.hpp"

namespace gw::action
{

static int openat2_in_root(int root, const char *rel, uint64_t flags)
{
	open_how how{};
	how.flags = flags;
	how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	return (int)::syscall(SYS_openat2, root, rel, &how, sizeof(how));
}

static UniqueFd open_root(uint32_t pid)
{
	std::string p = "/proc/" + std::to_string(pid) + "/root";
	UniqueFd fd(::open(p.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
	if (!fd)
		throw Error("cannot open the root of process " + std::to_string(pid) + ": " + errno_text(errno));
	return fd;
}

static void check_path(const std::string &path, uint32_t major)
{
	if (!is_drm_node_path(path))
		throw Error("refusing device node " + path + ": only /dev/dri/cardN and /dev/dri/renderDN are created");
	if (major != kDrmMajor)
		throw Error("refusing device node " + path + ": major " + std::to_string(major) + " is not DRM (" +
			    std::to_string(kDrmMajor) + ")");
}

// The name of a checked node path in /dev/dri, and whether the directory dri holds an entry of
// that name (of any type, never followed).
static std::string dri_name(const std::string &path)
{
	return path.substr(sizeof("/dev/dri/") - 1);
}

static bool in_dri(int dri, const std::string &name)
{
	struct stat st {
	};
	return ::fstatat(dri, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static std::string mode_owner(uint32_t mode, uint32_t uid, uint32_t gid)
{
	char buf[64];
	std::snprintf(buf, sizeof buf, "mode %03o, owner %u:%u", mode & 0777, uid, gid);
	return buf;
}

SavedDevice as_host_allows(const SavedDevice &node, const struct stat *host, std::string *why)
{
	SavedDevice n = node;
	n.mode = (node.mode ? node.mode & 0777 : 0660) & (host ? host->st_mode & 0777 : 0660);
	n.uid = host ? host->st_uid : 0;
	n.gid = host ? host->st_gid : 0;
	why->clear();
	if ((node.mode & 0777) != n.mode || node.uid != n.uid || node.gid != n.gid)
		*why = "the image gives " + mode_owner(node.mode, node.uid, node.gid) + ", this host's node " +
		       (host ? "has " + mode_owner(host->st_mode, host->st_uid, host->st_gid)
			     : std::string("was not found")) +
		       ": no looser than that";
	return n;
}

bool stat_host_node(const std::string &path, uint32_t minor, struct stat *st)
{
	return ::stat(path.c_str(), st) == 0 && S_ISCHR(st->st_mode) && st->st_rdev == makedev(kDrmMajor, minor);
}

// Whether the root directory `root` holds an entry at the checked node path `path`.
static bool node_at(int root, const std::string &path)
{
	UniqueFd dri(openat2_in_root(root, "dev/dri", O_PATH | O_DIRECTORY | O_CLOEXEC));
	return dri && in_dri(dri.get(), dri_name(path));
}

bool node_in_root(uint32_t pid, const std::string &path)
{
	check_path(path, kDrmMajor);
	return node_at(open_root(pid).get(), path);
}

// The mknod runs in a child that first joins PID's cgroup v2 (the kernel's own record of it,
// not the image's), so the cgroup's device program (a container's device policy) checks it as
// it would the task's own mknod. The child exits 0 (created), 1 (a node was there) or 2 (an
// error, whose text it writes to the pipe). Bounded: a child that joined a frozen cgroup is
// killed.
bool create_node_in_root(uint32_t pid, const SavedDevice &node, uint32_t minor)
{
	check_path(node.path, node.major);
	// A node already there is left alone (create_node_at's answer too): that needs no child,
	// whose joining the task's cgroup is a cgroup migration (about 25 ms of every restore
	// under TCG, where the plugin has made the files' nodes already).
	UniqueFd root = open_root(pid);
	if (node_at(root.get(), node.path))
		return false;
	std::string cg;
	try {
		cg = cgroup_v2_dir_of_pid(pid);
	} catch (const Error &e) {
		throw Error(node.path + " not created: its device policy cannot be applied (" + e.what() + ")");
	}
	int p[2];
	if (::pipe2(p, O_CLOEXEC) != 0)
		throw Error("pipe: " + errno_text(errno));
	UniqueFd rd(p[0]), wr(p[1]);
	pid_t child = ::fork();
	if (child < 0)
		throw Error("fork: " + errno_text(errno));
	if (child == 0) {
		rd = UniqueFd();
		try {
			try {
				join_cgroup_v2(cg);
			} catch (const Error &e) {
				throw Error("cannot join the cgroup of process " + std::to_string(pid) + ": " +
					    e.what());
			}
			::_exit(create_node_at(root.get(), node, minor) ? 0 : 1);
		} catch (const std::exception &e) {
			(void)!::write(wr.get(), e.what(), std::strlen(e.what()));
		}
		::_exit(2);
	}
	wr = UniqueFd();
	std::string why;
	pollfd pf{rd.get(), POLLIN, 0};
	char buf[512];
	for (;;) {
		int n = ::poll(&pf, 1, 10000);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			::kill(child, SIGKILL);
			::waitpid(child, nullptr, 0);
			throw Error("creating " + node.path + " from the cgroup of process " + std::to_string(pid) +
				    " did not finish in 10 s (is the cgroup frozen?)");
		}
		ssize_t r = ::read(rd.get(), buf, sizeof buf);
		if (r <= 0)
			break;
		why.append(buf, (size_t)r);
	}
	int st = 0;
	::waitpid(child, &st, 0);
	if (WIFEXITED(st) && WEXITSTATUS(st) < 2)
		return WEXITSTATUS(st) == 0;
	throw Error(!why.empty() ? why : "creating " + node.path + ": the child died");
}

bool create_node_at(int root, const SavedDevice &node, uint32_t minor)
{
	check_path(node.path, node.major);
	UniqueFd dev(openat2_in_root(root, "dev", O_PATH | O_DIRECTORY | O_CLOEXEC));
	if (!dev)
		throw Error("/dev: " + errno_text(errno));
	UniqueFd dri(openat2_in_root(root, "dev/dri", O_PATH | O_DIRECTORY | O_CLOEXEC));
	if (!dri && errno == ENOENT) {
		if (::mkdirat(dev.get(), "dri", 0755) != 0 && errno != EEXIST)
			throw Error("cannot create /dev/dri: " + errno_text(errno));
		dri = UniqueFd(openat2_in_root(root, "dev/dri", O_PATH | O_DIRECTORY | O_CLOEXEC));
	}
	if (!dri)
		throw Error("/dev/dri: " + errno_text(errno));
	std::string name = dri_name(node.path);
	if (in_dri(dri.get(), name))
		return false;
	mode_t old = ::umask(0);
	int rc = ::mknodat(dri.get(), name.c_str(), S_IFCHR | (node.mode & 0777), makedev(kDrmMajor, minor));
	::umask(old);
	if (rc != 0)
		throw Error("cannot create " + node.path + ": " + errno_text(errno));
	if (::fchownat(dri.get(), name.c_str(), node.uid, node.gid, AT_SYMLINK_NOFOLLOW) != 0) {
		int err = errno;
		::unlinkat(dri.get(), name.c_str(), 0);
		throw Error("cannot set owner/mode of " + node.path + ": " + errno_text(err));
	}
	return true;
}

} // namespace gw::action
