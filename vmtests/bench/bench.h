/* SPDX-License-Identifier: MIT */
/*
 * Shared bits of the VM benchmarks' workloads (vmtests/bench/): clock, errors, and a timed
 * loop split into chunks whose median is reported, so one preempted chunk (TCG, a shared
 * host) does not move the figure.
 */
#ifndef GW_BENCH_H
#define GW_BENCH_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_CHUNKS 10

static inline uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void bench_die(const char *prog, const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", prog, what, errno ? strerror(errno) : "failed");
	exit(2);
}

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Runs op(arg) iters times in BENCH_CHUNKS chunks; prints
 * "ns_per_op MEDIAN_CHUNK mean MEAN min MIN max MAX iters N" (ns per op). */
static inline void bench_timed(const char *label, uint64_t iters, void (*op)(void *), void *arg)
{
	double per[BENCH_CHUNKS];
	uint64_t chunk = iters / BENCH_CHUNKS, total = 0;

	if (chunk == 0)
		chunk = 1;
	for (int c = 0; c < BENCH_CHUNKS; c++) {
		uint64_t t0 = bench_now_ns();
		for (uint64_t i = 0; i < chunk; i++)
			op(arg);
		uint64_t dt = bench_now_ns() - t0;
		total += dt;
		per[c] = (double)dt / (double)chunk;
	}
	qsort(per, BENCH_CHUNKS, sizeof(per[0]), bench_cmp_double);
	printf("%s ns_per_op %.1f mean %.1f min %.1f max %.1f iters %llu\n", label,
	       (per[BENCH_CHUNKS / 2 - 1] + per[BENCH_CHUNKS / 2]) / 2, (double)total / (double)(chunk * BENCH_CHUNKS),
	       per[0], per[BENCH_CHUNKS - 1], (unsigned long long)(chunk * BENCH_CHUNKS));
}

#endif
