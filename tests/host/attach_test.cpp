// Host tests (root, no DRM device): the BPF object loads and attaches on the running kernel,
// `gpuwatch attach` writes a manifest for an empty cgroup, and its failures are clean.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <string>
#include <sys/stat.h>
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

TEST_F(HostTest, ControlSocketSyncsAndRegistrationIsRemovedOnStop)
{
	std::string m = dir_ + "/manifest.json", run = dir_ + "/run";
	int early = 0;
	pid_t pid = start_attach({"--cgroup", cg_, "--manifest", m, "--run-dir", run}, m, &early);
	ASSERT_GT(pid, 0) << "attach failed, status " << early;
	auto daemons = gw::control::list_daemons(run);
	ASSERT_EQ(daemons.size(), 1u);
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
