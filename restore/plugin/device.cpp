#include "drm_devices.hpp"
#include "device.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <optional>
#include <sys/syscall.h>
#include <map>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <vector>

#include "drm_ops.hpp"
#include "nodes.hpp"
#include "log.hpp"

namespace gwcriu
{
namespace
{

std::string sysfs_dir(uint32_t major, uint32_t minor)
{
	return "/sys/dev/char/" + std::to_string(major) + ":" + std::to_string(minor);
}

// "/dev/dri/card0" from sysfs's uevent DEVNAME, "" if unknown.
std::string sysfs_node(uint32_t major, uint32_t minor)
{
	auto ue = read_text(sysfs_dir(major, minor) + "/uevent", 4096);
	if (!ue)
		return {};
	auto at = ue->find("DEVNAME=");
	if (at == std::string::npos)
		return {};
	auto end = ue->find('\n', at);
	return "/dev/" + ue->substr(at + 8, end == std::string::npos ? std::string::npos : end - at - 8);
}

void copy_identity(const gw::DrmDevice &from, SavedDevice &to)
{
	to.bus = from.bus;
	to.pci_id = from.pci_id;
	to.pci_slot = from.pci_slot;
	to.platform = from.platform;
}

// The DRM nodes this process sees under /dev/dri (in a restore: the task's mount namespace),
// with their bus identity and driver name: the candidates of gw::choose_equivalent.
std::vector<gw::DrmDevice> nodes_in_dev_dri()
{
	std::vector<gw::DrmDevice> out;
	DIR *dir = opendir("/dev/dri");
	while (struct dirent *e = dir ? readdir(dir) : nullptr) {
		gw::DrmDevice d;
		d.name = e->d_name;
		struct stat st;
		if (!gw::is_drm_node_path(d.path()) || lstat(d.path().c_str(), &st) != 0 || !S_ISCHR(st.st_mode) ||
		    major(st.st_rdev) != gw::kDrmMajor)
			continue;
		d.minor = minor(st.st_rdev);
		gw::read_bus_identity(d);
		d.driver = gw::driver_name_of_node(d);
		if (!d.driver.empty())
			out.push_back(std::move(d));
	}
	if (dir)
		closedir(dir);
	return out;
}

} // namespace

SavedDevice describe_device(uint32_t major, uint32_t minor, const std::string &path, int fd, const std::string &driver,
			    uint32_t holder_pid)
{
	SavedDevice d;
	d.major = major;
	d.minor = minor;
	d.path = path;
	if (!gw::is_drm_node_path(d.path, &d.kind))
		d.path = sysfs_node(major, minor);
	if (!gw::is_drm_node_path(d.path, &d.kind))
		d.path = gw::drm_node_path_of_minor(minor);
	if (!gw::is_drm_node_path(d.path, &d.kind))
		throw Error("DRM device " + std::to_string(major) + ":" + std::to_string(minor) +
			    " has no node name (neither the task's fd link nor sysfs names it, and DRM's numbering "
			    "has none for that minor)");
	gw::DrmDevice dn;
	dn.name = d.path.substr(sizeof("/dev/dri/") - 1);
	dn.major = major;
	dn.minor = minor;
	d.driver = fd >= 0 ? gw::drm_driver_name(fd) : std::string();
	if (d.driver.empty())
		d.driver = driver;
	if (d.driver.empty()) // ask the node itself (CRIU's own view of /dev)
		d.driver = gw::driver_name_of_node(dn);
	if (d.driver.empty())
		d.driver = "unknown";
	gw::read_bus_identity(dn);
	copy_identity(dn, d);
	struct stat st;
	std::string node = holder_pid ? "/proc/" + std::to_string(holder_pid) + "/root" + d.path : d.path;
	if (stat(node.c_str(), &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(major, minor)) {
		d.mode = st.st_mode;
		d.uid = st.st_uid;
		d.gid = st.st_gid;
	} // else mode 0: the task did not see the node at its path (the helper then decides)
	return d;
}

namespace
{

// The saved node when it is still the same kind of device, else the best equivalent node under
// /dev/dri (gw::choose_equivalent). `why` says which rule chose it, or why none did.
std::optional<gw::DrmDevice> find_equivalent(const SavedDevice &saved, gw::DeviceChoice *choice)
{
	std::vector<gw::DrmDevice> nodes = nodes_in_dev_dri();
	*choice = gw::choose_equivalent(saved, nodes);
	if (!choice->index)
		return std::nullopt;
	return nodes[*choice->index];
}

std::string device_key(const SavedDevice &saved)
{
	return saved.path + "|" + std::to_string(saved.minor) + "|" + saved.driver + "|" + saved.pci_id;
}

// host device (minor) for each saved device, chosen at init in CRIU's own mount namespace,
// and the host's node of it (its mode and owner bound the node a restore creates)
std::map<std::string, uint32_t> g_host_minor;
std::map<std::string, struct stat> g_host_node;

// A restored container's /dev may lack the node (it was bind-mounted from the host, or the
// runtime creates device nodes itself): create it, inside the task's own mount namespace,
// as the host device chosen at init, with the saved mode and owner.
void ensure_node(const SavedDevice &saved)
{
	struct stat st;
	if (lstat(saved.path.c_str(), &st) == 0 || errno != ENOENT)
		return;
	auto it = g_host_minor.find(device_key(saved));
	if (it == g_host_minor.end())
		return; /* no host equivalent either: choose_device reports it */
	auto host = g_host_node.find(device_key(saved));
	std::string why;
	SavedDevice n = gw::action::as_host_allows(saved, host == g_host_node.end() ? nullptr : &host->second, &why);
	n.minor = it->second;
	UniqueFd root(open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
	if (!root)
		throw Error("cannot open the restored root: " + gw::errno_text(errno));
	if (gw::action::create_node_at(root.get(), n, it->second))
		log_warn("%s was missing in the restored mount namespace: created it as %u:%u (mode %03o, owner "
			 "%u:%u)%s%s",
			 saved.path.c_str(), gw::kDrmMajor, it->second, n.mode, n.uid, n.gid, why.empty() ? "" : ": ",
			 why.c_str());
}

} // namespace

void plan_host_devices(const std::vector<SavedDevice> &saved)
{
	for (const SavedDevice &d : saved) {
		gw::DeviceChoice choice;
		if (auto c = find_equivalent(d, &choice)) {
			g_host_minor[device_key(d)] = c->minor;
			struct stat st {
			};
			if (gw::action::stat_host_node(c->path(), c->minor, &st))
				g_host_node[device_key(d)] = st;
		}
	}
}

ChosenDevice choose_device(const SavedDevice &saved)
{
	static std::map<std::string, ChosenDevice> cache;
	std::string key = device_key(saved);
	if (auto it = cache.find(key); it != cache.end())
		return it->second;
	ensure_node(saved);
	gw::DeviceChoice choice;
	std::optional<gw::DrmDevice> c = find_equivalent(saved, &choice);
	if (!c) {
		/* a node this task may not open is not found as a device: say so rather than "none" */
		struct stat st;
		if (lstat(saved.path.c_str(), &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == gw::kDrmMajor) {
			UniqueFd probe(open(saved.path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW));
			if (!probe && (errno == EPERM || errno == EACCES))
				throw Error(
					"cannot open " + saved.path + ": " + gw::errno_text(errno) +
					" (the restored task's device policy, its cgroup's, or the node's mode refuses "
					"it)");
		}
		throw Error(choice.why);
	}
	if (c->path() == saved.path)
		return cache[key] = ChosenDevice{c->path(), c->minor, false};
	log_warn("%s: using it instead", choice.why.c_str());
	return cache[key] = ChosenDevice{c->path(), c->minor, true};
}

UniqueFd open_node(const std::string &path, uint32_t f_flags, long want_minor)
{
	if (!gw::is_drm_node_path(path, nullptr))
		throw Error("refusing to open " + path + ": not /dev/dri/cardN or /dev/dri/renderDN");
	int flags = static_cast<int>(f_flags & (O_ACCMODE | O_NONBLOCK)) | O_CLOEXEC | O_NOCTTY;
	if ((flags & O_ACCMODE) == O_ACCMODE)
		flags = (flags & ~O_ACCMODE) | O_RDWR;
	/* no symlink anywhere on the path, without O_NOFOLLOW: that flag would stay in the
	 * file's f_flags, where the application sees it (F_GETFL) and cannot clear it */
	open_how how{};
	how.flags = static_cast<uint64_t>(flags);
	how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	UniqueFd fd(static_cast<int>(syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof(how))));
	if (!fd)
		throw Error("cannot open " + path + ": " + gw::errno_text(errno));
	struct stat st;
	if (fstat(fd.get(), &st) != 0 || !S_ISCHR(st.st_mode) || major(st.st_rdev) != gw::kDrmMajor ||
	    (want_minor >= 0 && minor(st.st_rdev) != static_cast<unsigned long>(want_minor)))
		throw Error(path + " is not the DRM character device expected (major " + std::to_string(gw::kDrmMajor) +
			    (want_minor >= 0 ? ", minor " + std::to_string(want_minor) : std::string()) + ")");
	return dup_high(fd.get()); // away from the numbers CRIU restores (see kHighFd)
}

std::string card_node_of(const ChosenDevice &dev)
{
	std::string kind;
	gw::is_drm_node_path(dev.path, &kind);
	if (kind == "card")
		return dev.path;
	std::string dir = sysfs_dir(gw::kDrmMajor, dev.minor) + "/device/drm";
	if (DIR *d = opendir(dir.c_str())) {
		std::string found;
		while (struct dirent *e = readdir(d))
			if (std::string n = e->d_name;
			    n.rfind("card", 0) == 0 && gw::is_drm_node_path("/dev/dri/" + n, nullptr))
				found = "/dev/dri/" + n;
		closedir(d);
		if (!found.empty())
			return found;
	}
	return {};
}

} // namespace gwcriu
