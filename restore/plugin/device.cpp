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

std::string base_name(const std::string &p)
{
	auto slash = p.rfind('/');
	return slash == std::string::npos ? p : p.substr(slash + 1);
}

std::string trim(std::string s)
{
	while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
		s.pop_back();
	return s;
}

std::string strip0x(std::string s)
{
	s = trim(s);
	return s.rfind("0x", 0) == 0 ? s.substr(2) : s;
}

// Bus identity from sysfs: bus, pci_id, pci_slot, platform. Empty fields when sysfs says nothing.
void sysfs_identity(uint32_t major, uint32_t minor, DeviceRec &d)
{
	std::string dev = sysfs_dir(major, minor) + "/device";
	char real[PATH_MAX];
	if (!realpath(dev.c_str(), real))
		return;
	auto sub = read_link(dev + "/subsystem");
	d.bus = sub ? base_name(*sub) : "";
	if (d.bus == "pci") {
		auto v = read_text(dev + "/vendor", 64), p = read_text(dev + "/device", 64);
		if (v && p)
			d.pci_id = strip0x(*v) + ":" + strip0x(*p);
		d.pci_slot = base_name(real);
	} else if (d.bus == "platform") {
		d.platform = base_name(real);
	}
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

struct Candidate {
	std::string path;
	uint32_t minor = 0;
	std::string driver;
	DeviceRec ids;
};

// Opens and identifies one node; false when it is not a usable DRM node.
bool identify(const std::string &path, Candidate &c)
{
	std::string kind;
	if (!gw::is_drm_node_path(path, &kind))
		return false;
	struct stat st;
	if (lstat(path.c_str(), &st) != 0 || !S_ISCHR(st.st_mode) || major(st.st_rdev) != kDrmMajor)
		return false;
	UniqueFd fd(open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
	if (!fd)
		return false;
	c.path = path;
	c.minor = minor(st.st_rdev);
	c.driver = drm_driver_name(fd.get());
	c.ids = DeviceRec();
	sysfs_identity(kDrmMajor, c.minor, c.ids);
	return !c.driver.empty();
}

bool equivalent(const DeviceRec &saved, const Candidate &c)
{
	std::string kind;
	gw::is_drm_node_path(c.path, &kind);
	if (kind != saved.kind || c.driver != saved.driver)
		return false;
	if (!saved.pci_id.empty() && !c.ids.pci_id.empty() && saved.pci_id != c.ids.pci_id)
		return false;
	if (!saved.pci_id.empty() && c.ids.pci_id.empty() && !c.ids.bus.empty())
		return false; // a PCI device was saved; this one is known not to be PCI
	return true;
}

std::string describe(const DeviceRec &d)
{
	std::string s = d.path + " (driver " + d.driver;
	if (!d.pci_id.empty())
		s += ", PCI " + d.pci_id;
	return s + ")";
}

} // namespace

DeviceRec describe_device(uint32_t major, uint32_t minor, const std::string &path, int fd, const std::string &driver,
			  uint32_t holder_pid)
{
	DeviceRec d;
	d.major = major;
	d.minor = minor;
	d.path = path;
	if (!gw::is_drm_node_path(d.path, &d.kind)) {
		d.path = sysfs_node(major, minor);
		if (!gw::is_drm_node_path(d.path, &d.kind)) {
			d.path = (minor >= 128 && minor < 192) ? "/dev/dri/renderD" + std::to_string(minor)
							       : "/dev/dri/card" + std::to_string(minor % 64);
			gw::is_drm_node_path(d.path, &d.kind);
		}
	}
	d.driver = fd >= 0 ? drm_driver_name(fd) : std::string();
	if (d.driver.empty())
		d.driver = driver;
	if (d.driver.empty()) { // ask the node itself (CRIU's own view of /dev)
		UniqueFd own(open(d.path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW));
		struct stat st;
		if (own && fstat(own.get(), &st) == 0 && st.st_rdev == makedev(major, minor))
			d.driver = drm_driver_name(own.get());
	}
	if (d.driver.empty())
		d.driver = "unknown";
	sysfs_identity(major, minor, d);
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
// /dev/dri (same PCI slot first, then the lowest minor). `why` says why the saved one is not used.
std::optional<Candidate> find_equivalent(const DeviceRec &saved, std::string *why)
{
	Candidate c;
	if (identify(saved.path, c) && equivalent(saved, c))
		return c;
	*why = c.path.empty() ? "is missing" : "now belongs to " + c.driver;
	std::vector<Candidate> found;
	if (DIR *d = opendir("/dev/dri")) {
		while (struct dirent *e = readdir(d)) {
			Candidate k;
			if (identify(std::string("/dev/dri/") + e->d_name, k) && equivalent(saved, k))
				found.push_back(k);
		}
		closedir(d);
	}
	if (found.empty())
		return std::nullopt;
	std::sort(found.begin(), found.end(), [&](const Candidate &a, const Candidate &b) {
		bool as = !saved.pci_slot.empty() && a.ids.pci_slot == saved.pci_slot;
		bool bs = !saved.pci_slot.empty() && b.ids.pci_slot == saved.pci_slot;
		return as != bs ? as : a.minor < b.minor;
	});
	return found.front();
}

std::string device_key(const DeviceRec &saved)
{
	return saved.path + "|" + std::to_string(saved.minor) + "|" + saved.driver + "|" + saved.pci_id;
}

// host device (minor) for each saved device, chosen at init in CRIU's own mount namespace
std::map<std::string, uint32_t> g_host_minor;

// A restored container's /dev may lack the node (it was bind-mounted from the host, or the
// runtime creates device nodes itself): create it, inside the task's own mount namespace,
// as the host device chosen at init, with the saved mode and owner.
void ensure_node(const DeviceRec &saved)
{
	struct stat st;
	if (lstat(saved.path.c_str(), &st) == 0 || errno != ENOENT)
		return;
	auto it = g_host_minor.find(device_key(saved));
	if (it == g_host_minor.end())
		return; /* no host equivalent either: choose_device reports it */
	gw::action::NodeInfo n;
	n.path = saved.path;
	n.major = kDrmMajor;
	n.minor = it->second;
	n.mode = saved.mode ? (saved.mode & 0777) : 0660;
	n.uid = saved.uid;
	n.gid = saved.gid;
	UniqueFd root(open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
	if (!root)
		throw Error("cannot open the restored root: " + gw::errno_text(errno));
	if (gw::action::create_node_at(root.get(), n, it->second))
		log_warn("%s was missing in the restored mount namespace: created it as %u:%u (mode %03o, owner %u:%u)",
			 saved.path.c_str(), kDrmMajor, it->second, n.mode, n.uid, n.gid);
}

} // namespace

void plan_host_devices(const std::vector<DeviceRec> &saved)
{
	for (const DeviceRec &d : saved) {
		std::string why;
		if (auto c = find_equivalent(d, &why))
			g_host_minor[device_key(d)] = c->minor;
	}
}

ChosenDevice choose_device(const DeviceRec &saved)
{
	static std::map<std::string, ChosenDevice> cache;
	std::string key = device_key(saved);
	if (auto it = cache.find(key); it != cache.end())
		return it->second;
	ensure_node(saved);
	std::string why;
	std::optional<Candidate> c = find_equivalent(saved, &why);
	if (!c)
		throw Error("no DRM device for " + saved.path + " (driver " + saved.driver +
			    (saved.pci_id.empty() ? "" : ", PCI " + saved.pci_id) + ") on this host");
	if (c->path == saved.path && why.empty())
		return cache[key] = ChosenDevice{c->path, c->minor, false};
	log_warn("%s %s: using %s, the equivalent %s device, instead", describe(saved).c_str(), why.c_str(),
		 c->path.c_str(), saved.driver.c_str());
	return cache[key] = ChosenDevice{c->path, c->minor, true};
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
	if (fstat(fd.get(), &st) != 0 || !S_ISCHR(st.st_mode) || major(st.st_rdev) != kDrmMajor ||
	    (want_minor >= 0 && minor(st.st_rdev) != static_cast<unsigned long>(want_minor)))
		throw Error(path + " is not the DRM character device expected (major 226" +
			    (want_minor >= 0 ? ", minor " + std::to_string(want_minor) : std::string()) + ")");
	return dup_high(fd.get()); // away from the numbers CRIU restores (see kHighFd)
}

std::string card_node_of(const ChosenDevice &dev)
{
	std::string kind;
	gw::is_drm_node_path(dev.path, &kind);
	if (kind == "card")
		return dev.path;
	std::string dir = sysfs_dir(kDrmMajor, dev.minor) + "/device/drm";
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
