// Syscall injection into one ptrace-stopped task, through libcompel (the library CRIU itself
// is built on). Used by the action-script helper at pre-dump (it is the tracer), by its watcher,
// and by the CRIU plugin (CRIU's own process is the tracer; criu links compel statically and
// exports its symbols, Debian's libcompel.so.1 is built from the same source, so the calls
// below resolve to criu's copy inside criu and to libcompel.so elsewhere).
//
// Contract:
//  - The caller already traces `pid` (PTRACE_SEIZE/ATTACH) and the task is in a ptrace stop
//    (an interrupt/group stop, a signal-delivery stop or a syscall-entry stop). Only that task
//    (thread) runs the injected code; other threads of the process must be stopped too if they
//    could touch what is changed (all of them are, under CRIU and in the helper).
//  - Every injected syscall runs with all signals blocked and the task's registers, signal mask
//    and the code bytes it borrows are put back afterwards (compel_syscall does this).
//  - Nothing here resumes, detaches or waits for any other task.
//  - Errors: gw::Error with one line naming the pid and the step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <sys/types.h>
#include <vector>

namespace gwremote {

// Whether this build can inject syscalls (libcompel was found at build time); if not, why.
bool available(std::string *why = nullptr);

// For a standalone program (the helper, tests): route libcompel's own messages to stderr at
// `level` (compel loglevels: 1 error ... 4 debug). Never call it inside criu: it would replace
// criu's compel logger.
void init_standalone_logging(unsigned level = 1);

class RemoteTask {
public:
	// The caller traces pid and it is stopped. Throws gw::Error (not traced by us, not
	// stopped, no executable mapping to borrow, no libcompel).
	static RemoteTask attach(pid_t pid);

	RemoteTask(RemoteTask &&) noexcept;
	RemoteTask &operator=(RemoteTask &&) = delete;
	RemoteTask(const RemoteTask &) = delete;
	~RemoteTask(); // finish() if not called yet; errors are written to stderr, never thrown

	pid_t pid() const { return pid_; }

	// Runs syscall `nr` in the task; returns its raw result (a negative errno on failure).
	// Throws when the injection itself fails (the task is then in an unknown state).
	long syscall(long nr, unsigned long a1 = 0, unsigned long a2 = 0, unsigned long a3 = 0, unsigned long a4 = 0,
		     unsigned long a5 = 0, unsigned long a6 = 0);
	// Like syscall() but throws gw::Error "<what> in process <pid>: <errno text>" on a
	// negative result.
	long checked(const char *what, long nr, unsigned long a1 = 0, unsigned long a2 = 0, unsigned long a3 = 0,
		     unsigned long a4 = 0, unsigned long a5 = 0, unsigned long a6 = 0);

	// len bytes (rounded up to pages) of private anonymous RW memory in the task; unmapped by
	// finish().
	uint64_t scratch(std::size_t len);
	// Copy to / from the task's memory (process_vm_writev/readv, falling back to
	// /proc/PID/mem). Not for VM_IO|VM_PFNMAP mappings (GEM mappings): those can only be read
	// by the task itself (see gwremote::copy_through_pipe in i915_maps.hpp).
	void write(uint64_t addr, const void *p, std::size_t n);
	void read(uint64_t addr, void *p, std::size_t n);

	// Ends the session: unmaps the scratch areas and frees compel's context. The task stays
	// stopped and traced.
	// at_syscall_entry: the task was at a syscall-entry stop when attached (CRIU restore's
	// RESUME_DEVICES_LATE: every task stopped at the entry of rt_sigreturn). After injected
	// syscalls it sits in a signal-delivery stop instead, from which resuming would not run
	// the pending syscall. finish(true) puts it back: a `syscall` instruction is written at the
	// borrowed address, the task runs it with PTRACE_SYSCALL and the original syscall number
	// (orig_ax) in ax and stops at its entry; then the code bytes, the original registers and
	// the signal mask are restored. The task is again at the entry of its original syscall
	// (rt_sigreturn), as CRIU left it (compel_unmap() in CRIU does the same dance to reach
	// that stop).
	void finish(bool at_syscall_entry = false);

private:
	struct Impl;
	explicit RemoteTask(std::unique_ptr<Impl> impl);
	std::unique_ptr<Impl> impl_;
	pid_t pid_ = 0;
};

} // namespace gwremote
