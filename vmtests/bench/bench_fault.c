/* SPDX-License-Identifier: MIT */
/*
 * The floor under saving and restoring a GEM buffer through a CPU mapping: what the page
 * faults alone cost. A DRM driver maps a buffer one page fault at a time (vgem, like most,
 * makes VM_PFNMAP mappings, where MAP_POPULATE does nothing), so the plugin pays one fault per
 * 4 KiB page to read a buffer at dump and one to fill it at restore, whatever it does with the
 * bytes; CRIU pins an anonymous mapping's present pages without faulting them.
 *
 * usage: bench_fault MIB
 * Prints one line: "pages N map_read_ms R map_write_ms W copy_ms C anon_touch_ms A", where
 *   R  a new dumb buffer of MIB, mapped afresh, one byte read per page (a fault each)
 *   W  the same buffer mapped afresh, one byte written per page (a fault each)
 *   C  the whole buffer copied through a 1 MiB bounce buffer on a mapping whose pages are
 *      present (no faults: what reading costs beyond them)
 *   A  MIB of anonymous memory, one byte written per page (the faults and zeroing a plain
 *      CRIU restore pays for the same bytes)
 */
#define _GNU_SOURCE
#include "bench.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <drm.h>
#include <drm_mode.h>

#define PAGE 4096ull

static int card;
static uint64_t offset;

static volatile uint8_t *map(uint64_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, card, (off_t)offset);
	if (p == MAP_FAILED)
		bench_die("bench_fault", "mmap of the dumb buffer");
	return p;
}

static double ms_since(uint64_t t0)
{
	return (double)(bench_now_ns() - t0) / 1e6;
}

int main(int argc, char **argv)
{
	if (argc != 2 || strtoull(argv[1], NULL, 10) == 0) {
		fprintf(stderr, "usage: bench_fault MIB\n");
		return 2;
	}
	uint64_t len = strtoull(argv[1], NULL, 10) << 20, pages = len / PAGE;
	card = open("/dev/dri/card0", O_RDWR | O_CLOEXEC);
	if (card < 0)
		bench_die("bench_fault", "open /dev/dri/card0");
	struct drm_mode_create_dumb c = {.width = 1024, .height = (uint32_t)pages, .bpp = 32};
	if (ioctl(card, DRM_IOCTL_MODE_CREATE_DUMB, &c) != 0)
		bench_die("bench_fault", "MODE_CREATE_DUMB");
	struct drm_mode_map_dumb m = {.handle = c.handle};
	if (ioctl(card, DRM_IOCTL_MODE_MAP_DUMB, &m) != 0)
		bench_die("bench_fault", "MODE_MAP_DUMB");
	offset = m.offset;

	volatile uint8_t *p = map(len);
	uint64_t sum = 0, t = bench_now_ns();
	for (uint64_t i = 0; i < pages; i++)
		sum += p[i * PAGE];
	double read_ms = ms_since(t);
	munmap((void *)p, len);

	p = map(len);
	t = bench_now_ns();
	for (uint64_t i = 0; i < pages; i++)
		p[i * PAGE] = (uint8_t)i;
	double write_ms = ms_since(t);

	char *bounce = malloc(1 << 20);
	if (!bounce)
		bench_die("bench_fault", "malloc");
	t = bench_now_ns();
	for (uint64_t done = 0; done < len; done += 1 << 20)
		memcpy(bounce, (const char *)p + done, 1 << 20);
	double copy_ms = ms_since(t);
	sum += (uint8_t)bounce[7];
	munmap((void *)p, len);

	volatile uint8_t *a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED)
		bench_die("bench_fault", "mmap anonymous");
	t = bench_now_ns();
	for (uint64_t i = 0; i < pages; i++)
		a[i * PAGE] = (uint8_t)i;
	double anon_ms = ms_since(t);

	printf("pages %llu map_read_ms %.1f map_write_ms %.1f copy_ms %.1f anon_touch_ms %.1f\n",
	       (unsigned long long)pages, read_ms, write_ms, copy_ms, anon_ms);
	return sum == 42 ? 3 : 0; /* keeps the reads */
}
