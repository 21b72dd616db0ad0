// The daemon's control channel: each `gpuwatch attach` registers itself under a runtime
// directory (default /run/gpuwatch, or $GPUWATCH_RUN_DIR) as <pid>.json + <pid>.sock, and
// answers "sync" requests on the socket: drain every pending tracer record, re-snapshot the
// followed processes, write the manifest, reply. The CRIU plugin and the action-script
// helper use this client side to get a synced manifest at checkpoint time; control_server.hpp
// is the daemon's side.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "manifest/manifest.hpp"
#include "sysutil.hpp"

namespace gw::control
{

struct DaemonInfo {
	uint32_t pid = 0;        // the daemon's pid
	uint64_t start_time = 0; // its start time (proc_start_time), 0: not registered (older daemon)
	uint64_t pid_ns = 0;     // its pid namespace (inode), 0: not registered (older daemon)
	bool elsewhere = false;  // in a pid namespace other than this process's: `pid` is not ours
	std::string cgroup;      // the followed cgroup v2 directory
	std::string manifest;    // its manifest file
	std::string socket;      // its control socket
};

// $GPUWATCH_RUN_DIR, else /run/gpuwatch.
std::string default_run_dir();

// Client side: the registrations of live daemons. Trusted only when the run directory and the
// registration are root's (or this user's) and nobody else may write them, the socket is the
// run directory's <pid>.sock, and the process with that pid started when the daemon that
// registered did (a daemon killed by SIGKILL leaves its registration; its pid is reused). A
// daemon of another pid namespace (CRIU run in one) cannot be found by its pid: it counts when
// root answers on its socket. What is skipped, and why, is added to `skipped` (one line each)
// when given.
std::vector<DaemonInfo> list_daemons(const std::string &run_dir, std::vector<std::string> *skipped = nullptr);
// The daemon following the cgroup that pid is in (the deepest followed ancestor), if any.
std::optional<DaemonInfo> daemon_for_pid(const std::string &run_dir, uint32_t pid,
					 std::vector<std::string> *skipped = nullptr);
// The same among daemons listed once (list_daemons), for several pids.
std::optional<DaemonInfo> daemon_for_pid(const std::vector<DaemonInfo> &daemons, uint32_t pid);
// Asks the daemon to drain and reconcile, then returns its freshly written manifest. The
// process listening on the socket must be the one that registered (SO_PEERCRED: its pid, and
// root or this user). A daemon of another pid namespace names the tasks by its pids: they are
// renamed to this namespace's (each task's own namespace and pid there, which the manifest
// records), and the tasks not visible here are left out. Throws gw::Error with one line
// (daemon gone, not the daemon that registered, timeout, malformed reply or manifest).
// *text, when given: the manifest file's text as read, when the daemon is of this pid
// namespace (its pids need no renaming: the text says what the result says); else "".
manifest::Manifest sync(const DaemonInfo &d, int timeout_ms = 10000, std::string *text = nullptr);
// The sync request alone: returns once the daemon has drained, reconciled and written its
// manifest, which is not read (a restore only wants the daemon to see the restored tasks now).
// Throws gw::Error as sync does.
void request_sync(const DaemonInfo &d, int timeout_ms = 10000);
// The sync request, not waited for: the daemon syncs on its own time (its reply goes to a closed
// connection, which it ignores). Throws gw::Error when the request cannot be sent (daemon gone,
// not the daemon that registered).
void request_sync_nowait(const DaemonInfo &d);

} // namespace gw::control
