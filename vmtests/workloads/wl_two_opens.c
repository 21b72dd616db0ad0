/* SPDX-License-Identifier: MIT */
/*
 * Two opens of one node are two files (each with its own handle table, numbered from 1),
 * plus a render node file. Then a file that only a mapping still refers to, then none.
 *   phase 1: A, B = card0 twice (B close-on-exec), R = renderD128; handles in A and B; maps.
 *   phase 2: close A's only fd: A lives on through its mapping.
 *   phase 3: unmap it: A is gone.
 */
#include "wl.h"

#include <fcntl.h>
#include <sys/mman.h>

int main(int argc, char **argv)
{
	wl_init(argc, argv);
	int a = wl_open(WL_CARD, O_RDWR);
	int b = wl_open(WL_CARD, O_RDWR | O_CLOEXEC);
	int r = wl_open(WL_RENDER, O_RDWR);
	(void)r;
	uint32_t a1 = wl_create_dumb(a, 64, 64, 32); /* 16384 */
	wl_create_dumb(a, 100, 30, 32);              /* 12000 -> 12288 */
	uint32_t b1 = wl_create_dumb(b, 32, 32, 32); /* 4096 */
	void *ma = wl_mmap(a, a1, 16384, PROT_READ | PROT_WRITE);
	wl_mmap(b, b1, 4096, PROT_READ);
	wl_phase(1);

	wl_close(a);
	wl_phase(2);

	wl_munmap(ma, 16384);
	wl_phase(3);
	return wl_finish();
}
