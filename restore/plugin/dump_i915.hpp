// The dump side of i915 files: creation parameters, tiling and caching of each buffer, and the
// file's contexts and VMs, all taken from the manifest (the kernel has no ioctl that lists them).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "images.hpp"
#include "manifest/manifest.hpp"

namespace gwcriu
{

bool is_i915(const SavedDevice &d);
// A manifest handle entry's i915 part (kind "" for buffers not made by an i915 create ioctl).
// Parameters that cannot be recreated are named in *degraded.
I915Buffer i915_buffer_of(const gw::manifest::Handle &manifest_handle, std::vector<std::string> *degraded);
// A manifest file's contexts and VMs.
I915FileState i915_state_of(const gw::manifest::File &manifest_file, std::vector<std::string> *degraded);
// Does handle n exist in the i915 file fd (GEM_BUSY: no side effect on the file)?
bool i915_handle_exists(int fd, uint32_t n);

} // namespace gwcriu
