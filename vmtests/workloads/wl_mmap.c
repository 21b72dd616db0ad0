/* SPDX-License-Identifier: MIT */
/* Workload library: mappings of DRM files (dumb buffers through their fake offsets). */
#define _GNU_SOURCE
#include "wl.h"

#include <drm.h>
#include <drm_mode.h>
#include <errno.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

uint64_t wl_map_offset(int fd, uint32_t handle)
{
	struct drm_mode_map_dumb m = {.handle = handle};
	struct wl_file *f = wl_file_of_fd(fd);

	if (ioctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &m) != 0)
		wl_die("MODE_MAP_DUMB %u on fd %d", handle, fd);
	for (int i = 0; i < f->ngrants; i++)
		if (f->grants[i].handle == handle)
			return m.offset;
	f->grants[f->ngrants++] = (struct wl_grant){.offset = m.offset, .handle = handle};
	return m.offset;
}

void *wl_mmap(int fd, uint32_t handle, uint64_t length, int prot)
{
	struct wl_file *f = wl_file_of_fd(fd);
	uint64_t off = wl_map_offset(fd, handle);
	void *p;

	if (wl.nmaps == WL_MAX_MAPS)
		wl_die("model: too many mappings");
	p = mmap(NULL, length, prot, MAP_SHARED, fd, (off_t)off);
	if (p == MAP_FAILED)
		wl_die("mmap handle %u (%llu bytes at offset %#llx) of fd %d", handle, (unsigned long long)length,
		       (unsigned long long)off, fd);
	wl.maps[wl.nmaps++] = (struct wl_map){.start = (uintptr_t)p,
					      .length = length,
					      .prot = prot,
					      .shared = true,
					      .file = (int)(f - wl.files),
					      .offset = off,
					      .handle = handle};
	return p;
}

void wl_munmap(void *addr, uint64_t length)
{
	if (munmap(addr, length) != 0)
		wl_die("munmap %p+%llu", addr, (unsigned long long)length);
	wl_maps_cut((uintptr_t)addr, length);
}

void *wl_reserve(uint64_t length)
{
	void *p = mmap(NULL, length, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		wl_die("reserve %llu bytes", (unsigned long long)length);
	return p;
}

/* mremap of one whole modelled mapping (shrink in place, or move). */
void *wl_mremap(void *old, uint64_t old_len, uint64_t new_len, int flags, void *new_addr)
{
	struct wl_map m = {0};
	bool found = false;
	void *p;

	for (int i = 0; i < wl.nmaps; i++)
		if (wl.maps[i].start == (uintptr_t)old && wl.maps[i].length == old_len) {
			m = wl.maps[i];
			found = true;
		}
	errno = 0;
	if (!found)
		wl_die("mremap: %p+%llu is not a whole modelled mapping", old, (unsigned long long)old_len);
	p = mremap(old, old_len, new_len, flags, new_addr);
	if (p == MAP_FAILED)
		wl_die("mremap %p+%llu -> %llu", old, (unsigned long long)old_len, (unsigned long long)new_len);
	wl_maps_cut((uintptr_t)old, old_len);
	if (new_addr && (flags & MREMAP_FIXED))
		wl_maps_cut((uintptr_t)new_addr, new_len); /* whatever was there is replaced */
	m.start = (uintptr_t)p;
	m.length = new_len;
	wl.maps[wl.nmaps++] = m;
	return p;
}
