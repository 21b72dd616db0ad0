#include "proc.hpp"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <sstream>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "drm_ops.hpp"
#include "image_io.hpp"

namespace gwcriu
{
namespace
{

} // namespace

std::vector<uint32_t> seized_tasks()
{
	std::vector<uint32_t> out;
	std::string me = std::to_string(getpid());
	DIR *d = opendir("/proc");
	if (!d)
		return out;
	while (struct dirent *e = readdir(d)) {
		char *end = nullptr;
		unsigned long pid = strtoul(e->d_name, &end, 10);
		if (!pid || *end)
			continue;
		auto st = read_text(std::string("/proc/") + e->d_name + "/status", 1 << 16);
		if (st && gw::status_field(*st, "TracerPid") == me)
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
			struct stat st;
			if (stat(p.c_str(), &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == gw::kDrmMajor) {
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
	for (std::string line; std::getline(in, line);) {
		uint64_t start, end, off, ino;
		char perms[8] = {}, dev[32] = {};
		int n = 0;
		if (sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %31s %" SCNu64 " %n", &start, &end,
			   perms, &off, dev, &ino, &n) < 6 ||
		    ino == 0)
			continue;
		char range[64];
		snprintf(range, sizeof range, "/map_files/%" PRIx64 "-%" PRIx64, start, end);
		struct stat st;
		if (stat((base + range).c_str(), &st) != 0 || !S_ISCHR(st.st_mode) ||
		    major(st.st_rdev) != gw::kDrmMajor)
			continue;
		TaskVma v;
		v.start = start;
		v.end = end;
		v.offset = off;
		for (char c : std::string(perms, 3))
			if (c != '-')
				v.prot += c;
		v.shared = perms[3] == 's';
		v.minor = minor(st.st_rdev);
		t.vmas.push_back(v);
	}
	return t;
}

} // namespace gwcriu
