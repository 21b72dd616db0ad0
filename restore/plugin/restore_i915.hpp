// The restore side of i915 files (inside the restored task, from RESTORE_EXT_FILE): VMs and
// contexts come back with their ids and parameters, buffers as they were made (GEM_CREATE,
// GEM_CREATE_EXT in the same memory regions where the device has them, USERPTR over the same
// address) with their tiling, caching and PAT. Everything else about the file (handle numbering,
// fillers, sharing, contents) is restore_file.cpp's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "images.hpp"

namespace gwcriu
{

class I915Restore
{
public:
	I915Restore(int fd, const FileImage &f);
	// VMs and contexts with the same ids (fillers for holes, closed again). Throws Error.
	void contexts();
	// Creates handle h's buffer as it was created (kind "create", "create_ext", "userptr") and
	// fills it with its saved contents (*filled: whether contents were written). Throws Error.
	uint32_t create(const HandleRec &h, bool *filled);
	// A plain buffer of `size` bytes holding a handle number for a moment (GEM_CREATE).
	uint32_t filler(uint64_t size);
	// SET_TILING / SET_CACHING as recorded, on the restored handle (any origin).
	void attributes(const HandleRec &h, uint32_t handle);
	// What did not come back exactly, one line each (for CRIU's log).
	const std::vector<std::string> &notes() const { return notes_; }

private:
	int fd_;
	const FileImage &f_;
	std::vector<i915::Region> regions_; // the device's memory regions
	bool regions_known_ = false;
	std::vector<std::string> notes_;
	std::vector<i915::Region> placements(const HandleRec &h);
};

} // namespace gwcriu
