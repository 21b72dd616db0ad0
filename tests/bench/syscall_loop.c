/* syscall_loop: a syscall-heavy loop, the "everything else" on a host where gpuwatch runs.
 *
 *   syscall_loop getpid|read ITERATIONS
 *
 * Runs ITERATIONS getpid() system calls (raw syscall, never a cached value), or ITERATIONS
 * read()s of 4 KiB from /dev/zero, after a short warm-up, and prints one number: nanoseconds
 * per iteration (CLOCK_MONOTONIC). Plain C, no dependencies, so the same program runs on the
 * host (tests/bench/host_syscalls.sh) and in the VM (vmtests/bench/). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	static char buf[4096];
	long n = argc == 3 ? atol(argv[2]) : 0;
	int is_read = argc == 3 && strcmp(argv[1], "read") == 0;
	if (n <= 0 || (!is_read && (argc != 3 || strcmp(argv[1], "getpid") != 0))) {
		fprintf(stderr, "usage: syscall_loop getpid|read ITERATIONS\n");
		return 2;
	}
	int fd = -1;
	if (is_read && (fd = open("/dev/zero", O_RDONLY | O_CLOEXEC)) < 0) {
		perror("syscall_loop: /dev/zero");
		return 1;
	}
	double t0 = 0;
	for (long i = -(n / 10 + 1); i < n; i++) { /* a tenth more as warm-up, untimed */
		if (i == 0)
			t0 = now_ns();
		if (is_read ? read(fd, buf, sizeof buf) != (ssize_t)sizeof buf : syscall(SYS_getpid) <= 0) {
			perror("syscall_loop");
			return 1;
		}
	}
	printf("%.2f\n", (now_ns() - t0) / n);
	return 0;
}
