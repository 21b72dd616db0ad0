/* SPDX-License-Identifier: MIT */
/* Workload library: errors, clock, start-up. */
#include "wl.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct wl_state wl;

void wl_die(const char *fmt, ...)
{
	va_list ap;
	int err = errno;

	fprintf(stderr, "workload %d: ", (int)getpid());
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (err)
		fprintf(stderr, " (errno %d: %s)", err, strerror(err));
	fputc('\n', stderr);
	exit(2);
}

uint64_t wl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void wl_init(int argc, char **argv)
{
	struct stat st;
	const char *sc = getenv("WL_SELFCHECK");
	ssize_t n;

	if (argc < 2 || stat(argv[1], &st) != 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "usage: %s DIR [options]  (DIR: an existing directory for truth and phase files)\n",
			argv[0]);
		exit(2);
	}
	if (strlen(argv[1]) >= sizeof(wl.dir))
		wl_die("directory path too long: %s", argv[1]);
	strcpy(wl.dir, argv[1]);
	wl.selfcheck = sc && strcmp(sc, "1") == 0;
	n = readlink("/proc/self/exe", wl.exe, sizeof(wl.exe) - 1);
	if (n < 0)
		wl_die("readlink /proc/self/exe");
	wl.exe[n] = '\0';
	setvbuf(stdout, NULL, _IOLBF, 0);
}

void wl_write_file(const char *name, const char *text)
{
	char path[300], tmp[310];
	FILE *o;

	snprintf(path, sizeof(path), "%s/%s", wl.dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	o = fopen(tmp, "we");
	if (!o || fputs(text, o) < 0 || fclose(o) != 0 || rename(tmp, path) != 0)
		wl_die("write %s", path);
}

const char *wl_card(void)
{
	const char *p = getenv("WL_CARD");
	return p && *p ? p : "/dev/dri/card0";
}

/* A driver without a render node (bochs-drm: WL_CARD set, WL_RENDER empty): its card node
 * again, so that the workload still holds a file more */
const char *wl_render(void)
{
	const char *p = getenv("WL_RENDER");
	if (p && *p)
		return p;
	p = getenv("WL_CARD");
	return p && *p ? p : "/dev/dri/renderD128";
}
