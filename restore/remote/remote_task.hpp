// Syscall injection into one ptrace-stopped task, through libcompel (the library CRIU itself
// is built on). Used by the action-script helper at pre-dump (it is the tracer), by its watcher,
// and by the CRIU plugin (CRIU's own process is the tracer; criu links compel statically and
// exports its symbols, Debian's libcompel.so.1 is built from the same source, so the calls
// below resolve to criu's copy inside criu and to libcompel.so elsewhere).
//
// Contract:
//  - The caller already traces `pid` (PTRACE_SEIZE/ATTACH) and the task is in a ptrace stop
//    (an interrupt/group stop, a signal-delivery stop, a syscall-entry or -exit stop). Only that task
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

namespace gwremote
{

// Whether this build can inject syscalls (libcompel was found at build time); if not, why.
bool available(std::string *why = nullptr);

// For a standalone program (the helper, tests): route libcompel's own messages to stderr at
// `level` (compel loglevels: 1 error ... 4 debug). Never call it inside criu: it would replace
// criu's compel logger.
void init_standalone_logging(unsigned level = 1);

class RemoteTask
{
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
	// stopped and traced, with its registers and signal mask as at attach.
	// After injected syscalls the task sits in a signal-delivery stop (the trap that ends each
	// one). Resuming from there returns to user space with the registers as they are, which is
	// what a task attached in an interrupt/group stop or a syscall-exit stop expects: CRIU
	// restore's RESUME_DEVICES_LATE, where every task is at the *exit* of rt_sigreturn with
	// its own registers loaded and orig_ax -1 (compel_stop_on_syscall stops there).
	// Only a task attached at a syscall-entry stop (PTRACE_GET_SYSCALL_INFO says so at attach,
	// which needs the tracer's PTRACE_O_TRACESYSGOOD) would lose its pending syscall that way;
	// for it finish() writes a `syscall` instruction at the borrowed address, runs it with
	// PTRACE_SYSCALL and the original syscall number in ax to stop at its entry again, then
	// restores the code bytes, registers and signal mask.
	// Doing that dance at an exit stop would enter syscall -1 on resume, and a seccomp filter
	// that refuses unknown syscalls (podman's profile: ENOSYS) then overwrites ax: the task
	// sees -ENOSYS where it had a syscall's result.
	void finish();

private:
	struct Impl;
	explicit RemoteTask(std::unique_ptr<Impl> impl);
	std::unique_ptr<Impl> impl_;
	pid_t pid_ = 0;
};

} // namespace gwremote
