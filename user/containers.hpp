// Containers: `gpuwatch container-config` (CRIU configuration for runc + an OCI hook
// definition) and `gpuwatch oci-hook` (the hook: follow a container that has a DRM device for
// its whole life).
//
// Container runtimes (podman -> runc, CRI-O -> runc) drive CRIU over RPC. runc hands CRIU a
// configuration file (the container annotation org.criu.config, else /etc/criu/runc.conf)
// whose settings override its own: `libdir` there makes CRIU load gpuwatch's plugin. CRIU
// before 3.19 runs no action script under RPC; the plugin syncs the daemon and creates device
// nodes itself, so the plugin is enough there (see README "Containers").
//
// The hook: one gpuwatch daemon per container that has a DRM device (a `linux.devices` entry
// of major 226 in its OCI config), started at prestart (runc runs prestart hooks again at
// restore, with the restored init's pid), stopped at poststop. A container without such a
// device costs one exec of `gpuwatch oci-hook` that reads its config and exits.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gw {

// --- container-config ----------------------------------------------------------------------
struct ContainerConfigOptions {
	std::string criu_conf = "/etc/criu/runc.conf";
	// podman (4.x, as configured by default) reads hooks from /usr/share/containers/oci/hooks.d
	// only; CRI-O reads both, the /etc one masking a file of the same name in the other
	std::vector<std::string> hooks_dirs = {"/usr/share/containers/oci/hooks.d", "/etc/containers/oci/hooks.d"};
};

// The text of a CRIU configuration file after adding `libdir LIBDIR` and, if given,
// `action-script SCRIPT` to EXISTING (empty: no file yet). Every other line is kept as it was;
// settings already present are not repeated. Throws gw::Error if EXISTING loads plugins from
// another directory (CRIU takes one libdir). `added` receives the lines added.
std::string merge_criu_conf(const std::string &existing, const std::string &libdir,
                            const std::optional<std::string> &action_script, std::vector<std::string> *added);

// "3.17.1" -> {3, 17, 1}; nullopt if `criu --version` output has no "Version: X.Y[.Z]".
std::optional<std::vector<int>> parse_criu_version(const std::string &version_output);
// Whether that CRIU runs shell action scripts when driven over RPC (3.19 and later).
bool criu_runs_action_scripts_over_rpc(const std::vector<int> &version);

// The OCI hook definition (podman/CRI-O hooks.d schema 1.0.0) running `GPUWATCH oci-hook STAGE`.
nlohmann::json oci_hook_definition(const std::string &gpuwatch, const std::string &stage);

int run_container_config(const ContainerConfigOptions &opts);

// --- oci-hook ------------------------------------------------------------------------------
// Whether an OCI runtime config (config.json) gives the container a DRM device.
bool oci_config_has_drm_device(const nlohmann::json &config);
// A container id usable as a file name ([A-Za-z0-9_.-], not starting with '.'), else throws.
std::string checked_container_id(const nlohmann::json &state);

// `gpuwatch oci-hook prestart|poststop`: the OCI state on stdin.
int run_oci_hook(const std::string &stage, const std::string &run_dir);

} // namespace gw
