// The restore side of xe files (inside the restored task, from RESTORE_EXT_FILE): VMs come back
// with their ids and flags, buffers as GEM_CREATE made them (placement, flags, VM, CPU caching),
// every binding replayed with VM_BIND on the same addresses, exec queues with their ids, VMs,
// engines and properties. Handle numbering, sharing and contents are restore_file.cpp's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "images.hpp"

namespace gwcriu
{

class XeRestore
{
public:
	XeRestore(int fd, const FileImage &f);
	// VMs with the same ids; fillers for holes stay until finish() (a queue of a destroyed VM
	// id gets that filler). Throws Error.
	void vms();
	// Creates handle h's buffer with its GEM_CREATE parameters and fills it (*filled). Throws Error.
	uint32_t create(const HandleRec &h, bool *filled);
	// A plain buffer of `size` bytes holding a handle number for a moment.
	uint32_t filler(uint64_t size);
	// Replays every binding (after all handles exist), then the exec queues, then closes the
	// filler VMs and queues. Throws Error.
	void finish();
	const std::vector<std::string> &notes() const { return notes_; }

private:
	int fd_;
	const FileImage &f_;
	std::vector<uint32_t> vm_fillers_;
	std::vector<std::string> notes_;
	void bindings();
	void queues();
};

} // namespace gwcriu
