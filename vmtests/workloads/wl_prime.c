/* SPDX-License-Identifier: MIT */
/*
 * PRIME: export to dma-buf fds, import into another card file and into a render node.
 *   phase 1: A, B = card0, R = renderD128. h1, h2 in A, exported (E1 close-on-exec, E2 not).
 *            E1 imported into B twice (one handle), into R and back into A (A's own h1);
 *            E2 into R and twice into B. E2 closed (the imports stay). h1 exported again (E3).
 *            h1 mapped through A and, with B's handle, through B (same fake offset).
 *   phase 2: one GEM_CLOSE of B's h2 (imported twice: no reference count, the handle is
 *            gone) and of R's h1; E1 closed.
 */
#include "wl.h"

#include <fcntl.h>
#include <sys/mman.h>

int main(int argc, char **argv)
{
	wl_init(argc, argv);
	int a = wl_open(WL_CARD, O_RDWR);
	int b = wl_open(WL_CARD, O_RDWR);
	int r = wl_open(WL_RENDER, O_RDWR);
	uint32_t h1 = wl_create_dumb(a, 64, 64, 32); /* 16384 */
	uint32_t h2 = wl_create_dumb(a, 32, 32, 32); /* 4096 */
	int e1 = wl_export(a, h1, true);
	int e2 = wl_export(a, h2, false);
	uint32_t b1 = wl_import(b, e1);
	wl_import(b, e1); /* same buffer: same handle */
	uint32_t r1 = wl_import(r, e1);
	wl_import(a, e1); /* the exporter's own h1 */
	wl_import(r, e2);
	uint32_t b2 = wl_import(b, e2);
	wl_import(b, e2); /* B has it: same handle again */
	wl_close(e2);
	wl_export(a, h1, false); /* E3 */
	wl_mmap(a, h1, 16384, PROT_READ | PROT_WRITE);
	wl_mmap(b, b1, 8192, PROT_READ);
	wl_phase(1);

	wl_gem_close(b, b2);
	wl_gem_close(r, r1);
	wl_close(e1);
	wl_phase(2);
	return wl_finish();
}
