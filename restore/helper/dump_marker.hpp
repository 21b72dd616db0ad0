// Which gpuwatch images of a CRIU image directory belong to the dump under way. An image
// directory can be used again (podman checkpoints a container into the same directory each
// time; a user may re-run criu dump into one), and a file of an earlier dump that this dump
// does not rewrite (no i915 mappings this time, no daemon, fewer files) would be taken for
// this dump's: an old conversion record, an old manifest. So the first of the two that runs
// in a `criu dump` — the action script at pre-dump, else the plugin at init — removes every
// gpuwatch-* file it finds, and the action script leaves a marker naming the criu process, so
// that the plugin keeps what the script wrote for this very dump.
#pragma once

#include <cstdint>
#include <string>

namespace gwaction
{

constexpr const char *kDumpMarker = "gpuwatch-dump.json";

// Removes every regular file named gpuwatch-* in the directory dirfd (never following a
// symlink, never descending). Returns how many; throws gw::Error when the directory cannot be
// read or a file cannot be removed.
int remove_gpuwatch_images(int dirfd);
// The marker's text for criu process `criu_pid` (its start time from /proc).
std::string dump_marker(uint32_t criu_pid);
// Whether the marker in dirfd names criu process `criu_pid` (same pid and start time).
bool dump_marker_is(int dirfd, uint32_t criu_pid);

} // namespace gwaction
