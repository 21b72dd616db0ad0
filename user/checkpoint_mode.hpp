// What a `criu dump` saves of a DRM device: everything (full, the default) or the devices only
// (stateless: the fds come back, no buffer, handle or driver object, and the application is
// told and rebuilds its GPU state). Chosen by GPUWATCH_CHECKPOINT_MODE in criu's environment,
// else by /etc/criu/gpuwatch.conf (`gpuwatch container-config --checkpoint-mode`), which
// a container runtime's CRIU reads too. The restore follows what the images say, never this.
#pragma once

#include <optional>
#include <string>

namespace gw
{

enum class CheckpointMode {
	full,
	stateless
};

constexpr const char *kCheckpointModeEnv = "GPUWATCH_CHECKPOINT_MODE";
constexpr const char *kCheckpointConf = "/etc/criu/gpuwatch.conf"; // beside CRIU's own, which CRIU does not read

const char *mode_name(CheckpointMode m); // "full", "stateless"
std::optional<CheckpointMode> parse_mode_name(const std::string &s);

// The text of a gpuwatch.conf: `mode = full|stateless` (spaces optional), blank lines and
// `#` comments. Throws Error naming NAME and the line for anything else.
CheckpointMode parse_checkpoint_conf(const std::string &text, const std::string &name);

// The text a gpuwatch.conf holds for mode m (what container-config writes).
std::string checkpoint_conf_text(CheckpointMode m);

// The mode of this dump: GPUWATCH_CHECKPOINT_MODE if set, else conf if it exists, else full.
// The file counts only as a regular file owned by root and writable by no one else (it decides
// what a root process saves); otherwise, or for a value that is not a mode, throws Error with
// one line. *from (if given) says where the mode came from.
CheckpointMode checkpoint_mode(const std::string &conf = kCheckpointConf, std::string *from = nullptr);

} // namespace gw
