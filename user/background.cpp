#include "background.hpp"

#include <algorithm>
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

bool WriteDebounce::update(uint64_t generation, uint64_t on_disk, bool writer_running, int64_t now)
{
	if (generation == on_disk) { // written since, by a sync or by the background write
		dirty_ = false;
		return false;
	}
	if (!dirty_) {
		dirty_ = true;
		since_ = now;
	}
	if (writer_running || now < since_ + debounce_ms_)
		return false;
	dirty_ = false;
	return true;
}

int WriteDebounce::timeout_ms(bool busy, bool writer_running, int64_t now) const
{
	int timeout = 500;
	if (dirty_ && !writer_running) { // the write starts once it is due
		int64_t due_in = since_ + debounce_ms_ - now;
		timeout = due_in <= 0 ? 0 : static_cast<int>(std::min<int64_t>(due_in, timeout));
	}
	if (busy || writer_running)
		timeout = std::min(timeout, kBatchMs);
	return timeout;
}

} // namespace gw
