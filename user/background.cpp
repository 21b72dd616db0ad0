#include "background.hpp"

#include <cerrno>
#include <cstdio>
#include <exception>
#include <sys/wait.h>
#include <unistd.h>

#include "sysutil.hpp"

namespace gw
{

BackgroundJob::~BackgroundJob()
{
	reap(true);
}

bool BackgroundJob::start(const std::function<void()> &job)
{
	if (running())
		throw Error("internal: a background job is already running");
	std::fflush(nullptr); /* or the child's exit would write the caller's pending output again */
	pid_t pid = ::fork();
	if (pid < 0)
		return false;
	if (pid == 0) {
		int rc = 0;
		try {
			job();
		} catch (const std::exception &e) {
			std::fprintf(stderr, "gpuwatch: %s\n", e.what());
			rc = 1;
		}
		std::fflush(stderr);
		::_exit(rc);
	}
	pid_ = pid;
	return true;
}

std::string BackgroundJob::reap(bool block)
{
	if (!running())
		return {};
	int st = 0;
	pid_t r;
	while ((r = ::waitpid(pid_, &st, block ? 0 : WNOHANG)) < 0 && errno == EINTR) {
	}
	if (r == 0)
		return {};
	pid_t pid = pid_;
	pid_ = -1;
	if (r < 0)
		return "background job " + std::to_string(pid) + ": waitpid: " + errno_text(errno);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return {};
	if (WIFEXITED(st))
		return "background job " + std::to_string(pid) + " failed (exit status " +
		       std::to_string(WEXITSTATUS(st)) + ", its message is above)";
	return "background job " + std::to_string(pid) + " was killed by signal " + std::to_string(WTERMSIG(st));
}

} // namespace gw
