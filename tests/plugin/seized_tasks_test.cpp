// The dump session's tasks are the processes this criu traces. From the tree's root the plugin
// reads that tree only; a root it cannot trust (not traced by this process, or below another
// traced task) falls back to the scan of every process. Real processes, traced with
// PTRACE_SEIZE (which stops nothing), as criu traces them.
#include <cerrno>
#include <csignal>
#include <cstring>
#include <gtest/gtest.h>
#include <set>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.hpp"

namespace
{

std::set<uint32_t> as_set(const std::vector<uint32_t> &v)
{
	return {v.begin(), v.end()};
}

// root -> child -> grandchild, each waiting to be killed; the pids through a pipe
struct Tree {
	pid_t root = -1, child = -1, grandchild = -1;
	Tree()
	{
		int p[2];
		if (pipe(p) != 0)
			return;
		root = fork();
		if (root == 0) {
			pid_t c = fork();
			if (c == 0) {
				pid_t g = fork();
				if (g == 0) {
					pause();
					_exit(0);
				}
				(void)!write(p[1], &g, sizeof(g));
				pause();
				_exit(0);
			}
			(void)!write(p[1], &c, sizeof(c));
			pause();
			_exit(0);
		}
		pid_t a = -1, b = -1;
		(void)!read(p[0], &a, sizeof(a));
		(void)!read(p[0], &b, sizeof(b));
		// the grandchild's pid is written first (by the child, before its own)
		grandchild = a;
		child = b;
		close(p[0]);
		close(p[1]);
	}
	~Tree()
	{
		for (pid_t x : {grandchild, child, root})
			if (x > 0)
				kill(x, SIGKILL);
		// a traced task is reaped by its tracer (this process) as well as by its parent
		for (pid_t x : {grandchild, child, root})
			if (x > 0)
				while (waitpid(x, nullptr, __WALL) < 0 && errno == EINTR) {
				}
	}
};

bool seize(pid_t pid)
{
	return ptrace(PTRACE_SEIZE, pid, nullptr, nullptr) == 0;
}

} // namespace

// The tree, its root and its child traced by this process (the grandchild is each test's).
class SeizedTasks : public ::testing::Test
{
protected:
	Tree t;
	void SetUp() override
	{
		ASSERT_GT(t.grandchild, 0);
		if (!seize(t.root))
			GTEST_SKIP() << "PTRACE_SEIZE refused here (" << strerror(errno) << "): needs CAP_SYS_PTRACE";
		ASSERT_TRUE(seize(t.child));
	}
};

TEST_F(SeizedTasks, TreeFromItsRootOrFromEveryProcess)
{
	ASSERT_TRUE(seize(t.grandchild));
	const std::set<uint32_t> want{(uint32_t)t.root, (uint32_t)t.child, (uint32_t)t.grandchild};
	EXPECT_EQ(as_set(gwcriu::seized_tasks(0)), want) << "the scan of /proc";
	EXPECT_EQ(as_set(gwcriu::seized_tasks((uint32_t)t.root)), want) << "from the root";
	EXPECT_EQ(as_set(gwcriu::seized_tasks((uint32_t)t.child)), want)
		<< "a root whose parent is traced too is not the tree's: every process is read";
	EXPECT_EQ(as_set(gwcriu::seized_tasks((uint32_t)getpid())), want)
		<< "a root this process does not trace: every process is read";
}

TEST_F(SeizedTasks, UntracedDescendantIsLeftOut)
{
	const std::set<uint32_t> want{(uint32_t)t.root, (uint32_t)t.child};
	EXPECT_EQ(as_set(gwcriu::seized_tasks((uint32_t)t.root)), want);
	EXPECT_EQ(as_set(gwcriu::seized_tasks(0)), want);
}
