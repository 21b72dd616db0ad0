// `gpuwatch container-config`: CRIU configuration for the runtimes and the OCI hook definition
// (install time; containers.hpp).
#include "container_config.hpp"
#include "criu_settings.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <regex>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "control_client.hpp"
#include "criu_args.hpp"
#include "drm_devices.hpp"
#include "sysutil.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace gw
{
namespace
{

std::string run_capture(const std::string &cmd)
{
	std::string out;
	FILE *p = ::popen(cmd.c_str(), "r");
	if (!p)
		return out;
	char buf[512];
	std::size_t n;
	while ((n = std::fread(buf, 1, sizeof buf, p)) > 0)
		out.append(buf, n);
	::pclose(p);
	return out;
}

} // namespace

std::string merge_criu_conf(const std::string &existing, const std::string &libdir,
			    const std::optional<std::string> &action_script, std::vector<std::string> *added)
{
	bool have_libdir = false, have_script = false;
	std::istringstream in(existing);
	for (std::string line; std::getline(in, line);) {
		auto [name, value] = criu_conf_option(line);
		if (name == "libdir" || name == "L") {
			if (plain_dir_path(value) != plain_dir_path(libdir))
				throw Error("it already loads CRIU plugins from " + value + " (\"" + line +
					    "\"), and CRIU takes one plugin directory: link gpuwatch_criu.so from " +
					    libdir + " into it and remove this line, or remove the line");
			have_libdir = true;
		}
		if (name == "action-script" && action_script && value == *action_script)
			have_script = true;
	}
	std::string out = existing;
	if (!out.empty() && out.back() != '\n')
		out += '\n';
	std::vector<std::string> lines;
	if (!have_libdir)
		lines.push_back("libdir " + libdir);
	if (action_script && !have_script)
		lines.push_back("action-script " + *action_script);
	if (!lines.empty()) {
		out += "# added by gpuwatch container-config: load the gpuwatch CRIU plugin\n";
		for (const auto &l : lines)
			out += l + "\n";
	}
	if (added)
		*added = lines;
	return out;
}

std::string read_criu_conf(const std::string &path)
{
	constexpr std::size_t kMax = 1 << 20;
	struct stat st {
	};
	if (::lstat(path.c_str(), &st) != 0) {
		if (errno == ENOENT)
			return "";
		throw Error("cannot read " + path + ": " + errno_text(errno));
	}
	// write_file_atomic renames a new regular file over the name: it would replace a symlink
	// (not its target) or a device node (/dev/zero, in a test) with it
	if (!S_ISREG(st.st_mode))
		throw Error(path + " is not a regular file (" +
			    (S_ISLNK(st.st_mode) ? "a symbolic link: give the file it names" : "left as it is") + ")");
	if (static_cast<std::size_t>(st.st_size) > kMax)
		throw Error(path + " is larger than 1 MiB: not a CRIU configuration container-config rewrites");
	auto text = read_text(path, kMax + 1);
	if (!text)
		throw Error("cannot read " + path + ": " + errno_text(errno));
	if (text->size() > kMax)
		throw Error(path + " is larger than 1 MiB: not a CRIU configuration container-config rewrites");
	return *text;
}

std::optional<std::vector<int>> parse_criu_version(const std::string &text)
{
	std::smatch m;
	static const std::regex re(R"(Version:\s*([0-9]+)\.([0-9]+)(?:\.([0-9]+))?)");
	if (!std::regex_search(text, m, re))
		return std::nullopt;
	return std::vector<int>{std::stoi(m[1]), std::stoi(m[2]), m[3].matched ? std::stoi(m[3]) : 0};
}

bool criu_runs_action_scripts_over_rpc(const std::vector<int> &v)
{
	return v.size() >= 2 && (v[0] > 3 || (v[0] == 3 && v[1] >= 19));
}

json oci_hook_definition(const std::string &gpuwatch, const std::string &stage)
{
	return {{"version", "1.0.0"},
		{"hook", {{"path", gpuwatch}, {"args", {"gpuwatch", "oci-hook", stage}}, {"timeout", 120}}},
		{"when", {{"always", true}}},
		{"stages", {stage}}};
}

int run_container_config(const ContainerConfigOptions &opts)
{
	require_root("container-config");
	CriuPaths paths = find_criu_paths();
	criu_args(paths); // refuses paths CRIU's configuration parser would split
	std::string vtext = run_capture("criu --version 2>/dev/null");
	auto version = parse_criu_version(vtext);
	if (!version)
		throw Error("criu --version gave no version: install criu (the runtimes run it from PATH)");
	bool scripts = criu_runs_action_scripts_over_rpc(*version);
	std::string vstr = std::to_string((*version)[0]) + "." + std::to_string((*version)[1]) + "." +
			   std::to_string((*version)[2]);

	// the CRIU configuration every CRIU reads (default), or the one given
	std::string existing = read_criu_conf(opts.criu_conf);
	std::vector<std::string> added;
	std::string merged;
	try {
		merged = merge_criu_conf(existing, paths.plugin_dir,
					 scripts ? std::optional<std::string>(paths.action_script) : std::nullopt,
					 &added);
	} catch (const Error &e) {
		throw Error(opts.criu_conf + ": " + e.what());
	}
	std::error_code ec;
	fs::create_directories(fs::path(opts.criu_conf).parent_path(), ec);
	if (added.empty()) {
		std::cout << opts.criu_conf << ": already loads the gpuwatch plugin (" << paths.plugin_dir
			  << "), unchanged\n";
	} else {
		struct stat st {
		};
		unsigned mode = ::stat(opts.criu_conf.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0644;
		write_file_atomic(opts.criu_conf, merged, mode);
		std::cout << opts.criu_conf << ": " << (existing.empty() ? "written" : "merged into the existing file")
			  << ", added:";
		for (const auto &l : added)
			std::cout << " \"" << l << "\"";
		std::cout << "\n";
	}
	if (!scripts)
		std::cout << "criu " << vstr << " runs no action script when a runtime drives it (RPC, before 3.19): "
			  << "the plugin syncs the daemon and creates device nodes itself; GPUWATCH_RESTORE_SIGNAL, "
			  << "following a container restored by crun and the i915 mapping conversion need the action "
			  << "script or CRIU 4 (see README \"Containers\")\n";
	if (opts.criu_conf != "/etc/criu/default.conf")
		std::cout << opts.criu_conf << " is read only by a CRIU that is handed it (runc: the annotation "
			  << "org.criu.config=" << opts.criu_conf << "; crun 1.21 hands CRIU no file)\n";

	// gpuwatch's CRIU settings (criu_settings.hpp): what checkpoints save, the restore signal
	if (!opts.checkpoint_mode.empty() || opts.restore_signal) {
		CriuSettings now;
		try {
			now = parse_criu_settings(read_criu_conf(kCriuSettingsConf), kCriuSettingsConf);
		} catch (const Error &e) {
			throw Error(std::string(e.what()) + " (fix or remove it, then run container-config again)");
		}
		if (!opts.checkpoint_mode.empty()) {
			auto mode = parse_mode_name(opts.checkpoint_mode);
			if (!mode)
				throw Error("--checkpoint-mode " + opts.checkpoint_mode +
					    " is neither full nor stateless");
			now.mode = *mode;
		}
		if (opts.restore_signal) {
			if (!opts.restore_signal->empty() && *opts.restore_signal != "none")
				parse_signal(*opts.restore_signal, "--restore-signal");
			now.restore_signal = *opts.restore_signal == "none" ? "" : *opts.restore_signal;
		}
		fs::create_directories(fs::path(kCriuSettingsConf).parent_path(), ec);
		write_file_atomic(kCriuSettingsConf, criu_settings_text(now), 0644);
		std::cout << kCriuSettingsConf << ": written (mode = " << mode_name(now.mode)
			  << (now.mode == CheckpointMode::stateless
				      ? ": checkpoints save the DRM fds only; restored applications rebuild their GPU "
					"state"
				      : ": checkpoints save buffers, handles, driver state and mappings")
			  << "; restore_signal = " << (now.restore_signal.empty() ? "none" : now.restore_signal)
			  << ")\n";
		if (!now.restore_signal.empty() && !scripts)
			std::cout << "criu " << vstr << " runs no action script under a runtime: restore_signal is "
				  << "sent only by a criu run by hand with $(gpuwatch criu-args)\n";
	}
	try {
		CriuSettings s = criu_settings();
		std::cout << "checkpoint mode: " << mode_name(s.mode) << " (from " << s.mode_from
			  << "); restore signal: " << (s.restore_signal.empty() ? "none" : s.restore_signal) << "\n";
	} catch (const Error &e) {
		std::cout << "gpuwatch's CRIU settings: " << e.what() << "\n";
	}

	// the OCI hook definitions
	std::string exe = self_exe();
	for (const std::string &dir : opts.hooks_dirs) {
		fs::create_directories(dir, ec);
		if (ec)
			throw Error("hooks directory " + dir + ": " + ec.message());
		for (const char *stage : {"prestart", "poststop"}) {
			std::string path = dir + "/gpuwatch-" + stage + ".json";
			write_file_atomic(path, oci_hook_definition(exe, stage).dump(2) + "\n", 0644);
			std::cout << path << ": written (" << stage << " hook: " << exe << " oci-hook " << stage
				  << ")\n";
		}
	}
	std::cout << "containers started from now on with a DRM device (--device /dev/dri/...) are followed "
		     "by gpuwatch; checkpoint and restore them with the runtime as usual\n";
	return 0;
}

} // namespace gw
