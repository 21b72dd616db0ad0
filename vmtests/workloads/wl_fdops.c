/* SPDX-License-Identifier: MIT */
/* Workload library: opening, duplicating and closing DRM and dma-buf fds. */
#define _GNU_SOURCE
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static void flags_string(int oflags, char *buf, size_t len)
{
	const char *acc = (oflags & O_ACCMODE) == O_RDONLY   ? "O_RDONLY"
			  : (oflags & O_ACCMODE) == O_WRONLY ? "O_WRONLY"
							     : "O_RDWR";

	snprintf(buf, len, "%s%s", acc, (oflags & O_NONBLOCK) ? "|O_NONBLOCK" : "");
}

int wl_open(const char *path, int oflags)
{
	struct wl_file *f;
	struct stat st;
	int fd = open(path, oflags);

	if (fd < 0)
		wl_die("open %s", path);
	if (fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode))
		wl_die("%s is not a character device", path);
	if (wl.nfiles == WL_MAX_FILES)
		wl_die("model: too many files");
	f = &wl.files[wl.nfiles];
	memset(f, 0, sizeof(*f));
	snprintf(f->label, sizeof(f->label), "%d.%d", (int)getpid(), wl.nextlabel++);
	snprintf(f->path, sizeof(f->path), "%s", path);
	f->maj = major(st.st_rdev);
	f->min = minor(st.st_rdev);
	flags_string(oflags, f->flags, sizeof(f->flags));
	wl_driver_name(fd, f->driver, sizeof(f->driver));
	f->handles_known = true;
	f->changed_ns = wl_now_ns();
	wl_fd_add(fd, WL_FD_DRM, wl.nfiles, 0, (oflags & O_CLOEXEC) != 0);
	wl.nfiles++;
	return fd;
}

static int dup_model(int oldfd, int newfd, bool cloexec)
{
	struct wl_fd old = *wl_fd_find(oldfd);

	wl_fd_remove(newfd); /* dup2/dup3 over a known fd closes it */
	wl_fd_add(newfd, old.kind, old.file, old.handle, cloexec);
	return newfd;
}

static void need_fd(int fd)
{
	errno = 0;
	if (!wl_fd_find(fd))
		wl_die("fd %d is not in the model", fd);
}

int wl_dup(int fd)
{
	int n;

	need_fd(fd);
	n = dup(fd);
	if (n < 0)
		wl_die("dup %d", fd);
	return dup_model(fd, n, false);
}

int wl_dupfd(int fd, int minfd, bool cloexec)
{
	int n;

	need_fd(fd);
	n = fcntl(fd, cloexec ? F_DUPFD_CLOEXEC : F_DUPFD, minfd);
	if (n < 0)
		wl_die("fcntl F_DUPFD%s %d", cloexec ? "_CLOEXEC" : "", fd);
	return dup_model(fd, n, cloexec);
}

int wl_dup3(int fd, int newfd, bool cloexec)
{
	int n;

	need_fd(fd);
	n = cloexec ? dup3(fd, newfd, O_CLOEXEC) : dup2(fd, newfd);
	if (n != newfd)
		wl_die("dup%s %d -> %d", cloexec ? "3" : "2", fd, newfd);
	return dup_model(fd, n, cloexec);
}

void wl_close(int fd)
{
	need_fd(fd);
	if (close(fd) != 0)
		wl_die("close %d", fd);
	wl_fd_remove(fd);
}

void wl_close_range(unsigned first, unsigned last, bool cloexec_only)
{
	if (close_range(first, last, cloexec_only ? CLOSE_RANGE_CLOEXEC : 0) != 0)
		wl_die("close_range %u..%u", first, last);
	for (int i = 0; i < wl.nfds; i++) {
		struct wl_fd *e = &wl.fds[i];

		if ((unsigned)e->fd < first || (unsigned)e->fd > last)
			continue;
		if (cloexec_only) {
			e->cloexec = true;
		} else {
			wl_fd_remove(e->fd);
			i--;
		}
	}
}

void wl_set_cloexec(int fd, bool on)
{
	need_fd(fd);
	if (fcntl(fd, F_SETFD, on ? FD_CLOEXEC : 0) != 0)
		wl_die("fcntl F_SETFD %d", fd);
	wl_fd_find(fd)->cloexec = on;
}

void wl_ioctl_cloexec(int fd, bool on)
{
	need_fd(fd);
	if (ioctl(fd, on ? FIOCLEX : FIONCLEX) != 0)
		wl_die("ioctl %s %d", on ? "FIOCLEX" : "FIONCLEX", fd);
	wl_fd_find(fd)->cloexec = on;
}
