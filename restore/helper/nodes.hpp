// Device nodes inside a task's root, reached without following anything the container
// controls: openat2(RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "manifest/json_reader.hpp"

namespace gw::action
{

struct NodeInfo {
	std::string path; // "/dev/dri/card0"
	uint32_t major = 0, minor = 0;
	uint32_t mode = 0660; // permission bits
	uint32_t uid = 0, gid = 0;
	std::string driver;   // DRM driver name at dump (the manifest's, DRM_IOCTL_VERSION's)
	std::string pci_id;   // "" unless PCI
	std::string pci_slot; // "" unless PCI
};

// stat of `path` inside /proc/PID/root; nullopt if absent (throws gw::Error on other errors).
std::optional<NodeInfo> stat_node_in_root(uint32_t pid, const std::string &path);

// Creates `node.path` inside /proc/PID/root as a character device of (226, minor) with
// node.mode/uid/gid, creating /dev/dri if needed. Refuses (throws gw::Error) any path that is
// not /dev/dri/cardN or /dev/dri/renderDN and any major but 226. Returns false if a node
// already exists there (it is left alone).
bool create_node_in_root(uint32_t pid, const NodeInfo &node, uint32_t minor);
// The same below an already open root directory (e.g. "/" of a restored task, from inside it).
bool create_node_at(int root, const NodeInfo &node, uint32_t minor);

nlohmann::json to_json(const NodeInfo &n);
NodeInfo node_from_json(const jsonin::Obj &o); // throws gw::Error on a malformed entry

} // namespace gw::action
