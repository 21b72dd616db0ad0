// See dump_marker.hpp.
#include "dump_marker.hpp"

#include <cerrno>
#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "proc_tree.hpp"
#include "sysutil.hpp"

namespace gwaction
{

int remove_gpuwatch_images(int dirfd)
{
	std::vector<std::string> names;
	for (std::string &n : gw::names_in_dir(dirfd, "gpuwatch-", "", "the image directory")) {
		struct stat st;
		if (::fstatat(dirfd, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
			names.push_back(std::move(n));
	}
	for (const std::string &n : names)
		if (::unlinkat(dirfd, n.c_str(), 0) != 0 && errno != ENOENT)
			throw gw::Error("cannot remove " + n +
					" of an earlier dump from the image directory: " + gw::errno_text(errno));
	return static_cast<int>(names.size());
}

namespace
{
constexpr const char *kSchema = "gpuwatch.criu.dump/v1";
} // namespace

std::string dump_marker(uint32_t criu_pid, uint32_t tree_root)
{
	nlohmann::json j{{"schema", kSchema},
			 {"criu_pid", criu_pid},
			 {"criu_start", start_time(criu_pid)},
			 {"tree_root", tree_root}};
	return j.dump() + "\n";
}

std::optional<uint32_t> dump_marker_root(int dirfd, uint32_t criu_pid)
{
	gw::UniqueFd fd(::openat(dirfd, kDumpMarker, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
	struct stat st;
	if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > 4096)
		return std::nullopt;
	std::string text(static_cast<std::size_t>(st.st_size), '\0');
	if (::read(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()))
		return std::nullopt;
	nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
	auto u64 = [&](const char *key) -> std::optional<uint64_t> {
		auto it = j.is_object() ? j.find(key) : j.end();
		if (it == j.end() || !it->is_number_unsigned())
			return std::nullopt;
		return it->get<uint64_t>();
	};
	if (!j.is_object() || j.value("schema", "") != kSchema || u64("criu_pid") != criu_pid ||
	    u64("criu_start") != start_time(criu_pid))
		return std::nullopt;
	std::optional<uint64_t> root = u64("tree_root");
	return root && *root <= 0x7fffffff ? static_cast<uint32_t>(*root) : 0;
}

} // namespace gwaction
