// Device nodes inside a task's root, reached without following anything the container
// controls: openat2(RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <sys/stat.h>

#include "drm_devices.hpp"

namespace gw::action
{

// The node as it may be created on this host: the image's mode no looser than the host's own
// node of that device (`host`, its stat; null: none found, 0660), and the host node's owner.
// An image may come from elsewhere: its mode and owner are not trusted. When that changes
// anything, `why` says what (else it is left empty).
SavedDevice as_host_allows(const SavedDevice &node, const struct stat *host, std::string *why);
// This host's node of DRM device `minor` at `path` (the chosen device's): true, with its stat,
// when `path` is that character device.
bool stat_host_node(const std::string &path, uint32_t minor, struct stat *st);

// Whether /proc/PID/root holds an entry at `path` (a checked /dev/dri node path; nothing on
// the way is followed). Throws gw::Error for another path or when the root cannot be opened.
bool node_in_root(uint32_t pid, const std::string &path);
// Creates `node.path` inside /proc/PID/root as a character device of (226, minor) with
// node.mode/uid/gid, creating /dev/dri if needed. Refuses (throws gw::Error) any path that is
// not /dev/dri/cardN or /dev/dri/renderDN and any major but 226. Returns false if a node
// already exists there (it is left alone; found without joining any cgroup). The mknod is made
// from PID's cgroup v2, so that cgroup's device policy applies to it as to the task's own (throws
// where there is no cgroup v2).
bool create_node_in_root(uint32_t pid, const SavedDevice &node, uint32_t minor);
// The same below an already open root directory (e.g. "/" of a restored task, from inside it).
bool create_node_at(int root, const SavedDevice &node, uint32_t minor);

} // namespace gw::action
