/* SPDX-License-Identifier: MIT */
/*
 * Destroyed handles disappear; holes in the handle table; the lowest free number is reused.
 *   phase 1: h1..h6 created; h2 (DESTROY_DUMB), h4 and h5 (GEM_CLOSE) destroyed; h3, h6
 *            mapped; a new buffer takes number 2.
 *   phase 2: h1 and the new buffer destroyed; h3 unmapped, then destroyed: only h6 is left.
 *   phase 3: h6 unmapped and destroyed: the file stays (its fd is open) with no handle.
 * With --close-mapped, phase 2 instead closes h3 while it is still mapped: the mapping
 * lives on with "handle": null (no handle of the file names its buffer any more).
 */
#include "wl.h"

#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>

int main(int argc, char **argv)
{
	wl_init(argc, argv);
	bool close_mapped = argc > 2 && strcmp(argv[2], "--close-mapped") == 0;
	int a = wl_open(WL_CARD, O_RDWR);
	uint32_t h[8];
	static const uint32_t width[] = {0, 64, 128, 16, 256, 8, 64};

	for (int i = 1; i <= 6; i++)
		h[i] = wl_create_dumb(a, width[i], 32, 32);
	wl_destroy_dumb(a, h[2]);
	wl_gem_close(a, h[4]);
	wl_gem_close(a, h[5]);
	void *m3 = wl_mmap(a, h[3], 4096, PROT_READ | PROT_WRITE);
	void *m6 = wl_mmap(a, h[6], 8192, PROT_READ | PROT_WRITE);
	uint32_t h7 = wl_try_create_dumb(a, 200, 10, 16); /* 4000 bytes, at 16 bpp where taken */
	if (!h7)
		h7 = wl_create_dumb(a, 100, 10, 32);
	wl_phase(1);

	if (close_mapped) {
		wl_gem_close(a, h[3]);
		wl_phase(2);
		return wl_finish();
	}
	wl_gem_close(a, h[1]);
	wl_destroy_dumb(a, h7);
	wl_munmap(m3, 4096);
	wl_gem_close(a, h[3]);
	wl_phase(2);

	wl_munmap(m6, 8192);
	wl_gem_close(a, h[6]);
	wl_phase(3);
	return wl_finish();
}
