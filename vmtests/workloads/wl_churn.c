/* SPDX-License-Identifier: MIT */
/*
 * Short-lived DRM processes (guest/churn.sh): `wl_churn DIR N [PAR]` forks N children, at most
 * PAR (2) at a time. Each opens the card node, creates a dumb buffer, maps it, writes to it,
 * unmaps it, dup()s the fd, closes everything and exits. Writes DIR/churn.<N> with the number
 * of children that failed ("0" when all did their work) and exits 0; a child that fails says
 * why on stderr.
 */
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <drm.h>
#include <drm_mode.h>

static int child(void)
{
	struct drm_mode_create_dumb c = {.width = 64, .height = 64, .bpp = 32};
	struct drm_mode_map_dumb m = {0};
	struct drm_gem_close gc = {0};
	int fd = open(WL_CARD, O_RDWR | O_CLOEXEC), d;
	void *p;

	if (fd < 0 || ioctl(fd, DRM_IOCTL_MODE_CREATE_DUMB, &c))
		return perror("open/create"), 1;
	m.handle = c.handle;
	if (ioctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &m))
		return perror("map_dumb"), 1;
	p = mmap(NULL, c.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)m.offset);
	if (p == MAP_FAILED)
		return perror("mmap"), 1;
	memset(p, 0x5a, c.size);
	munmap(p, c.size);
	d = dup(fd);
	gc.handle = c.handle;
	if (d < 0 || ioctl(d, DRM_IOCTL_GEM_CLOSE, &gc))
		return perror("dup/gem_close"), 1;
	close(d);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	long n, par, running = 0, failed = 0;
	char name[64], text[32];
	int st;

	wl_init(argc, argv);
	if (argc < 3 || (n = strtol(argv[2], NULL, 10)) <= 0)
		wl_die("usage: wl_churn DIR N [PAR]");
	par = argc > 3 ? strtol(argv[3], NULL, 10) : 2;
	if (par <= 0)
		par = 1;
	for (long i = 0; i < n || running > 0;) {
		if (i < n && running < par) {
			pid_t p = fork();

			if (p < 0)
				wl_die("fork");
			if (p == 0)
				_exit(child());
			running++;
			i++;
			continue;
		}
		if (wait(&st) < 0)
			wl_die("wait");
		running--;
		failed += !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	snprintf(name, sizeof(name), "churn.%ld", n);
	snprintf(text, sizeof(text), "%ld\n", failed);
	wl_write_file(name, text);
	return 0;
}
