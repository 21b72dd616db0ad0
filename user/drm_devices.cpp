#include "drm_devices.hpp"

#include <algorithm>
#include <climits>
#include <filesystem>
#include <fstream>
#include <regex>
#include <unistd.h>

namespace fs = std::filesystem;

namespace gw
{

static std::string read_first_line(const fs::path &p)
{
	std::ifstream in(p);
	std::string s;
	std::getline(in, s);
	return s;
}

static std::string link_basename(const fs::path &p)
{
	std::error_code ec;
	fs::path target = fs::read_symlink(p, ec);
	return ec ? "" : target.filename().string();
}

static DrmDevice describe(const fs::path &node)
{
	DrmDevice d;
	d.name = node.filename().string();
	std::string dev = read_first_line(node / "dev"); /* "226:0" */
	auto colon = dev.find(':');
	if (colon != std::string::npos) {
		d.major = std::stoul(dev.substr(0, colon));
		d.minor = std::stoul(dev.substr(colon + 1));
	}
	fs::path device = node / "device";
	d.driver = link_basename(device / "driver");
	std::string subsystem = link_basename(device / "subsystem");
	std::string devname = link_basename(device);
	if (subsystem == "pci") {
		std::string vendor = read_first_line(device / "vendor"), id = read_first_line(device / "device");
		auto hex = [](std::string s) { return s.rfind("0x", 0) == 0 ? s.substr(2) : s; };
		if (!vendor.empty() && !id.empty())
			d.pci_id = hex(vendor) + ":" + hex(id);
	}
	d.bus = (subsystem.empty() ? "unknown" : subsystem) + ":" + devname;
	/* devices no driver is bound to (vgem's platform device): the device's own name */
	if (d.driver.empty())
		d.driver = devname;
	return d;
}

std::vector<DrmDevice> list_drm_devices(const std::string &sysfs_root)
{
	std::vector<DrmDevice> out;
	std::error_code ec;
	for (const auto &ent : fs::directory_iterator(fs::path(sysfs_root) / "class/drm", ec)) {
		std::string n = ent.path().filename().string();
		bool card = n.rfind("card", 0) == 0 && n.find('-') == std::string::npos; /* not card0-HDMI-A-1 */
		if (!card && n.rfind("renderD", 0) != 0)
			continue;
		DrmDevice d = describe(ent.path());
		if (d.major != 0)
			out.push_back(std::move(d));
	}
	std::sort(out.begin(), out.end(), [](const DrmDevice &a, const DrmDevice &b) { return a.minor < b.minor; });
	return out;
}

std::optional<DrmDevice> drm_device_by_rdev(uint32_t major, uint32_t minor, const std::string &sysfs_root)
{
	for (auto &d : list_drm_devices(sysfs_root)) {
		if (d.major == major && d.minor == minor)
			return d;
	}
	return std::nullopt;
}

std::optional<DrmDevice> choose_equivalent_device(const SavedDevice &saved, std::string *why,
						  const std::string &sysfs_root)
{
	auto devices = list_drm_devices(sysfs_root);
	bool render = saved.path.rfind("/dev/dri/renderD", 0) == 0;
	auto matches = [&](const DrmDevice &d) {
		return d.driver == saved.driver && d.render() == render &&
		       (saved.pci_id.empty() || d.pci_id == saved.pci_id);
	};
	for (auto &d : devices) {
		if (d.major == saved.major && d.minor == saved.minor && matches(d)) {
			if (why)
				*why = "same device " + d.path() + " (" + d.driver + ")";
			return d;
		}
	}
	for (auto &d : devices) {
		if (matches(d)) {
			if (why)
				*why = saved.path + " (" + std::to_string(saved.major) + ":" +
				       std::to_string(saved.minor) + ") is now " + d.path() + " (" +
				       std::to_string(d.major) + ":" + std::to_string(d.minor) + "), the first " +
				       (render ? "render node" : "card node") + " of driver " + d.driver +
				       (saved.pci_id.empty() ? "" : " with PCI id " + saved.pci_id);
			return d;
		}
	}
	if (why)
		*why = "no DRM device for " + saved.path + " (driver " + saved.driver +
		       (saved.pci_id.empty() ? "" : ", PCI id " + saved.pci_id) + ") on this host";
	return std::nullopt;
}

bool is_drm_node_path(const std::string &path, std::string *kind)
{
	static const std::regex re("^/dev/dri/(card|renderD)[0-9]{1,4}$");
	std::smatch m;
	if (!std::regex_match(path, m, re))
		return false;
	if (kind)
		*kind = m[1] == "card" ? "card" : "render";
	return true;
}

} // namespace gw
