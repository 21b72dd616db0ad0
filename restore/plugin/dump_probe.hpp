// Dump helpers that work without (or beyond) the manifest: probing a file's handles, and
// deciding which dumped file each DRM mapping belongs to.
#pragma once

#include <string>

#include "dump.hpp"

namespace gwcriu
{

// Fills img.handles by PRIME-exporting handle numbers 1, 2, ... until GPUWATCH_PROBE_GAP
// (default 256) numbers in a row are absent. Objects are numbered by their dma-buf's inode,
// so a buffer shared with another file or a dma-buf fd is recognised. false: probing refused.
bool probe_handles(DumpSession &s, int lfd, FileImage &img, std::string *why);

// Claims the session's mappings that belong to the file being dumped: the manifest says so,
// or (held by one of its tasks) their offset falls in one of its handles' fake offsets, or the
// range can be mapped through lfd (its contents are then saved as a buffer of their own).
void attribute_vmas(DumpSession &s, int lfd, const FileImage &img, const std::size_t *manifest_index,
		    const gw::manifest::File *manifest_file);

// A DRM fd of the seized tasks, card nodes first; nullptr if there is none.
const TaskFd *any_drm_fd(const DumpSession &s);

} // namespace gwcriu
