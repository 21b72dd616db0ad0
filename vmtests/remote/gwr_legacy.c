/* SPDX-License-Identifier: MIT */
/*
 * gwr_legacy DIR: a trigger for vmtests/remote/run.sh's legacy case. Opens the i915 render
 * node, creates a 64 KiB buffer, maps it with the legacy GEM_MMAP ioctl (the object's shmem
 * file, "/i915 (deleted)" in /proc/PID/maps), fills it with a pattern and writes
 * "FD HANDLE ADDR SIZE" to DIR/legacy.info, then waits for DIR/go. Afterwards the mapping must
 * still be the buffer's: the pattern is read back through the mapping, and a byte written
 * through it must be what PREAD of the buffer returns (a private copy would fail that).
 * Exits 0 when all holds, 1 with a line on stderr otherwise.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <i915_drm.h>
#include <xf86drm.h>

#define SIZE (64 << 10)

static int open_i915(void)
{
	DIR *d = opendir("/dev/dri");
	struct dirent *e;
	char path[300];
	int fd = -1;
	while (d && fd < 0 && (e = readdir(d))) {
		if (strncmp(e->d_name, "renderD", 7))
			continue;
		snprintf(path, sizeof path, "/dev/dri/%s", e->d_name);
		int f = open(path, O_RDWR | O_CLOEXEC);
		drmVersionPtr v = f >= 0 ? drmGetVersion(f) : NULL;
		if (v && !strcmp(v->name, "i915"))
			fd = f;
		else if (f >= 0)
			close(f);
		drmFreeVersion(v);
	}
	if (d)
		closedir(d);
	return fd;
}

int main(int argc, char **argv)
{
	char path[512];
	if (argc != 2) {
		fprintf(stderr, "usage: gwr_legacy DIR\n");
		return 2;
	}
	int fd = open_i915();
	if (fd < 0) {
		fprintf(stderr, "gwr_legacy: no i915 render node\n");
		return 1;
	}
	struct drm_i915_gem_create c = {.size = SIZE};
	if (drmIoctl(fd, DRM_IOCTL_I915_GEM_CREATE, &c)) {
		fprintf(stderr, "gwr_legacy: GEM_CREATE: %s\n", strerror(errno));
		return 1;
	}
	struct drm_i915_gem_mmap m = {.handle = c.handle, .size = SIZE};
	if (drmIoctl(fd, DRM_IOCTL_I915_GEM_MMAP, &m)) {
		fprintf(stderr, "gwr_legacy: GEM_MMAP: %s\n", strerror(errno));
		return 1;
	}
	uint8_t *p = (uint8_t *)(uintptr_t)m.addr_ptr;
	for (int i = 0; i < SIZE; i++)
		p[i] = (uint8_t)(i * 7 + 3);
	/* written whole, then renamed: the harness reads it as soon as it exists */
	char tmp[sizeof path + 8];
	snprintf(path, sizeof path, "%s/legacy.info", argv[1]);
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return 1;
	fprintf(f, "%d %u 0x%llx %d\n", fd, c.handle, (unsigned long long)m.addr_ptr, SIZE);
	if (fclose(f) || rename(tmp, path))
		return 1;
	snprintf(path, sizeof path, "%s/go", argv[1]);
	while (access(path, F_OK) != 0)
		usleep(20000);

	for (int i = 0; i < SIZE; i++)
		if (p[i] != (uint8_t)(i * 7 + 3)) {
			fprintf(stderr, "gwr_legacy: byte %d is 0x%02x, not 0x%02x\n", i, p[i], (uint8_t)(i * 7 + 3));
			return 1;
		}
	p[100] = 0xee;
	uint8_t back = 0;
	struct drm_i915_gem_pread pr = {.handle = c.handle, .offset = 100, .size = 1, .data_ptr = (uintptr_t)&back};
	if (drmIoctl(fd, DRM_IOCTL_I915_GEM_PREAD, &pr)) {
		fprintf(stderr, "gwr_legacy: PREAD: %s\n", strerror(errno));
		return 1;
	}
	if (back != 0xee) {
		fprintf(stderr,
			"gwr_legacy: a write through the mapping is not in the buffer (PREAD 0x%02x): not shared\n",
			back);
		return 1;
	}
	printf("gwr_legacy: mapping intact and still the buffer's\n");
	return 0;
}
