// Shared by the host tests (root, the running kernel): running gpuwatch with its output
// captured, and a fixture that owns a fresh cgroup v2 directory and a temporary directory.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>
#include <linux/magic.h>

namespace gwhost
{

inline const std::string kBin = GPUWATCH_BIN;

struct Outcome {
	int status = -1;
	std::string out, err;
};

inline std::string slurp(const char *path)
{
	std::ifstream in(path);
	std::stringstream ss;
	ss << in.rdbuf();
	return ss.str();
}

// Runs argv with GPUWATCH_HOOKS set to env_hooks (unset if null); captures stdout and stderr.
inline Outcome run(const std::vector<std::string> &argv, const char *env_hooks = nullptr)
{
	char out_t[] = "/tmp/gw-host-out.XXXXXX", err_t[] = "/tmp/gw-host-err.XXXXXX";
	int ofd = mkstemp(out_t), efd = mkstemp(err_t);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(ofd, 1);
		dup2(efd, 2);
		if (env_hooks)
			setenv("GPUWATCH_HOOKS", env_hooks, 1);
		else
			unsetenv("GPUWATCH_HOOKS");
		std::vector<char *> a;
		for (const auto &s : argv)
			a.push_back(const_cast<char *>(s.c_str()));
		a.push_back(nullptr);
		execv(a[0], a.data());
		_exit(127);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	Outcome r;
	r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	r.out = slurp(out_t);
	r.err = slurp(err_t);
	close(ofd);
	close(efd);
	unlink(out_t);
	unlink(err_t);
	return r;
}

inline bool exists(const std::string &p)
{
	struct stat st;
	return stat(p.c_str(), &st) == 0;
}

// The cgroup v2 mount: /sys/fs/cgroup/unified on hybrid hosts, else /sys/fs/cgroup; "" if none.
inline std::string cgroup2_root()
{
	for (const char *p : {"/sys/fs/cgroup/unified", "/sys/fs/cgroup"}) {
		struct statfs s;
		if (statfs(p, &s) == 0 && s.f_type == CGROUP2_SUPER_MAGIC)
			return p;
	}
	return "";
}

// Skips without root or cgroup v2; else owns cg_ (ROOT/gpuwatch-<tag>-<pid>) and dir_ (a
// temporary directory), both removed after the test.
class CgroupTest : public ::testing::Test
{
protected:
	explicit CgroupTest(std::string tag) : tag_(std::move(tag)) {}
	void SetUp() override
	{
		if (geteuid() != 0)
			GTEST_SKIP() << "needs root: loads BPF programs";
		root_ = cgroup2_root();
		if (root_.empty())
			GTEST_SKIP() << "no cgroup v2 hierarchy mounted";
		cg_ = root_ + "/gpuwatch-" + tag_ + "-" + std::to_string(getpid());
		ASSERT_EQ(mkdir(cg_.c_str(), 0755), 0) << cg_;
		char d[] = "/tmp/gw-host.XXXXXX";
		dir_ = mkdtemp(d);
	}
	void TearDown() override
	{
		if (!cg_.empty())
			rmdir(cg_.c_str());
		if (!dir_.empty())
			std::system(("rm -rf " + dir_).c_str());
	}
	std::string tag_, root_, cg_, dir_;
};

} // namespace gwhost
