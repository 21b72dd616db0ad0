/* SPDX-License-Identifier: MIT */
/*
 * An application that survives a stateless checkpoint as the seed's encoder would: it keeps a
 * dumb buffer mapped on the card node (and, with PRIME, a dma-buf fd of a second one), writes a
 * frame counter into it in a loop, and on the restore signal (SIGUSR2: GPUWATCH_RESTORE_SIGNAL)
 * looks at what came back, drops its old GPU state and builds it again, then carries on.
 *
 *   wl_stateless DIR [--poll]   (WL_CARD / WL_RENDER name the nodes, guest/kms.sh)
 *
 * WL_I915=1: the buffers are i915 GEM_CREATE objects on the first render node whose driver is
 * "i915" (the gwi915 test driver), mapped through GEM_MMAP_OFFSET (WB): the mapping is
 * anon_inode:i915.gem, which gpuwatch converts for the dump; no second node is opened.
 *
 * --poll: also find out without the signal, as an application that is not told would: every 10
 * frames it asks whether its handle still exists (MAP_DUMB), and rebuilds when it does not
 * (a container runtime driving CRIU 3.17/3.18, which runs no action script, sends no signal).
 *
 * DIR/pid.parent its pid (the crwl_* helpers of guest/criu.sh find it there)
 * DIR/before     what it holds: "card_fd N", "card_flags F", "render_fd N", "render_flags F",
 *                "dmabuf_fd N", "handle H", "map ADDR", "size S" (one per line)
 * DIR/ready      written once that state is built
 * DIR/after      written on each signal, before rebuilding, "key value" lines of what it found:
 *                told_by (signal, or handle-gone with --poll), card_fd_ok/render_fd_ok/dmabuf_fd_ok (the same number is still a file of the
 *                same kind, with the same flags: 1/0), old_handle (gone, or present), map_zero
 *                (1: the untouched part of the old mapping reads zeros), map_name (the
 *                /proc/self/maps name at the old address), dmabuf_size
 * DIR/rebuilt.N  written after the N-th rebuild: "handle H" of the new buffer, "frames F"
 * DIR/progress   "generation G frames F", rewritten every 20 frames
 * Exit: SIGTERM ends it (exit 0). Any ioctl that fails where it must not: exit 2 with a line.
 */
#include <drm.h>
#include <drm_mode.h>
#include <i915_drm.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#define W    256
#define H    64
#define SIZE (W * H * 4) /* 64 KiB: the last page is never written by the loop */

static int i915; /* WL_I915=1 */
static volatile sig_atomic_t restored, stop;
static const char *told_by = "signal";
static const char *dir;

static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "wl_stateless: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, " (%s)\n", strerror(errno));
	va_end(ap);
	exit(2);
}

static void put(const char *name, const char *text)
{
	char path[512], tmp[520];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0 || rename(tmp, path) != 0)
		die("cannot write %s", path);
}

static int xioctl(int fd, unsigned long req, void *arg)
{
	int r;
	do
		r = ioctl(fd, req, arg);
	while (r < 0 && (errno == EINTR || errno == EAGAIN));
	return r;
}

static uint32_t create(int fd)
{
	if (i915) {
		struct drm_i915_gem_create c = {.size = SIZE};
		if (xioctl(fd, DRM_IOCTL_I915_GEM_CREATE, &c))
			die("I915_GEM_CREATE");
		return c.handle;
	}
	struct drm_mode_create_dumb c = {.height = H, .width = W, .bpp = 32};
	if (xioctl(fd, DRM_IOCTL_MODE_CREATE_DUMB, &c))
		die("CREATE_DUMB");
	return c.handle;
}

/* 0 when the handle exists in the file, else errno (ENOENT: gone) */
static int handle_missing(int fd, uint32_t handle)
{
	if (i915) {
		struct drm_i915_gem_busy b = {.handle = handle};
		return xioctl(fd, DRM_IOCTL_I915_GEM_BUSY, &b) ? errno : 0;
	}
	struct drm_mode_map_dumb q = {.handle = handle};
	return xioctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &q) ? errno : 0;
}

static uint64_t map_offset(int fd, uint32_t handle)
{
	if (i915) {
		struct drm_i915_gem_mmap_offset m = {.handle = handle, .flags = I915_MMAP_OFFSET_WB};
		if (xioctl(fd, DRM_IOCTL_I915_GEM_MMAP_OFFSET, &m))
			die("I915_GEM_MMAP_OFFSET of handle %u", handle);
		return m.offset;
	}
	struct drm_mode_map_dumb m = {.handle = handle};
	if (xioctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &m))
		die("MAP_DUMB of handle %u", handle);
	return m.offset;
}

/* the first render node whose driver is i915 */
static const char *i915_node(void)
{
	static char path[64];
	for (int n = 128; n < 192; n++) {
		snprintf(path, sizeof path, "/dev/dri/renderD%d", n);
		int fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		char name[32] = "";
		struct drm_version v = {.name = name, .name_len = sizeof name - 1};
		int ok = ioctl(fd, DRM_IOCTL_VERSION, &v) == 0 && strcmp(name, "i915") == 0;
		close(fd);
		if (ok)
			return path;
	}
	errno = ENOENT;
	die("no render node of driver i915");
	return NULL;
}

static uint32_t *map(int fd, uint32_t handle)
{
	void *p = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)map_offset(fd, handle));
	if (p == MAP_FAILED)
		die("mmap of handle %u", handle);
	return p;
}

/* fd is still a file of the kind it was (DRM node of the same rdev, or a dma-buf) with flags */
static int same_fd(int fd, dev_t rdev, int flags)
{
	struct stat st;
	if (fd < 0)
		return 1;
	if (fstat(fd, &st) != 0 || fcntl(fd, F_GETFL) != flags)
		return 0;
	if (rdev)
		return S_ISCHR(st.st_mode) && major(st.st_rdev) == 226;
	char link[64], buf[128];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, buf, sizeof buf - 1);
	return n > 0 && strncmp(buf, "/dmabuf:", 8) == 0;
}

static void map_name(uintptr_t addr, char *out, size_t len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	snprintf(out, len, "(none)");
	while (f && fgets(line, sizeof line, f)) {
		unsigned long s, e;
		int pos = 0;
		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &s, &e, &pos) >= 2 && addr >= s && addr < e) {
			line[strcspn(line, "\n")] = 0;
			snprintf(out, len, "%s", pos ? line + pos : "");
			break;
		}
	}
	if (f)
		fclose(f);
}

static void on_signal(int sig)
{
	if (sig == SIGUSR2)
		restored = 1;
	else
		stop = 1;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return fprintf(stderr, "usage: wl_stateless DIR\n"), 2;
	dir = argv[1];
	int poll_handle = argc > 2 && strcmp(argv[2], "--poll") == 0;
	i915 = getenv("WL_I915") && strcmp(getenv("WL_I915"), "1") == 0;
	const char *card = getenv("WL_CARD") && *getenv("WL_CARD") ? getenv("WL_CARD") : "/dev/dri/card0";
	const char *render = getenv("WL_RENDER") && *getenv("WL_RENDER") ? getenv("WL_RENDER") : NULL;
	if (!render && !getenv("WL_CARD"))
		render = "/dev/dri/renderD128";
	if (i915) {
		card = i915_node();
		render = NULL;
	}
	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGUSR2, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	char text[1024];
	snprintf(text, sizeof text, "%d\n", (int)getpid());
	put("pid.parent", text);

	int cfd = open(card, O_RDWR | O_CLOEXEC);
	if (cfd < 0)
		die("open %s", card);
	int rfd = render ? open(render, O_RDWR | O_NONBLOCK) : -1;
	if (render && rfd < 0)
		die("open %s", render);
	struct stat st;
	fstat(cfd, &st);
	dev_t crdev = st.st_rdev, rrdev = 0;
	if (rfd >= 0 && fstat(rfd, &st) == 0)
		rrdev = st.st_rdev;
	int cflags = fcntl(cfd, F_GETFL), rflags = rfd >= 0 ? fcntl(rfd, F_GETFL) : 0;

	uint32_t handle = create(cfd);
	uint32_t *px = map(cfd, handle);
	memset(px, 0xa5, SIZE);
	/* a second buffer exported as a dma-buf fd, where the driver has PRIME */
	int dfd = -1, dflags = 0;
	struct drm_prime_handle ph = {.handle = create(cfd), .flags = DRM_CLOEXEC | DRM_RDWR};
	if (xioctl(cfd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &ph) == 0) {
		dfd = ph.fd;
		dflags = fcntl(dfd, F_GETFL);
	}
	snprintf(text, sizeof text,
		 "card_fd %d\ncard_flags %d\nrender_fd %d\nrender_flags %d\ndmabuf_fd %d\nhandle %u\nmap %p\nsize %d\n",
		 cfd, cflags, rfd, rflags, dfd, handle, (void *)px, SIZE);
	put("before", text);
	put("ready", "1\n");

	unsigned long frames = 0, generation = 0;
	struct timespec tick = {0, 20 * 1000 * 1000};
	while (!stop) {
		if (poll_handle && !restored && frames % 10 == 0) {
			if (handle_missing(cfd, handle) == ENOENT) {
				restored = 1;
				told_by = "handle-gone";
			}
		}
		if (restored) {
			restored = 0;
			/* what came back */
			int miss = handle_missing(cfd, handle), old_gone = miss == ENOENT || miss == EINVAL;
			int zero = 1;
			for (size_t i = (SIZE - 4096) / 4; i < SIZE / 4; i++)
				zero &= px[i] == 0;
			char name[256];
			map_name((uintptr_t)px, name, sizeof name);
			long long dsize = dfd >= 0 ? (long long)lseek(dfd, 0, SEEK_END) : -1;
			snprintf(text, sizeof text,
				 "told_by %s\ncard_fd_ok %d\nrender_fd_ok %d\ndmabuf_fd_ok %d\nold_handle %s\nmap_zero "
				 "%d\n"
				 "map_name %s\ndmabuf_size %lld\n",
				 told_by, same_fd(cfd, crdev, cflags), rfd < 0 || same_fd(rfd, rrdev, rflags),
				 same_fd(dfd, 0, dflags), old_gone ? "gone" : "present", zero, name, dsize);
			put("after", text);
			told_by = "signal";
			/* drop the old state, build it again */
			munmap(px, SIZE);
			if (!old_gone) {
				struct drm_gem_close d = {.handle = handle};
				xioctl(cfd, DRM_IOCTL_GEM_CLOSE, &d);
			}
			handle = create(cfd);
			px = map(cfd, handle);
			memset(px, 0xa5, SIZE);
			generation++;
			snprintf(text, sizeof text, "handle %u\nframes %lu\n", handle, frames);
			char name2[32];
			snprintf(name2, sizeof name2, "rebuilt.%lu", generation);
			put(name2, text);
		}
		/* a frame: the counter in the first words, checked back */
		for (int i = 0; i < 64; i++)
			px[i] = (uint32_t)frames;
		for (int i = 0; i < 64; i++)
			if (px[i] != (uint32_t)frames)
				die("frame %lu did not read back", frames);
		if (++frames % 20 == 0) {
			snprintf(text, sizeof text, "generation %lu frames %lu\n", generation, frames);
			put("progress", text);
		}
		nanosleep(&tick, NULL);
	}
	return 0;
}
