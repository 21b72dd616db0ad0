// i915 ioctls the plugin needs to rebuild a file's state: buffers (GEM_CREATE, GEM_CREATE_EXT
// with memory regions / protected content / PAT, USERPTR), their tiling and caching, VMs,
// contexts created with SETPARAM extensions, mmap offsets by type, the device's memory regions.
// Functions return 0 or -errno and never log.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gwcriu::i915
{

using EngineList = std::vector<std::pair<uint16_t, uint16_t>>; // (class, instance)

struct Region {
	uint16_t mem_class = 0, instance = 0;
};

int gem_create(int fd, uint64_t size, uint32_t *handle);
int gem_create_ext(int fd, uint64_t size, uint32_t flags, const std::vector<Region> &placements, bool protected_content,
		   std::optional<uint32_t> pat, uint32_t *handle);
int userptr(int fd, uint64_t addr, uint64_t size, uint32_t flags, uint32_t *handle);
int set_tiling(int fd, uint32_t handle, uint32_t mode, uint32_t stride);
int set_caching(int fd, uint32_t handle, uint32_t caching);
int busy(int fd, uint32_t handle);                                         // -ENOENT when the handle does not exist
int mmap_offset(int fd, uint32_t handle, uint32_t type, uint64_t *offset); // I915_MMAP_OFFSET_*
// The device's memory regions (QUERY MEMORY_REGIONS); empty with *err on failure.
std::vector<Region> memory_regions(int fd, int *err);

int vm_create(int fd, uint32_t *id);
int vm_destroy(int fd, uint32_t id);

struct CtxParam {
	uint64_t param = 0;
	uint64_t value = 0;
	std::vector<uint8_t> data; // non-empty: value is ignored, size/pointer are data's
};
// CONTEXT_CREATE_EXT with one SETPARAM extension per parameter (vm first when given, then the
// engine map, then the others), flags as given plus USE_EXTENSIONS when there are any.
int context_create(int fd, uint32_t flags, std::optional<uint32_t> vm, const std::optional<EngineList> &engines,
		   const std::vector<CtxParam> &params, uint32_t *id);
int context_destroy(int fd, uint32_t id);
int context_setparam(int fd, uint32_t ctx, const CtxParam &p);

// Names used by gpuwatch's manifest for context parameters ("priority", "param_<n>", ...) and
// mmap types ("gtt", "wc", "wb", "uc", "fixed"); nullopt for a name not known here.
std::optional<uint64_t> context_param_number(const std::string &name);
std::optional<uint32_t> mmap_type_number(const std::string &name);
std::optional<uint32_t> tiling_number(const std::string &name);    // "none", "X", "Y"
std::optional<uint16_t> mem_class_number(const std::string &name); // "system", "device"

} // namespace gwcriu::i915
