/* SPDX-License-Identifier: MIT */
/*
 * The demo's workload: a "transcoder" that draws frames into GEM buffers on vgem.
 * It opens /dev/dri/card0, creates four 256x256 dumb buffers, destroys one (a hole in the
 * handle table), exports one as a dma-buf, maps the others and, every 200 ms, draws frame N
 * into buffer N % 3 (every pixel = N) after checking that the buffer still holds frame N - 3.
 * A checkpoint/restore in between must not change a pixel, a handle or an address: the
 * process prints one line per second and exits 1 at the first wrong pixel or handle.
 * usage: wl_demo [SECONDS]   about SECONDS worth of frames (5 a second); 0 or none: until killed
 */
#include <drm.h>
#include <drm_mode.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define W    256
#define H    256
#define NBUF 3

static void die(const char *what)
{
	printf("wl_demo: FAILED: %s (%s)\n", what, strerror(errno));
	fflush(stdout);
	exit(1);
}

static uint32_t create(int fd, uint64_t *size)
{
	struct drm_mode_create_dumb c = {.height = H, .width = W, .bpp = 32};
	if (ioctl(fd, DRM_IOCTL_MODE_CREATE_DUMB, &c))
		die("MODE_CREATE_DUMB");
	*size = c.size;
	return c.handle;
}

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : 0;
	int fd = open("/dev/dri/card0", O_RDWR | O_CLOEXEC);
	uint32_t handle[NBUF], spare, gone;
	uint32_t *px[NBUF];
	uint64_t size = 0;

	if (fd < 0)
		die("open /dev/dri/card0");
	handle[0] = create(fd, &size); /* 1 */
	gone = create(fd, &size);      /* 2: destroyed below, a hole */
	handle[1] = create(fd, &size); /* 3 */
	handle[2] = create(fd, &size); /* 4 */
	spare = create(fd, &size);     /* 5: exported, not mapped */
	struct drm_mode_destroy_dumb d = {.handle = gone};
	if (ioctl(fd, DRM_IOCTL_MODE_DESTROY_DUMB, &d))
		die("MODE_DESTROY_DUMB");
	struct drm_prime_handle ph = {.handle = spare, .flags = DRM_CLOEXEC | DRM_RDWR};
	if (ioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &ph))
		die("PRIME_HANDLE_TO_FD");
	for (int i = 0; i < NBUF; i++) {
		struct drm_mode_map_dumb m = {.handle = handle[i]};
		if (ioctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &m))
			die("MODE_MAP_DUMB");
		px[i] = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, m.offset);
		if (px[i] == MAP_FAILED)
			die("mmap");
	}
	printf("wl_demo: pid %d, card0 fd %d, handles %u %u %u (hole at %u), dma-buf fd %d of handle %u\n", getpid(),
	       fd, handle[0], handle[1], handle[2], gone, ph.fd, spare);
	for (int i = 0; i < NBUF; i++)
		printf("wl_demo: buffer %u (%llu bytes) mapped at %p\n", handle[i], (unsigned long long)size,
		       (void *)px[i]);
	fflush(stdout);

	struct timespec tick = {0, 200 * 1000 * 1000};
	for (uint32_t frame = 0; seconds <= 0 || frame < (uint32_t)seconds * 5; frame++) {
		uint32_t *p = px[frame % NBUF];
		uint32_t expect = frame >= NBUF ? frame - NBUF : 0;
		for (size_t i = 0; i < size / 4; i++) {
			if (p[i] != expect) {
				printf("wl_demo: FAILED: frame %u: buffer %u pixel %zu is %u, expected %u\n", frame,
				       handle[frame % NBUF], i, p[i], expect);
				return 1;
			}
		}
		for (size_t i = 0; i < size / 4; i++)
			p[i] = frame;
		/* the hole stays a hole and the live handles stay live */
		struct drm_mode_map_dumb probe = {.handle = gone};
		if (ioctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &probe) == 0 || errno != ENOENT) {
			printf("wl_demo: FAILED: handle %u exists again\n", gone);
			return 1;
		}
		if (frame % 5 == 4) {
			printf("wl_demo: frame %u drawn; every pixel of the last %d frames intact\n", frame, NBUF);
			fflush(stdout);
		}
		nanosleep(&tick, NULL);
	}
	printf("wl_demo: done, all frames intact\n");
	return 0;
}
