/* SPDX-License-Identifier: MIT */
/*
 * The traced workload of the VM benchmarks: a tight loop of DRM ioctls on vgem's card node.
 *
 * usage: bench_ioctl MODE ITERS [PROCS]
 *   MODE dumb      MODE_CREATE_DUMB (64x64x32) + MODE_MAP_DUMB + MODE_DESTROY_DUMB: three
 *                  state-changing ioctls per op, each one a record for gpuwatch
 *        dumbmmap  the same plus mmap + a write + munmap of the buffer (the mmap hooks too)
 *        getcap    GET_CAP(PRIME): one ioctl that changes no state (vgem has no KMS, so it
 *                  refuses the KMS-only caps such as DUMB_BUFFER)
 *   ITERS          ops per process
 *   PROCS          1 (default): one timed loop, printed as
 *                    "MODE ns_per_op N mean N min N max N iters N" (median of 10 chunks)
 *                  >1 (the burst): PROCS forked processes start together and run ITERS ops
 *                  each, untimed per chunk; prints "burst procs P ioctls N seconds S"
 * Every ioctl is checked: a refused one ends the run with exit status 2.
 */
#define _GNU_SOURCE
#include "bench.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <drm.h>
#include <drm_mode.h>

static int card = -1;
static int do_mmap;

static void xioctl(unsigned long req, void *arg, const char *what)
{
	int r;

	do
		r = ioctl(card, req, arg);
	while (r != 0 && (errno == EINTR || errno == EAGAIN));
	if (r != 0)
		bench_die("bench_ioctl", what);
}

static void op_dumb(void *unused)
{
	struct drm_mode_create_dumb c = {.width = 64, .height = 64, .bpp = 32};
	struct drm_mode_map_dumb m = {0};
	struct drm_mode_destroy_dumb d = {0};

	(void)unused;
	xioctl(DRM_IOCTL_MODE_CREATE_DUMB, &c, "MODE_CREATE_DUMB");
	m.handle = c.handle;
	xioctl(DRM_IOCTL_MODE_MAP_DUMB, &m, "MODE_MAP_DUMB");
	if (do_mmap) {
		volatile unsigned char *p =
			mmap(NULL, c.size, PROT_READ | PROT_WRITE, MAP_SHARED, card, (off_t)m.offset);
		if (p == MAP_FAILED)
			bench_die("bench_ioctl", "mmap");
		p[0] = 1;
		munmap((void *)p, c.size);
	}
	d.handle = c.handle;
	xioctl(DRM_IOCTL_MODE_DESTROY_DUMB, &d, "MODE_DESTROY_DUMB");
}

static void op_getcap(void *unused)
{
	struct drm_get_cap cap = {.capability = DRM_CAP_PRIME}; /* not a KMS-only cap: vgem answers */

	(void)unused;
	xioctl(DRM_IOCTL_GET_CAP, &cap, "GET_CAP");
}

static void burst(void (*op)(void *), uint64_t iters, int procs, int ioctls_per_op)
{
	int go[2];
	char c;

	if (pipe(go) != 0)
		bench_die("bench_ioctl", "pipe");
	for (int p = 0; p < procs; p++) {
		pid_t pid = fork();
		if (pid < 0)
			bench_die("bench_ioctl", "fork");
		if (pid == 0) {
			close(go[1]);
			if (read(go[0], &c, 1) < 0) /* EOF: everyone starts together */
				_exit(2);
			for (uint64_t i = 0; i < iters; i++)
				op(NULL);
			_exit(0);
		}
	}
	close(go[0]);
	uint64_t t0 = bench_now_ns();
	close(go[1]);
	int bad = 0, st;
	while (wait(&st) > 0)
		bad |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	uint64_t dt = bench_now_ns() - t0;
	if (bad) {
		fprintf(stderr, "bench_ioctl: a burst process failed\n");
		exit(2);
	}
	printf("burst procs %d ioctls %llu seconds %.3f\n", procs,
	       (unsigned long long)iters * (uint64_t)procs * (uint64_t)ioctls_per_op, (double)dt / 1e9);
}

int main(int argc, char **argv)
{
	void (*op)(void *);
	int per_op;

	if (argc < 3) {
		fprintf(stderr, "usage: bench_ioctl dumb|dumbmmap|getcap ITERS [PROCS]\n");
		return 2;
	}
	if (strcmp(argv[1], "dumb") == 0 || strcmp(argv[1], "dumbmmap") == 0) {
		op = op_dumb;
		per_op = 3;
		do_mmap = argv[1][4] == 'm';
	} else if (strcmp(argv[1], "getcap") == 0) {
		op = op_getcap;
		per_op = 1;
	} else {
		fprintf(stderr, "bench_ioctl: unknown mode %s\n", argv[1]);
		return 2;
	}
	uint64_t iters = strtoull(argv[2], NULL, 10);
	int procs = argc > 3 ? atoi(argv[3]) : 1;
	if (iters == 0 || procs < 1) {
		fprintf(stderr, "bench_ioctl: ITERS and PROCS must be positive\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	card = open("/dev/dri/card0", O_RDWR | O_CLOEXEC);
	if (card < 0)
		bench_die("bench_ioctl", "open /dev/dri/card0");
	if (procs > 1)
		burst(op, iters, procs, per_op);
	else
		bench_timed(argv[1], iters, op, NULL);
	return 0;
}
