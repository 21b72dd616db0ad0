// gwr_peek PID ADDR LEN: prints the FNV-1a hash of LEN bytes at ADDR as the process itself sees
// them. GEM mappings (VM_IO|VM_PFNMAP) cannot be read through /proc/PID/mem, so the bytes are
// read inside the task (ptrace seize of every thread, gwremote's remote pipe into a scratch
// area), then every thread is let go. A test tool of vmtests/remote/run.sh.
// gwr_peek --roundtrip PID START LEN gem|shmem FD HANDLE OFFSET: converts that mapping to its
// placeholder and reverts it (gwremote::convert_map + revert_maps, i.e. map_gem / map_legacy),
// checking the placeholder in between.
// gwr_peek --entry PID: stops PID's main thread at its next syscall entry, injects syscalls,
// ends with finish() and checks that the thread is back at the entry of the same syscall with
// the same registers, and that resuming it runs that syscall (its exit stop shows a result).
// gwr_peek --exit PID: stops PID's main thread at the exit of its next rt_sigreturn (where CRIU
// leaves every task for RESUME_DEVICES_LATE), injects syscalls, ends with finish() and checks
// the registers are the same and the thread is not at a syscall entry; then lets it go. The
// caller checks the task carries on (gwr_peek --sigloop is such a task).
// gwr_peek --sigloop: the task for --exit. Installs a seccomp filter that answers ENOSYS to an
// unknown syscall number (as podman's profile does; here only -1), then loops: tgkill itself
// with SIGUSR1 (a handler, so each return goes through rt_sigreturn) and checks tgkill returned
// 0. Exits 3 with a line on stderr the first time it did not.
#include <cinttypes>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <functional>
#include <string>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <csignal>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <unistd.h>
#include <vector>

#include "sysutil.hpp"

#include "i915_maps.hpp"
#include "i915_predump.hpp"
#include "proc_tree.hpp"

// Seizes every thread of pid, runs fn (its return value is the exit status; an exception is
// one line on stderr and status 1), then lets every thread go.
static int with_seized(pid_t pid, const std::function<int()> &fn)
{
	std::vector<pid_t> tids;
	for (uint32_t t : gwaction::threads_of((uint32_t)pid))
		tids.push_back((pid_t)t);
	try {
		gwaction::seize_threads(tids, 5000);
	} catch (const std::exception &e) {
		fprintf(stderr, "gwr_peek: %s\n", e.what());
		return 1;
	}
	int rc = 1;
	try {
		rc = fn();
	} catch (const std::exception &e) {
		fprintf(stderr, "gwr_peek: %s\n", e.what());
	}
	gwaction::detach_threads(tids);
	return rc;
}

static user_regs_struct regs_of(pid_t pid)
{
	user_regs_struct r{};
	if (ptrace(PTRACE_GETREGS, pid, nullptr, &r))
		throw gw::Error("PTRACE_GETREGS failed");
	return r;
}

// Injects getpid and a scratch round trip into the stopped task, ends with finish(), and
// checks its registers are as before. Returns them.
static user_regs_struct inject_and_finish(pid_t pid)
{
	const user_regs_struct r0 = regs_of(pid);
	auto t = gwremote::RemoteTask::attach(pid);
	long me = t.syscall(__NR_getpid);
	uint64_t a = t.scratch(4096);
	const char msg[] = "gwremote";
	char back[sizeof msg] = {};
	t.write(a, msg, sizeof msg);
	t.read(a, back, sizeof back);
	if (me != pid || memcmp(msg, back, sizeof msg))
		throw gw::Error("remote getpid " + std::to_string(me) + " or scratch round trip wrong");
	t.finish();
	const user_regs_struct r1 = regs_of(pid);
	if (memcmp(&r0, &r1, sizeof r0))
		throw gw::Error("registers differ after finish(): rip " + std::to_string(r0.rip) + " -> " +
				std::to_string(r1.rip) + ", rax " + std::to_string((long)r0.rax) + " -> " +
				std::to_string((long)r1.rax) + ", orig_rax " + std::to_string(r0.orig_rax) + " -> " +
				std::to_string(r1.orig_rax));
	return r0;
}

static int roundtrip(char **argv)
{
	gwremote::MapRecord m;
	m.pid = (uint32_t)strtoul(argv[0], nullptr, 0);
	m.vpid = m.pid;
	m.start = strtoull(argv[1], nullptr, 0);
	m.length = strtoull(argv[2], nullptr, 0);
	m.prot = PROT_READ | PROT_WRITE;
	m.kind = std::string(argv[3]) == "gem" ? gwremote::MapKind::Gem : gwremote::MapKind::Shmem;
	m.mode = gwremote::MapMode::Placeholder;
	m.fd = (int)strtol(argv[4], nullptr, 0);
	m.file = 1;
	m.handle = (uint32_t)strtoul(argv[5], nullptr, 0);
	m.offset = strtoull(argv[6], nullptr, 0);
	return with_seized((pid_t)m.pid, [&] {
		auto t = gwremote::RemoteTask::attach((pid_t)m.pid);
		gwremote::convert_map(t, m);
		if (!gwremote::placeholder_present(m.pid, m.start, m.length))
			throw gw::Error("no placeholder after convert_map");
		auto res = gwremote::revert_maps(t, {m});
		t.finish();
		for (auto &e : res.errors)
			fprintf(stderr, "gwr_peek: %s\n", e.c_str());
		if (res.reverted != 1 || gwremote::placeholder_present(m.pid, m.start, m.length))
			return 1;
		printf("roundtrip ok\n");
		return 0;
	});
}

static int entry_roundtrip(pid_t pid)
{
	return with_seized(pid, [&] {
		int st = 0;
		if (ptrace(PTRACE_SETOPTIONS, pid, nullptr, PTRACE_O_TRACESYSGOOD)) // as CRIU does
			throw gw::Error("PTRACE_SETOPTIONS failed");
		if (ptrace(PTRACE_SYSCALL, pid, nullptr, nullptr) || waitpid(pid, &st, __WALL) != pid ||
		    !WIFSTOPPED(st))
			throw gw::Error("no syscall-entry stop");
		const user_regs_struct r0 = inject_and_finish(pid);
		if ((long)r0.rax != -ENOSYS)
			throw gw::Error("not a syscall-entry stop (rax " + std::to_string((long)r0.rax) + ")");
		if (ptrace(PTRACE_SYSCALL, pid, nullptr, nullptr) || waitpid(pid, &st, __WALL) != pid ||
		    !WIFSTOPPED(st))
			throw gw::Error("no syscall-exit stop after finish()");
		const user_regs_struct r2 = regs_of(pid);
		if (r2.orig_rax != r0.orig_rax || (long)r2.rax == -ENOSYS)
			throw gw::Error("the exit stop is of syscall " + std::to_string(r2.orig_rax) + " (rax " +
					std::to_string((long)r2.rax) + "), not of " + std::to_string(r0.orig_rax));
		printf("entry roundtrip ok: syscall %llu ran after injection (result %lld)\n", r0.orig_rax,
		       (long long)r2.rax);
		return 0;
	});
}

static int exit_roundtrip(pid_t pid)
{
	return with_seized(pid, [&] {
		if (ptrace(PTRACE_SETOPTIONS, pid, nullptr, PTRACE_O_TRACESYSGOOD)) // as CRIU does
			throw gw::Error("PTRACE_SETOPTIONS failed");
		// syscall stops until the entry of rt_sigreturn, then its exit (compel_stop_on_syscall)
		__ptrace_syscall_info info{};
		bool found = false;
		long sig = 0; // a signal-delivery stop's signal is passed on: the handler must run
		for (int i = 0; i < 10000 && !found; i++) {
			int st = 0;
			if (ptrace(PTRACE_SYSCALL, pid, nullptr, sig) || waitpid(pid, &st, __WALL) != pid ||
			    !WIFSTOPPED(st))
				throw gw::Error("lost the task while looking for rt_sigreturn");
			sig = WSTOPSIG(st) == (SIGTRAP | 0x80) || (st >> 16) ? 0 : WSTOPSIG(st);
			if (ptrace(PTRACE_GET_SYSCALL_INFO, pid, sizeof info, &info) <= 0)
				throw gw::Error("PTRACE_GET_SYSCALL_INFO failed");
			if (info.op == PTRACE_SYSCALL_INFO_ENTRY && info.entry.nr == __NR_rt_sigreturn) {
				if (ptrace(PTRACE_SYSCALL, pid, nullptr, nullptr) || waitpid(pid, &st, __WALL) != pid ||
				    ptrace(PTRACE_GET_SYSCALL_INFO, pid, sizeof info, &info) <= 0 ||
				    info.op != PTRACE_SYSCALL_INFO_EXIT)
					throw gw::Error("no exit stop of rt_sigreturn");
				found = true;
			}
		}
		if (!found)
			throw gw::Error("no rt_sigreturn in 10000 syscall stops");
		const user_regs_struct r0 = inject_and_finish(pid);
		if (ptrace(PTRACE_GET_SYSCALL_INFO, pid, sizeof info, &info) > 0 &&
		    info.op == PTRACE_SYSCALL_INFO_ENTRY)
			throw gw::Error("finish() left the task at a syscall entry (nr " +
					std::to_string(info.entry.nr) + ")");
		printf("exit roundtrip ok: rt_sigreturn exit, rax %lld kept\n", (long long)r0.rax);
		return 0;
	});
}

static void on_usr1(int) {}

static int sigloop()
{
	struct sigaction sa {
	};
	sa.sa_handler = on_usr1;
	if (sigaction(SIGUSR1, &sa, nullptr))
		return perror("sigaction"), 1;
	// nr == -1 (an unknown syscall) -> ENOSYS, everything else allowed
	sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xffffffffu, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	sock_fprog prog{(unsigned short)(sizeof f / sizeof f[0]), f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		return perror("seccomp"), 1;
	const pid_t me = getpid();
	for (unsigned long n = 0;; n++) {
		long r = syscall(SYS_tgkill, me, me, SIGUSR1);
		if (r != 0) {
			fprintf(stderr, "gwr_peek --sigloop: tgkill returned %ld (%s) after %lu rounds\n", r,
				strerror(errno), n);
			return 3;
		}
	}
}

int main(int argc, char **argv)
{
	if (argc == 2 && std::string(argv[1]) == "--sigloop")
		return sigloop();
	if (argc == 3 && std::string(argv[1]) == "--exit")
		return exit_roundtrip((pid_t)strtol(argv[2], nullptr, 0));
	if (argc == 3 && std::string(argv[1]) == "--entry")
		return entry_roundtrip((pid_t)strtol(argv[2], nullptr, 0));
	if (argc == 9 && std::string(argv[1]) == "--roundtrip")
		return roundtrip(argv + 2);
	if (argc != 4) {
		fprintf(stderr, "usage: gwr_peek PID ADDR LEN\n");
		return 2;
	}
	pid_t pid = (pid_t)strtol(argv[1], nullptr, 0);
	uint64_t addr = strtoull(argv[2], nullptr, 0), len = strtoull(argv[3], nullptr, 0);
	return with_seized(pid, [&] {
		auto t = gwremote::RemoteTask::attach(pid);
		uint64_t buf = t.scratch(len);
		gwremote::copy_through_pipe(t, addr, buf, len);
		std::vector<unsigned char> bytes(len);
		t.read(buf, bytes.data(), len);
		t.finish();
		uint64_t h = 1469598103934665603ULL;
		for (unsigned char c : bytes)
			h = (h ^ c) * 1099511628211ULL;
		printf("%016" PRIx64 " first=%02x\n", h, len ? bytes[0] : 0);
		return 0;
	});
}
