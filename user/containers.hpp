// Containers: `gpuwatch container-config` (CRIU configuration for runc + an OCI hook
// definition) and `gpuwatch oci-hook` (the hook: follow a container that has a DRM device for
// its whole life).
//
// Container runtimes (podman -> runc or crun, CRI-O -> runc) drive CRIU over RPC (`criu swrk`).
// Every CRIU reads /etc/criu/default.conf first, whoever runs it; runc then hands it one more
// file (the container annotation org.criu.config, else /etc/criu/runc.conf), crun 1.21 none.
// So `libdir` (and, for CRIU >= 3.19, `action-script`) go into /etc/criu/default.conf by
// default: every runtime, and criu run by hand, load gpuwatch's plugin. CRIU before 3.19 runs
// no action script under RPC (and aborts on an `action-script` line there); the plugin syncs
// the daemon and creates device nodes itself, so the plugin is enough there (README
// "Containers").
//
// The hook: one gpuwatch daemon per container that has a DRM device (a `linux.devices` entry
// of major 226 in its OCI config), started at prestart, stopped at poststop. A container
// without such a device costs one exec of `gpuwatch oci-hook` that reads its config and exits.
// runc runs prestart hooks again at restore, with the restored init's pid; crun runs none
// there, so the action script (post-setup-namespaces) starts the daemon of a restored container
// that no hook followed (follow_container).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

#include <nlohmann/json.hpp>

namespace gw
{

// --- oci-hook ------------------------------------------------------------------------------
// Whether an OCI runtime config (config.json) gives the container a DRM device.
bool oci_config_has_drm_device(const nlohmann::json &config);
// A container id usable as a file name ([A-Za-z0-9_.-], not starting with '.'), else throws.
std::string checked_container_id(const nlohmann::json &state);

// `gpuwatch oci-hook prestart|poststop`: the OCI state on stdin.
int run_oci_hook(const std::string &stage, const std::string &run_dir);

// The image the CRIU plugin writes at dump when the daemon it synced is a container's hook
// daemon: {"schema": kContainerSchema, "id": ID}. The action script reads it at restore.
constexpr const char *kContainerImage = "gpuwatch-container.json";
constexpr const char *kContainerSchema = "gpuwatch.criu.container/v1";

// Follows container `id` (checked_container_id's rules) from process pid: stops a daemon
// recorded for it before (only with `replace`: else such a daemon is left alone and nullopt
// returned), starts `GPUWATCH attach --pid PID` detached, waits until it is attached
// (GPUWATCH_HOOK_TIMEOUT_S), records it under RUN_DIR/containers/ID. Returns its pid.
std::optional<pid_t> follow_container(const std::string &run_dir, const std::string &id, uint32_t pid,
				      const std::string &gpuwatch, bool replace);
// The container id a runtime put in a cgroup v2 path (its last component: libpod-ID.scope,
// libpod-ID, crio-ID.scope, docker-ID.scope, or ID itself; ID 64 hex digits), if any.
std::optional<std::string> container_id_of_cgroup(const std::string &cgroup_dir);
// The container id whose hook daemon writes `manifest` (RUN_DIR/containers/ID/manifest.json),
// if it is one.
std::optional<std::string> container_of_manifest(const std::string &run_dir, const std::string &manifest);

} // namespace gw
