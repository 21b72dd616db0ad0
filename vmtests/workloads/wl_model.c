/* SPDX-License-Identifier: MIT */
/* Workload library: bookkeeping of the model (no syscalls here). */
#include "wl.h"

#include <errno.h>
#include <string.h>

struct wl_fd *wl_fd_find(int fd)
{
	for (int i = 0; i < wl.nfds; i++)
		if (wl.fds[i].fd == fd)
			return &wl.fds[i];
	return NULL;
}

struct wl_file *wl_file_of_fd(int fd)
{
	struct wl_fd *e = wl_fd_find(fd);

	if (!e || e->kind != WL_FD_DRM) {
		errno = 0;
		wl_die("fd %d is not a DRM fd of the model", fd);
	}
	return &wl.files[e->file];
}

struct wl_handle *wl_handle_find(struct wl_file *f, uint32_t handle)
{
	for (int i = 0; i < f->nhandles; i++)
		if (f->handles[i].handle == handle)
			return &f->handles[i];
	return NULL;
}

void wl_handle_add(struct wl_file *f, uint32_t handle, uint64_t size, const char *origin)
{
	struct wl_handle *h;

	errno = 0;
	if (wl_handle_find(f, handle))
		wl_die("model: handle %u already in file %s", handle, f->label);
	if (f->nhandles == WL_MAX_HANDLES)
		wl_die("model: too many handles");
	h = &f->handles[f->nhandles++];
	h->handle = handle;
	h->size = size;
	strncpy(h->origin, origin, sizeof(h->origin) - 1);
	f->changed_ns = wl_now_ns();
}

void wl_handle_remove(struct wl_file *f, uint32_t handle)
{
	int fi = (int)(f - wl.files);
	struct wl_handle *h = wl_handle_find(f, handle);

	errno = 0;
	if (!h)
		wl_die("model: no handle %u in file %s", handle, f->label);
	*h = f->handles[--f->nhandles];
	for (int i = 0; i < f->ngrants; i++)
		if (f->grants[i].handle == handle)
			f->grants[i--] = f->grants[--f->ngrants];
	/* a mapping outlives the handle (it holds the object): it is no handle's any more */
	for (int i = 0; i < wl.nmaps; i++)
		if (wl.maps[i].file == fi && wl.maps[i].handle == (int64_t)handle)
			wl.maps[i].handle = -1;
	f->changed_ns = wl_now_ns();
}

void wl_fd_add(int fd, int kind, int file, uint32_t handle, bool cloexec)
{
	errno = 0;
	if (wl_fd_find(fd))
		wl_die("model: fd %d already known", fd);
	if (wl.nfds == WL_MAX_FDS)
		wl_die("model: too many fds");
	wl.fds[wl.nfds++] = (struct wl_fd){.fd = fd, .kind = kind, .file = file, .handle = handle, .cloexec = cloexec};
}

void wl_fd_remove(int fd)
{
	struct wl_fd *e = wl_fd_find(fd);

	if (e)
		*e = wl.fds[--wl.nfds];
}

/* Remove [start, start+length) from the modelled mappings, splitting those it cuts. */
void wl_maps_cut(uint64_t start, uint64_t length)
{
	uint64_t end = start + length;

	for (int i = 0; i < wl.nmaps; i++) {
		struct wl_map m = wl.maps[i];
		uint64_t mend = m.start + m.length;

		if (end <= m.start || start >= mend)
			continue;
		wl.maps[i--] = wl.maps[--wl.nmaps];
		if (m.start < start) { /* head survives */
			struct wl_map head = m;
			head.length = start - m.start;
			wl.maps[wl.nmaps++] = head;
		}
		if (end < mend) { /* tail survives */
			struct wl_map tail = m;
			tail.start = end;
			tail.length = mend - end;
			tail.offset = m.offset + (end - m.start);
			if (wl.nmaps == WL_MAX_MAPS)
				wl_die("model: too many mappings");
			wl.maps[wl.nmaps++] = tail;
		}
	}
}
