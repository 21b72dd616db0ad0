// The process tree the action script finds under CRIU's root task: real processes of this host,
// including a grandchild forked by a thread that is not its process's leader (its parent is that
// thread, so only that thread's /proc/<pid>/task/<tid>/children names it).
#include <csignal>
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc_tree.hpp"

namespace
{

int ready_pipe[2];

/* a child that waits to be killed; its pid goes to ready_pipe when `tell` */
pid_t idle_child(bool tell)
{
	pid_t c = fork();
	if (c == 0) {
		pause();
		_exit(0);
	}
	if (tell)
		(void)!write(ready_pipe[1], &c, sizeof(c));
	return c;
}

void *fork_from_thread(void *)
{
	idle_child(true);
	return nullptr;
}

} // namespace

TEST(ProcTree, ChildrenGrandchildrenAndAThreadsChild)
{
	ASSERT_EQ(pipe(ready_pipe), 0);
	pid_t a = fork();
	ASSERT_GE(a, 0);
	if (a == 0) { // the root: one child of its own, one from a second thread
		idle_child(true);
		pthread_t t;
		if (pthread_create(&t, nullptr, fork_from_thread, nullptr))
			_exit(1);
		pthread_join(t, nullptr); // the forking thread is gone: its child is the process's now
		pthread_t idle;
		pthread_create(&idle, nullptr, fork_from_thread, nullptr); // and one whose thread lives
		pause();
		_exit(0);
	}
	pid_t kids[3];
	for (pid_t &k : kids)
		ASSERT_EQ(read(ready_pipe[0], &k, sizeof(k)), (ssize_t)sizeof(k));
	pid_t other = idle_child(false); // not in the tree
	std::set<uint32_t> want{(uint32_t)a, (uint32_t)kids[0], (uint32_t)kids[1], (uint32_t)kids[2]};
	EXPECT_EQ(gwaction::process_tree((uint32_t)a), want);
	EXPECT_EQ(gwaction::process_tree((uint32_t)kids[0]), std::set<uint32_t>{(uint32_t)kids[0]});
	for (pid_t k : kids)
		kill(k, SIGKILL);
	kill(a, SIGKILL);
	kill(other, SIGKILL);
	waitpid(a, nullptr, 0);
	waitpid(other, nullptr, 0);
}
