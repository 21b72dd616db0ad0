/* SPDX-License-Identifier: MIT */
/*
 * dup and fork share a file; a child closes a dup, unmaps a range, opens its own file.
 *   phase 1: parent: A = card0, dups of A (dup, F_DUPFD_CLOEXEC, dup2, dup3 O_CLOEXEC),
 *            h1 (4 pages) and h2 mapped, a dma-buf fd of h2 and a dup of it (not on a
 *            driver without PRIME). Child (forked
 *            after all that): closes one dup of A and the dup of the dma-buf fd, unmaps the
 *            middle two pages of h1's mapping and all of h2's, opens C = card0 with a handle.
 *   phase 2: the child has exited (its file C is gone); the parent closes two dups with
 *            close_range and creates a handle in A.
 */
#define _GNU_SOURCE
#include "wl.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	wl_init(argc, argv);
	int a = wl_open(WL_CARD, O_RDWR);
	uint32_t h1 = wl_create_dumb(a, 64, 64, 32); /* 4 pages */
	uint32_t h2 = wl_create_dumb(a, 64, 32, 32); /* 2 pages */
	char *m1 = wl_mmap(a, h1, 16384, PROT_READ | PROT_WRITE);
	char *m2 = wl_mmap(a, h2, 8192, PROT_READ | PROT_WRITE);
	int d1 = wl_dup(a);
	wl_dupfd(a, 20, true);
	wl_dup3(a, 30, false);
	wl_dup3(a, 31, true);
	int e2 = -1;
	if (wl_has_prime(a)) /* bochs-drm on 6.1 has no PRIME: no dma-buf fds there */
		e2 = wl_dup(wl_export(a, h2, true));

	pid_t child = wl_fork();
	if (child == 0) {
		wl_close(d1);
		if (e2 >= 0)
			wl_close(e2);
		wl_munmap(m1 + 4096, 8192);
		wl_munmap(m2, 8192);
		int c = wl_open(WL_CARD, O_RDWR);
		wl_create_dumb(c, 16, 16, 32);
		wl_phase(1);
		exit(wl_finish());
	}
	wl_phase(1);

	wl_reap(child);
	wl_close_range(30, 31, false);
	wl_create_dumb(a, 32, 32, 32);
	wl_phase(2);
	return wl_finish();
}
