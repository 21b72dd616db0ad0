// Host tests (root, no DRM device): the BPF object loads and attaches on the running kernel,
// `gpuwatch attach` writes a manifest for an empty cgroup, and its failures are clean.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <cstring>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "control_server.hpp"
#include "host_util.hpp"
#include "model.hpp"

namespace
{

using namespace gwhost;

class HostTest : public CgroupTest
{
protected:
	HostTest() : CgroupTest("host-test") {}
	// A child that has joined cg_ (reported through a pipe) and waits to be killed.
	pid_t idle_child_in_cgroup()
	{
		int p[2];
		if (pipe(p) != 0)
			return -1;
		pid_t child = fork();
		if (child == 0) {
			std::ofstream(cg_ + "/cgroup.procs") << getpid() << std::flush;
			(void)!write(p[1], "x", 1);
			pause();
			_exit(0);
		}
		char c = 0;
		bool joined = read(p[0], &c, 1) == 1;
		close(p[0]);
		close(p[1]);
		return joined ? child : -1;
	}
};

// Starts attach in the background and waits for its first manifest (or its exit).
pid_t start_attach(const std::vector<std::string> &args, const std::string &manifest, int *early_status)
{
	pid_t pid = fork();
	if (pid == 0) {
		std::vector<std::string> v = {kBin, "attach"};
		v.insert(v.end(), args.begin(), args.end());
		std::vector<char *> a;
		for (auto &s : v)
			a.push_back(s.data());
		a.push_back(nullptr);
		execv(a[0], a.data());
		_exit(127);
	}
	for (int i = 0; i < 300; i++) {
		if (exists(manifest))
			return pid;
		int st;
		if (waitpid(pid, &st, WNOHANG) == pid) {
			*early_status = st;
			return -1;
		}
		std::this_thread::sleep_for(std::chrono::milliseconds(100));
	}
	kill(pid, SIGKILL);
	waitpid(pid, nullptr, 0);
	return -1;
}

TEST_F(HostTest, AttachEmptyCgroupWritesManifestAndStopsCleanly)
{
	std::string m = dir_ + "/manifest.json";
	int early = 0;
	pid_t pid = start_attach({"--cgroup", cg_, "--manifest", m}, m, &early);
	ASSERT_GT(pid, 0) << "attach exited early with status " << early << " or wrote no manifest in 30 s";
	nlohmann::json j = gw::manifest::to_json(gw::manifest::read_file(m));
	EXPECT_EQ(j["schema"], "gpuwatch.manifest/v1");
	EXPECT_EQ(j["cgroup"], cg_);
	EXPECT_EQ(j["complete"], true);
	EXPECT_EQ(j["lost_events"], 0);
	EXPECT_TRUE(j["processes"].empty());
	EXPECT_TRUE(j["files"].empty());

	/* a process joining the cgroup, forking, exec'ing and opening ordinary files fires every
	 * hook but stays out of the manifest (no DRM here); the tracer keeps running */
	pid_t w = fork();
	if (w == 0) {
		std::ofstream(cg_ + "/cgroup.procs") << getpid() << std::flush;
		execl("/bin/sh", "sh", "-c", "cat /dev/null; sh -c 'exec true' < /dev/null; exec 3</dev/null",
		      (char *)nullptr);
		_exit(127);
	}
	int wst = 0;
	ASSERT_EQ(waitpid(w, &wst, 0), w);
	EXPECT_TRUE(WIFEXITED(wst) && WEXITSTATUS(wst) == 0);
	std::this_thread::sleep_for(std::chrono::milliseconds(300));
	EXPECT_EQ(waitpid(pid, nullptr, WNOHANG), 0) << "attach died";
	ASSERT_EQ(kill(pid, SIGTERM), 0);
	int st = 0;
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(WEXITSTATUS(st), 0);
	j = gw::manifest::to_json(gw::manifest::read_file(m));
	EXPECT_TRUE(j["processes"].empty());
}

// A container's cgroup is removed when it ends (or is checkpointed): its daemon stops by itself,
// writing its final manifest, even when nobody runs the poststop hook.
TEST_F(HostTest, AttachStopsWhenItsCgroupIsRemoved)
{
	std::string m = dir_ + "/manifest.json", run = dir_ + "/run";
	int early = 0;
	pid_t pid = start_attach({"--cgroup", cg_, "--manifest", m, "--run-dir", run}, m, &early);
	ASSERT_GT(pid, 0) << "attach failed, status " << early;
	std::this_thread::sleep_for(std::chrono::milliseconds(1500));
	EXPECT_EQ(waitpid(pid, nullptr, WNOHANG), 0) << "attach stopped while its cgroup exists";
	ASSERT_EQ(rmdir(cg_.c_str()), 0) << cg_;
	int st = 0;
	pid_t r = 0;
	for (int i = 0; i < 100 && (r = waitpid(pid, &st, WNOHANG)) == 0; i++)
		std::this_thread::sleep_for(std::chrono::milliseconds(100));
	if (r == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, nullptr, 0);
		FAIL() << "attach still runs 10 s after its cgroup was removed";
	}
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(WEXITSTATUS(st), 0);
	EXPECT_TRUE(gw::control::list_daemons(run).empty()) << "its registration is left behind";
	EXPECT_NO_THROW(gw::manifest::read_file(m));
}

// A daemon attached to `cg` with its registration in `run`: its pid and the registrations read
// back (one). Fails the test (fatally: ASSERT_NO_FATAL_FAILURE) otherwise.
struct Registered {
	pid_t pid = -1;
	std::vector<gw::control::DaemonInfo> daemons;
};
void attach_registered(const std::string &cg, const std::string &m, const std::string &run, Registered &r)
{
	int early = 0;
	r.pid = start_attach({"--cgroup", cg, "--manifest", m, "--run-dir", run}, m, &early);
	ASSERT_GT(r.pid, 0) << "attach failed, status " << early;
	r.daemons = gw::control::list_daemons(run);
	ASSERT_EQ(r.daemons.size(), 1u);
}

TEST_F(HostTest, ControlSocketSyncsAndRegistrationIsRemovedOnStop)
{
	std::string m = dir_ + "/manifest.json", run = dir_ + "/run";
	Registered r;
	ASSERT_NO_FATAL_FAILURE(attach_registered(cg_, m, run, r));
	pid_t pid = r.pid;
	auto &daemons = r.daemons;
	EXPECT_EQ(daemons[0].pid, (uint32_t)pid);
	EXPECT_EQ(daemons[0].cgroup, cg_);
	struct stat st;
	ASSERT_EQ(stat(daemons[0].socket.c_str(), &st), 0);
	EXPECT_EQ(st.st_mode & 0777, 0600u) << "the control socket must be root-only";

	/* a process of the followed cgroup maps to this daemon, one elsewhere to none */
	pid_t child = idle_child_in_cgroup();
	ASSERT_GT(child, 0);
	auto d = gw::control::daemon_for_pid(run, child);
	ASSERT_TRUE(d.has_value());
	EXPECT_EQ(d->pid, (uint32_t)pid);
	EXPECT_FALSE(gw::control::daemon_for_pid(run, getpid()).has_value());

	nlohmann::json j = gw::manifest::to_json(gw::control::sync(*d));
	EXPECT_EQ(j["schema"], "gpuwatch.manifest/v1");
	EXPECT_EQ(j["cgroup"], cg_);
	kill(child, SIGKILL);
	waitpid(child, nullptr, 0);

	kill(pid, SIGTERM);
	waitpid(pid, nullptr, 0);
	EXPECT_TRUE(gw::control::list_daemons(run).empty());
	EXPECT_FALSE(exists(run + "/" + std::to_string(pid) + ".sock"));
	EXPECT_THROW(gw::control::sync(daemons[0], 1000), gw::Error);
}

// The restore's request (the plugin at RESUME_DEVICES_LATE) is not waited for: the client sends
// "sync" and closes. The daemon still syncs (its manifest is written again: a new file, renamed
// over the old), its reply to the closed connection harms nothing, and it answers the next sync.
TEST_F(HostTest, SyncRequestNotWaitedForIsServed)
{
	const std::string m = dir_ + "/manifest.json";
	Registered r;
	ASSERT_NO_FATAL_FAILURE(attach_registered(cg_, m, dir_ + "/run", r));
	struct stat before;
	ASSERT_EQ(stat(m.c_str(), &before), 0);
	ASSERT_NO_THROW(gw::control::request_sync_nowait(r.daemons[0]));
	bool rewritten = false;
	for (int i = 0; i < 100 && !rewritten; i++) {
		struct stat now;
		rewritten = stat(m.c_str(), &now) == 0 && now.st_ino != before.st_ino;
		if (!rewritten)
			std::this_thread::sleep_for(std::chrono::milliseconds(50));
	}
	EXPECT_TRUE(rewritten) << "the daemon did not write its manifest again within 5 s of the request";
	EXPECT_EQ(waitpid(r.pid, nullptr, WNOHANG), 0) << "the daemon died after replying to a closed connection";
	EXPECT_NO_THROW(gw::control::sync(r.daemons[0], 5000));
	kill(r.pid, SIGTERM);
	waitpid(r.pid, nullptr, 0);
	EXPECT_THROW(gw::control::request_sync_nowait(r.daemons[0]), gw::Error);
}

// Issue 16, finding 12: CRIU run in a pid namespace of its own (zdtm does) found no daemon:
// the registration's pid names nothing there, so every registration read as stale and a GPU
// dump went on without the manifest. The client here runs as a new pid namespace's init with
// its own /proc, asks for the daemon of a task of that namespace, and syncs with it.
TEST_F(HostTest, ClientInAnotherPidNamespaceFindsTheDaemon)
{
	std::string m = dir_ + "/manifest.json", run = dir_ + "/run";
	int early = 0;
	pid_t pid = start_attach({"--cgroup", cg_, "--manifest", m, "--run-dir", run}, m, &early);
	ASSERT_GT(pid, 0) << "attach failed, status " << early;
	int out[2];
	ASSERT_EQ(pipe(out), 0);
	pid_t outer = fork();
	if (outer == 0) {
		close(out[0]);
		auto say = [&](const std::string &s) {
			(void)!write(out[1], s.data(), s.size());
			_exit(0);
		};
		if (unshare(CLONE_NEWPID | CLONE_NEWNS) != 0 ||
		    mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
			say(std::string("unshare: ") + strerror(errno));
		pid_t init = fork();
		if (init == 0) {
			if (mount("proc", "/proc", "proc", 0, nullptr) != 0)
				say(std::string("mount proc: ") + strerror(errno));
			pid_t task = idle_child_in_cgroup(); // a pid of this namespace
			std::string r;
			try {
				std::vector<std::string> skipped;
				auto d = gw::control::daemon_for_pid(run, static_cast<uint32_t>(task), &skipped);
				if (!d) {
					r = "no daemon:";
					for (const auto &w : skipped)
						r += " " + w;
				} else {
					gw::manifest::Manifest man = gw::control::sync(*d);
					r = std::string(d->elsewhere ? "elsewhere" : "same namespace") + ", daemon " +
					    std::to_string(d->pid) + ", cgroup " + man.cgroup;
				}
			} catch (const std::exception &e) {
				r = std::string("error: ") + e.what();
			}
			kill(task, SIGKILL);
			waitpid(task, nullptr, 0);
			say(r);
		}
		waitpid(init, nullptr, 0);
		_exit(0);
	}
	close(out[1]);
	std::string got;
	char buf[512];
	for (ssize_t n; (n = read(out[0], buf, sizeof(buf))) > 0;)
		got.append(buf, n);
	close(out[0]);
	waitpid(outer, nullptr, 0);
	kill(pid, SIGTERM);
	waitpid(pid, nullptr, 0);
	if (got.rfind("unshare: ", 0) == 0)
		GTEST_SKIP() << "no pid namespace here: " << got;
	EXPECT_EQ(got, "elsewhere, daemon " + std::to_string(pid) + ", cgroup " + cg_);
}

TEST_F(HostTest, AttachByPidFollowsThatProcessCgroup)
{
	pid_t child = idle_child_in_cgroup();
	ASSERT_GT(child, 0);
	std::string m = dir_ + "/m.json";
	int early = 0;
	pid_t pid = start_attach({"--pid", std::to_string(child), "--manifest", m}, m, &early);
	ASSERT_GT(pid, 0) << "attach --pid failed, status " << early;
	nlohmann::json j = gw::manifest::to_json(gw::manifest::read_file(m));
	EXPECT_EQ(j["cgroup"], cg_);
	kill(pid, SIGTERM);
	waitpid(pid, nullptr, 0);
	kill(child, SIGKILL);
	waitpid(child, nullptr, 0);
}

TEST_F(HostTest, MissingCgroupFailsWithOneLineAndNoManifest)
{
	std::string m = dir_ + "/m.json";
	Outcome r = run({kBin, "attach", "--cgroup", cg_ + "/does-not-exist", "--manifest", m});
	EXPECT_NE(r.status, 0);
	EXPECT_NE(r.err.find("No such file or directory"), std::string::npos) << r.err;
	EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
	EXPECT_FALSE(exists(m));
}

TEST_F(HostTest, NonCgroupV2DirectoryIsRefused)
{
	std::string m = dir_ + "/m.json";
	Outcome r = run({kBin, "attach", "--cgroup", dir_, "--manifest", m});
	EXPECT_NE(r.status, 0);
	EXPECT_NE(r.err.find("not a cgroup v2 directory"), std::string::npos) << r.err;
	EXPECT_FALSE(exists(m));
}

// Issue 16, finding 6: attach through a symlink to the cgroup registered the symlink's path,
// which no task's /proc/PID/cgroup names: the pre-dump found no daemon and the dump silently
// went degraded. The registration and the manifest name the cgroup by its real path.
TEST_F(HostTest, SymlinkedCgroupIsRegisteredByItsRealPath)
{
	std::string link = dir_ + "/cg-link", m = dir_ + "/m.json", run = dir_ + "/run";
	ASSERT_EQ(symlink(cg_.c_str(), link.c_str()), 0);
	int early = 0;
	pid_t pid = start_attach({"--cgroup", link, "--manifest", m, "--run-dir", run}, m, &early);
	ASSERT_GT(pid, 0) << "attach failed, status " << early;
	auto daemons = gw::control::list_daemons(run);
	ASSERT_EQ(daemons.size(), 1u);
	EXPECT_EQ(daemons[0].cgroup, cg_);
	pid_t child = idle_child_in_cgroup();
	ASSERT_GT(child, 0);
	auto d = gw::control::daemon_for_pid(run, child);
	EXPECT_TRUE(d.has_value()) << "a task of the cgroup finds no daemon";
	EXPECT_EQ(gw::manifest::to_json(gw::manifest::read_file(m))["cgroup"], cg_);
	kill(child, SIGKILL);
	waitpid(child, nullptr, 0);
	kill(pid, SIGTERM);
	waitpid(pid, nullptr, 0);
}

// Issue 16, finding 6: a cgroup whose name is not UTF-8 made attach exit with nlohmann's
// type_error and leave its socket behind. Now one line, and nothing in the run directory.
TEST_F(HostTest, CgroupNotUtf8IsRefusedWithNothingLeftBehind)
{
	std::string bad = cg_ + "/bad\xff", m = dir_ + "/m.json", rundir = dir_ + "/run";
	ASSERT_EQ(mkdir(bad.c_str(), 0755), 0) << bad;
	Outcome r = run({kBin, "attach", "--cgroup", bad, "--manifest", m, "--run-dir", rundir});
	rmdir(bad.c_str());
	EXPECT_NE(r.status, 0);
	EXPECT_NE(r.err.find("not valid UTF-8"), std::string::npos) << r.err;
	EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
	EXPECT_FALSE(exists(m));
	std::size_t left = 0;
	if (exists(rundir))
		for ([[maybe_unused]] const auto &e : std::filesystem::directory_iterator(rundir))
			left++;
	EXPECT_EQ(left, 0u) << "files left in " << rundir;
}

TEST_F(HostTest, UnwritableManifestDirectoryIsRefusedBeforeAttaching)
{
	Outcome r = run({kBin, "attach", "--cgroup", cg_, "--manifest", dir_ + "/no/such/dir/m.json"});
	EXPECT_NE(r.status, 0);
	EXPECT_NE(r.err.find("no/such/dir"), std::string::npos) << r.err;
}

TEST_F(HostTest, NonRootIsRefused)
{
	if (access("/usr/bin/setpriv", X_OK) != 0)
		GTEST_SKIP() << "setpriv (util-linux) not installed";
	std::string m = dir_ + "/m.json";
	chmod(dir_.c_str(), 0777);
	Outcome r = run({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", kBin, "attach",
			 "--cgroup", cg_, "--manifest", m});
	EXPECT_NE(r.status, 0);
	EXPECT_NE(r.err.find("needs root"), std::string::npos) << r.err;
	EXPECT_FALSE(exists(m));
}

TEST(ShowTest, MalformedManifestIsAOneLineError)
{
	char tmpl[] = "/tmp/gw-bad.XXXXXX";
	int fd = mkstemp(tmpl);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(write(fd, "{\"schema\": 3", 12), 12);
	close(fd);
	Outcome r = run({kBin, "show", tmpl});
	unlink(tmpl);
	EXPECT_EQ(r.status, 1);
	EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
	EXPECT_NE(r.err.find(tmpl), std::string::npos) << r.err;
	r = run({kBin, "show", "/nonexistent/manifest.json"});
	EXPECT_EQ(r.status, 1);
	EXPECT_NE(r.err.find("No such file or directory"), std::string::npos) << r.err;
}

// Issue 16, finding 5: registrations are trusted only when nobody but root can have planted
// them, and only while the process that registered lives (a daemon killed by SIGKILL left its
// registration; once its pid was reused every checkpoint of that cgroup failed).
TEST(RegistrationTrust, StaleForeignAndPlantedRegistrationsAreSkippedAndSaid)
{
	char tmpl[] = "/tmp/gw-run.XXXXXX";
	ASSERT_NE(mkdtemp(tmpl), nullptr);
	std::string run = tmpl;
	auto reg = [&](const std::string &file, uint32_t pid, uint64_t start, const std::string &socket) {
		std::ofstream(run + "/" + file) << nlohmann::json{
			{"pid", pid},
			{"start_time", start},
			{"cgroup", "/sys/fs/cgroup/x"},
			{"manifest", run + "/m.json"},
			{"socket", socket}}.dump();
		chmod((run + "/" + file).c_str(), 0600);
	};
	uint32_t self = static_cast<uint32_t>(getpid());
	uint64_t started = gw::proc_start_time(self);
	ASSERT_NE(started, 0u);
	std::string sock = run + "/" + std::to_string(self) + ".sock";
	reg("live.json", self, started, sock);
	reg("reused.json", self, started + 1, sock); // this pid, another process's start
	reg("elsewhere.json", self, started, "/tmp/x/" + std::to_string(self) + ".sock");
	std::vector<std::string> skipped;
	auto ds = gw::control::list_daemons(run, &skipped);
	ASSERT_EQ(ds.size(), 1u);
	EXPECT_EQ(ds[0].start_time, started);
	std::string all;
	for (const auto &w : skipped)
		all += w + "\n";
	EXPECT_NE(all.find("registration reused.json is stale: daemon " + std::to_string(self) +
			   " is gone and its pid was reused"),
		  std::string::npos)
		<< all;
	EXPECT_NE(all.find("registration elsewhere.json names a socket outside the run directory"), std::string::npos)
		<< all;
	// no daemon listens on the live registration's socket: the test process is not one
	int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	sockaddr_un a{};
	a.sun_family = AF_UNIX;
	std::snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock.c_str());
	ASSERT_EQ(bind(l, reinterpret_cast<sockaddr *>(&a), sizeof(a)), 0);
	ASSERT_EQ(listen(l, 1), 0);
	gw::control::DaemonInfo other = ds[0];
	other.pid = 1; // registered as pid 1, but the listener is this process
	try {
		gw::control::sync(other, 1000);
		ADD_FAILURE() << "synced with a process that is not the registered daemon";
	} catch (const gw::Error &e) {
		EXPECT_NE(std::string(e.what()).find("is not the daemon that registered (pid " + std::to_string(self)),
			  std::string::npos)
			<< e.what();
	}
	close(l);
	// a run directory others may write: none of its registrations counts
	chmod(run.c_str(), 0777);
	skipped.clear();
	EXPECT_TRUE(gw::control::list_daemons(run, &skipped).empty());
	ASSERT_EQ(skipped.size(), 1u);
	EXPECT_NE(skipped[0].find("is not a directory that only root may write"), std::string::npos) << skipped[0];
	chmod(run.c_str(), 0700);
	// a registration another user owns (root only: chown)
	if (geteuid() == 0) {
		ASSERT_EQ(chown((run + "/live.json").c_str(), 65534, 65534), 0);
		skipped.clear();
		EXPECT_TRUE(gw::control::list_daemons(run, &skipped).empty());
		all.clear();
		for (const auto &w : skipped)
			all += w + "\n";
		EXPECT_NE(all.find("registration live.json is not a regular file that only root may write"),
			  std::string::npos)
			<< all;
	}
	std::filesystem::remove_all(run);
}

// Issue 16, finding 9: the OCI hook runs for every container; one whose config.json was over
// 16 MiB was refused, GPU or not. A container without a DRM device starts, whatever its size.
TEST(OciHookTest, LargeConfigWithoutDrmDeviceStartsTheContainer)
{
	char tmpl[] = "/tmp/gw-bundle.XXXXXX";
	ASSERT_NE(mkdtemp(tmpl), nullptr);
	std::string b = tmpl;
	{
		std::ofstream c(b + "/config.json");
		c << R"({"ociVersion": "1.0.2", "annotations": {"big": ")" << std::string(17u << 20, 'x')
		  << R"("}, "linux": {"devices": [{"path": "/dev/fuse", "type": "c", "major": 10, "minor": 229}]}})";
		std::ofstream(b + "/state.json")
			<< R"({"ociVersion": "1.0.2", "id": "gw-host-large", "status": "created", "pid": 1, "bundle": ")"
			<< b << R"("})";
	}
	Outcome r = run({"/bin/sh", "-c", kBin + " oci-hook prestart < " + b + "/state.json"});
	std::system(("rm -rf " + b).c_str());
	EXPECT_EQ(r.status, 0) << r.err;
	EXPECT_EQ(r.err, "");
}

} // namespace

namespace
{
// From a build tree, criu-args points at the build's plugin directory and helper, which exist.
TEST(CriuArgs, PointsAtAnExistingPluginDirectoryAndHelper)
{
	char tmpl[] = "/tmp/gw-criu-args.XXXXXX";
	int fd = mkstemp(tmpl);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fd, 1);
		execl(kBin.c_str(), kBin.c_str(), "criu-args", (char *)nullptr);
		_exit(127);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	std::ifstream in(tmpl);
	std::string libdir_opt, libdir, action_opt, action;
	in >> libdir_opt >> libdir >> action_opt >> action;
	close(fd);
	unlink(tmpl);
	ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	EXPECT_EQ(libdir_opt, "--libdir");
	EXPECT_EQ(action_opt, "--action-script");
	EXPECT_TRUE(exists(libdir + "/gpuwatch_criu.so")) << libdir;
	EXPECT_EQ(access(action.c_str(), X_OK), 0) << action;
}
} // namespace
