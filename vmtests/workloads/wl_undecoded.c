/* SPDX-License-Identifier: MIT */
/*
 * DRM ioctls gpuwatch does not decode make a file's state unknown, and only that file's.
 *   phase 1: card A with dumb handles 1 and 2 and an undecoded ioctl that succeeded: on vgem
 *            a fence attached to A.1 and signalled (vgem's private FENCE_ATTACH and
 *            FENCE_SIGNAL); on another driver (guest/kms.sh, sc_on_driver) the DPMS property
 *            of its first connector set to On with MODE_OBJ_SETPROPERTY (A is the first
 *            opener, so DRM master). A lists them as undecoded, the manifest is not complete.
 *            The render node B (the card again on a driver without one) makes only queries
 *            (VERSION, GET_CAP; 6.1's vgem render node refuses dumb buffers): B's state stays
 *            known.
 *   phase 2: A closed: what was unknown went with it, and the manifest is complete again.
 */
#include "wl.h"

#include <drm.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <xf86drmMode.h>

/* MODE_OBJ_SETPROPERTY of the first connector's DPMS to On: a core ioctl gpuwatch does not
 * decode, which every KMS driver takes from the master (with no CRTC on the connector it
 * only records the value) */
static void set_dpms_on(int fd)
{
	drmModeResPtr res = drmModeGetResources(fd);
	uint32_t conn, dpms = 0;

	if (!res || res->count_connectors < 1)
		wl_die("MODE_GETRESOURCES on fd %d: no connector", fd);
	conn = res->connectors[0];
	drmModeFreeResources(res);
	drmModeObjectPropertiesPtr props = drmModeObjectGetProperties(fd, conn, DRM_MODE_OBJECT_CONNECTOR);
	for (uint32_t i = 0; props && i < props->count_props && !dpms; i++) {
		drmModePropertyPtr p = drmModeGetProperty(fd, props->props[i]);

		if (p && strcmp(p->name, "DPMS") == 0)
			dpms = p->prop_id;
		drmModeFreeProperty(p);
	}
	drmModeFreeObjectProperties(props);
	if (!dpms)
		wl_die("connector %u of fd %d has no DPMS property", conn, fd);
	if (drmModeObjectSetProperty(fd, conn, DRM_MODE_OBJECT_CONNECTOR, dpms, DRM_MODE_DPMS_ON) != 0)
		wl_die("MODE_OBJ_SETPROPERTY DPMS=On on connector %u of fd %d", conn, fd);
	wl_note_undecoded(fd, "MODE_OBJ_SETPROPERTY");
}

int main(int argc, char **argv)
{
	wl_init(argc, argv);
	int a = wl_open(WL_CARD, O_RDWR);
	int b = wl_open(WL_RENDER, O_RDWR | O_CLOEXEC);
	char driver[32];
	uint32_t a1 = wl_create_dumb(a, 64, 64, 32);
	wl_create_dumb(a, 32, 32, 32);
	wl_driver_name(a, driver, sizeof driver);
	if (strcmp(driver, "vgem") == 0)
		wl_vgem_fence(a, a1);
	else
		set_dpms_on(a);
	struct drm_get_cap cap = {.capability = DRM_CAP_PRIME};
	if (ioctl(b, DRM_IOCTL_GET_CAP, &cap) != 0)
		wl_die("GET_CAP(PRIME) on fd %d", b);
	wl_phase(1);

	wl_close(a);
	wl_phase(2);
	return wl_finish();
}
