/* SPDX-License-Identifier: MIT */
/*
 * The floor under saving and restoring a GEM buffer through a CPU mapping: what the page
 * faults alone cost. A DRM driver maps a buffer one page fault at a time (vgem, like most,
 * makes VM_PFNMAP mappings, where MAP_POPULATE does nothing), so the plugin pays one fault per
 * 4 KiB page to read a buffer at dump and one to fill it at restore, whatever it does with the
 * bytes; CRIU pins an anonymous mapping's present pages without faulting them.
 *
 * usage: bench_fault MIB [N]
 * Prints one line: "pages N map_read_ms R map_write_ms W copy_ms C anon_touch_ms A free_ms F
 * anon_free_ms AF", where
 *   R  a new dumb buffer of MIB, mapped afresh, one byte read per page (a fault each)
 *   W  the same buffer mapped afresh, one byte written per page (a fault each)
 *   C  the whole buffer copied through a 1 MiB bounce buffer on a mapping whose pages are
 *      present (no faults: what reading costs beyond them)
 *   A  MIB of anonymous memory, one byte written per page (the faults and zeroing a plain
 *      CRIU restore pays for the same bytes)
 *   F  the buffer of R, W and C freed while mapped: unmapped and destroyed, what its task's exit
 *      does when `criu dump` kills the task and waits for it (vgem turns the pages' caching back
 *      to write-back, a TLB flush on every CPU, and frees them)
 *   AF the anonymous memory of A unmapped (what plain CRIU's kill frees)
 * With N > 1 the line goes on with "bufs N one_dump_ms D1 one_restore_ms R1 bufs_dump_ms DN
 * bufs_restore_ms RN one_free_ms F1 bufs_free_ms FN": what the plugin's handling of each buffer
 * costs beyond its bytes, MIB
 * held in one buffer (D1, R1) and in N buffers (DN, RN; each of MIB/N rounded down to whole pages,
 * as bench_hold makes them; D1 and R1 on the same bytes), a byte per page:
 *   dump     each buffer, held mapped as its task holds it, mapped again, read, unmapped
 *   restore  each buffer created and mapped (the restored task's own mapping, which CRIU's
 *            restorer makes), then mapped again, written and unmapped (the plugin's late fill,
 *            while the task's mapping holds the pages: vgem changes their caching attributes
 *            once, at the first mapping, where filling before the restorer's mapping changed
 *            them three times)
 *   free     each buffer dumped above, held mapped, unmapped and destroyed (the task's exit)
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

static uint32_t create(uint64_t len)
{
	struct drm_mode_create_dumb c = {.width = 1024, .height = (uint32_t)(len / PAGE), .bpp = 32};
	if (ioctl(card, DRM_IOCTL_MODE_CREATE_DUMB, &c) != 0)
		bench_die("bench_fault", "MODE_CREATE_DUMB");
	return c.handle;
}

static volatile uint8_t *map_handle(uint32_t handle, uint64_t len)
{
	struct drm_mode_map_dumb m = {.handle = handle};
	if (ioctl(card, DRM_IOCTL_MODE_MAP_DUMB, &m) != 0)
		bench_die("bench_fault", "MODE_MAP_DUMB");
	offset = m.offset;
	return map(len);
}

static void destroy(uint32_t handle)
{
	struct drm_mode_destroy_dumb d = {.handle = handle};
	ioctl(card, DRM_IOCTL_MODE_DESTROY_DUMB, &d);
}

/* n buffers of `each` bytes: the dump's and the restore's handling of each (usage above) */
static void per_buffer(uint32_t n, uint64_t each, double *dump_ms, double *restore_ms, double *free_ms, uint64_t *sum)
{
	uint32_t *h = calloc(n, sizeof(*h));
	volatile uint8_t **held = calloc(n, sizeof(*held));
	if (!h || !held)
		bench_die("bench_fault", "calloc");
	for (uint32_t b = 0; b < n; b++) {
		h[b] = create(each);
		held[b] = map_handle(h[b], each);
		for (uint64_t i = 0; i < each / PAGE; i++)
			held[b][i * PAGE] = (uint8_t)i;
	}
	uint64_t t = bench_now_ns();
	for (uint32_t b = 0; b < n; b++) {
		volatile uint8_t *p = map_handle(h[b], each);
		for (uint64_t i = 0; i < each / PAGE; i++)
			*sum += p[i * PAGE];
		munmap((void *)p, each);
	}
	*dump_ms = ms_since(t);
	t = bench_now_ns();
	for (uint32_t b = 0; b < n; b++) {
		munmap((void *)held[b], each);
		destroy(h[b]);
	}
	*free_ms = ms_since(t);
	t = bench_now_ns();
	for (uint32_t b = 0; b < n; b++) {
		h[b] = create(each);
		held[b] = map_handle(h[b], each);
	}
	for (uint32_t b = 0; b < n; b++) {
		volatile uint8_t *p = map_handle(h[b], each);
		for (uint64_t i = 0; i < each / PAGE; i++)
			p[i * PAGE] = (uint8_t)i;
		munmap((void *)p, each);
	}
	*restore_ms = ms_since(t);
	for (uint32_t b = 0; b < n; b++) {
		munmap((void *)held[b], each);
		destroy(h[b]);
	}
	free(h);
	free((void *)held);
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3 || strtoull(argv[1], NULL, 10) == 0) {
		fprintf(stderr, "usage: bench_fault MIB [N]\n");
		return 2;
	}
	uint32_t nbufs = argc == 3 ? (uint32_t)strtoul(argv[2], NULL, 10) : 1;
	uint64_t len = strtoull(argv[1], NULL, 10) << 20, pages = len / PAGE;
	if (nbufs == 0 || len / nbufs < PAGE) {
		fprintf(stderr, "bench_fault: %s MiB do not split into %s buffers of a page or more\n", argv[1],
			argv[2]);
		return 2;
	}
	card = open("/dev/dri/card0", O_RDWR | O_CLOEXEC);
	if (card < 0)
		bench_die("bench_fault", "open /dev/dri/card0");
	uint32_t whole = create(len);
	volatile uint8_t *p = map_handle(whole, len);
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
	t = bench_now_ns();
	munmap((void *)p, len);
	destroy(whole);
	double free_ms = ms_since(t);

	volatile uint8_t *a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED)
		bench_die("bench_fault", "mmap anonymous");
	t = bench_now_ns();
	for (uint64_t i = 0; i < pages; i++)
		a[i * PAGE] = (uint8_t)i;
	double anon_ms = ms_since(t);
	t = bench_now_ns();
	munmap((void *)a, len);
	double anon_free_ms = ms_since(t);

	printf("pages %llu map_read_ms %.1f map_write_ms %.1f copy_ms %.1f anon_touch_ms %.1f free_ms %.1f "
	       "anon_free_ms %.1f",
	       (unsigned long long)pages, read_ms, write_ms, copy_ms, anon_ms, free_ms, anon_free_ms);
	if (nbufs > 1) {
		double d1, r1, f1, dn, rn, fn;
		uint64_t piece = len / nbufs / PAGE * PAGE; /* bench_hold's pieces */
		per_buffer(1, piece * nbufs, &d1, &r1, &f1, &sum);
		per_buffer(nbufs, piece, &dn, &rn, &fn, &sum);
		printf(" bufs %u one_dump_ms %.1f one_restore_ms %.1f bufs_dump_ms %.1f bufs_restore_ms %.1f "
		       "one_free_ms %.1f bufs_free_ms %.1f",
		       nbufs, d1, r1, dn, rn, f1, fn);
	}
	printf("\n");
	return sum == 42 ? 3 : 0; /* keeps the reads */
}
