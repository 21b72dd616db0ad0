/* SPDX-License-Identifier: MIT */
/*
 * Scratch workload for the CRIU plugin (vmtests/guest/criu_scratch.sh): builds DRM state on
 * vgem, waits to be dumped and restored, then checks that everything came back.
 *
 *   A = card0: dumb handles 1..5, 2 and 4 destroyed (holes); 1 and 3 mapped and filled;
 *       5 filled through a mapping that is gone (contents only in the buffer).
 *   E = dma-buf of A.3 (cloexec); R = renderD128 importing E (R.1 = A.3), then two buffers of
 *       a card0 file T closed since (R.2, R.3), R.2 closed again: R holds the only handle of
 *       R.3 (made again through a card node at restore) and a hole (filled through one).
 *   B = card0 again, importing A.5 (B.1 = A.5), B.1 mapped through B, a vgem fence attached
 *       to B.1 and signalled (ioctls gpuwatch does not decode: the dump lists them as lost).
 *   D = card0: 1 mapped; 2 mapped then GEM_CLOSEd (the mapping keeps the buffer); then
 *       GEM_OPEN of D.1's flink name, which takes number 2 again (D.2 = D.1, one buffer).
 *       Where flink is refused (EACCES: an unprivileged container is not DRM-authenticated),
 *       D.2 is a new buffer of D.1's size instead, and a note says so.
 *   F = card0 with 1 mapped, then F closed: the file lives on in the mapping only.
 *   W = a window of A.3: mapped, then its first page unmapped (the mapping starts mid-buffer).
 *   child (fork): shares A, B, R, E, D and the mappings; maps A.1 a second time and writes
 *       into it; opens its own card0 C: handles 1, 2, 1 destroyed, 2 mapped, then E imported
 *       (C.1 = A.3, a buffer shared across processes).
 * D.2, F.1 and W cannot come back exactly (their contents or sharing are not reachable at
 * dump, or the driver refuses the window): they are reported in DIR/notes.<pid>, not failed.
 * usage: wl_criu_scratch DIR [--big=MiB]. It speaks the workloads' phase protocol (wl.h,
 * wl_sync; pids in DIR/pid.parent and DIR/pid.child):
 *   phase 1 (ready.1)  built; the harness dumps and restores, then go.1. While it waits for
 *                      go.1, DIR/rewrite makes the parent fill A.3 with a new pattern and write
 *                      DIR/rewritten (the predump case: written after `criu pre-dump`, only the
 *                      final dump has it).
 *   each process checks itself: result.<pid> ("PASS" or "FAIL n"), result.<pid>.log (the
 *   failures), notes.<pid> (what could not come back exactly)
 *   phase 2 (ready.2)  both have reported; go.2 ends them. Exit status 0 when all is well.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <drm.h>
#include <drm_mode.h>

#include "wl.h"

static const char *dir;
static char failures[8192], notes[4096];
static int nfail;
static bool flinked;

static void die(const char *what)
{
	fprintf(stderr, "wl_criu_scratch: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void fail(const char *fmt, ...)
{
	va_list ap;
	size_t n = strlen(failures);
	va_start(ap, fmt);
	vsnprintf(failures + n, sizeof failures - n, fmt, ap);
	va_end(ap);
	n = strlen(failures);
	if (n < sizeof failures - 2)
		strcat(failures, "\n");
	nfail++;
}

static void note(const char *fmt, ...)
{
	va_list ap;
	size_t n = strlen(notes);
	va_start(ap, fmt);
	vsnprintf(notes + n, sizeof notes - n, fmt, ap);
	va_end(ap);
	n = strlen(notes);
	if (n < sizeof notes - 2)
		strcat(notes, "\n");
}

static uint32_t dumb(int fd, uint32_t w, uint32_t h, uint64_t *size)
{
	struct drm_mode_create_dumb c = {.width = w, .height = h, .bpp = 32};
	if (ioctl(fd, DRM_IOCTL_MODE_CREATE_DUMB, &c))
		die("CREATE_DUMB");
	*size = c.size;
	return c.handle;
}

static void destroy(int fd, uint32_t h)
{
	struct drm_mode_destroy_dumb d = {.handle = h};
	if (ioctl(fd, DRM_IOCTL_MODE_DESTROY_DUMB, &d))
		die("DESTROY_DUMB");
}

static void *map_at(int fd, uint32_t h, uint64_t size, void *hint)
{
	struct drm_mode_map_dumb m = {.handle = h};
	if (ioctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &m))
		die("MAP_DUMB");
	void *p = mmap(hint, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)m.offset);
	if (p == MAP_FAILED)
		die("mmap");
	return p;
}

static void *map(int fd, uint32_t h, uint64_t size)
{
	return map_at(fd, h, size, NULL);
}

static int export_(int fd, uint32_t h, int cloexec)
{
	struct drm_prime_handle p = {.handle = h, .flags = DRM_RDWR | (cloexec ? DRM_CLOEXEC : 0)};
	return ioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p) ? -errno : p.fd;
}

static uint32_t import(int fd, int dmabuf)
{
	struct drm_prime_handle p = {.fd = dmabuf};
	if (ioctl(fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &p))
		die("PRIME_FD_TO_HANDLE");
	return p.handle;
}

static void fill(void *p, uint64_t size, unsigned seed)
{
	for (uint64_t i = 0; i < size; i++)
		((unsigned char *)p)[i] = (unsigned char)(seed * 31 + i * 7 + (i >> 12));
}

/* bytes [from, size) of a buffer filled by fill(.., seed) */
static void check_fill_from(const char *what, const void *p, uint64_t from, uint64_t size, unsigned seed)
{
	for (uint64_t i = from; i < size; i++)
		if (((const unsigned char *)p)[i] != (unsigned char)(seed * 31 + i * 7 + (i >> 12))) {
			fail("%s: byte %llu is %#x, expected %#x", what, (unsigned long long)i,
			     ((const unsigned char *)p)[i], (unsigned char)(seed * 31 + i * 7 + (i >> 12)));
			return;
		}
}

static void check_fill(const char *what, const void *p, uint64_t size, unsigned seed)
{
	check_fill_from(what, p, 0, size, seed);
}

/* a handle is present with this size (PRIME export + lseek), or absent (ENOENT) */
static void check_handle(const char *file, int fd, uint32_t h, uint64_t size)
{
	int d = export_(fd, h, 1);
	if (size == 0) {
		if (d >= 0) {
			fail("%s: handle %u exists, should not", file, h);
			close(d);
		}
		return;
	}
	if (d < 0) {
		fail("%s: handle %u missing (%s)", file, h, strerror(-d));
		return;
	}
	off_t s = lseek(d, 0, SEEK_END);
	if ((uint64_t)s != size)
		fail("%s: handle %u is %lld bytes, expected %llu", file, h, (long long)s, (unsigned long long)size);
	close(d);
}

static unsigned long ino_of_handle(int fd, uint32_t h)
{
	struct stat st;
	int d = export_(fd, h, 1);
	if (d < 0)
		return 0;
	fstat(d, &st);
	close(d);
	return st.st_ino;
}

/* kind: 0 a vgem card node, 128 a vgem render node (any minor: the restore may pick another
 * node of the same driver), ~0u not a DRM node */
static void check_fd(const char *what, int fd, unsigned kind, int accmode, int cloexec)
{
	struct stat st;
	char name[32] = "";
	struct drm_version v = {.name = name, .name_len = sizeof name - 1};
	if (fstat(fd, &st)) {
		fail("%s: fd %d is closed", what, fd);
		return;
	}
	if (kind != ~0u &&
	    (!S_ISCHR(st.st_mode) || major(st.st_rdev) != 226 || (minor(st.st_rdev) >= 128) != (kind >= 128)))
		fail("%s: fd %d is not a DRM %s node", what, fd, kind >= 128 ? "render" : "card");
	if (kind != ~0u && (ioctl(fd, DRM_IOCTL_VERSION, &v) || strcmp(name, "vgem")))
		fail("%s: fd %d is not a vgem node (%s)", what, fd, name);
	int fl = fcntl(fd, F_GETFL), fdf = fcntl(fd, F_GETFD);
	if ((fl & O_ACCMODE) != accmode)
		fail("%s: fd %d access mode %d, expected %d", what, fd, fl & O_ACCMODE, accmode);
	if (!!(fdf & FD_CLOEXEC) != cloexec)
		fail("%s: fd %d cloexec %d, expected %d", what, fd, !!(fdf & FD_CLOEXEC), cloexec);
}

static void touch(const char *name)
{
	char p[512];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die(p);
	close(fd);
}

static int exists(const char *name)
{
	char p[512];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	return access(p, F_OK) == 0;
}

/* the child's cdone: its checks are done (the parent then checks what it wrote) */
static void wait_for(const char *name)
{
	struct timespec ts = {0, 50 * 1000 * 1000};
	while (!exists(name))
		nanosleep(&ts, NULL);
}

/* DIR/<kind>.<pid><suffix> */
static void write_file(const char *kind, const char *suffix, const char *text)
{
	char name[64];
	snprintf(name, sizeof name, "%s.%d%s", kind, (int)getpid(), suffix);
	wl_write_file(name, text);
}

static void report(void)
{
	char verdict[32];
	snprintf(verdict, sizeof verdict, nfail ? "FAIL %d\n" : "PASS\n", nfail);
	write_file("notes", "", notes);
	write_file("result", ".log", failures);
	write_file("result", "", verdict);
}

/* The fds are exactly `want` (and 0-2): a plugin fd left by the restore (>= 1000) fails too. */
static void check_fd_set(const int *want, int n)
{
	char p[64];
	for (int fd = 3; fd < 4096; fd++) {
		snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
		if (access(p, F_OK) != 0)
			continue;
		int expected = 0;
		for (int i = 0; i < n; i++)
			expected |= want[i] == fd;
		char link[256] = "";
		if (!expected) {
			ssize_t l = readlink(p, link, sizeof link - 1);
			link[l > 0 ? l : 0] = 0;
			fail("unexpected fd %d (%s)%s", fd, link, fd >= 1000 ? ", left by the restore" : "");
		}
	}
	for (int i = 0; i < n; i++)
		if (fcntl(want[i], F_GETFD) < 0)
			fail("fd %d is missing", want[i]);
}

/* a mapping that could not come back exactly: usable, and what it holds */
static void note_mapping(const char *what, unsigned char *p, uint64_t size, uint64_t from, unsigned seed)
{
	uint64_t good = 0, zero = 0;
	for (uint64_t i = from; i < size; i++) {
		good += p[i - from] == (unsigned char)(seed * 31 + i * 7 + (i >> 12));
		zero += p[i - from] == 0;
	}
	p[0] ^= 1; /* writable, no SIGBUS */
	p[0] ^= 1;
	note("%s: usable; %s", what,
	     good == size - from   ? "contents intact"
	     : zero == size - from ? "zero-filled"
				   : "contents differ");
}

/* a big buffer, filled and checked a word at a time (TCG is slow) */
static void fill_big(uint64_t *p, uint64_t size)
{
	for (uint64_t i = 0; i < size / 8; i++)
		p[i] = i * 0x9E3779B97F4A7C15ull ^ 0x5a5a;
}

static void check_big(const uint64_t *p, uint64_t size)
{
	for (uint64_t i = 0; i < size / 8; i++)
		if (p[i] != (i * 0x9E3779B97F4A7C15ull ^ 0x5a5a)) {
			fail("big buffer: word %llu differs", (unsigned long long)i);
			return;
		}
}

/* post-resume, gpuwatch-criu-action sends GPUWATCH_RESTORE_SIGNAL (SIGUSR2 in the
 * criuargs case): leave a trace per process */
static void on_sigusr2(int sig)
{
	char path[512];
	(void)sig;
	snprintf(path, sizeof(path), "%s/signalled.%d", dir, (int)getpid());
	close(open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
}

/* while phase 1 waits for go.1: DIR/rewrite fills A.3 anew (the predump case) */
static unsigned char *a3_map;
static uint64_t a3_size;
static unsigned a3_seed = 3;

static void rewrite_if_asked(void)
{
	if (a3_seed == 3 && exists("rewrite")) {
		fill(a3_map, a3_size, 33);
		a3_seed = 33;
		touch("rewritten");
	}
}

static void write_pid(const char *name)
{
	char text[32];
	snprintf(text, sizeof text, "%d\n", (int)getpid());
	wl_write_file(name, text);
}

int main(int argc, char **argv)
{
	uint64_t s1, s2, s3, s4, s5, cs1, cs2;
	wl_init(argc, argv);
	dir = wl.dir;
	write_pid("pid.parent");
	unsigned big_mib = argc > 2 && strncmp(argv[2], "--big=", 6) == 0 ? (unsigned)atoi(argv[2] + 6) : 0;
	signal(SIGUSR2, on_sigusr2);

	int A = open("/dev/dri/card0", O_RDWR);
	if (A < 0)
		die("open card0");
	uint32_t h1 = dumb(A, 64, 64, &s1), h2 = dumb(A, 32, 32, &s2), h3 = dumb(A, 128, 64, &s3);
	uint32_t h4 = dumb(A, 16, 16, &s4), h5 = dumb(A, 256, 64, &s5);
	if (h1 != 1 || h2 != 2 || h3 != 3 || h4 != 4 || h5 != 5) {
		errno = EINVAL;
		die("handle numbers");
	}
	destroy(A, 2);
	destroy(A, 4);
	unsigned char *m1 = map(A, 1, s1), *m3 = map(A, 3, s3);
	fill(m1, s1, 1);
	fill(m3, s3, 3);
	void *t5 = map(A, 5, s5);
	fill(t5, s5, 5);
	munmap(t5, s5);
	int E = export_(A, 3, 1);
	if (E < 0)
		die("export A.3");
	int R = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
	if (R < 0)
		die("open renderD128");
	if (import(R, E) != 1) {
		errno = EINVAL;
		die("R.1");
	}
	uint64_t ts1, ts2;
	int T = open("/dev/dri/card0", O_RDWR);
	if (T < 0)
		die("open card0 (T)");
	uint32_t t1 = dumb(T, 32, 32, &ts1), t2 = dumb(T, 64, 32, &ts2);
	void *tm = map(T, t2, ts2);
	fill(tm, ts2, 15);
	munmap(tm, ts2);
	int x1 = export_(T, t1, 1), x2 = export_(T, t2, 1);
	if (import(R, x1) != 2 || import(R, x2) != 3) {
		errno = EINVAL;
		die("R.2, R.3");
	}
	close(x1);
	close(x2);
	close(T);
	struct drm_gem_close rc2 = {.handle = 2};
	if (ioctl(R, DRM_IOCTL_GEM_CLOSE, &rc2))
		die("GEM_CLOSE R.2");
	int B = open("/dev/dri/card0", O_RDWR | O_NONBLOCK);
	if (B < 0)
		die("open card0 (B)");
	int e5 = export_(A, 5, 1);
	if (import(B, e5) != 1) {
		errno = EINVAL;
		die("B.1");
	}
	close(e5);
	unsigned char *mb = map(B, 1, s5);
	/* vgem's private fence ioctls on B: gpuwatch does not decode them, the dump says so */
	if ((errno = -wl_vgem_fence_raw(B, 1)) != 0)
		die("vgem fence on B.1");

	uint64_t ds1, ds2, fs1;
	int D = open("/dev/dri/card0", O_RDWR);
	if (D < 0)
		die("open card0 (D)");
	uint32_t d1 = dumb(D, 64, 64, &ds1), d2 = dumb(D, 64, 64, &ds2);
	unsigned char *md1 = map(D, d1, ds1), *md2 = map(D, d2, ds2);
	fill(md1, ds1, 12);
	fill(md2, ds2, 13);
	struct drm_gem_close gc = {.handle = d2};
	if (ioctl(D, DRM_IOCTL_GEM_CLOSE, &gc))
		die("GEM_CLOSE D.2");
	struct drm_gem_flink fl = {.handle = d1};
	/* flink needs DRM authentication (or CAP_SYS_ADMIN): an unprivileged container has
	 * neither, and D.2 is then a buffer of its own with D.1's size */
	flinked = ioctl(D, DRM_IOCTL_GEM_FLINK, &fl) == 0;
	if (!flinked && errno != EACCES)
		die("GEM_FLINK D.1");
	if (flinked) {
		struct drm_gem_open go = {.name = fl.name};
		if (ioctl(D, DRM_IOCTL_GEM_OPEN, &go) || go.handle != 2)
			die("GEM_OPEN D.1's name");
	} else {
		uint64_t s;
		if (dumb(D, 64, 64, &s) != 2)
			die("D.2 again (no flink)");
	}
	int F = open("/dev/dri/card0", O_RDWR);
	if (F < 0)
		die("open card0 (F)");
	uint32_t f1 = dumb(F, 64, 64, &fs1);
	/* above every other DRM mapping (a hint above the mmap base): restored last, on a private
	 * file, which CRIU 3.17/3.18 leave open in the task unless the plugin closes it */
	unsigned char *mf = map_at(F, f1, fs1, (void *)0x7ff000000000ull);
	fill(mf, fs1, 14);
	close(F);
	unsigned char *mw = map(A, 3, s3);
	munmap(mw, 4096);
	mw += 4096;

	int G = -1;
	uint64_t gs = 0;
	uint64_t *mg = NULL;
	if (big_mib) { /* G = card0 with one big mapped buffer (4096 x 64*MiB at 32 bpp) */
		G = open("/dev/dri/card0", O_RDWR | O_CLOEXEC);
		if (G < 0)
			die("open card0 (G)");
		struct drm_mode_create_dumb c = {.width = 4096, .height = 64 * big_mib, .bpp = 32};
		if (ioctl(G, DRM_IOCTL_MODE_CREATE_DUMB, &c))
			die("CREATE_DUMB (big)");
		gs = c.size;
		mg = map(G, c.handle, gs);
		fill_big(mg, gs);
	}

	pid_t child = wl_fork();
	if (child == 0) {
		write_pid("pid.child");
		unsigned char *m1b = map(A, 1, s1);
		memset(m1b, 0xc5, 4096); /* the parent's m1 sees it too: same buffer */
		int C = open("/dev/dri/card0", O_RDWR);
		if (C < 0)
			die("open card0 (C)");
		uint32_t c1 = dumb(C, 64, 32, &cs1), c2 = dumb(C, 64, 64, &cs2);
		if (c1 != 1 || c2 != 2) {
			errno = EINVAL;
			die("C handles");
		}
		destroy(C, 1);
		unsigned char *mc = map(C, 2, cs2);
		fill(mc, cs2, 9);
		if (import(C, E) != 1) {
			errno = EINVAL;
			die("C.1 = E");
		}
		wl_sync(1, NULL);
		int cfds[] = {A, E, R, B, D, C, G};
		check_fd_set(cfds, G >= 0 ? 7 : 6);
		check_fd("C", C, 0, O_RDWR, 0);
		check_fd("A (child)", A, 0, O_RDWR, 0);
		check_handle("C", C, 1, s3);
		check_handle("C", C, 2, cs2);
		check_handle("C", C, 3, 0);
		check_fill("C.2 mapping", mc, cs2, 9);
		if (m1b[0] != 0xc5 || m1b[4095] != 0xc5)
			fail("child's A.1 mapping lost its first page");
		check_fill_from("child's A.1 mapping (after page 0)", m1b, 4096, s1, 1);
		struct stat cse;
		fstat(E, &cse);
		if (ino_of_handle(C, 1) != cse.st_ino)
			note("C.1 is no longer A.3's buffer (cross-process sharing lost)");
		m1b[8192] ^= 0xff; /* seen by the parent through its own mapping? */
		touch("cdone");
		report();
		wl_sync(2, NULL);
		return nfail ? 1 : 0;
	}
	a3_map = m3;
	a3_size = s3;
	wl_sync(1, rewrite_if_asked);
	wait_for("cdone");

	int pfds[] = {A, E, R, B, D, G};
	check_fd_set(pfds, G >= 0 ? 6 : 5);
	if (mg)
		check_big(mg, gs);
	check_fd("A", A, 0, O_RDWR, 0);
	check_fd("B", B, 0, O_RDWR, 0);
	check_fd("D", D, 0, O_RDWR, 0);
	check_handle("D", D, 1, ds1);
	check_handle("D", D, 2, ds1);
	check_handle("D", D, 3, 0);
	if (flinked && ino_of_handle(D, 1) != ino_of_handle(D, 2))
		fail("D.1 and D.2 are no longer one buffer");
	if (!flinked)
		note("GEM_FLINK was refused (EACCES: not DRM-authenticated): D.2 was a buffer of its own");
	check_fill("D.1 mapping", md1, ds1, 12);
	note_mapping("D.2 mapping (handle closed)", md2, ds2, 0, 13);
	note_mapping("F.1 mapping (file closed)", mf, fs1, 0, 14);
	note_mapping("A.3 window mapping", mw, s3, 4096, a3_seed);
	if (!(fcntl(B, F_GETFL) & O_NONBLOCK))
		fail("B lost O_NONBLOCK");
	check_fd("R", R, 128, O_RDWR, 1);
	check_fd("E", E, ~0u, O_RDWR, 1);
	if (syscall(SYS_kcmp, getpid(), getpid(), 0 /* KCMP_FILE */, A, B) == 0)
		fail("A and B are one file");
	check_handle("A", A, 1, s1);
	check_handle("A", A, 2, 0);
	check_handle("A", A, 3, s3);
	check_handle("A", A, 4, 0);
	check_handle("A", A, 5, s5);
	for (uint32_t h = 6; h < 10; h++)
		check_handle("A", A, h, 0);
	check_handle("R", R, 1, s3);
	check_handle("R", R, 2, 0);
	check_handle("R", R, 3, ts2);
	check_handle("R", R, 4, 0);
	int r3 = export_(R, 3, 1);
	unsigned char *mr3 = r3 < 0 ? MAP_FAILED : mmap(NULL, ts2, PROT_READ, MAP_SHARED, r3, 0);
	if (mr3 == MAP_FAILED)
		fail("cannot map R.3 through a dma-buf");
	else
		check_fill("R.3 (through a dma-buf)", mr3, ts2, 15);
	check_handle("B", B, 1, s5);
	check_handle("B", B, 2, 0);

	if (m1[0] != 0xc5 || m1[4095] != 0xc5)
		fail("A.1 mapping: the child's write is not there");
	unsigned char want = (unsigned char)(1 * 31 + 8192 * 7 + 2) ^ 0xff;
	if (m1[8192] != want)
		fail("A.1 mapping does not share the child's mapping (byte 8192 %#x, want %#x)", m1[8192], want);
	m1[8192] ^= 0xff;
	check_fill_from("A.1 mapping (after page 0)", m1, 4096, s1, 1);
	check_fill(a3_seed == 3 ? "A.3 mapping" : "A.3 mapping (rewritten after the pre-dump)", m3, s3, a3_seed);
	check_fill("B.1 mapping (= A.5)", mb, s5, 5);
	unsigned char *f5 = map(A, 5, s5);
	check_fill("A.5 (mapped after restore)", f5, s5, 5);
	m3[100] ^= 0x55;
	unsigned char *fe = mmap(NULL, s3, PROT_READ, MAP_SHARED, E, 0);
	if (fe == MAP_FAILED)
		fail("cannot mmap E");
	else if (fe[100] != m3[100])
		fail("E does not export A.3's buffer");
	f5[7] ^= 0x11;
	if (mb[7] != f5[7])
		fail("B.1 is no longer A.5's buffer");
	struct stat se;
	fstat(E, &se);
	if (ino_of_handle(A, 3) != se.st_ino)
		fail("A.3 and E: different dma-bufs");
	if (ino_of_handle(R, 1) != se.st_ino)
		fail("R.1 is not A.3's buffer");
	if (ino_of_handle(B, 1) != ino_of_handle(A, 5))
		fail("B.1 is not A.5's buffer");

	report();
	wl_sync(2, NULL);
	int st = 0;
	waitpid(child, &st, 0);
	return nfail || !WIFEXITED(st) || WEXITSTATUS(st) ? 1 : 0;
}
