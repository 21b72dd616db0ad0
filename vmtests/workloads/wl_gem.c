/* SPDX-License-Identifier: MIT */
/* Workload library: GEM handles (dumb buffers, FLINK) and PRIME on vgem. */
#include "wl.h"

#include <drm.h>
#include <drm_mode.h>
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static int drm_ioctl(int fd, unsigned long cmd, void *arg)
{
	int ret;

	do
		ret = ioctl(fd, cmd, arg);
	while (ret == -1 && (errno == EINTR || errno == EAGAIN));
	return ret;
}

/* vgem_drm.h (not shipped by libdrm) */
struct wl_vgem_fence_attach {
	uint32_t handle, flags, out_fence, pad;
};
struct wl_vgem_fence_signal {
	uint32_t fence, flags;
};
#define WL_VGEM_FENCE_ATTACH DRM_IOWR(DRM_COMMAND_BASE + 0x1, struct wl_vgem_fence_attach)
#define WL_VGEM_FENCE_SIGNAL DRM_IOW(DRM_COMMAND_BASE + 0x2, struct wl_vgem_fence_signal)

void wl_note_undecoded(int fd, const char *name)
{
	struct wl_file *f = wl_file_of_fd(fd);

	for (int i = 0; i < f->nundecoded; i++)
		if (strcmp(f->undecoded[i], name) == 0)
			return;
	if (f->nundecoded == 4)
		wl_die("more than 4 undecoded ioctls on file %s", f->label);
	snprintf(f->undecoded[f->nundecoded++], sizeof f->undecoded[0], "%s", name);
}

void wl_note_crtc(int fd, uint32_t crtc, uint32_t fb, uint32_t hdisplay, uint32_t vdisplay, uint32_t connectors)
{
	struct wl_file *f = wl_file_of_fd(fd);
	int i = 0;

	while (i < f->ncrtcs && f->crtcs[i].crtc != crtc)
		i++;
	if (i == 2)
		wl_die("more than 2 CRTCs set on file %s", f->label);
	f->crtcs[i] = (struct wl_crtc){crtc, fb, hdisplay, vdisplay, connectors};
	if (i == f->ncrtcs)
		f->ncrtcs++;
}

uint32_t wl_addfb(int fd, uint32_t width, uint32_t height, uint32_t handle)
{
	struct drm_mode_fb_cmd c = {
		.width = width, .height = height, .pitch = width * 4, .bpp = 32, .depth = 24, .handle = handle};
	struct wl_file *f = wl_file_of_fd(fd);

	if (drm_ioctl(fd, DRM_IOCTL_MODE_ADDFB, &c) != 0)
		wl_die("MODE_ADDFB %ux%u on handle %u of fd %d", width, height, handle, fd);
	if (f->nfbs == 4)
		wl_die("more than 4 framebuffers on file %s", f->label);
	f->fbs[f->nfbs++] = (struct wl_fb){c.fb_id, width, height, handle};
	return c.fb_id;
}

int wl_vgem_fence_raw(int fd, uint32_t handle)
{
	struct wl_vgem_fence_attach a = {.handle = handle};

	if (drm_ioctl(fd, WL_VGEM_FENCE_ATTACH, &a) != 0)
		return -errno;
	struct wl_vgem_fence_signal s = {.fence = a.out_fence};
	return drm_ioctl(fd, WL_VGEM_FENCE_SIGNAL, &s) != 0 ? -errno : 0;
}

void wl_vgem_fence(int fd, uint32_t handle)
{
	int err = wl_vgem_fence_raw(fd, handle);

	if (err)
		errno = -err, wl_die("vgem fence on handle %u of fd %d", handle, fd);
	wl_note_undecoded(fd, "vgem ioctl 0x01");
	wl_note_undecoded(fd, "vgem ioctl 0x02");
}

uint32_t wl_create_dumb(int fd, uint32_t width, uint32_t height, uint32_t bpp)
{
	struct drm_mode_create_dumb c = {.width = width, .height = height, .bpp = bpp};
	struct wl_file *f = wl_file_of_fd(fd);

	if (drm_ioctl(fd, DRM_IOCTL_MODE_CREATE_DUMB, &c) != 0)
		wl_die("MODE_CREATE_DUMB %ux%ux%u on fd %d", width, height, bpp, fd);
	wl_handle_add(f, c.handle, c.size, "dumb");
	return c.handle;
}

uint32_t wl_try_create_dumb(int fd, uint32_t width, uint32_t height, uint32_t bpp)
{
	struct drm_mode_create_dumb c = {.width = width, .height = height, .bpp = bpp};
	struct wl_file *f = wl_file_of_fd(fd);

	if (drm_ioctl(fd, DRM_IOCTL_MODE_CREATE_DUMB, &c) != 0) {
		if (errno != EINVAL)
			wl_die("MODE_CREATE_DUMB %ux%ux%u on fd %d", width, height, bpp, fd);
		return 0;
	}
	wl_handle_add(f, c.handle, c.size, "dumb");
	return c.handle;
}

void wl_destroy_dumb(int fd, uint32_t handle)
{
	struct drm_mode_destroy_dumb d = {.handle = handle};
	struct wl_file *f = wl_file_of_fd(fd);

	if (drm_ioctl(fd, DRM_IOCTL_MODE_DESTROY_DUMB, &d) != 0)
		wl_die("MODE_DESTROY_DUMB %u on fd %d", handle, fd);
	wl_handle_remove(f, handle);
}

void wl_gem_close(int fd, uint32_t handle)
{
	struct drm_gem_close c = {.handle = handle};
	struct wl_file *f = wl_file_of_fd(fd);

	if (drm_ioctl(fd, DRM_IOCTL_GEM_CLOSE, &c) != 0)
		wl_die("GEM_CLOSE %u on fd %d", handle, fd);
	wl_handle_remove(f, handle);
}

uint32_t wl_flink(int fd, uint32_t handle)
{
	struct drm_gem_flink fl = {.handle = handle};

	wl_file_of_fd(fd);
	if (drm_ioctl(fd, DRM_IOCTL_GEM_FLINK, &fl) != 0)
		wl_die("GEM_FLINK %u on fd %d", handle, fd);
	return fl.name;
}

uint32_t wl_gem_open(int fd, uint32_t name)
{
	struct drm_gem_open o = {.name = name};
	struct wl_file *f = wl_file_of_fd(fd);

	if (drm_ioctl(fd, DRM_IOCTL_GEM_OPEN, &o) != 0)
		wl_die("GEM_OPEN name %u on fd %d", name, fd);
	wl_handle_add(f, o.handle, o.size, "flink");
	return o.handle;
}

bool wl_has_prime(int fd)
{
	struct drm_get_cap c = {.capability = DRM_CAP_PRIME};

	if (drm_ioctl(fd, DRM_IOCTL_GET_CAP, &c) != 0)
		wl_die("GET_CAP(PRIME) on fd %d", fd);
	return (c.value & (DRM_PRIME_CAP_IMPORT | DRM_PRIME_CAP_EXPORT)) ==
	       (DRM_PRIME_CAP_IMPORT | DRM_PRIME_CAP_EXPORT);
}

int wl_export(int fd, uint32_t handle, bool cloexec)
{
	struct drm_prime_handle p = {.handle = handle, .flags = DRM_RDWR | (cloexec ? DRM_CLOEXEC : 0), .fd = -1};
	struct wl_file *f = wl_file_of_fd(fd);

	errno = 0;
	if (!wl_handle_find(f, handle))
		wl_die("export: no handle %u in file %s", handle, f->label);
	if (drm_ioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p) != 0)
		wl_die("PRIME_HANDLE_TO_FD %u on fd %d", handle, fd);
	wl_fd_add(p.fd, WL_FD_DMABUF, (int)(f - wl.files), handle, cloexec);
	return p.fd;
}

uint32_t wl_import(int fd, int dmabuf_fd)
{
	struct drm_prime_handle p = {.fd = dmabuf_fd};
	struct wl_file *f = wl_file_of_fd(fd);
	struct wl_fd *d = wl_fd_find(dmabuf_fd);
	struct wl_handle *src;
	off_t size;

	errno = 0;
	if (!d || d->kind != WL_FD_DMABUF)
		wl_die("import: fd %d is not a dma-buf of the model", dmabuf_fd);
	src = wl_handle_find(&wl.files[d->file], d->handle);
	size = lseek(dmabuf_fd, 0, SEEK_END);
	if (size < 0)
		wl_die("lseek dma-buf fd %d", dmabuf_fd);
	if (src && (uint64_t)size != src->size)
		wl_die("dma-buf fd %d has size %lld, its handle %u has %llu", dmabuf_fd, (long long)size, d->handle,
		       (unsigned long long)src->size);
	if (drm_ioctl(fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &p) != 0)
		wl_die("PRIME_FD_TO_HANDLE fd %d on fd %d", dmabuf_fd, fd);
	/* importing a buffer the file already has returns its existing handle */
	if (!wl_handle_find(f, p.handle))
		wl_handle_add(f, p.handle, (uint64_t)size, "prime");
	return p.handle;
}

int wl_probe_handle(int fd, uint32_t handle, uint64_t *size)
{
	struct drm_prime_handle p = {.handle = handle, .flags = DRM_CLOEXEC, .fd = -1};
	off_t end;

	if (drm_ioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p) != 0)
		return -errno;
	end = lseek(p.fd, 0, SEEK_END);
	close(p.fd);
	if (end < 0)
		return -EIO;
	*size = (uint64_t)end;
	return 0;
}

void wl_driver_name(int fd, char *buf, size_t len)
{
	struct drm_version v = {.name = buf, .name_len = len - 1};

	memset(buf, 0, len);
	if (drm_ioctl(fd, DRM_IOCTL_VERSION, &v) != 0)
		wl_die("DRM_IOCTL_VERSION on fd %d", fd);
}
