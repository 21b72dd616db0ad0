/* SPDX-License-Identifier: MIT */
/*
 * exec with close-on-exec: close-on-exec fds disappear, the others stay, every mapping goes.
 *   phase 1: A = card0 (kept) with a F_DUPFD_CLOEXEC dup; B = card0 O_CLOEXEC, mapped (B is
 *            gone after exec); R = renderD128 O_CLOEXEC then F_SETFD 0 (kept); C = card0 made
 *            close-on-exec by FIOCLEX; two dups of A at 40, 41 made close-on-exec by
 *            close_range(CLOSE_RANGE_CLOEXEC); A's hA mapped; dma-buf fds of A's buffers, one
 *            close-on-exec, one not (not on a driver without PRIME).
 *   exec of this program (same comm), which checks that the kernel did what the model says.
 *   phase 2: A (its handles intact), R and the kept dma-buf fd; no mapping.
 */
#define _GNU_SOURCE
#include "wl.h"

#include <fcntl.h>
#include <sys/mman.h>

int main(int argc, char **argv)
{
	wl_init(argc, argv);
	if (wl_after_exec(argc, argv)) {
		wl_phase(2);
		return wl_finish();
	}
	int a = wl_open(WL_CARD, O_RDWR);
	wl_dupfd(a, 10, true);
	int b = wl_open(WL_CARD, O_RDWR | O_CLOEXEC);
	int r = wl_open(WL_RENDER, O_RDWR | O_CLOEXEC);
	wl_set_cloexec(r, false);
	int c = wl_open(WL_CARD, O_RDWR);
	wl_ioctl_cloexec(c, true);
	wl_dup3(a, 40, false);
	wl_dup3(a, 41, false);
	wl_close_range(40, 41, true);
	uint32_t ha = wl_create_dumb(a, 64, 64, 32);
	uint32_t ha2 = wl_create_dumb(a, 32, 32, 32);
	uint32_t hb = wl_create_dumb(b, 32, 32, 32);
	wl_mmap(a, ha, 16384, PROT_READ | PROT_WRITE);
	wl_mmap(b, hb, 4096, PROT_READ | PROT_WRITE);
	if (wl_has_prime(a)) { /* bochs-drm on 6.1 has no PRIME: no dma-buf fds there */
		wl_export(a, ha, true);
		wl_export(a, ha2, false);
	}
	wl_phase(1);

	wl_exec_self(NULL);
}
