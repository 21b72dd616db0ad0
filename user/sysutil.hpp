// Small system helpers for the daemon: errors, RAII fds, cgroups, tracefs, atomic writes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <sys/stat.h>
#include <utility>
#include <vector>

namespace gw
{

// A one-line, user-facing error. Thrown by library code, printed by main().
struct Error : std::runtime_error {
	using std::runtime_error::runtime_error;
};

std::string errno_text(int err); // "No such file or directory"

class UniqueFd
{
public:
	UniqueFd() = default;
	explicit UniqueFd(int fd) : fd_(fd) {}
	UniqueFd(UniqueFd &&o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
	UniqueFd &operator=(UniqueFd &&o) noexcept;
	UniqueFd(const UniqueFd &) = delete;
	UniqueFd &operator=(const UniqueFd &) = delete;
	~UniqueFd();
	int get() const { return fd_; }
	int release() { return std::exchange(fd_, -1); } // the caller owns it now
	explicit operator bool() const { return fd_ >= 0; }

private:
	int fd_ = -1;
};

struct CgroupDir {
	std::string path; // absolute, symlinks resolved (the name /proc/PID/cgroup gives)
	uint64_t id = 0;  // cgroup id == inode number of the directory
	UniqueFd fd;      // O_RDONLY|O_DIRECTORY, for the BPF cgroup array
};

// Opens a cgroup v2 directory; throws Error naming the path and the problem (not there, not
// cgroup v2, a path that is not valid UTF-8).
CgroupDir open_cgroup_v2(const std::string &path);
// s is valid UTF-8 (what JSON text can hold)
bool is_utf8(const std::string &s);
// Where the cgroup v2 filesystem is mounted (/sys/fs/cgroup, or /sys/fs/cgroup/unified on a
// v1/v2 hybrid); throws Error if it is not mounted.
std::string cgroup2_mount_point();
// The cgroup v2 directory a process is in (via /proc/PID/cgroup and the cgroup2 mount).
std::string cgroup_v2_dir_of_pid(uint32_t pid);
// Moves the calling process into the cgroup v2 directory `dir` (writes 0 to its cgroup.procs);
// throws Error ("DIR/cgroup.procs: why") if it cannot.
void join_cgroup_v2(const std::string &dir);
// Pids in dir and all its descendant cgroups, and the ids of those cgroups.
void scan_cgroup_tree(const std::string &dir, std::set<uint32_t> &pids, std::set<uint64_t> &cgroup_ids);

void require_root(const char *what); // throws if euid != 0
void require_kernel_btf();           // throws if /sys/kernel/btf/vmlinux is absent
std::string ensure_tracefs();        // mounts tracefs if needed; returns its path

// Writes content to path atomically: a temp file in the same directory, fsync, rename.
// On any failure the temp file is removed and Error is thrown; path is never partial.
void write_file_atomic(const std::string &path, const std::string &content, unsigned mode = 0644);
// Throws unless the directory that would hold path exists and is writable.
void check_writable_dir_for(const std::string &path);

// The names in the directory dirfd (read through a new open file description of it, so dirfd
// keeps its offset) that start with prefix and end with suffix and are longer than both
// together, of any file type. Throws Error "cannot list <what>: <errno>".
std::vector<std::string> names_in_dir(int dirfd, const std::string &prefix, const std::string &suffix,
				      const std::string &what);

// The running binary (/proc/self/exe); throws Error.
std::string self_exe();
std::string proc_comm(uint32_t pid); // "" if the process is gone
// Field 22 of /proc/PID/stat (start time in clock ticks since boot), 0 if the process is gone:
// with the pid, a process's identity (a pid alone is reused).
uint64_t proc_start_time(uint32_t pid);
// A file or directory root (or this process's user) owns that nobody else may write: what a
// root daemon, plugin or hook may trust in a run directory.
bool owned_and_not_shared(const struct stat &st);
// The whole of a small file (a /proc or sysfs file) read with read(2), at most `max` bytes;
// nullopt if it cannot be opened or read (a process that has just exited: ESRCH), never throws.
std::optional<std::string> read_text(const std::string &path, std::size_t max = 1 << 20);
// The value of "Key:" in the text of a /proc/PID/status file, "" if absent.
std::string status_field(const std::string &status_text, const char *key);
// The pid in the task's own (innermost) pid namespace: the last NSpid entry; `pid` if none.
uint32_t inner_pid(const std::string &status_text, uint32_t pid);
// The arguments of a process (/proc/PID/cmdline, or "/proc/self/cmdline" for `self`), split at
// their NULs; nullopt when it cannot be read (the process is gone).
std::optional<std::vector<std::string>> proc_cmdline(const std::string &pid);
// A task as every pid namespace names it: its own (innermost) pid namespace, the inode of
// /proc/PID/ns/pid, and its pid there (the last NSpid). {0, 0} when the task is gone.
struct PidNsKey {
	uint64_t ns = 0;
	uint32_t pid = 0;
	bool operator<(const PidNsKey &o) const { return ns != o.ns ? ns < o.ns : pid < o.pid; }
};
PidNsKey pid_ns_key(uint32_t pid);
// The inode of this process's pid namespace (0 if /proc does not say).
uint64_t own_pid_ns();
// PROT_* bits as "rwx" letters ("" for PROT_NONE).
std::string prot_string(uint32_t prot);
// "/dev/dri/<name>" from /sys/dev/char/M:m; else DRM's numbering (drm_node_path_of_minor),
// "" for a minor it does not name.
std::string drm_node_path(uint32_t major, uint32_t minor);

} // namespace gw
