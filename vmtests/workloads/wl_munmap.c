/* SPDX-License-Identifier: MIT */
/*
 * Partial munmap, MAP_FIXED over a DRM mapping, mremap (shrink in place and move).
 *   phase 1: h1 (4 pages) mapped, its 2nd page unmapped: two pieces, the second at offset+8192.
 *            h2 (8 pages) mapped, first 2 and last page unmapped: one piece at offset+8192.
 *            h3 (4 pages) mapped, an anonymous MAP_FIXED page over its 3rd page: two pieces.
 *            h4 (4 pages) mapped, shrunk to 2 pages by mremap. h5 (2 pages) mapped, moved
 *            by mremap(MREMAP_FIXED) into a reserved range.
 *   phase 2: every piece unmapped: the process holds only its fd.
 */
#define _GNU_SOURCE
#include "wl.h"

#include <fcntl.h>
#include <sys/mman.h>

#define PG 4096u

int main(int argc, char **argv)
{
	wl_init(argc, argv);
	int a = wl_open(WL_CARD, O_RDWR);
	uint32_t h1 = wl_create_dumb(a, 64, 64, 32);  /* 4 pages */
	uint32_t h2 = wl_create_dumb(a, 128, 64, 32); /* 8 pages */
	uint32_t h3 = wl_create_dumb(a, 64, 64, 32);
	uint32_t h4 = wl_create_dumb(a, 64, 64, 32);
	uint32_t h5 = wl_create_dumb(a, 64, 32, 32); /* 2 pages */
	int rw = PROT_READ | PROT_WRITE;

	char *m1 = wl_mmap(a, h1, 4 * PG, rw);
	wl_munmap(m1 + PG, PG);
	char *m2 = wl_mmap(a, h2, 8 * PG, rw);
	wl_munmap(m2, 2 * PG);
	wl_munmap(m2 + 7 * PG, PG);
	char *m3 = wl_mmap(a, h3, 4 * PG, rw);
	if (mmap(m3 + 2 * PG, PG, rw, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != m3 + 2 * PG)
		wl_die("anonymous MAP_FIXED over %p", (void *)(m3 + 2 * PG));
	wl_maps_cut((uintptr_t)(m3 + 2 * PG), PG);
	char *m4 = wl_mmap(a, h4, 4 * PG, rw);
	m4 = wl_mremap(m4, 4 * PG, 2 * PG, 0, NULL);
	char *m5 = wl_mmap(a, h5, 2 * PG, rw);
	char *dst = wl_reserve(2 * PG);
	m5 = wl_mremap(m5, 2 * PG, 2 * PG, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	wl_phase(1);

	wl_munmap(m1, 4 * PG);
	wl_munmap(m2, 8 * PG);
	wl_munmap(m3, 4 * PG);
	wl_munmap(m4, 2 * PG);
	wl_munmap(m5, 2 * PG);
	wl_phase(2);
	return wl_finish();
}
