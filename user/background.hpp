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

#include <cstdint>
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

// When the daemon writes its manifest after a change, debounced: the loop calls update()
// after each turn and waits at most timeout_ms() for the next event (times: ms of a steady
// clock). The loop spins (waits 0) only when a write can start now. Two cases spun before:
// a write that fell due while the previous background write still ran, for as long as that
// one ran; and a change that a sync wrote inline before it fell due, until the next change
// (one CPU busy after a restore whose plugin asked for a sync).
class WriteDebounce
{
public:
	static constexpr int kBatchMs = 10; // the loop's wait while records keep coming or a write runs

	explicit WriteDebounce(unsigned debounce_ms) : debounce_ms_(debounce_ms) {}
	// generation: the model's; on_disk: the one written, or being written by the running
	// background write. True: start a background write now.
	bool update(uint64_t generation, uint64_t on_disk, bool writer_running, int64_t now_ms);
	// busy: the last drain found records
	int timeout_ms(bool busy, bool writer_running, int64_t now_ms) const;
	bool dirty() const { return dirty_; }

private:
	int64_t debounce_ms_;
	bool dirty_ = false;
	int64_t since_ = 0;
};

} // namespace gw

#endif
