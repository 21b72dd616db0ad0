// The dump side of xe files: each buffer's GEM_CREATE parameters and the file's VMs (with their
// bindings) and exec queues, all taken from the manifest (the kernel has no ioctl that lists them).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "images.hpp"
#include "manifest/manifest.hpp"

namespace gwcriu
{

bool is_xe(const SavedDevice &d);
// A manifest handle entry's xe part (nullopt for buffers not made by xe GEM_CREATE: dumb,
// imports). Parameters that cannot be recreated are named in *degraded.
std::optional<XeBuffer> xe_buffer_of(const gw::manifest::Handle &manifest_handle,
				     const gw::manifest::File &manifest_file, std::vector<std::string> *degraded);
// A manifest file's VMs, bindings and exec queues.
XeFileState xe_state_of(const gw::manifest::File &manifest_file, std::vector<std::string> *degraded);

} // namespace gwcriu
