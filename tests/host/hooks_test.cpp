// Host tests of the hook paths (root, the running kernel): `gpuwatch check` probes and says
// why each group is on the tracepoints or on fexit; --hooks and GPUWATCH_HOOKS force a path.
// On the 6.18 build host fentry/fexit are refused and there is no drm module: everything is
// on the tracepoints there, and --hooks=fexit must fail cleanly.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "host_util.hpp"
#include "model.hpp"

namespace
{

using namespace gwhost;

size_t lines(const std::string &s)
{
	return std::count(s.begin(), s.end(), '\n');
}

class HooksTest : public CgroupTest
{
protected:
	HooksTest() : CgroupTest("hooks-test") {}
	nlohmann::json check_json(const char *env_hooks = nullptr)
	{
		Outcome r = run({kBin, "check", "--json"}, env_hooks);
		EXPECT_EQ(r.status, 0) << r.err;
		return nlohmann::json::parse(r.out);
	}
};

TEST_F(HooksTest, CheckSaysWhyEachGroupIsWhereItIs)
{
	Outcome r = run({kBin, "check"});
	ASSERT_EQ(r.status, 0) << r.err;
	for (const char *g : {"ioctl:    ", "mmap:     ", "cloexec:  ", "syscalls: "})
		EXPECT_NE(r.out.find(std::string("\n") + g), std::string::npos) << g << " missing in:\n" << r.out;
	EXPECT_NE(r.out.find("gpuwatch can run here"), std::string::npos) << r.out;

	nlohmann::json j = check_json();
	EXPECT_EQ(j["can_run"], true);
	EXPECT_EQ(j["mode"], "auto");
	EXPECT_FALSE(j["kernel"].get<std::string>().empty());
	EXPECT_EQ(j["btf"], true);
	for (const char *g : {"ioctl", "mmap", "cloexec", "syscalls"}) {
		std::string path = j["hooks"][g]["path"];
		EXPECT_TRUE(path == "fexit" || path == "tracepoint") << g << ": " << path;
		EXPECT_FALSE(j["hooks"][g]["reason"].get<std::string>().empty()) << g;
	}
	if (!exists("/sys/module/drm")) { /* the build host: no DRM at all */
		EXPECT_EQ(j["drm"]["loaded"], false);
		EXPECT_EQ(j["hooks"]["ioctl"]["path"], "tracepoint");
		EXPECT_NE(j["hooks"]["ioctl"]["reason"].get<std::string>().find("drm module not loaded"),
			  std::string::npos)
			<< j.dump();
	}
}

TEST_F(HooksTest, TracepointCanBeForcedByFlagOrEnvironment)
{
	for (const char *env : {"tracepoint", "fexit"}) {
		Outcome r = run({kBin, "check", "--json", "--hooks=tracepoint"}, env);
		ASSERT_EQ(r.status, 0) << r.err;
		nlohmann::json j = nlohmann::json::parse(r.out);
		EXPECT_EQ(j["path"], "tracepoint");
		EXPECT_EQ(j["mode_source"], "--hooks") << "the flag wins over GPUWATCH_HOOKS=" << env;
		EXPECT_EQ(j["hooks"]["ioctl"]["reason"], "forced by --hooks=tracepoint");
	}
	nlohmann::json j = check_json("tracepoint");
	EXPECT_EQ(j["path"], "tracepoint");
	EXPECT_EQ(j["hooks"]["mmap"]["reason"], "forced by GPUWATCH_HOOKS=tracepoint");
}

TEST_F(HooksTest, BadHookValuesAreOneLineErrors)
{
	Outcome r = run({kBin, "check"}, "kprobe");
	EXPECT_EQ(r.status, 1);
	EXPECT_EQ(r.err, "gpuwatch: error: GPUWATCH_HOOKS=kprobe: expected auto, tracepoint or fexit\n");
	r = run({kBin, "attach", "--hooks=kprobe", "--cgroup", cg_, "--manifest", dir_ + "/m.json"});
	EXPECT_NE(r.status, 0);
	EXPECT_FALSE(exists(dir_ + "/m.json"));
}

TEST_F(HooksTest, ForcedFexitWhereUnavailableFailsWithOneLineAndNoManifest)
{
	nlohmann::json j = check_json();
	if (j["path"] == "fexit")
		GTEST_SKIP() << "fexit works for every group on this kernel";
	std::string m = dir_ + "/m.json";
	Outcome r = run({kBin, "attach", "--hooks=fexit", "--cgroup", cg_, "--manifest", m});
	EXPECT_EQ(r.status, 1);
	EXPECT_EQ(lines(r.err), 1u) << r.err;
	EXPECT_EQ(r.err.rfind("gpuwatch: error: --hooks=fexit: the ", 0), 0u) << r.err;
	EXPECT_NE(r.err.find(" cannot use "), std::string::npos) << r.err;
	EXPECT_FALSE(exists(m));

	r = run({kBin, "attach", "--cgroup", cg_, "--manifest", m}, "fexit");
	EXPECT_EQ(r.status, 1);
	EXPECT_EQ(lines(r.err), 1u) << r.err;
	EXPECT_EQ(r.err.rfind("gpuwatch: error: GPUWATCH_HOOKS=fexit: ", 0), 0u) << r.err;
	EXPECT_FALSE(exists(m));

	r = run({kBin, "check", "--hooks=fexit"});
	EXPECT_EQ(r.status, 1);
	EXPECT_EQ(lines(r.err), 1u) << r.err;
}

TEST_F(HooksTest, ManifestRecordsTheChosenHooks)
{
	nlohmann::json chosen = check_json();
	std::string m = dir_ + "/m.json";
	pid_t pid = fork();
	if (pid == 0) {
		unsetenv("GPUWATCH_HOOKS");
		execl(kBin.c_str(), kBin.c_str(), "attach", "--cgroup", cg_.c_str(), "--manifest", m.c_str(),
		      (char *)nullptr);
		_exit(127);
	}
	for (int i = 0; i < 300 && !exists(m); i++)
		std::this_thread::sleep_for(std::chrono::milliseconds(100));
	ASSERT_TRUE(exists(m)) << "attach wrote no manifest in 30 s";
	kill(pid, SIGTERM);
	int st = 0;
	waitpid(pid, &st, 0);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	nlohmann::json j = gw::manifest::to_json(gw::manifest::read_file(m));
	ASSERT_TRUE(j.contains("hooks")) << j.dump();
	for (const char *g : {"ioctl", "mmap", "cloexec"})
		EXPECT_EQ(j["hooks"][g], chosen["hooks"][g]["path"]) << g;
}

TEST(HooksNonRoot, CheckNeedsRoot)
{
	if (geteuid() != 0 || access("/usr/bin/setpriv", X_OK) != 0)
		GTEST_SKIP() << "needs root and setpriv to drop it";
	Outcome r = run({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", kBin, "check"});
	EXPECT_EQ(r.status, 1);
	EXPECT_EQ(lines(r.err), 1u) << r.err;
	EXPECT_NE(r.err.find("gpuwatch check needs root"), std::string::npos) << r.err;
}

} // namespace
