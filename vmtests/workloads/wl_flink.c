/* SPDX-License-Identifier: MIT */
/*
 * FLINK names: GEM_OPEN gives a new handle (origin "flink") in another file, and a second
 * handle to the same buffer in the file that named it.
 *   phase 1: A = card0 with h1 (named), h2; B = card0 opens the name; A opens it too.
 *            h1 mapped through A, B's handle mapped through B.
 *   phase 2: A's flink handle closed; B's handle unmapped and closed.
 */
#include "wl.h"

#include <fcntl.h>
#include <sys/mman.h>

int main(int argc, char **argv)
{
	wl_init(argc, argv);
	int a = wl_open(WL_CARD, O_RDWR);
	int b = wl_open(WL_CARD, O_RDWR);
	uint32_t h1 = wl_create_dumb(a, 64, 64, 32);
	wl_create_dumb(a, 32, 32, 32);
	uint32_t name = wl_flink(a, h1);
	uint32_t bh = wl_gem_open(b, name);
	uint32_t ah = wl_gem_open(a, name);
	wl_mmap(a, h1, 16384, PROT_READ | PROT_WRITE);
	void *mb = wl_mmap(b, bh, 16384, PROT_READ | PROT_WRITE);
	wl_phase(1);

	wl_gem_close(a, ah);
	wl_munmap(mb, 16384);
	wl_gem_close(b, bh);
	wl_phase(2);
	return wl_finish();
}
