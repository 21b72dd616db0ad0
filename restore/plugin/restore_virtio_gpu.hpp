// The restore side of virtio_gpu files (inside the restored task, from RESTORE_EXT_FILE):
// buffers RESOURCE_CREATE made come back with the same resource parameters, and every buffer
// whose host copy the task had written (TRANSFER_TO_HOST) has it written again from the
// restored contents, so a display scanning it out shows them. Handle numbering, sharing and
// contents are restore_file.cpp's.
#pragma once

#include <cstdint>

#include "images.hpp"

namespace gwcriu
{

// Creates handle h's resource (h.virtio) and fills it (*filled). Throws Error.
uint32_t virtio_gpu_create(int fd, const HandleRec &h, bool *filled);

// Writes the host copy of `handle`'s resource (width x height pixels: RESOURCE_CREATE's, or a
// dumb buffer's) from its guest pages, whole, and waits for it: true; unknown size: logged,
// false. Throws Error.
bool virtio_gpu_upload(int fd, uint32_t handle, uint32_t width, uint32_t height);

} // namespace gwcriu
