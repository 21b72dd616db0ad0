/* SPDX-License-Identifier: MIT */
/*
 * "Everything else" in the VM benchmarks: a syscall-heavy loop run outside the followed
 * cgroup, so gpuwatch's programs (if any) only cost their entry and cgroup check.
 *
 * usage: bench_syscall getpid|readzero ITERS
 *   getpid    syscall(SYS_getpid): the cheapest syscall, so any per-syscall cost shows
 *   readzero  read(2) of 64 bytes from /dev/zero
 * Prints "MODE ns_per_op N mean N min N max N iters N" (median of 10 chunks).
 */
#define _GNU_SOURCE
#include "bench.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int zero_fd = -1;

static void op_getpid(void *unused)
{
	(void)unused;
	if (syscall(SYS_getpid) <= 0)
		bench_die("bench_syscall", "getpid");
}

static void op_readzero(void *unused)
{
	char buf[64];

	(void)unused;
	if (read(zero_fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
		bench_die("bench_syscall", "read /dev/zero");
}

int main(int argc, char **argv)
{
	void (*op)(void *);

	if (argc < 3) {
		fprintf(stderr, "usage: bench_syscall getpid|readzero ITERS\n");
		return 2;
	}
	if (strcmp(argv[1], "getpid") == 0) {
		op = op_getpid;
	} else if (strcmp(argv[1], "readzero") == 0) {
		op = op_readzero;
		zero_fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
		if (zero_fd < 0)
			bench_die("bench_syscall", "open /dev/zero");
	} else {
		fprintf(stderr, "bench_syscall: unknown mode %s\n", argv[1]);
		return 2;
	}
	uint64_t iters = strtoull(argv[2], NULL, 10);
	if (iters == 0) {
		fprintf(stderr, "bench_syscall: ITERS must be positive\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	bench_timed(argv[1], iters, op, NULL);
	return 0;
}
