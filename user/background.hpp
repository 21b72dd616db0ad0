// A job run in a forked child, so that the caller goes on while it runs: the child works on a
// copy-on-write snapshot of the caller's memory. The daemon writes large manifests this way
// (as a database's background save does): at 10^5 handles building, serializing and writing
// the manifest takes seconds, during which a daemon doing it inline would read no records.
//
// Only for single-threaded callers (a child of a threaded process may find a lock held
// forever). The child runs the job and _exit()s: 0 when it returned, 1 when it threw (the
// message goes to stderr first), without running atexit handlers or flushing the caller's
// stdio buffers a second time.
#ifndef GPUWATCH_BACKGROUND_HPP
#define GPUWATCH_BACKGROUND_HPP

#include <functional>
#include <string>
#include <sys/types.h>

namespace gw
{

class BackgroundJob
{
public:
	BackgroundJob() = default;
	~BackgroundJob(); // waits for a running child
	BackgroundJob(const BackgroundJob &) = delete;
	BackgroundJob &operator=(const BackgroundJob &) = delete;

	// Forks and runs job() in the child. False when the child cannot be forked (the caller
	// then does the work itself). Must not be called while running().
	bool start(const std::function<void()> &job);
	bool running() const { return pid_ > 0; }
	// Reaps the child if it has finished (waits for it if `block`). Returns "" when there is
	// nothing to report (no child, still running, or it succeeded), else why it failed.
	std::string reap(bool block);

private:
	pid_t pid_ = -1;
};

} // namespace gw

#endif
