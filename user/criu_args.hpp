// Where the CRIU plugin and the action-script helper of this gpuwatch are, for
// `gpuwatch criu-args`: an installed tree (relative to the running binary, so a relocated
// prefix works) or, when run from a build directory, the build directory.
#pragma once

#include <string>

namespace gw {

struct CriuPaths {
	std::string plugin_dir;     // holds gpuwatch_criu.so and nothing else CRIU would load
	std::string action_script;  // gpuwatch-criu-action
};

// Throws gw::Error naming the places it looked when the plugin or the helper is missing.
CriuPaths find_criu_paths();
// "--libdir DIR --action-script PATH"
std::string criu_args(const CriuPaths &p);

} // namespace gw
