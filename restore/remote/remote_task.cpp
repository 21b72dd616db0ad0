#include "remote_task.hpp"

#include <cerrno>
#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sysutil.hpp"

#ifdef GW_HAVE_COMPEL
extern "C" {
#include <compel/infect.h>
#include <compel/log.h>
}
#endif

namespace gwremote
{

using gw::errno_text;
using gw::Error;

namespace
{

std::string who(pid_t pid)
{
	return "process " + std::to_string(pid);
}

// The first executable mapping of the task (compel_prepare's find_executable_area does the
// same): the 8 bytes compel borrows for its `syscall; int3` stub.
uint64_t find_executable_area(pid_t pid)
{
	std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
	std::string line;
	while (std::getline(in, line)) {
		unsigned long start = 0, end = 0;
		char perms[8] = {};
		if (sscanf(line.c_str(), "%lx-%lx %7s", &start, &end, perms) != 3)
			continue;
		if (perms[2] == 'x' && end - start >= 4096 && line.find("[vsyscall]") == std::string::npos)
			return start;
	}
	throw Error(who(pid) + ": no executable mapping to run injected syscalls from");
}

} // namespace

#ifdef GW_HAVE_COMPEL

bool available(std::string *)
{
	return true;
}

namespace
{
void log_to_stderr(unsigned int, const char *fmt, va_list ap)
{
	fputs("compel: ", stderr);
	vfprintf(stderr, fmt, ap);
}
} // namespace

void init_standalone_logging(unsigned level)
{
	compel_log_init(log_to_stderr, level);
}

struct RemoteTask::Impl {
	parasite_ctl *ctl = nullptr;
	pid_t pid = 0;
	uint64_t syscall_ip = 0;
	user_regs_struct regs{};       // at attach, for finish()
	bool at_syscall_entry = false; // attached at a syscall-entry stop (PTRACE_GET_SYSCALL_INFO)
	uint64_t sigmask = 0;
	std::vector<std::pair<uint64_t, std::size_t>> scratch;
	bool finished = false;
};

RemoteTask::RemoteTask(std::unique_ptr<Impl> impl) : impl_(std::move(impl)), pid_(impl_->pid) {}
RemoteTask::RemoteTask(RemoteTask &&o) noexcept : impl_(std::move(o.impl_)), pid_(o.pid_) {}

RemoteTask::~RemoteTask()
{
	if (!impl_ || impl_->finished)
		return;
	try {
		finish();
	} catch (const std::exception &e) {
		fprintf(stderr, "gwremote: %s\n", e.what());
	}
}

RemoteTask RemoteTask::attach(pid_t pid)
{
	auto impl = std::make_unique<Impl>();
	impl->pid = pid;
	if (ptrace(PTRACE_GETREGS, pid, nullptr, &impl->regs) != 0)
		throw Error(who(pid) + " is not stopped under our ptrace (PTRACE_GETREGS: " + errno_text(errno) + ")");
	if (ptrace((__ptrace_request)PTRACE_GETSIGMASK, pid, sizeof(impl->sigmask), &impl->sigmask) != 0)
		throw Error(who(pid) + ": PTRACE_GETSIGMASK: " + errno_text(errno));
	// Which stop: only at a syscall-entry stop does finish() have to re-enter the syscall.
	// Tracers that do not set PTRACE_O_TRACESYSGOOD get op NONE here: no entry stop then.
	__ptrace_syscall_info info{};
	long n = ptrace(PTRACE_GET_SYSCALL_INFO, pid, sizeof info, &info);
	impl->at_syscall_entry = n > 0 && info.op == PTRACE_SYSCALL_INFO_ENTRY;
	impl->syscall_ip = find_executable_area(pid);
	impl->ctl = compel_prepare_noctx(pid);
	if (!impl->ctl)
		throw Error(who(pid) + ": compel_prepare_noctx failed (see compel's messages)");
	compel_infect_ctx(impl->ctl)->syscall_ip = impl->syscall_ip;
	if (!compel_mode_native(impl->ctl)) {
		if (compel_cure_local(impl->ctl) != 0) { /* nothing more to undo */
		}
		impl->finished = true;
		throw Error(who(pid) + " is a 32-bit (compat) task: not supported");
	}
	return RemoteTask(std::move(impl));
}

long RemoteTask::syscall(long nr, unsigned long a1, unsigned long a2, unsigned long a3, unsigned long a4,
			 unsigned long a5, unsigned long a6)
{
	if (!impl_ || impl_->finished)
		throw Error(who(pid_) + ": remote session already finished");
	long ret = 0;
	if (compel_syscall(impl_->ctl, (int)nr, &ret, a1, a2, a3, a4, a5, a6) != 0)
		throw Error(who(pid_) + ": injecting syscall " + std::to_string(nr) +
			    " failed (see compel's messages)");
	return ret;
}

void RemoteTask::finish()
{
	if (!impl_ || impl_->finished)
		return;
	std::string err;
	for (auto &[addr, len] : impl_->scratch) {
		try {
			long r = syscall(__NR_munmap, addr, len);
			if (r < 0 && err.empty())
				err = who(pid_) + ": munmap of scratch area: " + errno_text((int)-r);
		} catch (const std::exception &e) {
			if (err.empty())
				err = e.what();
		}
	}
	impl_->scratch.clear();
	if (compel_cure_local(impl_->ctl) != 0 && err.empty())
		err = who(pid_) + ": compel_cure_local failed";
	impl_->ctl = nullptr;
	impl_->finished = true;
	if (impl_->at_syscall_entry && err.empty()) {
		/* back to a syscall-entry stop of the original syscall (see the header) */
		const pid_t pid = pid_;
		const uint64_t ip = impl_->syscall_ip;
		errno = 0;
		long saved = ptrace(PTRACE_PEEKDATA, pid, ip, nullptr);
		if (errno)
			throw Error(who(pid) + ": PTRACE_PEEKDATA at " + std::to_string(ip) + ": " + errno_text(errno));
		long code = saved;
		memcpy(&code, "\x0f\x05\xcc\xcc\xcc\xcc\xcc\xcc", sizeof code); /* syscall; int3 ... */
		uint64_t all = ~0ULL & ~(1ULL << (SIGTRAP - 1));
		user_regs_struct r = impl_->regs;
		r.rip = ip;
		r.rax = impl_->regs.orig_rax;
		r.orig_rax = (unsigned long long)-1;
		bool ok = ptrace(PTRACE_POKEDATA, pid, ip, code) == 0 &&
			  ptrace((__ptrace_request)PTRACE_SETSIGMASK, pid, sizeof all, &all) == 0 &&
			  ptrace(PTRACE_SETREGS, pid, nullptr, &r) == 0 &&
			  ptrace(PTRACE_SYSCALL, pid, nullptr, nullptr) == 0;
		int e = errno;
		int status = 0;
		user_regs_struct now{};
		if (ok && (waitpid(pid, &status, __WALL) != pid || !WIFSTOPPED(status) ||
			   (WSTOPSIG(status) & 0x7f) != SIGTRAP || ptrace(PTRACE_GETREGS, pid, nullptr, &now) != 0 ||
			   now.orig_rax != impl_->regs.orig_rax || now.rip != ip + 2)) {
			ok = false;
			err = who(pid) + ": did not reach the entry of syscall " +
			      std::to_string(impl_->regs.orig_rax) + " again (wait status 0x" + std::to_string(status) +
			      ")";
		} else if (!ok) {
			err = who(pid) + ": re-entering syscall " + std::to_string(impl_->regs.orig_rax) + ": " +
			      errno_text(e);
		}
		/* whatever happened: the original code, registers and mask */
		if (ptrace(PTRACE_POKEDATA, pid, ip, saved) != 0 && err.empty())
			err = who(pid) + ": restoring code at the borrowed address: " + errno_text(errno);
		if (ptrace(PTRACE_SETREGS, pid, nullptr, &impl_->regs) != 0 && err.empty())
			err = who(pid) + ": restoring registers: " + errno_text(errno);
		if (ptrace((__ptrace_request)PTRACE_SETSIGMASK, pid, sizeof impl_->sigmask, &impl_->sigmask) != 0 &&
		    err.empty())
			err = who(pid) + ": restoring the signal mask: " + errno_text(errno);
	}
	if (!err.empty())
		throw Error(err);
}

#else // !GW_HAVE_COMPEL

bool available(std::string *why)
{
	if (why)
		*why = "gpuwatch was built without libcompel (install criu's libcompel and rebuild)";
	return false;
}
void init_standalone_logging(unsigned) {}
struct RemoteTask::Impl {
	pid_t pid = 0;
	bool finished = true;
};
RemoteTask::RemoteTask(std::unique_ptr<Impl> impl) : impl_(std::move(impl)), pid_(impl_->pid) {}
RemoteTask::RemoteTask(RemoteTask &&o) noexcept : impl_(std::move(o.impl_)), pid_(o.pid_) {}
RemoteTask::~RemoteTask() = default;
RemoteTask RemoteTask::attach(pid_t pid)
{
	std::string why;
	available(&why);
	throw Error(who(pid) + ": cannot inject syscalls: " + why);
}
long RemoteTask::syscall(long, unsigned long, unsigned long, unsigned long, unsigned long, unsigned long, unsigned long)
{
	throw Error("no libcompel");
}
void RemoteTask::finish() {}

#endif

long RemoteTask::checked(const char *what, long nr, unsigned long a1, unsigned long a2, unsigned long a3,
			 unsigned long a4, unsigned long a5, unsigned long a6)
{
	long r = syscall(nr, a1, a2, a3, a4, a5, a6);
	if (r < 0 && r > -4096)
		throw Error(std::string(what) + " in " + who(pid_) + ": " + errno_text((int)-r));
	return r;
}

uint64_t RemoteTask::scratch(std::size_t len)
{
	len = (len + 4095) & ~std::size_t(4095);
	long r = checked("mmap of a scratch area", __NR_mmap, 0, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, (unsigned long)-1, 0);
#ifdef GW_HAVE_COMPEL
	impl_->scratch.emplace_back((uint64_t)r, len);
#endif
	return (uint64_t)r;
}

void RemoteTask::write(uint64_t addr, const void *p, std::size_t n)
{
	iovec local{const_cast<void *>(p), n}, remote{(void *)addr, n};
	if (process_vm_writev(pid_, &local, 1, &remote, 1, 0) == (ssize_t)n)
		return;
	gw::UniqueFd fd(::open(("/proc/" + std::to_string(pid_) + "/mem").c_str(), O_WRONLY | O_CLOEXEC));
	if (!fd || pwrite(fd.get(), p, n, (off_t)addr) != (ssize_t)n)
		throw Error("writing " + std::to_string(n) + " bytes at " + std::to_string(addr) + " in " + who(pid_) +
			    ": " + errno_text(errno));
}

void RemoteTask::read(uint64_t addr, void *p, std::size_t n)
{
	iovec local{p, n}, remote{(void *)addr, n};
	if (process_vm_readv(pid_, &local, 1, &remote, 1, 0) == (ssize_t)n)
		return;
	gw::UniqueFd fd(::open(("/proc/" + std::to_string(pid_) + "/mem").c_str(), O_RDONLY | O_CLOEXEC));
	if (!fd || pread(fd.get(), p, n, (off_t)addr) != (ssize_t)n)
		throw Error("reading " + std::to_string(n) + " bytes at " + std::to_string(addr) + " in " + who(pid_) +
			    ": " + errno_text(errno));
}

} // namespace gwremote
