/* SPDX-License-Identifier: MIT */
/*
 * A plain holder of DRM state, for the cgroup scenarios (outside, descendant, moved in,
 * already running at attach). State S: A = card0 with h1 (mapped), h2 (exported to a dma-buf
 * fd), R = renderD128 with h2 imported (a driver without PRIME and render node: R is a
 * second card file with a buffer of its own, and there is no dma-buf fd).
 *   default:        phase 1: S.
 *   --idle-first:   phase 1: nothing yet (the runner moves the process meanwhile); phase 2: S.
 *   --preexisting:  phase 1: S, built before gpuwatch attaches (A's and R's handles are
 *                   marked unknown); phase 2: after attach, a handle more in A and a new
 *                   file N = card0 with a handle, which are known.
 */
#include "wl.h"

#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>

static int build_state(void)
{
	int a = wl_open(WL_CARD, O_RDWR);
	int r = wl_open(WL_RENDER, O_RDWR | O_CLOEXEC);
	uint32_t h1 = wl_create_dumb(a, 64, 64, 32);
	uint32_t h2 = wl_create_dumb(a, 32, 32, 32);
	wl_mmap(a, h1, 16384, PROT_READ | PROT_WRITE);
	if (wl_has_prime(a))
		wl_import(r, wl_export(a, h2, true));
	else
		wl_create_dumb(r, 32, 32, 32); /* R is a second card file (no render node) */
	return a;
}

int main(int argc, char **argv)
{
	wl_init(argc, argv);
	const char *mode = argc > 2 ? argv[2] : "";
	int phase = 1;

	if (strcmp(mode, "--idle-first") == 0)
		wl_phase(phase++);
	int a = build_state();
	if (strcmp(mode, "--preexisting") == 0) {
		for (int i = 0; i < wl.nfiles; i++)
			wl.files[i].handles_known = false;
		wl_phase(phase++);
		wl_create_dumb(a, 16, 16, 32);
		int n = wl_open(WL_CARD, O_RDWR);
		wl_create_dumb(n, 16, 16, 32);
	}
	wl_phase(phase);
	return wl_finish();
}
