#include "criu_args.hpp"

#include <algorithm>

#include <filesystem>
#include <sstream>
#include <unistd.h>

#include "sysutil.hpp"

namespace fs = std::filesystem;

namespace gw
{

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
			return {fs::path(c.plugin_dir).lexically_normal().string(),
				fs::path(c.action_script).lexically_normal().string()};
		looked += (looked.empty() ? "" : ", ") + c.plugin_dir + "/gpuwatch_criu.so + " + c.action_script;
	}
	throw Error("the gpuwatch CRIU plugin or action script is not installed (looked for " + looked + ")");
}

// A CRIU configuration line's option name and value ("libdir /x" -> {"libdir", "/x"}); option
// names may be written with leading dashes. Comments and blank lines give an empty name.
// (Single quotes are not CRIU's: 'x' is the value with its quotes.)
std::pair<std::string, std::string> criu_conf_option(const std::string &line)
{
	std::size_t b = line.find_first_not_of(" \t");
	if (b == std::string::npos || line[b] == '#')
		return {};
	std::size_t e = line.find_first_of(" \t=", b);
	std::string name = line.substr(b, e == std::string::npos ? std::string::npos : e - b);
	name.erase(0, name.find_first_not_of('-'));
	std::string value;
	if (e != std::string::npos) {
		std::size_t v = line.find_first_not_of(" \t=", e);
		if (v != std::string::npos)
			value = line.substr(v);
	}
	// as CRIU's parse_statement: the value is one word, or a "quoted string"; a word that
	// starts with '#' starts a comment ("libdir /x # why" sets /x)
	if (!value.empty() && value.front() == '"' && value.find('"', 1) != std::string::npos)
		value = value.substr(1, value.find('"', 1) - 1);
	else if (value = value.substr(0, value.find_first_of(" \t\r")); !value.empty() && value.front() == '#')
		value.clear();
	return {name, value};
}

// "/a/b/" and "/a/./b" -> "/a/b"
std::string plain_dir_path(const std::string &p)
{
	std::string s = fs::path(p).lexically_normal().string();
	while (s.size() > 1 && s.back() == '/')
		s.pop_back();
	return s;
}

std::string criu_args(const CriuPaths &p, const std::string &global_conf)
{
	for (const auto &s : {p.plugin_dir, p.action_script}) {
		if (s.find_first_of(" \t\n'\"\\$") != std::string::npos)
			throw Error("path " + s +
				    " has characters that do not survive $(gpuwatch criu-args): install elsewhere");
	}
	bool libdir = false, script = false;
	std::istringstream in(global_conf);
	for (std::string line; std::getline(in, line);) {
		auto [name, value] = criu_conf_option(line);
		libdir |= (name == "libdir" || name == "L") && plain_dir_path(value) == plain_dir_path(p.plugin_dir);
		script |= name == "action-script" && value == p.action_script;
	}
	std::string out;
	if (!libdir)
		out = "--libdir " + p.plugin_dir;
	if (!script)
		out += (out.empty() ? "" : " ") + std::string("--action-script ") + p.action_script;
	return out;
}

std::vector<std::string> plugins_replaced(const std::string &criu_dir)
{
	std::vector<std::string> out;
	std::error_code ec;
	for (const auto &e : fs::directory_iterator(criu_dir, ec))
		if (e.path().extension() == ".so" && e.path().filename() != "gpuwatch_criu.so")
			out.push_back(e.path().filename().string());
	std::sort(out.begin(), out.end());
	return out;
}

std::string global_criu_conf()
{
	return read_text(kGlobalCriuConf, 1 << 20).value_or("");
}

} // namespace gw
