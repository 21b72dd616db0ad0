// Where the CRIU plugin and the action-script helper of this gpuwatch are, for
// `gpuwatch criu-args`: an installed tree (relative to the running binary, so a relocated
// prefix works) or, when run from a build directory, the build directory.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace gw
{

struct CriuPaths {
	std::string plugin_dir;    // holds gpuwatch_criu.so and nothing else CRIU would load
	std::string action_script; // gpuwatch-criu-action
};

// Throws gw::Error naming the places it looked when the plugin or the helper is missing.
CriuPaths find_criu_paths();

// The configuration file every CRIU reads first (`criu` by hand, and `criu swrk` under runc,
// crun or CRI-O); `gpuwatch container-config` adds gpuwatch's plugin to it.
constexpr const char *kGlobalCriuConf = "/etc/criu/default.conf";
// Its text ("" when absent or unreadable).
std::string global_criu_conf();
// "--libdir DIR --action-script PATH", without what GLOBAL_CONF (the text of kGlobalCriuConf)
// sets already: CRIU runs an action script once per `action-script` it is given, and would run
// it twice. Throws gw::Error for paths CRIU's option parsing would split.
std::string criu_args(const CriuPaths &p, const std::string &global_conf = "");

// CRIU's own plugin directory (CR_PLUGIN_DEFAULT), which --libdir replaces.
constexpr const char *kCriuPluginDir = "/usr/lib/criu";
// The plugins (*.so) of `criu_dir` other than gpuwatch's: what CRIU no longer loads once
// gpuwatch's --libdir is given (Debian 13 ships amdgpu_plugin.so and cuda_plugin.so there).
std::vector<std::string> plugins_replaced(const std::string &criu_dir = kCriuPluginDir);

// A CRIU configuration line's option name and value ("libdir /x" -> {"libdir", "/x"}, leading
// dashes dropped); comments and blank lines give an empty name.
std::pair<std::string, std::string> criu_conf_option(const std::string &line);
// "/a/b/" and "/a/./b" -> "/a/b"
std::string plain_dir_path(const std::string &p);

} // namespace gw
