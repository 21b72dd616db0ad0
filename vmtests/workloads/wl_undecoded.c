/* SPDX-License-Identifier: MIT */
/*
 * DRM ioctls gpuwatch does not decode make a file's state unknown, and only that file's.
 *   phase 1: card0 A with dumb handles 1 and 2, a vgem fence attached to A.1 and signalled
 *            (vgem's private FENCE_ATTACH and FENCE_SIGNAL: A lists both as undecoded, the
 *            manifest is not complete); renderD128 B with only queries (VERSION, GET_CAP;
 *            6.1's vgem render node refuses dumb buffers): B's state stays known.
 *   phase 2: A closed: what was unknown went with it, and the manifest is complete again.
 */
#include "wl.h"

#include <drm.h>
#include <fcntl.h>
#include <sys/ioctl.h>

int main(int argc, char **argv)
{
	wl_init(argc, argv);
	int a = wl_open(WL_CARD, O_RDWR);
	int b = wl_open(WL_RENDER, O_RDWR | O_CLOEXEC);
	uint32_t a1 = wl_create_dumb(a, 64, 64, 32);
	wl_create_dumb(a, 32, 32, 32);
	wl_vgem_fence(a, a1);
	struct drm_get_cap cap = {.capability = DRM_CAP_PRIME};
	if (ioctl(b, DRM_IOCTL_GET_CAP, &cap) != 0)
		wl_die("GET_CAP(PRIME) on fd %d", b);
	wl_phase(1);

	wl_close(a);
	wl_phase(2);
	return wl_finish();
}
