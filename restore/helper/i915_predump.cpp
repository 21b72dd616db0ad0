#include "i915_predump.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "proc_tree.hpp"
#include "sysutil.hpp"

namespace gwaction
{

using gw::Error;
using gwremote::MapKind;
using gwremote::MapMode;
using gwremote::MapRecord;
namespace mf = gw::manifest;

namespace
{

constexpr int kFreezeTimeoutMs = 5000;
constexpr int kSeizeTimeoutMs = 5000;

void say(const std::string &msg)
{
	fprintf(stderr, "gpuwatch-criu-action: %s\n", msg.c_str());
}

std::string hex(uint64_t v)
{
	char b[24];
	snprintf(b, sizeof b, "0x%llx", (unsigned long long)v);
	return b;
}

// --- /proc/PID/maps ---------------------------------------------------------------------------
struct Found {
	uint64_t start = 0, end = 0, offset = 0;
	std::string perms, name;
};

std::vector<Found> read_maps(uint32_t pid)
{
	std::vector<Found> out;
	std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
	for (std::string line; std::getline(in, line);) {
		std::istringstream f(line);
		std::string range, off, dev;
		unsigned long ino = 0;
		Found m;
		if (!(f >> range >> m.perms >> off >> dev >> ino))
			continue;
		std::getline(f, m.name);
		m.name.erase(0, m.name.find_first_not_of(' ') == std::string::npos ? m.name.size()
										   : m.name.find_first_not_of(' '));
		unsigned long long s, e;
		if (sscanf(range.c_str(), "%llx-%llx", &s, &e) != 2)
			continue;
		m.start = s, m.end = e, m.offset = std::stoull(off, nullptr, 16);
		out.push_back(std::move(m));
	}
	return out;
}

int prot_of(const std::string &perms)
{
	return (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
	       (perms[2] == 'x' ? PROT_EXEC : 0);
}

bool under(const std::string &dir, const std::string &cg)
{
	return dir == cg || dir.rfind(cg + "/", 0) == 0;
}

// Everything that must hold before anything is changed; throws one line.
std::vector<pid_t> check_tree(const std::set<uint32_t> &tree, uint32_t init_pid, pid_t criu_pid, const std::string &cg)
{
	std::string why;
	if (!gwremote::available(&why))
		throw Error("i915 mappings cannot be converted: " + why);
	for (uint32_t p : tree)
		if (std::string c = gw::cgroup_v2_dir_of_pid(p); c != cg)
			throw Error("process " + std::to_string(p) + " is in " + c + ", not in " + cg +
				    " with process " + std::to_string(init_pid) +
				    ": the tree must be in one cgroup v2 of its own");
	if (!std::filesystem::exists(cg + "/cgroup.freeze"))
		throw Error("the tree's cgroup " + cg +
			    " cannot be frozen (the root cgroup, or no cgroup v2 freezer): run it in a cgroup v2 of "
			    "its own");
	for (pid_t p : {criu_pid, getpid()})
		if (under(gw::cgroup_v2_dir_of_pid((uint32_t)p), cg))
			throw Error("process " + std::to_string(p) + (p == criu_pid ? " (criu)" : " (this helper)") +
				    " is inside the tree's cgroup " + cg + ": it would freeze itself");
	for (uint32_t p : read_ids(cg + "/cgroup.procs"))
		if (!tree.count(p))
			throw Error("cgroup " + cg + " also holds process " + std::to_string(p) +
				    ", which is not in the dumped tree: freezing it is not ours to do");
	std::error_code ec;
	for (const auto &ent : std::filesystem::directory_iterator(cg, ec))
		if (ent.is_directory(ec))
			throw Error("cgroup " + cg + " has child cgroups (" + ent.path().filename().string() +
				    "): the tree must be in a leaf cgroup of its own");
	Freezer fz{cg};
	if (fz.requested() || fz.frozen())
		throw Error("cgroup " + cg + " is already frozen: someone else froze it");
	std::vector<pid_t> tids;
	for (uint32_t p : tree)
		for (uint32_t t : threads_of(p)) {
			if (std::string tr = status_field(t, "TracerPid"); !tr.empty() && tr != "0")
				throw Error("thread " + std::to_string(t) + " of process " + std::to_string(p) +
					    " is already traced by process " + tr);
			tids.push_back((pid_t)t);
		}
	return tids;
}

std::map<pid_t, int> g_pending_signal; // tid -> signal seen at its seize stop, re-sent at detach

} // namespace

std::vector<MapRecord> plan_conversion(uint32_t pid, const mf::Manifest *manifest, std::vector<std::string> &notes)
{
	std::vector<MapRecord> out;
	const mf::Process *proc = manifest ? manifest->find_process(pid) : nullptr;
	for (const Found &f : read_maps(pid)) {
		const mf::Mmap *mm = proc ? proc->find_mmap(f.start) : nullptr;
		bool gem = f.name == "anon_inode:i915.gem";
		bool shmem = f.perms.size() >= 4 && f.perms[3] == 's' &&
			     ((mm && mm->via == "i915.gem_mmap") || f.name == "/i915 (deleted)");
		if (!gem && !shmem)
			continue;
		MapRecord r;
		r.pid = pid;
		r.vpid = inner_pid(pid);
		r.start = f.start;
		r.length = f.end - f.start;
		r.prot = prot_of(f.perms);
		r.kind = gem ? MapKind::Gem : MapKind::Shmem;
		r.offset = f.offset;
		r.mode = MapMode::Copy;
		std::optional<uint64_t> file = mm ? std::optional<uint64_t>(mm->file) : std::nullopt;
		std::optional<uint64_t> handle = mm ? mm->handle : std::nullopt;
		if (file)
			r.file = (uint32_t)*file;
		if (handle)
			r.handle = (uint32_t)*handle;
		if (mm && mm->object)
			r.object = *mm->object;
		if (file) /* an fd of that file in this task */
			for (const mf::Fd &fd : proc->fds)
				if (fd.kind == mf::Fd::Kind::drm && fd.file == file && fd.fd <= INT32_MAX) {
					r.fd = (int)fd.fd;
					break;
				}
		std::string what = std::string(gwremote::kind_name(r.kind)) + " mapping " + hex(r.start) + "-" +
				   hex(r.start + r.length) + " of process " + std::to_string(pid);
		std::string why;
		if (!mm)
			why = manifest ? "the manifest does not know it" : "no manifest";
		else if (!handle)
			why = "its handle is unknown or closed";
		else if (!r.fd)
			why = "the process holds no fd of its file";
		if (why.empty() && gem) {
			const mf::File *fj = manifest->find_file(mm->file);
			const mf::Handle *hj = fj ? fj->find_handle(mm->handle.value_or(0)) : nullptr;
			bool exact = false;
			for (uint64_t o : hj ? hj->mmap_offsets : std::vector<uint64_t>{})
				exact |= o == r.offset;
			if (!exact)
				why = "it does not start at its buffer's fake offset";
			if (hj)
				if (auto t = hj->mmap_types.find(r.offset); t != hj->mmap_types.end())
					r.mmap_type = t->second;
		}
		if (why.empty())
			r.mode = MapMode::Placeholder;
		else
			notes.push_back(what + ": copied to private memory (" + why +
					"): CRIU saves its bytes, but it is no longer shared with the GPU");
		out.push_back(std::move(r));
	}
	return out;
}

bool has_i915_mappings(uint32_t pid, std::string *which)
{
	for (const Found &f : read_maps(pid))
		if (f.name == "anon_inode:i915.gem" ||
		    (f.name == "/i915 (deleted)" && f.perms.size() >= 4 && f.perms[3] == 's')) {
			if (which)
				*which = f.name + " at " + hex(f.start) + "-" + hex(f.end);
			return true;
		}
	return false;
}

void seize_threads(const std::vector<pid_t> &tids, int timeout_ms)
{
	std::vector<pid_t> seized;
	try {
		for (pid_t t : tids) {
			if (ptrace(PTRACE_SEIZE, t, nullptr, nullptr) != 0)
				throw Error("PTRACE_SEIZE of thread " + std::to_string(t) + ": " +
					    gw::errno_text(errno));
			seized.push_back(t);
			if (ptrace(PTRACE_INTERRUPT, t, nullptr, nullptr) != 0)
				throw Error("PTRACE_INTERRUPT of thread " + std::to_string(t) + ": " +
					    gw::errno_text(errno));
		}
		auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
		for (pid_t t : seized) {
			int st = 0;
			pid_t r;
			while ((r = waitpid(t, &st, __WALL | WNOHANG)) == 0) {
				if (std::chrono::steady_clock::now() >= end)
					throw Error("thread " + std::to_string(t) + " did not stop within " +
						    std::to_string(timeout_ms) + " ms of PTRACE_INTERRUPT");
				std::this_thread::sleep_for(std::chrono::microseconds(500));
			}
			if (r != t || !WIFSTOPPED(st))
				throw Error("thread " + std::to_string(t) + " exited while being seized");
			/* a signal-delivery stop (not the interrupt's event stop): keep the signal for detach */
			if ((st >> 16) == 0 && WSTOPSIG(st) != SIGTRAP)
				g_pending_signal[t] = WSTOPSIG(st);
		}
	} catch (...) {
		detach_threads(seized);
		throw;
	}
}

int detach_threads(const std::vector<pid_t> &tids)
{
	int failed = 0;
	for (pid_t t : tids) {
		auto it = g_pending_signal.find(t);
		long sig = it == g_pending_signal.end() ? 0 : it->second;
		if (ptrace(PTRACE_DETACH, t, nullptr, (void *)sig) != 0)
			failed++;
		if (it != g_pending_signal.end())
			g_pending_signal.erase(it);
	}
	return failed;
}

int revert_seized(const std::vector<MapRecord> &maps, void (*log)(const std::string &))
{
	std::map<uint32_t, std::vector<MapRecord>> by_pid;
	for (const MapRecord &m : maps)
		by_pid[m.pid].push_back(m);
	int errors = 0;
	for (auto &[pid, list] : by_pid) {
		try {
			auto t = gwremote::RemoteTask::attach((pid_t)pid);
			auto res = gwremote::revert_maps(t, list);
			t.finish();
			for (auto &n : res.notes)
				log(n);
			for (auto &e : res.errors)
				log("revert failed: " + e);
			errors += (int)res.errors.size();
			if (res.reverted)
				log("process " + std::to_string(pid) + ": " + std::to_string(res.reverted) +
				    " mapping(s) put back");
		} catch (const std::exception &e) {
			log(std::string("revert failed: ") + e.what());
			errors++;
		}
	}
	return errors;
}

void i915_predump(uint32_t init_pid, pid_t criu_pid, const std::string &image_dir, const mf::Manifest *manifest)
{
	std::set<uint32_t> tree = process_tree(init_pid);
	std::vector<MapRecord> plan;
	std::vector<std::string> notes;
	for (uint32_t p : tree) {
		auto mine = plan_conversion(p, manifest, notes);
		plan.insert(plan.end(), mine.begin(), mine.end());
	}
	if (plan.empty())
		return; /* nothing of i915's: nothing is frozen */

	const std::string cg = gw::cgroup_v2_dir_of_pid(init_pid);
	check_tree(tree, init_pid, criu_pid, cg);
	const std::string record_path = image_dir + "/" + gwremote::kMapsRecordName;
	gw::check_writable_dir_for(record_path);
	const int timeout_s = watch_timeout_s();

	Freezer fz{cg};
	std::vector<pid_t> tids;
	std::vector<MapRecord> converted;
	bool seized = false;
	int go_fd = -1;
	try {
		/* a. freeze: nothing runs while we look; b. seize every thread (frozen tasks wake into
		 * the ptrace trap: a jobctl trap wins over the freezer trap in get_signal) */
		fz.set(true);
		if (!fz.wait(true, kFreezeTimeoutMs))
			throw Error("cgroup " + cg + " did not freeze within " + std::to_string(kFreezeTimeoutMs) +
				    " ms");
		for (uint32_t t : read_ids(cg + "/cgroup.threads"))
			tids.push_back((pid_t)t);
		seize_threads(tids, kSeizeTimeoutMs);
		seized = true;
		/* c. thaw: a resumed tracee of a frozen cgroup goes straight back into the freezer
		 * trap, so injected syscalls need it thawed; ptrace-stopped tasks stay stopped */
		fz.set(false);
		/* d. convert, in each task */
		std::map<uint32_t, std::vector<MapRecord>> by_pid;
		for (const MapRecord &m : plan)
			by_pid[m.pid].push_back(m);
		for (auto &[pid, list] : by_pid) {
			auto t = gwremote::RemoteTask::attach((pid_t)pid);
			for (const MapRecord &m : list) {
				gwremote::convert_map(t, m);
				converted.push_back(m);
			}
			t.finish();
		}
		/* g (prepared). the watcher, waiting for our go */
		WatchPlan wp{cg,        criu_pid, start_time((uint32_t)criu_pid), {tree.begin(), tree.end()}, converted,
			     timeout_s, true};
		pid_t watcher = spawn_watcher(wp, image_dir + "/gpuwatch-watcher.log", &go_fd);
		/* e. the record */
		gwremote::MapsRecord rec{cg, (uint32_t)criu_pid, (uint32_t)watcher, converted};
		gw::write_file_atomic(record_path, gwremote::to_json(rec).dump() + "\n", 0600);
		/* f. freeze again (ptrace-stopped tasks count as frozen) and let go: the tasks fall
		 * into the freezer trap and stay there until CRIU has seized them */
		fz.set(true);
		if (!fz.wait(true, kFreezeTimeoutMs))
			throw Error("cgroup " + cg + " did not freeze again within " +
				    std::to_string(kFreezeTimeoutMs) + " ms");
		detach_threads(tids);
		seized = false;
		if (::write(go_fd, "g", 1) != 1)
			throw Error("cannot start the watcher: " + gw::errno_text(errno));
		close(go_fd);
		for (const auto &n : notes)
			say(n);
		int ph = 0;
		for (const auto &m : converted)
			ph += m.mode == MapMode::Placeholder;
		say(std::to_string(converted.size()) + " i915 mapping(s) converted (" + std::to_string(ph) +
		    " placeholder(s), " + std::to_string(converted.size() - ph) + " copie(s)); cgroup " + cg +
		    " frozen until criu (" + std::to_string(criu_pid) + ") has seized the tasks; watcher " +
		    std::to_string(watcher) + " logs to " + image_dir + "/gpuwatch-watcher.log");
	} catch (const std::exception &e) {
		if (go_fd >= 0)
			close(go_fd); /* the watcher exits doing nothing */
		std::error_code ec;
		std::filesystem::remove(record_path, ec);
		if (seized) {
			try {
				fz.set(false);
			} catch (...) {
			}
			if (!converted.empty())
				revert_seized(converted, say);
			detach_threads(tids);
		}
		try {
			fz.set(false);
		} catch (...) {
		}
		throw Error(std::string("i915 mappings: ") + e.what() + " (nothing left changed)");
	}
}

int watch_timeout_s()
{
	const char *v = getenv("GPUWATCH_WATCH_TIMEOUT_S");
	if (!v)
		return 600;
	char *end = nullptr;
	long t = strtol(v, &end, 10);
	if (*end || t <= 0 || t > 86400)
		throw Error(std::string("GPUWATCH_WATCH_TIMEOUT_S=") + v + " is not a number of seconds (1-86400)");
	return (int)t;
}

} // namespace gwaction
