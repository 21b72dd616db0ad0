#include "proc_tree.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include <unistd.h>
#include <cerrno>

#include "sysutil.hpp"

namespace gwaction
{

namespace
{
/* "" when the file cannot be read: /proc files of a task that has just exited fail with
 * ESRCH, and an ifstream would throw from its buffer */
std::string slurp(const std::string &path)
{
	return gw::read_text(path).value_or(std::string());
}
} // namespace

namespace
{
/* every task's parent, from /proc/<pid>/stat: the whole of /proc, for kernels without
 * CONFIG_PROC_CHILDREN */
std::set<uint32_t> process_tree_by_scan(uint32_t root)
{
	std::map<uint32_t, std::vector<uint32_t>> children;
	std::error_code ec;
	for (const auto &ent : std::filesystem::directory_iterator("/proc", ec)) {
		const std::string name = ent.path().filename().string();
		if (name.find_first_not_of("0123456789") != std::string::npos)
			continue;
		std::string st = slurp(ent.path() / "stat");
		auto rp = st.rfind(')');
		char state;
		uint32_t ppid = 0;
		if (rp != std::string::npos && sscanf(st.c_str() + rp + 1, " %c %u", &state, &ppid) == 2)
			children[ppid].push_back((uint32_t)std::stoul(name));
	}
	std::set<uint32_t> tree{root};
	std::vector<uint32_t> todo{root};
	while (!todo.empty()) {
		uint32_t p = todo.back();
		todo.pop_back();
		for (uint32_t c : children[p])
			if (tree.insert(c).second)
				todo.push_back(c);
	}
	return tree;
}
} // namespace

/* Each thread's /proc/<pid>/task/<tid>/children (CONFIG_PROC_CHILDREN, as CRIU reads them):
 * work in the size of the tree, not of the host's process table, which every checkpoint, GPU
 * or not, would otherwise pay for. The tree is frozen or seized when CRIU runs the script. */
std::set<uint32_t> process_tree(uint32_t root)
{
	const std::string probe = "/proc/" + std::to_string(root) + "/task/" + std::to_string(root) + "/children";
	if (access(probe.c_str(), R_OK) != 0 && errno == ENOENT &&
	    access(("/proc/" + std::to_string(root)).c_str(), F_OK) == 0)
		return process_tree_by_scan(root);
	std::set<uint32_t> tree{root};
	std::vector<uint32_t> todo{root};
	while (!todo.empty()) {
		uint32_t p = todo.back();
		todo.pop_back();
		for (uint32_t t : threads_of(p)) {
			std::istringstream in(
				slurp("/proc/" + std::to_string(p) + "/task/" + std::to_string(t) + "/children"));
			uint32_t c;
			while (in >> c)
				if (tree.insert(c).second)
					todo.push_back(c);
		}
	}
	return tree;
}

std::vector<uint32_t> threads_of(uint32_t pid)
{
	std::vector<uint32_t> out;
	std::error_code ec;
	for (const auto &ent : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
		const std::string name = ent.path().filename().string();
		if (name.find_first_not_of("0123456789") == std::string::npos)
			out.push_back((uint32_t)std::stoul(name));
	}
	return out;
}

std::string status_field(uint32_t id, const char *key)
{
	return gw::status_field(slurp("/proc/" + std::to_string(id) + "/status"), key);
}

uint32_t inner_pid(uint32_t id)
{
	return gw::inner_pid(slurp("/proc/" + std::to_string(id) + "/status"), id);
}

uint64_t start_time(uint32_t pid)
{
	return gw::proc_start_time(pid);
}

std::vector<uint32_t> read_ids(const std::string &path)
{
	std::istringstream in(slurp(path));
	std::vector<uint32_t> out;
	uint32_t v;
	while (in >> v)
		out.push_back(v);
	return out;
}

void Freezer::set(bool frozen) const
{
	std::ofstream out(dir + "/cgroup.freeze");
	out << (frozen ? "1" : "0");
	out.flush();
	if (!out)
		throw gw::Error(std::string(frozen ? "freezing " : "thawing ") + dir + ": cannot write cgroup.freeze");
}

bool Freezer::requested() const
{
	return slurp(dir + "/cgroup.freeze").rfind("1", 0) == 0;
}

bool Freezer::frozen() const
{
	std::istringstream in(slurp(dir + "/cgroup.events"));
	for (std::string k, v; in >> k >> v;)
		if (k == "frozen")
			return v == "1";
	return false;
}

bool Freezer::wait(bool want, int timeout_ms) const
{
	auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
	while (frozen() != want) {
		if (std::chrono::steady_clock::now() >= end)
			return false;
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
	}
	return true;
}

} // namespace gwaction
