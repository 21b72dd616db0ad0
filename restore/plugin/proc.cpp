#include "proc.hpp"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <map>
#include <optional>
#include <sstream>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "drm_ops.hpp"
#include "image_io.hpp"
#include "proc_tree.hpp"

namespace gwcriu
{
bool traced_by_me(uint32_t pid, uint32_t *ppid)
{
	auto st = read_text("/proc/" + std::to_string(pid) + "/status", 1 << 16);
	if (!st)
		return false;
	if (ppid)
		*ppid = static_cast<uint32_t>(strtoul(gw::status_field(*st, "PPid").c_str(), nullptr, 10));
	return gw::status_field(*st, "TracerPid") == std::to_string(getpid());
}

uint32_t tree_root_from_cmdline()
{
	auto cmd = gw::proc_cmdline("self");
	if (!cmd)
		return 0;
	const std::vector<std::string> &args = *cmd;
	for (std::size_t i = 0; i < args.size(); ++i) {
		std::string v;
		if ((args[i] == "-t" || args[i] == "--tree") && i + 1 < args.size())
			v = args[i + 1];
		else if (args[i].rfind("--tree=", 0) == 0)
			v = args[i].substr(7);
		else if (args[i].rfind("-t", 0) == 0 && args[i].size() > 2)
			v = args[i].substr(2);
		char *end = nullptr;
		unsigned long pid = v.empty() ? 0 : strtoul(v.c_str(), &end, 10);
		if (pid && end && !*end && pid <= 0x7fffffff)
			return static_cast<uint32_t>(pid);
	}
	return 0;
}

std::vector<uint32_t> seized_tasks(uint32_t root_hint)
{
	std::vector<uint32_t> out;
	// CRIU seizes the root and all its descendants: the tree's size, not the host's
	uint32_t parent = 0;
	if (root_hint && traced_by_me(root_hint, &parent) && !(parent && traced_by_me(parent))) {
		for (uint32_t pid : gwaction::process_tree(root_hint))
			if (pid == root_hint || traced_by_me(pid))
				out.push_back(pid);
		return out;
	}
	DIR *d = opendir("/proc");
	if (!d)
		return out;
	while (struct dirent *e = readdir(d)) {
		char *end = nullptr;
		unsigned long pid = strtoul(e->d_name, &end, 10);
		if (!pid || *end)
			continue;
		if (traced_by_me(static_cast<uint32_t>(pid)))
			out.push_back(static_cast<uint32_t>(pid));
	}
	closedir(d);
	return out;
}

void scan_fds(uint32_t pid, std::vector<TaskFd> &fds, std::vector<TaskFd> &other_fds)
{
	std::string base = "/proc/" + std::to_string(pid);
	if (DIR *d = opendir((base + "/fd").c_str())) {
		while (struct dirent *e = readdir(d)) {
			char *end = nullptr;
			long fd = strtol(e->d_name, &end, 10);
			if (*end || e->d_name[0] == '.')
				continue;
			std::string p = base + "/fd/" + e->d_name;
			TaskFd f;
			f.fd = static_cast<int>(fd);
			f.link = read_link(p).value_or("");
			// a device file's link is a path; sockets, pipes and anon inodes need no stat
			struct stat st;
			if (!f.link.empty() && f.link[0] == '/' && stat(p.c_str(), &st) == 0 && S_ISCHR(st.st_mode) &&
			    major(st.st_rdev) == gw::kDrmMajor) {
				f.minor = minor(st.st_rdev);
				fds.push_back(f);
			} else if (f.link.rfind("/dmabuf:", 0) == 0 || f.link.rfind("anon_inode:dmabuf", 0) == 0) {
				f.dmabuf = true;
				fds.push_back(f);
			} else if (f.link == "anon_inode:sync_file" || f.link == "anon_inode:[i915_perf]") {
				other_fds.push_back(f);
			}
		}
		closedir(d);
	}
}

Task scan_task(uint32_t pid)
{
	Task t;
	t.pid = pid;
	std::string base = "/proc/" + std::to_string(pid);
	auto status = read_text(base + "/status", 1 << 16);
	t.vpid = status ? gw::inner_pid(*status, pid) : pid;
	scan_fds(pid, t.fds, t.other_fds);

	auto maps = read_text(base + "/maps", 64 << 20);
	std::istringstream in(maps.value_or(""));
	// what each file is, by the (device, inode) maps names it by: a library's several mappings
	// cost one stat
	std::map<std::pair<std::string, uint64_t>, std::optional<uint32_t>> drm_minor_of;
	for (std::string line; std::getline(in, line);) {
		uint64_t start, end, off, ino;
		char perms[8] = {}, dev[32] = {};
		int n = 0;
		if (sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %31s %" SCNu64 " %n", &start, &end,
			   perms, &off, dev, &ino, &n) < 6 ||
		    ino == 0)
			continue;
		auto [known, fresh] = drm_minor_of.try_emplace({dev, ino});
		if (fresh) {
			char range[64];
			snprintf(range, sizeof range, "/map_files/%" PRIx64 "-%" PRIx64, start, end);
			struct stat st;
			if (stat((base + range).c_str(), &st) == 0 && S_ISCHR(st.st_mode) &&
			    major(st.st_rdev) == gw::kDrmMajor)
				known->second = minor(st.st_rdev);
		}
		if (!known->second)
			continue;
		TaskVma v;
		v.start = start;
		v.end = end;
		v.offset = off;
		for (char c : std::string(perms, 3))
			if (c != '-')
				v.prot += c;
		v.shared = perms[3] == 's';
		v.minor = *known->second;
		t.vmas.push_back(v);
	}
	return t;
}

} // namespace gwcriu
