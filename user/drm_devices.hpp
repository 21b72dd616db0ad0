// DRM device identity, in one place for the daemon, the action script and the CRIU plugin:
// the DRM major, node paths, the driver's name (DRM_IOCTL_VERSION: the name the kernel's DRM
// core and the manifest use, "bochs" where sysfs says "bochs-drm"), a device's bus identity from
// sysfs, and the one rule that picks the equivalent of a saved device among candidates (another
// host, or module load order changed the minors).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "manifest/json_reader.hpp"

namespace gw
{

inline constexpr uint32_t kDrmMajor = 226;

struct DrmDevice {
	std::string name; // "card0", "renderD128"
	uint32_t major = kDrmMajor, minor = 0;
	std::string driver;   // DRM_IOCTL_VERSION name ("i915", "vgem", "bochs"); "" when unknown
	std::string bus;      // "pci", "platform", ... or "" when sysfs says nothing
	std::string pci_id;   // "8086:46a6" for PCI devices, "" otherwise
	std::string pci_slot; // "0000:00:02.0" for PCI devices, "" otherwise
	std::string platform; // the platform device's name ("vgem"), "" otherwise
	bool render() const { return name.rfind("renderD", 0) == 0; }
	std::string path() const { return "/dev/dri/" + name; }
};

// True for "/dev/dri/cardN" and "/dev/dri/renderDN" (N decimal, no other characters);
// `kind`, if given, is set to "card" or "render".
bool is_drm_node_path(const std::string &path, std::string *kind = nullptr);

// The node DRM names minor `minor` by its numbering rule ("/dev/dri/card3", "/dev/dri/renderD130"),
// or "" for a minor outside those ranges: never the path of another device.
std::string drm_node_path_of_minor(uint32_t minor);

// The DRM driver's name (DRM_IOCTL_VERSION, through libdrm) of an open DRM file; "" on failure.
std::string drm_driver_name(int fd);

// Bus identity (bus, pci_id, pci_slot, platform) of device d.major:d.minor, from
// sysfs_root/dev/char/MAJOR:MINOR/device.
void read_bus_identity(DrmDevice &d, const std::string &sysfs_root = "/sys");

// How candidates get their driver name: by default the node /dev/dri/NAME is opened (no
// symlink, a character device of that rdev) and asked; tests give their own.
using DriverNamer = std::function<std::string(const DrmDevice &)>;
std::string driver_name_of_node(const DrmDevice &d);

// The DRM nodes under sysfs_root/class/drm (card*, renderD*), sorted by minor, with their bus
// identity and the namer's driver name.
std::vector<DrmDevice> list_drm_devices(const std::string &sysfs_root = "/sys",
					const DriverNamer &namer = driver_name_of_node);

// A DRM node as a task saw it at dump: the one record of a device that the images hold (the
// plugin's file, dma-buf, mapping and fence images, the action script's node list), and what
// the equivalent-device rule below and node creation at restore work from.
struct SavedDevice {
	std::string path; // "/dev/dri/card0" as the task saw it
	uint32_t major = kDrmMajor, minor = 0;
	std::string driver;                  // DRM_IOCTL_VERSION name
	std::string pci_id;                  // may be empty
	std::string pci_slot;                // may be empty
	std::string kind;                    // "card" or "render": the path's
	std::string bus;                     // "pci", "platform", ... or "" when unknown
	std::string platform;                // platform device name, or ""
	uint32_t mode = 0, uid = 0, gid = 0; // st_mode and owner of the node as the task saw it
					     // (mode 0: not visible at its path)
	bool operator==(const SavedDevice &) const = default;
};

// Its JSON form in the images, and its strict reading: the path must be a DRM node path of the
// kind given, the major DRM's, the driver named (errors: jsonin::FormatError naming the field).
nlohmann::json to_json(const SavedDevice &d);
SavedDevice read_saved_device(const jsonin::Obj &o);

// The image holding every device a dump's images name, once (gpuwatch.criu.devices/v1,
// written by the CRIU plugin at dump): {"schema", "devices": [record...]}. The plugin's other
// images name a device by its index in that list; the action script checks its nodes at restore.
inline constexpr const char *kDevicesImage = "gpuwatch-devices.json";
nlohmann::json devices_image_json(const std::vector<SavedDevice> &devices);
// Throws jsonin::FormatError naming the field.
std::vector<SavedDevice> parse_devices_image(const std::string &text);

// The equivalent of `saved` among `candidates`: the same kind of node (card/render) of the same
// driver, and of the same PCI id where both are known (a candidate known not to be PCI does not
// stand in for a PCI device). Preferred in order: the saved path at the saved minor, the saved
// path, the saved minor, the same PCI slot, the lowest minor. Pure.
struct DeviceChoice {
	std::optional<std::size_t> index; // into candidates; nullopt: none
	bool same = false;                // the saved node itself (path and minor)
	std::string why;                  // which rule chose it, or why none did
};
DeviceChoice choose_equivalent(const SavedDevice &saved, const std::vector<DrmDevice> &candidates);

// choose_equivalent among this host's devices (list_drm_devices).
std::optional<DrmDevice> choose_equivalent_device(const SavedDevice &saved, std::string *why,
						  const std::string &sysfs_root = "/sys",
						  const DriverNamer &namer = driver_name_of_node);

} // namespace gw
