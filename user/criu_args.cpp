#include "criu_args.hpp"

#include <filesystem>
#include <unistd.h>

#include "sysutil.hpp"

namespace fs = std::filesystem;

namespace gw {

CriuPaths find_criu_paths()
{
	std::error_code ec;
	fs::path exe = fs::read_symlink("/proc/self/exe", ec);
	if (ec)
		throw Error("cannot find the gpuwatch binary (/proc/self/exe): " + ec.message());
	fs::path bindir = exe.parent_path();
	const CriuPaths candidates[] = {
		{(bindir.parent_path() / GW_REL_PLUGIN_DIR).string(), (bindir.parent_path() / GW_REL_ACTION).string()},
		{(bindir / "criu-plugin").string(), (bindir / "gpuwatch-criu-action").string()},
	};
	std::string looked;
	for (const auto &c : candidates) {
		bool plugin = ::access((c.plugin_dir + "/gpuwatch_criu.so").c_str(), R_OK) == 0;
		bool action = ::access(c.action_script.c_str(), X_OK) == 0;
		if (plugin && action)
			return {fs::path(c.plugin_dir).lexically_normal().string(), fs::path(c.action_script).lexically_normal().string()};
		looked += (looked.empty() ? "" : ", ") + c.plugin_dir + "/gpuwatch_criu.so + " + c.action_script;
	}
	throw Error("the gpuwatch CRIU plugin or action script is not installed (looked for " + looked + ")");
}

std::string criu_args(const CriuPaths &p)
{
	for (const auto &s : {p.plugin_dir, p.action_script}) {
		if (s.find_first_of(" \t\n'\"\\$") != std::string::npos)
			throw Error("path " + s + " has characters that do not survive $(gpuwatch criu-args): install elsewhere");
	}
	return "--libdir " + p.plugin_dir + " --action-script " + p.action_script;
}

} // namespace gw
