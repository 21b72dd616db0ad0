#include "criu_settings.hpp"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sysutil.hpp"

namespace gw
{

const char *mode_name(CheckpointMode m)
{
	return m == CheckpointMode::stateless ? "stateless" : "full";
}

std::optional<CheckpointMode> parse_mode_name(const std::string &s)
{
	if (s == "full")
		return CheckpointMode::full;
	if (s == "stateless")
		return CheckpointMode::stateless;
	return std::nullopt;
}

int parse_signal(const std::string &s, const std::string &where)
{
	static const std::pair<const char *, int> names[] = {{"SIGUSR1", SIGUSR1}, {"SIGUSR2", SIGUSR2},
							     {"SIGHUP", SIGHUP},   {"SIGTERM", SIGTERM},
							     {"SIGINT", SIGINT},   {"SIGCONT", SIGCONT}};
	for (auto &[n, v] : names)
		if (s == n || s == n + 3)
			return v;
	char *end = nullptr;
	errno = 0;
	long v = std::strtol(s.c_str(), &end, 10);
	if (s.empty() || *end || errno || v <= 0 || v > SIGRTMAX)
		throw Error(where + ": \"" + s + "\" is not a signal name (SIGUSR2) or number");
	return static_cast<int>(v);
}

namespace
{

std::string trim(const std::string &s)
{
	std::size_t b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
	return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

} // namespace

CriuSettings parse_criu_settings(const std::string &text, const std::string &name)
{
	CriuSettings out;
	bool have_mode = false;
	std::size_t pos = 0, lineno = 0;
	while (pos < text.size()) {
		std::size_t nl = text.find('\n', pos);
		std::string line = trim(text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos));
		pos = nl == std::string::npos ? text.size() : nl + 1;
		++lineno;
		if (line.empty() || line[0] == '#')
			continue;
		std::string where = name + " line " + std::to_string(lineno);
		std::size_t eq = line.find('=');
		if (eq == std::string::npos)
			throw Error(where + ": expected `NAME = VALUE`");
		std::string key = trim(line.substr(0, eq)), value = trim(line.substr(eq + 1));
		if (key == "mode") {
			if (have_mode)
				throw Error(where + ": `mode` is set twice");
			auto m = parse_mode_name(value);
			if (!m)
				throw Error(where + ": mode \"" + value + "\" is neither full nor stateless");
			out.mode = *m;
			out.mode_from = name;
			have_mode = true;
		} else if (key == "restore_signal") {
			if (!out.signal_from.empty())
				throw Error(where + ": `restore_signal` is set twice");
			parse_signal(value, where);
			out.restore_signal = value;
			out.signal_from = name;
		} else {
			throw Error(where + ": unknown setting \"" + key + "\" (known: mode, restore_signal)");
		}
	}
	return out;
}

std::string criu_settings_text(const CriuSettings &s)
{
	std::string t = "# gpuwatch's CRIU settings (gpuwatch-criu(8)), written by gpuwatch container-config.\n"
			"# mode: what a checkpoint saves of DRM devices: full (buffers, handles, driver state,\n"
			"# mappings) or stateless (the fds only: the application rebuilds its GPU state).\n"
			"mode = ";
	t += mode_name(s.mode);
	t += "\n";
	if (!s.restore_signal.empty())
		t += "# restore_signal: sent to restored processes holding a DRM fd once they resume.\n"
		     "restore_signal = " +
		     s.restore_signal + "\n";
	return t;
}

CriuSettings criu_settings(const std::string &conf)
{
	CriuSettings out;
	UniqueFd fd(::open(conf.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
	if (fd) {
		struct stat st {
		};
		if (::fstat(fd.get(), &st) != 0)
			throw Error("cannot read " + conf + ": " + errno_text(errno));
		if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022))
			throw Error(conf + " is not a regular file owned by root and writable by root alone: not "
					   "trusted");
		std::string text(4097, '\0');
		ssize_t n = ::read(fd.get(), text.data(), text.size());
		if (n < 0)
			throw Error("cannot read " + conf + ": " + errno_text(errno));
		if (n > 4096)
			throw Error(conf + " is larger than 4 KiB");
		text.resize(static_cast<std::size_t>(n));
		out = parse_criu_settings(text, conf);
	} else if (errno != ENOENT) {
		throw Error("cannot read " + conf + ": " + errno_text(errno));
	}
	if (const char *v = getenv(kCheckpointModeEnv); v && *v) {
		auto m = parse_mode_name(v);
		if (!m)
			throw Error(std::string(kCheckpointModeEnv) + "=" + v + " is neither full nor stateless");
		out.mode = *m;
		out.mode_from = kCheckpointModeEnv;
	}
	if (const char *v = getenv(kRestoreSignalEnv); v && *v) {
		parse_signal(v, kRestoreSignalEnv);
		out.restore_signal = v;
		out.signal_from = kRestoreSignalEnv;
	}
	return out;
}

} // namespace gw
