// The settings gpuwatch's CRIU side (plugin and action script) takes from criu's environment
// or, where the environment does not set them, from /etc/criu/gpuwatch.conf (written by
// `gpuwatch container-config`: a container runtime's CRIU gets the runtime's environment, so a
// host-wide file is how a runtime's checkpoints are configured). CRIU itself does not read the
// file.
//   mode            GPUWATCH_CHECKPOINT_MODE: what a dump saves of DRM devices. full (the
//                   default): buffers, handles, driver state, mappings. stateless: the fds only;
//                   no buffer, handle or driver object; the application rebuilds its GPU state.
//                   A restore follows what its images say, never this.
//   restore_signal  GPUWATCH_RESTORE_SIGNAL: the signal post-resume sends restored processes that
//                   hold a DRM or dma-buf fd (unset: none).
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
constexpr const char *kRestoreSignalEnv = "GPUWATCH_RESTORE_SIGNAL";
constexpr const char *kCriuSettingsConf = "/etc/criu/gpuwatch.conf";

const char *mode_name(CheckpointMode m); // "full", "stateless"
std::optional<CheckpointMode> parse_mode_name(const std::string &s);
// SIGUSR1, SIGUSR2, SIGHUP, SIGTERM, SIGINT, SIGCONT (with or without SIG) or a number from 1 to
// SIGRTMAX; throws Error "WHERE: ..." for anything else.
int parse_signal(const std::string &s, const std::string &where);

struct CriuSettings {
	CheckpointMode mode = CheckpointMode::full;
	std::string mode_from = "the default"; // the variable's name, the file's path, or "the default"
	std::string restore_signal;            // as written ("" : none); parse_signal accepts it
	std::string signal_from;
};

// The text of a gpuwatch.conf: `mode = full|stateless`, `restore_signal = SIGNAL` (each at most
// once; spaces optional), blank lines and `#` comments. Throws Error naming NAME and the line
// for anything else.
CriuSettings parse_criu_settings(const std::string &text, const std::string &name);
// The text container-config writes for s.
std::string criu_settings_text(const CriuSettings &s);

// The settings now: each variable that is set, else the file's line, else the default. The file
// counts only as a regular file owned by root and writable by no one else (it decides what a
// root process saves and signals); otherwise, or for a value that does not parse, throws Error
// with one line. An absent file is the defaults.
CriuSettings criu_settings(const std::string &conf = kCriuSettingsConf);

} // namespace gw
