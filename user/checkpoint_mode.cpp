#include "checkpoint_mode.hpp"

#include <cerrno>
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

namespace
{

std::string trim(const std::string &s)
{
	std::size_t b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
	return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

} // namespace

CheckpointMode parse_checkpoint_conf(const std::string &text, const std::string &name)
{
	std::optional<CheckpointMode> mode;
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
			throw Error(where + ": expected `mode = full` or `mode = stateless`");
		std::string key = trim(line.substr(0, eq)), value = trim(line.substr(eq + 1));
		if (key != "mode")
			throw Error(where + ": unknown setting \"" + key + "\" (only `mode` is known)");
		if (mode)
			throw Error(where + ": `mode` is set twice");
		mode = parse_mode_name(value);
		if (!mode)
			throw Error(where + ": mode \"" + value + "\" is neither full nor stateless");
	}
	return mode.value_or(CheckpointMode::full);
}

std::string checkpoint_conf_text(CheckpointMode m)
{
	return std::string("# gpuwatch: what `criu dump` saves of DRM devices (gpuwatch-criu(8)).\n"
			   "# full: buffers, handles, driver objects and mappings; stateless: the devices'\n"
			   "# fds only, the application rebuilds its GPU state. Written by gpuwatch "
			   "container-config.\nmode = ") +
	       mode_name(m) + "\n";
}

CheckpointMode checkpoint_mode(const std::string &conf, std::string *from)
{
	if (const char *v = getenv(kCheckpointModeEnv); v && *v) {
		auto m = parse_mode_name(v);
		if (!m)
			throw Error(std::string(kCheckpointModeEnv) + "=" + v + " is neither full nor stateless");
		if (from)
			*from = kCheckpointModeEnv;
		return *m;
	}
	UniqueFd fd(::open(conf.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
	if (!fd) {
		if (errno == ENOENT) {
			if (from)
				*from = "the default";
			return CheckpointMode::full;
		}
		throw Error("cannot read " + conf + ": " + errno_text(errno));
	}
	struct stat st {
	};
	if (::fstat(fd.get(), &st) != 0)
		throw Error("cannot read " + conf + ": " + errno_text(errno));
	if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022))
		throw Error(conf + " is not a regular file owned by root and writable by root alone: not trusted");
	std::string text(4097, '\0');
	ssize_t n = ::read(fd.get(), text.data(), text.size());
	if (n < 0)
		throw Error("cannot read " + conf + ": " + errno_text(errno));
	if (n > 4096)
		throw Error(conf + " is larger than 4 KiB");
	text.resize(static_cast<std::size_t>(n));
	if (from)
		*from = conf;
	return parse_checkpoint_conf(text, conf);
}

} // namespace gw
