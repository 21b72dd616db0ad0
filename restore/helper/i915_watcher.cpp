// The watcher the pre-dump leaves behind (see i915_predump.hpp): thaws the tree's cgroup once
// criu has seized every thread, and after criu is done puts back every placeholder still there
// (no plugin reverted it, the dump failed, criu died). Bounded by GPUWATCH_WATCH_TIMEOUT_S.
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "i915_predump.hpp"
#include "proc_tree.hpp"
#include "sysutil.hpp"

namespace gwaction
{

using gwremote::MapMode;
using gwremote::MapRecord;

namespace
{

void wlog(const std::string &msg)
{
	timespec ts{};
	clock_gettime(CLOCK_REALTIME, &ts);
	char when[32];
	strftime(when, sizeof when, "%H:%M:%S", gmtime(&ts.tv_sec));
	fprintf(stderr, "%s.%03ld watcher[%d]: %s\n", when, ts.tv_nsec / 1000000, getpid(), msg.c_str());
	fflush(stderr);
}

bool criu_alive(const WatchPlan &p)
{
	return kill(p.criu_pid, 0) == 0 && start_time((uint32_t)p.criu_pid) == p.criu_start &&
	       status_field((uint32_t)p.criu_pid, "State").rfind("Z", 0) != 0;
}

// The threads of the tree that still exist: the cgroup's (the tree is all of it, checked at
// pre-dump); the processes' own when nothing was frozen (the cgroup may hold others).
std::vector<uint32_t> tree_threads(const WatchPlan &p)
{
	if (p.frozen)
		return read_ids(p.cgroup + "/cgroup.threads");
	std::vector<uint32_t> tids;
	for (uint32_t pid : p.pids)
		for (uint32_t t : threads_of(pid))
			tids.push_back(t);
	return tids;
}

int watch(const WatchPlan &p)
{
	using clock = std::chrono::steady_clock;
	const auto deadline = clock::now() + std::chrono::seconds(p.timeout_s);
	const std::string criu = std::to_string(p.criu_pid);
	Freezer fz{p.cgroup};
	bool thawed = !p.frozen, timed_out = false;
	wlog("watching criu " + criu + ", cgroup " + p.cgroup + ", " + std::to_string(p.maps.size()) +
	     " converted mapping(s)");

	/* steps 1 and 2 only decide when to act: whatever goes wrong there (a /proc file of a task
	 * that exits under us), the placeholders of step 3 are still put back */
	try {
		/* 1. criu seizes the frozen tasks one by one; when every thread is criu's, thaw (criu's
		 * first PTRACE_CONT of a parasite waits in the freezer trap until then) */
		while (!thawed) {
			if (!criu_alive(p)) {
				wlog("criu " + criu + " is gone before it seized every thread");
				break;
			}
			auto tids = tree_threads(p);
			bool all = !tids.empty();
			for (uint32_t t : tids)
				all &= status_field(t, "TracerPid") == criu;
			if (all) {
				fz.set(false);
				thawed = true;
				wlog("criu traces all " + std::to_string(tids.size()) + " thread(s): cgroup thawed");
				break;
			}
			if (clock::now() >= deadline) {
				timed_out = true;
				wlog("timeout (" + std::to_string(p.timeout_s) +
				     " s, GPUWATCH_WATCH_TIMEOUT_S) waiting for criu to seize the tasks");
				break;
			}
			std::this_thread::sleep_for(std::chrono::milliseconds(2));
		}

		/* 2. until criu is done with the tasks (exited, or traces none of them) */
		while (thawed && !timed_out) {
			if (!criu_alive(p)) {
				wlog("criu " + criu + " exited");
				break;
			}
			bool any = false;
			for (uint32_t t : tree_threads(p))
				any |= status_field(t, "TracerPid") == criu;
			if (!any) {
				wlog("criu " + criu + " traces none of the tasks any more");
				break;
			}
			if (clock::now() >= deadline) {
				timed_out = true;
				wlog("timeout (" + std::to_string(p.timeout_s) +
				     " s, GPUWATCH_WATCH_TIMEOUT_S) waiting for criu to finish");
				break;
			}
			std::this_thread::sleep_for(std::chrono::milliseconds(2));
		}

	} catch (const std::exception &e) {
		wlog(std::string("watching failed (") + e.what() + "): putting back what is left now");
	}

	/* 3. whatever is left: placeholders in live tasks */
	std::vector<MapRecord> left;
	std::set<uint32_t> pids;
	for (const MapRecord &m : p.maps) {
		bool present = false;
		try {
			present = m.mode == MapMode::Placeholder && kill((pid_t)m.pid, 0) == 0 &&
				  gwremote::placeholder_present(m.pid, m.start, m.length);
		} catch (const std::exception &e) {
			wlog("process " + std::to_string(m.pid) + ": " + e.what());
		}
		if (present) {
			left.push_back(m);
			pids.insert(m.pid);
		}
	}
	int errors = 0;
	bool still_frozen = !thawed && fz.requested();
	if (left.empty()) {
		wlog("no placeholder left: nothing to revert");
	} else {
		/* frozen (criu never seized them): every thread of the cgroup, then thaw to run syscalls;
		 * else the processes that have placeholders */
		std::vector<pid_t> tids;
		if (still_frozen)
			for (uint32_t t : tree_threads(p))
				tids.push_back((pid_t)t);
		else
			for (uint32_t pid : pids)
				for (uint32_t t : threads_of(pid))
					tids.push_back((pid_t)t);
		try {
			seize_threads(tids, 5000);
			if (still_frozen) {
				fz.set(false);
				still_frozen = false;
			}
			wlog(std::to_string(left.size()) + " placeholder(s) left in " + std::to_string(pids.size()) +
			     " process(es): reverting");
			errors = revert_seized(left, wlog);
			detach_threads(tids);
		} catch (const std::exception &e) {
			wlog(std::string("cannot revert: ") + e.what());
			errors++;
		}
	}
	if (still_frozen || (!thawed && fz.requested())) {
		try {
			fz.set(false);
			wlog("cgroup " + p.cgroup + " thawed");
		} catch (const std::exception &e) {
			wlog(e.what());
			errors++;
		}
	}
	wlog(errors ? "done with " + std::to_string(errors) + " error(s)" : "done");
	return errors ? 1 : 0;
}

} // namespace

pid_t spawn_watcher(const WatchPlan &plan, const std::string &log_path, int *go_fd)
{
	int go[2], back[2];
	if (pipe2(go, O_CLOEXEC) != 0)
		throw gw::Error("pipe2: " + gw::errno_text(errno));
	if (pipe2(back, O_CLOEXEC) != 0) {
		close(go[0]), close(go[1]);
		throw gw::Error("pipe2: " + gw::errno_text(errno));
	}
	int logfd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (logfd < 0) {
		close(go[0]), close(go[1]), close(back[0]), close(back[1]);
		throw gw::Error("cannot open " + log_path + ": " + gw::errno_text(errno));
	}
	fflush(nullptr);
	pid_t child = fork();
	if (child == 0) {
		setsid();
		pid_t g = fork();
		if (g != 0) {
			(void)!::write(back[1], &g, sizeof g);
			_exit(g > 0 ? 0 : 1);
		}
		/* its own name: a fork of criu (the plugin's, CRIU 4.x) must not die with `pkill criu` */
		prctl(PR_SET_NAME, "gpuwatch-watch", 0, 0, 0);
		/* the watcher: stdin /dev/null, stdout and stderr its log, fd 3 the go pipe. criu may
		 * run the helper with 0-2 closed, so the pipe or the log may sit there: move them up
		 * first */
		int up_go = fcntl(go[0], F_DUPFD_CLOEXEC, 10), up_log = fcntl(logfd, F_DUPFD_CLOEXEC, 10);
		int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
		int up_null = fcntl(null, F_DUPFD_CLOEXEC, 10);
		if (up_go < 0 || up_log < 0 || up_null < 0)
			_exit(1);
		dup2(up_null, 0);
		dup2(up_log, 1);
		dup2(up_log, 2);
		dup2(up_go, 3);
		syscall(SYS_close_range, 4U, ~0U, 0U);
		if (chdir("/") != 0) {
		}
		char c = 0;
		ssize_t n;
		while ((n = ::read(3, &c, 1)) < 0 && errno == EINTR) {
		}
		if (n != 1 || c != 'g') {
			wlog("the pre-dump did not complete: nothing to watch");
			_exit(0);
		}
		close(3);
		int rc = 1;
		try {
			rc = watch(plan);
		} catch (const std::exception &e) {
			wlog(std::string("failed: ") + e.what());
		}
		_exit(rc);
	}
	close(go[0]);
	close(back[1]);
	close(logfd);
	pid_t g = -1;
	int st = 0;
	bool ok = child > 0 && ::read(back[0], &g, sizeof g) == (ssize_t)sizeof g && g > 0;
	close(back[0]);
	if (child > 0)
		waitpid(child, &st, 0);
	if (!ok) {
		close(go[1]);
		throw gw::Error("cannot start the watcher process: " + gw::errno_text(errno));
	}
	*go_fd = go[1];
	return g;
}

} // namespace gwaction
