// `gpuwatch container-config` (install time): the CRIU configuration the runtimes read and the
// OCI hook definition (containers.hpp says why). Linked into gpuwatch only.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gw
{

// --- container-config ----------------------------------------------------------------------
struct ContainerConfigOptions {
	std::string criu_conf = "/etc/criu/default.conf";
	// podman (4.x, as configured by default) reads hooks from /usr/share/containers/oci/hooks.d
	// only; CRI-O reads both, the /etc one masking a file of the same name in the other
	std::vector<std::string> hooks_dirs = {"/usr/share/containers/oci/hooks.d", "/etc/containers/oci/hooks.d"};
	// gw::kCriuSettingsConf's settings to write (the others in that file are kept); neither
	// given: the file is left alone
	std::string checkpoint_mode;               // "full", "stateless", or ""
	std::optional<std::string> restore_signal; // a signal, or "none"
};

// The text of a CRIU configuration file after adding `libdir LIBDIR` and, if given,
// `action-script SCRIPT` to EXISTING (empty: no file yet). Every other line is kept as it was;
// settings already present are not repeated. Throws gw::Error if EXISTING loads plugins from
// another directory (CRIU takes one libdir). `added` receives the lines added.
std::string merge_criu_conf(const std::string &existing, const std::string &libdir,
			    const std::optional<std::string> &action_script, std::vector<std::string> *added);

// The CRIU configuration file container-config is to merge into: its text, "" when there is
// none. Throws gw::Error for anything it must not replace with a regular file of its own (a
// symlink, a device, a FIFO, a directory) or could not keep whole (more than 1 MiB).
std::string read_criu_conf(const std::string &path);

// "3.17.1" -> {3, 17, 1}; nullopt if `criu --version` output has no "Version: X.Y[.Z]".
std::optional<std::vector<int>> parse_criu_version(const std::string &version_output);
// Whether that CRIU runs shell action scripts when driven over RPC (3.19 and later).
bool criu_runs_action_scripts_over_rpc(const std::vector<int> &version);

// The OCI hook definition (podman/CRI-O hooks.d schema 1.0.0) running `GPUWATCH oci-hook STAGE`.
nlohmann::json oci_hook_definition(const std::string &gpuwatch, const std::string &stage);

int run_container_config(const ContainerConfigOptions &opts);

} // namespace gw
