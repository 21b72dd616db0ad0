// Which gpuwatch images of a CRIU image directory belong to the dump under way. An image
// directory can be used again (podman checkpoints a container into the same directory each
// time; a user may re-run criu dump into one), and a file of an earlier dump that this dump
// does not rewrite (no i915 mappings this time, no daemon, fewer files) would be taken for
// this dump's: an old conversion record, an old manifest. So the first of the two that runs
// in a `criu dump` — the action script at pre-dump, else the plugin at init — removes every
// gpuwatch-* file it finds, and the action script leaves a marker naming the criu process, so
// that the plugin keeps what the script wrote for this very dump. The marker also names the
// root of the dumped tree (CRTOOLS_INIT_PID), which the plugin has no other way to learn under
// RPC: it then reads the tree's tasks instead of every process of the host.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gwaction
{

constexpr const char *kDumpMarker = "gpuwatch-dump.json";
// Written by the plugin when, at the dump's end (where CRIU no longer takes a plugin's
// failure), it finds its images incomplete; the action script's post-dump, which CRIU runs
// after it, then fails the dump. Its text: the reason, one line (none on a full disk).
constexpr const char *kDumpFailed = "gpuwatch-dump-failed.txt";

// Removes every regular file named gpuwatch-* in the directory dirfd (never following a
// symlink, never descending). Returns how many; throws gw::Error when the directory cannot be
// read or a file cannot be removed.
int remove_gpuwatch_images(int dirfd);
// The marker's text for criu process `criu_pid` (its start time from /proc) dumping the tree
// rooted at `tree_root`.
std::string dump_marker(uint32_t criu_pid, uint32_t tree_root);
// When the marker in dirfd names criu process `criu_pid` (same pid and start time): the tree
// root it records (0 if none); else nullopt.
std::optional<uint32_t> dump_marker_root(int dirfd, uint32_t criu_pid);
// Whether the marker in dirfd names criu process `criu_pid`.
inline bool dump_marker_is(int dirfd, uint32_t criu_pid)
{
	return dump_marker_root(dirfd, criu_pid).has_value();
}

} // namespace gwaction
