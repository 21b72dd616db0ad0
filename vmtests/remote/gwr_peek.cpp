// gwr_peek PID ADDR LEN: prints the FNV-1a hash of LEN bytes at ADDR as the process itself sees
// them. GEM mappings (VM_IO|VM_PFNMAP) cannot be read through /proc/PID/mem, so the bytes are
// read inside the task (ptrace seize of every thread, gwremote's remote pipe into a scratch
// area), then every thread is let go. A test tool of vmtests/remote/run.sh.
// gwr_peek --roundtrip PID START LEN gem|shmem FD HANDLE OFFSET: converts that mapping to its
// placeholder and reverts it (gwremote::convert_map + revert_maps, i.e. map_gem / map_legacy),
// checking the placeholder in between.
// gwr_peek --entry PID: stops PID's main thread at its next syscall entry (as CRIU leaves tasks
// at the entry of rt_sigreturn for RESUME_DEVICES_LATE), injects syscalls, ends with
// finish(true) and checks that the thread is back at the entry of the same syscall with the
// same registers, and that resuming it runs that syscall (its exit stop shows a result).
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <string>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <sys/mman.h>
#include <vector>

#include "sysutil.hpp"

#include "i915_maps.hpp"
#include "i915_predump.hpp"
#include "proc_tree.hpp"

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
	std::vector<pid_t> tids;
	for (uint32_t t : gwaction::threads_of(m.pid))
		tids.push_back((pid_t)t);
	int rc = 1;
	try {
		gwaction::seize_threads(tids, 5000);
		auto t = gwremote::RemoteTask::attach((pid_t)m.pid);
		gwremote::convert_map(t, m);
		if (!gwremote::placeholder_present(m.pid, m.start, m.length))
			throw gw::Error("no placeholder after convert_map");
		auto res = gwremote::revert_maps(t, {m});
		t.finish();
		for (auto &e : res.errors)
			fprintf(stderr, "gwr_peek: %s\n", e.c_str());
		if (res.reverted == 1 && !gwremote::placeholder_present(m.pid, m.start, m.length)) {
			printf("roundtrip ok\n");
			rc = 0;
		}
	} catch (const std::exception &e) {
		fprintf(stderr, "gwr_peek: %s\n", e.what());
	}
	gwaction::detach_threads(tids);
	return rc;
}

static int entry_roundtrip(pid_t pid)
{
	std::vector<pid_t> tids;
	for (uint32_t t : gwaction::threads_of((uint32_t)pid))
		tids.push_back((pid_t)t);
	int rc = 1;
	try {
		gwaction::seize_threads(tids, 5000);
		int st = 0;
		user_regs_struct r0 {}, r1 {}, r2 {};
		if (ptrace(PTRACE_SYSCALL, pid, nullptr, nullptr) || waitpid(pid, &st, __WALL) != pid || !WIFSTOPPED(st) ||
		    ptrace(PTRACE_GETREGS, pid, nullptr, &r0))
			throw gw::Error("no syscall-entry stop");
		if ((long)r0.rax != -ENOSYS)
			throw gw::Error("not a syscall-entry stop (rax " + std::to_string((long)r0.rax) + ")");
		auto t = gwremote::RemoteTask::attach(pid);
		long me = t.syscall(__NR_getpid);
		uint64_t a = t.scratch(4096);
		const char msg[] = "gwremote";
		char back[sizeof msg] = {};
		t.write(a, msg, sizeof msg);
		t.read(a, back, sizeof back);
		if (me != pid || memcmp(msg, back, sizeof msg))
			throw gw::Error("remote getpid " + std::to_string(me) + " or scratch round trip wrong");
		t.finish(true);
		if (ptrace(PTRACE_GETREGS, pid, nullptr, &r1))
			throw gw::Error("GETREGS after finish");
		if (memcmp(&r0, &r1, sizeof r0))
			throw gw::Error("registers differ after finish(true): rip " + std::to_string(r0.rip) + " -> " +
					std::to_string(r1.rip) + ", orig_rax " + std::to_string(r0.orig_rax) + " -> " +
					std::to_string(r1.orig_rax));
		if (ptrace(PTRACE_SYSCALL, pid, nullptr, nullptr) || waitpid(pid, &st, __WALL) != pid || !WIFSTOPPED(st) ||
		    ptrace(PTRACE_GETREGS, pid, nullptr, &r2))
			throw gw::Error("no syscall-exit stop after finish(true)");
		if (r2.orig_rax != r0.orig_rax || (long)r2.rax == -ENOSYS)
			throw gw::Error("the exit stop is of syscall " + std::to_string(r2.orig_rax) + " (rax " +
					std::to_string((long)r2.rax) + "), not of " + std::to_string(r0.orig_rax));
		printf("entry roundtrip ok: syscall %llu ran after injection (result %lld)\n", r0.orig_rax, (long long)r2.rax);
		rc = 0;
	} catch (const std::exception &e) {
		fprintf(stderr, "gwr_peek: %s\n", e.what());
	}
	gwaction::detach_threads(tids);
	return rc;
}

int main(int argc, char **argv)
{
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
	std::vector<pid_t> tids;
	for (uint32_t t : gwaction::threads_of((uint32_t)pid))
		tids.push_back((pid_t)t);
	try {
		gwaction::seize_threads(tids, 5000);
	} catch (const std::exception &e) {
		fprintf(stderr, "gwr_peek: %s\n", e.what());
		return 1;
	}
	int rc = 0;
	try {
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
	} catch (const std::exception &e) {
		fprintf(stderr, "gwr_peek: %s\n", e.what());
		rc = 1;
	}
	gwaction::detach_threads(tids);
	return rc;
}
