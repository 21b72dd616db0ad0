/* SPDX-License-Identifier: MIT */
/*
 * A benchmark control (section 1 of vmtests/bench): attaches one set of the programs of
 * bpf/bench_floor.bpf.c to drm_ioctl and holds them until SIGINT or SIGTERM. bench_ioctl run
 * meanwhile measures a floor under gpuwatch's ioctl hooks on the fexit path:
 *   empty   (default) the empty fentry and fexit programs: the BPF trampoline alone;
 *   record  one fexit program writing one 120-byte ring-buffer record (gpuwatch's fexit ioctl
 *           record size) with the ioctl's argument per DRM ioctl, submitted without a wakeup
 *           and drained by this process every 10 ms: what recording every ioctl costs at
 *           least. One program, as gpuwatch's fexit path has one.
 *   follow  the same record, written only after gpuwatch's own followed test (the task in
 *           CGROUP or below it, not this process nor its children), its DRM file test and the
 *           syscall's fd: what following one container's DRM ioctls costs at least.
 *
 * usage: bench_floor [empty|record|follow CGROUP]
 *                        prints "attached" once its programs are attached; exit status 0
 *                        after a clean detach, 1 if loading or attaching failed (the reason
 *                        on stderr), 2 on a bad argument; "records N" on exit in record
 *                        and follow modes
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "gpuwatch.h" /* struct gw_counters, in the skeleton: the follow set shares gpuwatch's maps */
#include "bench_floor.skel.h"

static volatile sig_atomic_t stop;

static unsigned long long records;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int on_record(void *ctx, void *data, size_t size)
{
	(void)ctx;
	(void)data;
	(void)size;
	records++;
	return 0;
}

int main(int argc, char **argv)
{
	struct bench_floor_bpf *skel;
	struct ring_buffer *rb = NULL;
	struct sigaction sa;
	const char *mode = argc > 1 ? argv[1] : "empty";
	int record, follow, cg = -1, err, status = 0, slot = 0;

	follow = !strcmp(mode, "follow");
	record = follow || !strcmp(mode, "record");
	if (argc != (follow ? 3 : argc > 1 ? 2 : 1) || (!record && strcmp(mode, "empty"))) {
		fprintf(stderr, "usage: bench_floor [empty|record|follow CGROUP]\n");
		return 2;
	}
	if (follow && (cg = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		fprintf(stderr, "bench_floor: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	skel = bench_floor_bpf__open();
	if (!skel) {
		fprintf(stderr, "bench_floor: opening the drm_ioctl programs failed: %s\n", strerror(errno));
		return 1;
	}
	/* one set: empty = floor_fentry + floor_fexit; record / follow = its one fexit program */
	bpf_program__set_autoload(skel->progs.floor_fentry, !record);
	bpf_program__set_autoload(skel->progs.floor_fexit, !record);
	bpf_program__set_autoload(skel->progs.floor_record_fexit, record && !follow);
	bpf_program__set_autoload(skel->progs.floor_follow_fexit, follow);
	skel->rodata->gw_self_tgid = getpid();
	err = bench_floor_bpf__load(skel);
	if (!err && follow && bpf_map_update_elem(bpf_map__fd(skel->maps.gw_cgroup), &slot, &cg, BPF_ANY))
		err = -errno;
	if (err) {
		fprintf(stderr, "bench_floor: loading the drm_ioctl programs failed: %s\n", strerror(-err));
		bench_floor_bpf__destroy(skel);
		return 1;
	}
	if (record) {
		rb = ring_buffer__new(bpf_map__fd(skel->maps.floor_ring), on_record, NULL, NULL);
		if (!rb) {
			fprintf(stderr, "bench_floor: the ring buffer reader failed: %s\n", strerror(errno));
			bench_floor_bpf__destroy(skel);
			return 1;
		}
	}
	err = bench_floor_bpf__attach(skel);
	if (err) {
		fprintf(stderr, "bench_floor: attaching to drm_ioctl failed: %s\n", strerror(-err));
		bench_floor_bpf__destroy(skel);
		return 1;
	}
	printf("attached\n");
	fflush(stdout);
	while (!stop) {
		if (!rb) {
			pause();
			continue;
		}
		usleep(10000); /* records are submitted without a wakeup: drain on a timer */
		err = ring_buffer__consume(rb);
		if (err < 0 && err != -EINTR) {
			fprintf(stderr, "bench_floor: reading the ring buffer failed: %s\n", strerror(-err));
			status = 1;
			break;
		}
	}
	if (rb) {
		ring_buffer__consume(rb);
		printf("records %llu\n", records);
		ring_buffer__free(rb);
	}
	bench_floor_bpf__destroy(skel);
	return status;
}
