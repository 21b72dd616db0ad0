/* SPDX-License-Identifier: MIT */
/*
 * The CRIU workload's helpers (see wl_criu.c): buffers mapped and checksummed on their own,
 * reads guarded against faults, the protocol files in DIR, /proc/self, and the report.
 */
#define _GNU_SOURCE
#include "wl_criu.h"

#include <dirent.h>
#include <drm.h>
#include <drm_mode.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

/* ---- small helpers --------------------------------------------------------------------- */

static int xioctl(int fd, unsigned long cmd, void *arg)
{
	int r;

	do
		r = ioctl(fd, cmd, arg);
	while (r == -1 && (errno == EINTR || errno == EAGAIN));
	return r;
}

uint64_t fnv(const volatile uint8_t *p, uint64_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (uint64_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

/*
 * A restore that got a mapping wrong can make reading it fault (SIGBUS, SIGSEGV): the
 * verifier reports that instead of dying.
 */
static sigjmp_buf fault_jmp;
static volatile sig_atomic_t guarding, fault_sig;

static void on_fault(int sig)
{
	if (guarding) {
		fault_sig = sig;
		siglongjmp(fault_jmp, 1);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

void guard_install(void)
{
	struct sigaction sa = {.sa_handler = on_fault};

	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
}

/* fnv of [p, p+n), or -signal if reading it faulted */
int guarded_fnv(const void *p, uint64_t n, uint64_t *sum)
{
	if (sigsetjmp(fault_jmp, 1)) {
		guarding = 0;
		return -fault_sig;
	}
	guarding = 1;
	*sum = fnv(p, n);
	guarding = 0;
	return 0;
}

/* flips *w, reads *r, puts *w back: *seen tells whether r saw the flip; -signal on a fault */
int guarded_poke(volatile uint8_t *w, volatile uint8_t *r, bool *seen)
{
	if (sigsetjmp(fault_jmp, 1)) {
		guarding = 0;
		return -fault_sig;
	}
	guarding = 1;
	uint8_t v = *w, flipped = (uint8_t)(v ^ 0xff);
	*w = flipped;
	*seen = *r == flipped;
	*w = v;
	guarding = 0;
	return 0;
}

void fill(void *p, uint64_t n, unsigned seed)
{
	uint8_t *b = p;

	for (uint64_t i = 0; i < n; i++)
		b[i] = (uint8_t)(seed * 37 + i * 7 + (i >> 12) * 13 + (i >> 9));
}

void dirfile(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(buf, len, "%s/", wl.dir);

	va_start(ap, fmt);
	vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
}

void wait_file(const char *name)
{
	struct timespec tick = {0, 10 * 1000 * 1000};
	char path[300];
	uint64_t deadline = wl_now_ns() + 900ull * 1000000000ull;

	dirfile(path, sizeof(path), "%s", name);
	while (access(path, F_OK) != 0) {
		if (wl_now_ns() > deadline) {
			errno = 0;
			wl_die("timed out waiting for %s", path);
		}
		nanosleep(&tick, NULL);
	}
}

int fd_of_file(int fi) /* this process's first DRM fd of model file fi */
{
	for (int i = 0; i < wl.nfds; i++)
		if (wl.fds[i].kind == WL_FD_DRM && wl.fds[i].file == fi)
			return wl.fds[i].fd;
	return -1;
}

static bool is_render(int fi)
{
	return strstr(wl.files[fi].path, "renderD") != NULL;
}

int export_fd(int fd, uint32_t handle) /* dma-buf fd or -errno */
{
	struct drm_prime_handle p = {.handle = handle, .flags = DRM_CLOEXEC | DRM_RDWR, .fd = -1};

	return xioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p) == 0 ? p.fd : -errno;
}

int64_t import_fd(int fd, int dmabuf) /* handle or -errno */
{
	struct drm_prime_handle p = {.fd = dmabuf};

	return xioctl(fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &p) == 0 ? (int64_t)p.handle : -errno;
}

int64_t dumb_offset(int fd, uint32_t handle) /* fake offset or -errno */
{
	struct drm_mode_map_dumb m = {.handle = handle};

	return xioctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &m) == 0 ? (int64_t)m.offset : -errno;
}

/*
 * The size of the buffer a handle names: that of a dma-buf export where the card has PRIME;
 * else the longest mapping (up to 64 pages) of MODE_MAP_DUMB's offset the kernel takes
 * (drm_gem_mmap refuses one longer than the buffer).
 */
int64_t handle_size(int fd, uint32_t handle)
{
	int64_t off, size = 0;

	if (have_prime) {
		int d = export_fd(fd, handle);
		off_t end;

		if (d < 0)
			return d;
		end = lseek(d, 0, SEEK_END);
		close(d);
		return end < 0 ? -EIO : (int64_t)end;
	}
	off = dumb_offset(fd, handle);
	if (off < 0)
		return off;
	for (uint64_t len = PAGE; len <= 64 * PAGE; len += PAGE) {
		void *p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, (off_t)off);

		if (p == MAP_FAILED)
			break;
		munmap(p, len);
		size = (int64_t)len;
	}
	return size ? size : -EIO;
}

/*
 * Maps a buffer on its own (not through the model): a card file through MODE_MAP_DUMB, a
 * render file (which refuses MAP_DUMB) through a dma-buf export. NULL on failure (why in err).
 */
void *map_buffer(int fi, uint32_t handle, uint64_t size, int prot, char *err, size_t errlen)
{
	int fd = fd_of_file(fi);
	void *p;

	if (fd < 0) {
		snprintf(err, errlen, "no fd of file %s in this process", wl.files[fi].label);
		return NULL;
	}
	if (is_render(fi)) {
		int d = export_fd(fd, handle);

		if (d < 0) {
			snprintf(err, errlen, "PRIME export of handle %u: %s", handle, strerror(-d));
			return NULL;
		}
		p = mmap(NULL, size, prot, MAP_SHARED, d, 0);
		if (p == MAP_FAILED)
			snprintf(err, errlen, "mmap of the dma-buf of handle %u: %s", handle, strerror(errno));
		close(d);
	} else {
		int64_t off = dumb_offset(fd, handle);

		if (off < 0) {
			snprintf(err, errlen, "MODE_MAP_DUMB %u: %s", handle, strerror((int)-off));
			return NULL;
		}
		p = mmap(NULL, size, prot, MAP_SHARED, fd, (off_t)off);
		if (p == MAP_FAILED)
			snprintf(err, errlen, "mmap of handle %u at offset %#llx: %s", handle, (unsigned long long)off,
				 strerror(errno));
	}
	return p == MAP_FAILED ? NULL : p;
}

int buffer_sum(int fi, uint32_t handle, uint64_t size, uint64_t *sum, char *err, size_t errlen)
{
	void *p = map_buffer(fi, handle, size, PROT_READ, err, errlen);

	int sig;

	if (!p)
		return -1;
	sig = guarded_fnv(p, size, sum);
	munmap(p, size);
	if (sig)
		snprintf(err, errlen, "reading a fresh mapping of handle %u: %s", handle, strsignal(-sig));
	return sig ? -1 : 0;
}

/* Writes through a temporary mapping of the model (recorded, then unmapped). */
void fill_through_temp_map(int fd, uint32_t handle, uint64_t size, unsigned seed)
{
	void *p = wl_mmap(fd, handle, size, PROT_READ | PROT_WRITE);

	fill(p, size, seed);
	wl_munmap(p, size);
}

/* ---- /proc/self ---------------------------------------------------------------------- */

FILE *rep; /* the report being written (its fd is not the workload's) */

int read_fds(struct xfd *out, int max)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		wl_die("opendir /proc/self/fd");
	while ((e = readdir(d))) {
		char p[64];
		struct stat st;
		int fd;
		ssize_t l;

		if (e->d_name[0] == '.' || (fd = atoi(e->d_name)) == dirfd(d) || (rep && fd == fileno(rep)))
			continue;
		if (n == max)
			wl_die("more than %d fds", max);
		struct xfd *x = &out[n++];
		memset(x, 0, sizeof(*x));
		x->fd = fd;
		x->fdflags = fcntl(fd, F_GETFD);
		x->flflags = fcntl(fd, F_GETFL);
		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
		l = readlink(p, x->link, sizeof(x->link) - 1);
		if (l > 0)
			x->link[l] = '\0';
		if (fstat(fd, &st) == 0 && S_ISCHR(st.st_mode)) {
			x->chr = true;
			x->rdev = st.st_rdev;
		}
	}
	closedir(d);
	return n;
}

/* The /proc/self/maps entry starting at start, or false. */
bool find_vma(uint64_t start, struct vma *v)
{
	FILE *in = fopen("/proc/self/maps", "re");
	char line[512];
	bool found = false;

	if (!in)
		wl_die("open /proc/self/maps");
	while (!found && fgets(line, sizeof(line), in)) {
		unsigned long long lo, hi, off;
		char perms[8], dev[16];
		unsigned long ino;
		int pos = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %15s %lu %n", &lo, &hi, perms, &off, dev, &ino, &pos) < 6)
			continue;
		if (lo != start)
			continue;
		v->start = lo;
		v->end = hi;
		v->offset = off;
		snprintf(v->perms, sizeof(v->perms), "%s", perms);
		snprintf(v->path, sizeof(v->path), "%s", pos ? line + pos : "");
		v->path[strcspn(v->path, "\n")] = '\0';
		found = true;
	}
	fclose(in);
	return found;
}

/* F_GETFL bits by name, e.g. "O_RDWR|O_LARGEFILE|O_NOFOLLOW" */
const char *fl_str(int fl, char *buf, size_t len)
{
	static const struct {
		int bit;
		const char *name;
	} bits[] = {
		{O_APPEND, "O_APPEND"},
		{O_NONBLOCK, "O_NONBLOCK"},
		{O_DSYNC, "O_DSYNC"},
		{O_DIRECT, "O_DIRECT"},
		{0100000 /* x86_64's; glibc says 0 */, "O_LARGEFILE"},
		{O_DIRECTORY, "O_DIRECTORY"},
		{O_NOFOLLOW, "O_NOFOLLOW"},
		{O_NOATIME, "O_NOATIME"},
		{O_PATH, "O_PATH"},
		{O_SYNC & ~O_DSYNC, "__O_SYNC"},
		{FASYNC, "FASYNC"},
	};
	int acc = fl & O_ACCMODE, rest = fl & ~O_ACCMODE;
	size_t n = (size_t)snprintf(buf, len, "%s",
				    acc == O_RDONLY   ? "O_RDONLY"
				    : acc == O_WRONLY ? "O_WRONLY"
						      : "O_RDWR");

	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]) && n < len; i++)
		if (rest & bits[i].bit) {
			n += (size_t)snprintf(buf + n, len - n, "|%s", bits[i].name);
			rest &= ~bits[i].bit;
		}
	if (rest && n < len)
		snprintf(buf + n, len - n, "|%#o", rest);
	return buf;
}

const char *prot_str(int prot)
{
	return (prot & PROT_WRITE) ? "rw" : "r-";
}

/* ---- report ---------------------------------------------------------------------------- */

static int nfail;

void note(bool good, const char *fmt, ...)
{
	va_list ap;

	fprintf(rep, good ? "ok   " : "FAIL ");
	va_start(ap, fmt);
	vfprintf(rep, fmt, ap);
	va_end(ap);
	fputc('\n', rep);
	fflush(rep);
	if (!good)
		nfail++;
}

void report_open(const char *what)
{
	char path[300];

	dirfile(path, sizeof(path), "%s.%d.log", what, (int)getpid());
	rep = fopen(path, "we");
	if (!rep)
		wl_die("create %s", path);
	nfail = 0;
	fprintf(rep, "# %s of pid %d (%s), mode %s%s\n", what, (int)getpid(), wl.is_child ? "child" : "parent",
		degraded ? "degraded" : "strict", other_node ? ", other node allowed" : "");
}

void report_close(const char *what)
{
	char name[64], text[64];

	fclose(rep);
	rep = NULL;
	snprintf(name, sizeof(name), "%s.%d", what, (int)getpid());
	if (nfail)
		snprintf(text, sizeof(text), "FAIL %d\n", nfail);
	else
		snprintf(text, sizeof(text), "PASS\n");
	wl_write_file(name, text);
	printf("%s %s: %s", wl.is_child ? "child" : "parent", what, text);
}

/* Restored mappings have new fake offsets, and the node may have changed: update the model
 * (for the truth of later phases) from what the kernel says now. */
void refresh_model(void)
{
	for (int i = 0; i < wl.nmaps; i++) {
		struct vma v;

		if (find_vma(wl.maps[i].start, &v))
			wl.maps[i].offset = v.offset;
	}
	for (int fi = 0; fi < wl.nfiles; fi++) {
		int fd = fd_of_file(fi);
		char p[64], link[64] = "";
		struct stat st;

		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
		if (fd < 0 || fstat(fd, &st) != 0 || readlink(p, link, sizeof(link) - 1) <= 0)
			continue;
		snprintf(wl.files[fi].path, sizeof(wl.files[fi].path), "%s", link);
		wl.files[fi].maj = major(st.st_rdev);
		wl.files[fi].min = minor(st.st_rdev);
	}
	for (int fi = 0; fi < wl.nfiles; fi++)
		wl.files[fi].ngrants = 0;
}

void check_buffer_rw(int fd, uint32_t handle, uint64_t size, unsigned seed)
{
	uint8_t *p = wl_mmap(fd, handle, size, PROT_READ | PROT_WRITE);
	int fi = (int)(wl_file_of_fd(fd) - wl.files);
	uint64_t sum;
	char err[200];

	fill(p, size, seed);
	if (buffer_sum(fi, handle, size, &sum, err, sizeof(err)) != 0)
		note(false, "new buffer %u (fd %d): %s", handle, fd, err);
	else
		note(sum == fnv(p, size), "new buffer %u (fd %d): written, and read back through another mapping",
		     handle, fd);
}
