// DRM device identity: what the dump records about a node, and the choice of a node at
// restore (the saved one when it is still the same device, else an equivalent one).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "images.hpp"

namespace gwcriu
{

// Describes the device of a DRM file being dumped. `path` is the node as the task saw it
// ("" if unknown: taken from sysfs); `fd` (if >= 0) answers DRM_IOCTL_VERSION, else
// `driver` is used; the node's mode and owner are read through /proc/<holder_pid>/root (the
// task's mount namespace) when holder_pid is not 0.
SavedDevice describe_device(uint32_t major, uint32_t minor, const std::string &path, int fd, const std::string &driver,
			    uint32_t holder_pid);

struct ChosenDevice {
	std::string path;
	uint32_t minor = 0;
	bool substituted = false; // not the saved node
};

// The node to reopen for `saved`: the saved path when it is still a DRM node of the same kind,
// driver and (where known) PCI id; else the first equivalent node under /dev/dri, logged.
// Throws Error "no DRM device for /dev/dri/card0 (driver vgem) on this host" when none.
// Cached per process: every file of one saved device gets the same answer.
// If the saved node is missing from the task's /dev, it is first created there as the host
// device plan_host_devices() found for it (saved mode and owner).
ChosenDevice choose_device(const SavedDevice &saved);

// At restore init, in CRIU's own mount namespace (before the tasks exist): finds the host's
// equivalent of each saved device, for choose_device() to create missing nodes in the tasks.
void plan_host_devices(const std::vector<SavedDevice> &saved);

// Opens a node path that passed gw::is_drm_node_path(), without following symlinks, with the saved
// access mode and O_NONBLOCK; checks that it is a character device of major 226 (and of the
// minor given, unless it is negative). Throws Error naming the node.
UniqueFd open_node(const std::string &path, uint32_t f_flags, long want_minor);

// The card node of the device behind a chosen node (itself for a card node): render nodes
// refuse dumb buffers on some drivers, and new buffers are made there then shared by PRIME.
// "" when there is none.
std::string card_node_of(const ChosenDevice &dev);

} // namespace gwcriu
