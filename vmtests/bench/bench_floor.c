/* SPDX-License-Identifier: MIT */
/*
 * A benchmark control (section 1 of vmtests/bench): attaches the empty fentry and fexit
 * programs of bpf/bench_floor.bpf.c to drm_ioctl and holds them until SIGINT or SIGTERM.
 * bench_ioctl run meanwhile measures what the BPF trampoline alone costs a DRM ioctl: the
 * floor under gpuwatch's ioctl hooks on the fexit path.
 *
 * usage: bench_floor     prints "attached" once both programs are attached; exit status 0
 *                        after a clean detach, 1 if loading or attaching failed (the reason
 *                        on stderr)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench_floor.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(void)
{
	struct bench_floor_bpf *skel;
	struct sigaction sa;
	int err;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	skel = bench_floor_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "bench_floor: loading the empty drm_ioctl programs failed: %s\n", strerror(errno));
		return 1;
	}
	err = bench_floor_bpf__attach(skel);
	if (err) {
		fprintf(stderr, "bench_floor: attaching to drm_ioctl failed: %s\n", strerror(-err));
		bench_floor_bpf__destroy(skel);
		return 1;
	}
	printf("attached\n");
	fflush(stdout);
	while (!stop)
		pause();
	bench_floor_bpf__destroy(skel);
	return 0;
}
