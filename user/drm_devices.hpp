// The DRM devices of this host, from sysfs, and the choice of an equivalent device at
// restore (another host, or module load order changed the minors).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gw
{

struct DrmDevice {
	std::string name; // "card0", "renderD128"
	uint32_t major = 0, minor = 0;
	std::string driver; // "i915", "vgem", ...
	std::string pci_id; // "8086:46a6" for PCI devices, "" otherwise
	std::string bus;    // "pci:0000:00:02.0" or "platform:vgem"
	bool render() const { return name.rfind("renderD", 0) == 0; }
	std::string path() const { return "/dev/dri/" + name; }
};

// DRM nodes under sysfs_root/class/drm (card*, renderD*), sorted by minor.
std::vector<DrmDevice> list_drm_devices(const std::string &sysfs_root = "/sys");
std::optional<DrmDevice> drm_device_by_rdev(uint32_t major, uint32_t minor, const std::string &sysfs_root = "/sys");

// What was saved about a device at dump.
struct SavedDevice {
	std::string path; // "/dev/dri/card0"
	uint32_t major = 0, minor = 0;
	std::string driver;
	std::string pci_id; // may be empty
};

// The same node if it still belongs to the same driver (and PCI id, if saved); otherwise the
// lowest-minor node of the same kind (card/render) with the same driver and PCI id. `why`
// says which rule chose it, or why none did.
std::optional<DrmDevice> choose_equivalent_device(const SavedDevice &saved, std::string *why,
						  const std::string &sysfs_root = "/sys");

// True for "/dev/dri/cardN" and "/dev/dri/renderDN" (N decimal, no other characters);
// `kind`, if given, is set to "card" or "render".
bool is_drm_node_path(const std::string &path, std::string *kind = nullptr);

} // namespace gw
