/* SPDX-License-Identifier: MIT */
/*
 * A KMS client on a real display driver (virtio_gpu, bochs-drm, qxl, cirrus under QEMU), the
 * way a compositor starts: usage wl_kms DIR DRIVER [--degraded | --resource | --legacy-cursor] (--degraded:
 * restored without a manifest: the framebuffer, the CRTC and the sharing of handles 1 and 2
 * may be lost, the bytes not; --legacy-cursor: handle 3 is the CRTC's cursor through the
 * legacy MODE_CURSOR2 and MODE_CURSOR(MOVE) instead of a framebuffer on the cursor plane, and
 * after the restore the cursor plane shows a buffer on the CRTC at the same place (debugfs
 * state, the kernel's word); --resource, virtio_gpu only: handle 1 is a 2D resource of
 * virtio_gpu's own RESOURCE_CREATE, mapped through VIRTGPU_MAP, its host copy written with
 * TRANSFER_TO_HOST, which is what the display shows). Finds the card node of DRIVER by
 * DRM_IOCTL_VERSION (numbering changes between boots), becomes DRM master by opening it
 * first, and on its first connected connector:
 *   cap        SET_CLIENT_CAP(UNIVERSAL_PLANES): primary and cursor planes listed
 *   handle 1   a dumb buffer of the connector's first mode, mapped and filled with a pattern
 *   ADDFB      framebuffer F on handle 1; SETCRTC shows F on the connector's CRTC
 *   handle 2   GETFB(F): a new handle on F's buffer (what compositors do at takeover)
 *   handle 3   where the CRTC has a cursor plane (virtio_gpu, qxl): a 64x64 ARGB dumb buffer,
 *              ADDFB2 as framebuffer C, SETPLANE of C on the cursor plane at 16,16
 * gpuwatch decodes the handles, the framebuffer and the CRTC configuration (the truth lists
 * the CRTC, the framebuffer it shows, the mode's size and one connector; the manifest is
 * complete). Protocol of wl_criu (criu.sh):
 * pid.parent; phase 1 (truth.1, ready.1: the harness may dump and restore here), go.1; then it
 * checks itself: result.<pid> "PASS" or "FAIL n" with result.<pid>.log (handle 1's mapping
 * holds the pattern, handle 2 is still handle 1's buffer, F exists on that buffer and the CRTC
 * shows F in the same mode, the cursor plane shows C on the CRTC, the client cap still holds); ready.2, go.2, then
 * done.<pid> "0" and exit.
 */
#define _GNU_SOURCE
#include "wl.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xf86drm.h>
#include <xf86drmMode.h>
#include <drm_fourcc.h>
#include <virtgpu_drm.h>

static char log_text[4096];
static int nfail;
static bool degraded;      /* restored without a manifest: only the buffers' bytes must hold */
static bool resource;      /* handle 1 is a virtio_gpu resource */
static bool legacy_cursor; /* handle 3 through MODE_CURSOR2, not a framebuffer on the cursor plane */

static void logf_(bool bad, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(bool bad, const char *fmt, ...)
{
	size_t n = strlen(log_text);
	va_list ap;

	nfail += bad;
	n += snprintf(log_text + n, sizeof log_text - n, "%s ", bad ? "FAIL" : "note");
	va_start(ap, fmt);
	if (n < sizeof log_text)
		n += vsnprintf(log_text + n, sizeof log_text - n, fmt, ap);
	va_end(ap);
	if (n < sizeof log_text - 1)
		strcat(log_text, "\n");
}

/* the card node of `driver`, or dies */
static void find_card(const char *driver, char *path, size_t len)
{
	for (int tries = 0; tries < 100; tries++, usleep(100000))
		for (int i = 0; i < 16; i++) {
			snprintf(path, len, "/dev/dri/card%d", i);
			int fd = open(path, O_RDWR | O_CLOEXEC);
			if (fd < 0)
				continue;
			drmVersionPtr v = drmGetVersion(fd);
			bool mine = v && strcmp(v->name, driver) == 0;
			drmFreeVersion(v);
			close(fd);
			if (mine)
				return;
		}
	errno = ENODEV;
	wl_die("no card node of driver %s within 10 s", driver);
}

/* handle 1 as a virtio_gpu 2D resource of w x h XRGB pixels, mapped through VIRTGPU_MAP */
static uint32_t virtio_resource(int fd, uint32_t w, uint32_t h, uint64_t *size)
{
	struct drm_virtgpu_resource_create rc = {
		.target = 2, /* PIPE_TEXTURE_2D: the only one without virgl */
		.format = 2, /* VIRTIO_GPU_FORMAT_B8G8R8X8_UNORM: DRM_FORMAT_XRGB8888 */
		.bind = 2,   /* render target */
		.width = w,
		.height = h,
		.depth = 1,
		.array_size = 1,
		.size = w * h * 4,
		.stride = w * 4,
	};
	if (drmIoctl(fd, DRM_IOCTL_VIRTGPU_RESOURCE_CREATE, &rc) != 0)
		wl_die("VIRTGPU_RESOURCE_CREATE %ux%u", w, h);
	*size = ((uint64_t)w * h * 4 + 4095) & ~4095ull;
	wl_handle_add(wl_file_of_fd(fd), rc.bo_handle, *size, "virtio_gpu.resource_create");
	return rc.bo_handle;
}

static void *virtio_map(int fd, uint32_t handle, uint64_t size)
{
	struct drm_virtgpu_map m = {.handle = handle};
	struct wl_file *f = wl_file_of_fd(fd);

	if (drmIoctl(fd, DRM_IOCTL_VIRTGPU_MAP, &m) != 0)
		wl_die("VIRTGPU_MAP %u", handle);
	f->grants[f->ngrants++] = (struct wl_grant){.offset = m.offset, .handle = handle};
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)m.offset);
	if (p == MAP_FAILED)
		wl_die("mmap of resource %u", handle);
	wl.maps[wl.nmaps++] = (struct wl_map){.start = (uintptr_t)p,
					      .length = size,
					      .prot = PROT_READ | PROT_WRITE,
					      .shared = true,
					      .file = (int)(f - wl.files),
					      .offset = m.offset,
					      .handle = handle};
	return p;
}

static void virtio_upload(int fd, uint32_t handle, uint32_t w, uint32_t h)
{
	struct drm_virtgpu_3d_transfer_to_host t = {.bo_handle = handle};
	struct drm_virtgpu_3d_wait wt = {.handle = handle};

	t.box.w = w;
	t.box.h = h;
	t.box.d = 1;
	if (drmIoctl(fd, DRM_IOCTL_VIRTGPU_TRANSFER_TO_HOST, &t) != 0 || drmIoctl(fd, DRM_IOCTL_VIRTGPU_WAIT, &wt) != 0)
		wl_die("VIRTGPU_TRANSFER_TO_HOST of resource %u", handle);
}

/* a cursor plane CRTC index 0 can use, or 0 (read with universal planes set) */
static uint32_t cursor_plane(int fd)
{
	drmModePlaneResPtr pr = drmModeGetPlaneResources(fd);
	uint32_t found = 0;

	for (uint32_t i = 0; pr && i < pr->count_planes && !found; i++) {
		drmModePlanePtr p = drmModeGetPlane(fd, pr->planes[i]);
		drmModeObjectPropertiesPtr props =
			p ? drmModeObjectGetProperties(fd, p->plane_id, DRM_MODE_OBJECT_PLANE) : NULL;
		for (uint32_t j = 0; props && j < props->count_props; j++) {
			drmModePropertyPtr prop = drmModeGetProperty(fd, props->props[j]);
			if (prop && strcmp(prop->name, "type") == 0 && props->prop_values[j] == DRM_PLANE_TYPE_CURSOR &&
			    (p->possible_crtcs & 1))
				found = p->plane_id;
			drmModeFreeProperty(prop);
		}
		drmModeFreeObjectProperties(props);
		drmModeFreePlane(p);
	}
	drmModeFreePlaneResources(pr);
	return found;
}

/* the position of `plane` as the kernel's atomic state says (debugfs dri/MINOR/state,
 * "crtc-pos=64x64+16+16"), for card node `path`; false when not found */
static bool plane_pos(const char *path, uint32_t plane, char *out, size_t n)
{
	char file[96], line[256], want[32];
	const char *num = strrchr(path, 'd'); /* /dev/dri/cardN */
	snprintf(file, sizeof file, "/sys/kernel/debug/dri/%s/state", num ? num + 1 : "0");
	snprintf(want, sizeof want, "plane[%u]:", plane);
	FILE *f = fopen(file, "r");
	bool in = false, found = false;

	while (f && !found && fgets(line, sizeof line, f)) {
		if (strncmp(line, "plane[", 6) == 0 || strncmp(line, "crtc[", 5) == 0)
			in = strncmp(line, want, strlen(want)) == 0;
		char *p = in ? strstr(line, "crtc-pos=") : NULL;
		if (p) {
			snprintf(out, n, "%s", p + strlen("crtc-pos="));
			out[strcspn(out, "\n")] = 0;
			found = true;
		}
	}
	if (f)
		fclose(f);
	return found;
}

static void fill(uint8_t *p, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 7 + (i >> 12));
}

static uint64_t first_bad(const uint8_t *p, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		if (p[i] != (uint8_t)(i * 7 + (i >> 12)))
			return i;
	return n;
}

int main(int argc, char **argv)
{
	char path[64], text[64];

	close_range(3, ~0u, 0); /* inherited ports (virtme: 3-5) would stop criu */
	wl_init(argc, argv);
	if (argc != 3 && (argc != 4 || (strcmp(argv[3], "--degraded") != 0 && strcmp(argv[3], "--resource") != 0 &&
					strcmp(argv[3], "--legacy-cursor") != 0)))
		wl_die("usage: wl_kms DIR DRIVER [--degraded | --resource | --legacy-cursor]");
	degraded = argc == 4 && strcmp(argv[3], "--degraded") == 0;
	resource = argc == 4 && strcmp(argv[3], "--resource") == 0;
	legacy_cursor = argc == 4 && strcmp(argv[3], "--legacy-cursor") == 0;
	snprintf(text, sizeof text, "%d\n", (int)getpid());
	wl_write_file("pid.parent", text);
	find_card(argv[2], path, sizeof path);
	int fd = wl_open(path, O_RDWR);
	/* as compositors do: primary and cursor planes become visible (GETPLANERESOURCES) */
	if (drmSetClientCap(fd, DRM_CLIENT_CAP_UNIVERSAL_PLANES, 1) != 0)
		wl_die("SET_CLIENT_CAP(UNIVERSAL_PLANES) on %s", path);
	drmModePlaneResPtr planes = drmModeGetPlaneResources(fd);
	uint32_t nplanes = planes ? planes->count_planes : 0;
	drmModeFreePlaneResources(planes);
	if (nplanes == 0)
		wl_die("no planes on %s with universal planes: the restore check would prove nothing", path);

	drmModeResPtr res = drmModeGetResources(fd);
	if (!res)
		wl_die("MODE_GETRESOURCES on %s", path);
	drmModeConnectorPtr conn = NULL;
	for (int i = 0; i < res->count_connectors && !conn; i++) {
		conn = drmModeGetConnector(fd, res->connectors[i]);
		if (conn && (conn->connection != DRM_MODE_CONNECTED || conn->count_modes == 0)) {
			drmModeFreeConnector(conn);
			conn = NULL;
		}
	}
	if (!conn || res->count_crtcs == 0)
		wl_die("no connected connector with a mode, or no CRTC, on %s", path);
	uint32_t crtc = res->crtcs[0];
	drmModeModeInfo mode = conn->modes[0];

	uint32_t w = mode.hdisplay, h = mode.vdisplay;
	uint64_t size = 0;
	uint32_t h1 = resource ? virtio_resource(fd, w, h, &size) : wl_create_dumb(fd, w, h, 32);
	if (!resource)
		size = wl_handle_find(wl_file_of_fd(fd), h1)->size;
	uint8_t *m1 = resource ? virtio_map(fd, h1, size) : wl_mmap(fd, h1, size, PROT_READ | PROT_WRITE);
	fill(m1, size);
	if (resource) /* the display shows the host copy of a resource that is not a dumb buffer */
		virtio_upload(fd, h1, w, h);
	uint32_t fb = wl_addfb(fd, w, h, h1);
	if (drmModeSetCrtc(fd, crtc, fb, 0, 0, &conn->connector_id, 1, &mode) != 0)
		wl_die("MODE_SETCRTC %u on connector %u (%s)", crtc, conn->connector_id, mode.name);
	wl_note_crtc(fd, crtc, fb, mode.hdisplay, mode.vdisplay, 1);
	drmModeFBPtr got = drmModeGetFB(fd, fb);
	if (!got || !got->handle)
		wl_die("MODE_GETFB %u gave no handle (not master?)", fb);
	uint32_t h2 = got->handle;
	drmModeFreeFB(got);
	wl_handle_add(wl_file_of_fd(fd), h2, size, "getfb"); /* handle 1's buffer */
	printf("%s: connector %u, CRTC %u, mode %s, framebuffer %u, handles %u and %u\n", path, conn->connector_id,
	       crtc, mode.name, fb, h1, h2);
	/* a cursor on the CRTC's cursor plane, where the driver has one (virtio_gpu, qxl): a
	 * 64x64 ARGB buffer (handle 3) and its framebuffer, placed with SETPLANE */
	uint32_t cursor = cursor_plane(fd), cfb = 0;
	char cursor_pos[64] = "";
	uint32_t h3 = 0;
	if (cursor) { /* handle 3: the cursor's 64x64 ARGB buffer, opaque white */
		h3 = wl_create_dumb(fd, 64, 64, 32);
		uint8_t *m3 = wl_mmap(fd, h3, wl_handle_find(wl_file_of_fd(fd), h3)->size, PROT_READ | PROT_WRITE);
		memset(m3, 0xff, 64 * 64 * 4);
	}
	if (cursor && legacy_cursor) { /* the legacy way: MODE_CURSOR2 of the handle, then MOVE */
		if (drmModeSetCursor2(fd, crtc, h3, 64, 64, 0, 0) != 0 || drmModeMoveCursor(fd, crtc, 16, 16) != 0)
			wl_die("MODE_CURSOR2 of handle %u on CRTC %u, or its MOVE to 16,16", h3, crtc);
		if (!plane_pos(path, cursor, cursor_pos, sizeof cursor_pos))
			wl_die("debugfs state of %s: no position for cursor plane %u", path, cursor);
		printf("%s: legacy cursor of CRTC %u: handle %u, cursor plane %u at %s\n", path, crtc, h3, cursor,
		       cursor_pos);
	} else if (cursor) {
		uint32_t handles[4] = {h3}, pitches[4] = {64 * 4}, offsets[4] = {0};
		if (drmModeAddFB2(fd, 64, 64, DRM_FORMAT_ARGB8888, handles, pitches, offsets, &cfb, 0) != 0)
			wl_die("MODE_ADDFB2 64x64 ARGB8888 on handle %u", h3);
		struct wl_file *f = wl_file_of_fd(fd);
		f->fbs[f->nfbs++] = (struct wl_fb){cfb, 64, 64, h3};
		if (drmModeSetPlane(fd, cursor, crtc, cfb, 0, 16, 16, 64, 64, 0, 0, 64 << 16, 64 << 16) == 0) {
			printf("%s: cursor plane %u shows framebuffer %u at 16,16\n", path, cursor, cfb);
		} else { /* the scenario requires it where the driver is known to take it (virtio_gpu) */
			printf("%s: cursor plane %u refused framebuffer %u (%s): no cursor\n", path, cursor, cfb,
			       strerror(errno));
			cursor = 0;
		}
	}
	fflush(stdout);
	wl_phase(1);

	/* after a restore (or none): what the application would notice */
	uint64_t bad = first_bad(m1, size);
	if (bad != size)
		logf_(true, "handle 1's mapping: byte %llu is %#x", (unsigned long long)bad, m1[bad]);
	struct drm_mode_map_dumb md = {.handle = h2};
	uint8_t *m2 = MAP_FAILED;
	if (drmIoctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &md) != 0)
		logf_(true, "handle 2 (GETFB): MAP_DUMB: %s", strerror(errno));
	else if ((m2 = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, (off_t)md.offset)) == MAP_FAILED)
		logf_(true, "handle 2 (GETFB): mmap of %llu bytes: %s", (unsigned long long)size, strerror(errno));
	else if ((bad = first_bad(m2, size)) != size)
		logf_(true, "handle 2 (GETFB): byte %llu is %#x", (unsigned long long)bad, m2[bad]);
	else { /* handle 2 is handle 1's buffer, as before the dump */
		m1[100] ^= 0xff;
		if (m2[100] != m1[100])
			logf_(!degraded, "handles 1 and 2 are no longer one buffer");
		m1[100] ^= 0xff;
	}
	/* the client cap is set again: the universal planes are still listed */
	planes = drmModeGetPlaneResources(fd);
	if (!planes || planes->count_planes != nplanes)
		logf_(!degraded, "%u planes listed, %u before: the universal-planes client cap was lost",
		      planes ? planes->count_planes : 0, nplanes);
	drmModeFreePlaneResources(planes);
	/* the framebuffer is back with its id, on handle 1's buffer, and the CRTC shows it */
	got = drmModeGetFB(fd, fb);
	if (!got) {
		logf_(!degraded, "framebuffer %u is gone (%s)", fb, strerror(errno));
	} else {
		if (got->width != w || got->height != h)
			logf_(true, "framebuffer %u is %ux%u, was %ux%u", fb, got->width, got->height, w, h);
		struct drm_mode_map_dumb g = {.handle = got->handle};
		uint8_t *m3 = MAP_FAILED;
		if (got->handle && drmIoctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &g) == 0 &&
		    (m3 = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, (off_t)g.offset)) != MAP_FAILED) {
			m1[200] ^= 0xff;
			if (m3[200] != m1[200])
				logf_(true, "framebuffer %u is not on handle 1's buffer", fb);
			m1[200] ^= 0xff;
			munmap(m3, size);
		} else {
			logf_(true, "framebuffer %u: its buffer cannot be mapped through GETFB's handle %u", fb,
			      got->handle);
		}
		if (got->handle)
			drmCloseBufferHandle(fd, got->handle);
		drmModeFreeFB(got);
	}
	if (resource) { /* the resource is the same size; its id may have changed (only virgl names it) */
		struct drm_virtgpu_resource_info ri = {.bo_handle = h1};
		if (drmIoctl(fd, DRM_IOCTL_VIRTGPU_RESOURCE_INFO, &ri) != 0)
			logf_(true, "VIRTGPU_RESOURCE_INFO of handle %u: %s", h1, strerror(errno));
		else if (ri.size < w * h * 4)
			logf_(true, "resource of handle %u: %u bytes, want %u", h1, ri.size, w * h * 4);
		else
			logf_(false, "handle %u is resource %u of %u bytes", h1, ri.res_handle, ri.size);
	}
	drmModeCrtcPtr c = drmModeGetCrtc(fd, crtc);
	if (!c || c->buffer_id != fb || !c->mode_valid || c->mode.hdisplay != w || c->mode.vdisplay != h)
		logf_(!degraded, "CRTC %u shows framebuffer %u (%ux%u), expected %u (%ux%u)", crtc,
		      c ? c->buffer_id : 0, c ? c->mode.hdisplay : 0, c ? c->mode.vdisplay : 0, fb, w, h);
	else
		logf_(false, "CRTC %u shows framebuffer %u in %s again", crtc, fb, mode.name);
	drmModeFreeCrtc(c);
	if (cursor && legacy_cursor) { /* the cursor plane shows a buffer on the CRTC, where it was */
		drmModePlanePtr p = drmModeGetPlane(fd, cursor);
		char pos[64] = "";
		if (!p || !p->fb_id || p->crtc_id != crtc)
			logf_(!degraded, "cursor plane %u shows framebuffer %u on CRTC %u: the legacy cursor is gone",
			      cursor, p ? p->fb_id : 0, p ? p->crtc_id : 0);
		else if (!plane_pos(path, cursor, pos, sizeof pos) || strcmp(pos, cursor_pos) != 0)
			logf_(!degraded, "cursor plane %u is at %s (debugfs state), was at %s", cursor, pos,
			      cursor_pos);
		else
			logf_(false, "the legacy cursor is on cursor plane %u at %s again", cursor, pos);
		drmModeFreePlane(p);
	} else if (cursor) { /* the cursor plane shows its framebuffer on the CRTC again */
		drmModePlanePtr p = drmModeGetPlane(fd, cursor);
		if (!p || p->fb_id != cfb || p->crtc_id != crtc)
			logf_(!degraded, "cursor plane %u shows framebuffer %u on CRTC %u, expected %u on %u", cursor,
			      p ? p->fb_id : 0, p ? p->crtc_id : 0, cfb, crtc);
		else
			logf_(false, "cursor plane %u shows framebuffer %u again", cursor, cfb);
		drmModeFreePlane(p);
	}
	snprintf(text, sizeof text, "result.%d.log", (int)getpid());
	wl_write_file(text, log_text);
	snprintf(text, sizeof text, "result.%d", (int)getpid());
	wl_write_file(text, nfail ? "FAIL\n" : "PASS\n");
	wl_sync(2, NULL);
	snprintf(text, sizeof text, "done.%d", (int)getpid());
	wl_write_file(text, "0\n");
	return 0;
}
