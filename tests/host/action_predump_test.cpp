// Host tests (root) of the action script's pre-dump as CRIU runs it: it is loaded into every
// checkpoint a host makes, GPU or not, and must never fail one that has no DRM state.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <fstream>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "criu_abi.hpp"
#include "host_util.hpp"

namespace
{

// A cgroup v2 mount point of this mount namespace, "" if none is left.
std::string cgroup2_mount()
{
	std::ifstream in("/proc/self/mounts");
	std::string dev, dir, type, rest;
	while (in >> dev >> dir >> type && std::getline(in, rest))
		if (type == "cgroup2")
			return dir;
	return "";
}

// Runs the action script's pre-dump, or `action` (stdout and stderr captured), with a fresh
// image directory (which `image` may fill) and run directory, in a child that `setup` prepares
// first and `exec` replaces (default: the action script itself). Returns the wait status and
// the output.
struct ActionRun {
	int status = 0;
	std::string log;
};
ActionRun run_predump(const std::function<void()> &setup, const std::function<void()> &exec = {},
		      const char *action = "pre-dump", const std::function<void(const std::string &)> &image = {})
{
	char img[] = "/tmp/gw-img.XXXXXX", run[] = "/tmp/gw-run.XXXXXX", out[] = "/tmp/gw-act-out.XXXXXX";
	ActionRun r;
	if (!mkdtemp(img) || !mkdtemp(run))
		return {-1, "mkdtemp failed"};
	int ofd = mkstemp(out);
	if (image)
		image(img);
	pid_t child = fork();
	if (child == 0) {
		dup2(ofd, 1);
		dup2(ofd, 2);
		setup();
		setenv("CRTOOLS_SCRIPT_ACTION", action, 1);
		setenv("CRTOOLS_IMAGE_DIR", img, 1);
		setenv("CRTOOLS_INIT_PID", std::to_string(getpid()).c_str(), 1);
		setenv("GPUWATCH_RUN_DIR", run, 1);
		if (exec)
			exec();
		else
			execl(GPUWATCH_ACTION_BIN, "gpuwatch-criu-action", nullptr);
		_exit(127);
	}
	waitpid(child, &r.status, 0);
	r.log = gwhost::slurp(out);
	close(ofd);
	unlink(out);
	std::filesystem::remove_all(img);
	std::filesystem::remove_all(run);
	return r;
}

// Issue 16, finding 12: with no cgroup v2 mounted (cgroup-v1-only hosts, CRIU in a mount
// namespace without it) every dump with gpuwatch's options failed ("Pre dump script failed":
// the pre-dump asked for the task's cgroup v2 directory before looking for daemons).
TEST(ActionPreDump, NoCgroupV2AndNoDaemonLetsTheDumpGoOn)
{
	if (geteuid() != 0)
		GTEST_SKIP() << "needs root: a mount namespace without cgroup v2";
	ActionRun r = run_predump([] {
		// a mount namespace of its own whose cgroup v2 mounts are gone
		if (unshare(CLONE_NEWNS) != 0 || mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
			_exit(90);
		for (std::string m; !(m = cgroup2_mount()).empty();)
			if (umount2(m.c_str(), MNT_DETACH) != 0)
				_exit(91);
	});
	ASSERT_TRUE(WIFEXITED(r.status)) << r.log;
	ASSERT_LT(WEXITSTATUS(r.status), 90)
		<< "could not set up a mount namespace without cgroup v2: " << WEXITSTATUS(r.status);
	EXPECT_EQ(WEXITSTATUS(r.status), 0) << r.log;
	// since issue 17 the pre-dump looks for a daemon only for a tree with i915 mappings (the
	// plugin syncs the daemons itself): this tree has none, so it asks for no cgroup at all
	EXPECT_EQ(r.log.find("cgroup"), std::string::npos) << r.log;
}

// Issue 16, finding 12: `$(gpuwatch criu-args)` gives --libdir, and CRIU keeps one: a tool's
// own --libdir after it drops gpuwatch's plugin while its action script still runs. The plugin
// directory criu was given is read from its command line, as CRIU reads it (the last one).
TEST(ActionPreDump, LibdirOfCriuCommandLine)
{
	using gwaction::libdir_of_cmdline;
	EXPECT_EQ(libdir_of_cmdline({"criu", "dump", "-t", "1"}, "/w"), "");
	EXPECT_EQ(libdir_of_cmdline({"criu", "dump", "--libdir", "/a", "-L", "/b"}, "/w"), "/b");
	EXPECT_EQ(libdir_of_cmdline({"criu", "-L/c", "dump"}, "/w"), "/c");
	EXPECT_EQ(libdir_of_cmdline({"criu", "dump", "--libdir=rel"}, "/w"), "/w/rel");
	EXPECT_EQ(libdir_of_cmdline({"--libdir", "/argv0-is-not-an-option"}, "/w"), "");
}

// The pre-dump says so, and (no DRM file among the dumped processes here) lets the dump go on.
// With DRM files it refuses the dump in one line: the VM suite's criu_baseline runs that.
TEST(ActionPreDump, ForeignLibdirIsSaid)
{
	// the action script's parent (criu, here a shell) was given --libdir /nonexistent-plugins
	ActionRun r = run_predump([] {},
				  [] {
					  execl("/bin/sh", "sh", "-c", "\"$0\"; exit $?", GPUWATCH_ACTION_BIN,
						"--libdir", "/nonexistent-plugins", nullptr);
				  });
	ASSERT_TRUE(WIFEXITED(r.status)) << r.log;
	EXPECT_EQ(WEXITSTATUS(r.status), 0) << r.log;
	EXPECT_NE(r.log.find("criu was given --libdir /nonexistent-plugins, which holds no gpuwatch_criu.so"),
		  std::string::npos)
		<< r.log;
	EXPECT_NE(r.log.find("no DRM file among the dumped processes: the dump goes on"), std::string::npos) << r.log;
}

// The plugin cannot fail a dump from its exit hook: when it finds its images incomplete there
// it leaves gpuwatch-dump-failed.txt, and the post-dump, which CRIU runs after that hook and
// whose failure fails the dump, fails on it. Without the file the post-dump lets the dump end.
TEST(ActionPostDump, FailsTheDumpOnThePluginsMark)
{
	ActionRun failed = run_predump([] {}, {}, "post-dump",
				       [](const std::string &img) {
					       std::ofstream(img + "/gpuwatch-dump-failed.txt")
						       << "cannot write gpuwatch-vmas.json: No space left\n";
				       });
	ASSERT_TRUE(WIFEXITED(failed.status)) << failed.log;
	EXPECT_EQ(WEXITSTATUS(failed.status), 1) << failed.log;
	EXPECT_NE(failed.log.find("cannot write gpuwatch-vmas.json: No space left"), std::string::npos) << failed.log;
	ActionRun fine = run_predump([] {}, {}, "post-dump");
	ASSERT_TRUE(WIFEXITED(fine.status)) << fine.log;
	EXPECT_EQ(WEXITSTATUS(fine.status), 0) << fine.log;
}

} // namespace
