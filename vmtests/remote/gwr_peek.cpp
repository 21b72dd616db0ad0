// gwr_peek PID ADDR LEN: prints the FNV-1a hash of LEN bytes at ADDR as the process itself sees
// them. GEM mappings (VM_IO|VM_PFNMAP) cannot be read through /proc/PID/mem, so the bytes are
// read inside the task (ptrace seize of every thread, gwremote's remote pipe into a scratch
// area), then every thread is let go. A test tool of vmtests/remote/run.sh.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "i915_maps.hpp"
#include "i915_predump.hpp"
#include "proc_tree.hpp"

int main(int argc, char **argv)
{
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
