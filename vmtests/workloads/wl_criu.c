/* SPDX-License-Identifier: MIT */
/*
 * The CRIU workload: builds DRM state on vgem in two processes, records what it expects to
 * find after a checkpoint/restore, then (after the harness restored it, or right away when it
 * was never dumped) verifies itself and keeps working. Usage: wl_criu DIR [--degraded]
 * [--other-node]. Runs as a detached session leader (fds 3 and up are closed at start).
 *
 * State before the dump (fds of the parent P; the child C is forked after all of it):
 *   3  A = card0 O_RDWR           handles 1 (4 pages), 3 (4p), 4 (2p), 6 (3p); 2, 5 destroyed
 *   4  B = card0 O_RDWR|O_NONBLOCK|O_CLOEXEC
 *                                 handles 1 (= A's 6, PRIME import), 2 (2p), 4 (5p); 3 destroyed
 *   5  R = renderD128 O_CLOEXEC   handle 1 (= A's 4, PRIME import of E)
 *   6  E = dma-buf of A's 4 (close-on-exec), kept open
 *   20 dup of A
 *   mappings (MAP_SHARED): A.1 rw (4p) and A.1 read-only (4p); A.3 rw with its last page
 *   unmapped; B.2 rw. A.4, A.6, B.4: written through a temporary mapping. Every buffer holds
 *   its own byte pattern. (No mapping starts inside a buffer: vgem, like every driver that
 *   uses drm_gem_mmap, only maps from a buffer's first page, so such a window cannot be
 *   mapped again at restore; the plugin puts a copy there, and says so.)
 * C shares A, R, E (fork); it closes B and fd 20, unmaps A.1's read-only mapping and B.2's,
 * and maps A.6 (rw, its own mapping).
 *
 * Protocol (files in DIR, phases of wl_phase()):
 *   pid.parent / pid.child     pids
 *   expect.<pid>.bin / .txt    what must hold after restore (fds with F_GETFD/F_GETFL, every
 *                              file's exact handle set with sizes, mappings, buffer checksums)
 *   phase 1 (truth.1, ready.1) the harness dumps and restores here (or not), then go.1
 *   P verifies, then C (after pverified): result.<pid> ("PASS" or "FAIL n") + result.<pid>.log
 *   phase 2 (truth.2)          state as before the dump (mapping offsets re-read: restored
 *                              mappings have new fake offsets)
 *   P and C work: new buffers get the lowest free handle numbers (A: 2, 5, 7; B: 3; R: 2),
 *   C opens a new card0 file (handle 1): work.<pid> ("PASS"/"FAIL n") + work.<pid>.log
 *   phase 3 (truth.3), then both exit; P writes done.<pid> after reaping C.
 * --degraded: after a restore without the gpuwatch daemon: handles may be lost; fds (same
 *   numbers and flags, DRM fds on a vgem node) and mappings (same place, prot and contents)
 *   must hold. --other-node: the DRM fds may be on another vgem node (minor changed).
 */
#define _GNU_SOURCE
#include "wl.h"

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
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096ull
#define X_FDS 32
#define X_BUFS 32
#define X_MAPS 32
#define KCMP_FILE 0

struct xfd {
	int fd, fdflags, flflags;
	bool chr;
	uint64_t rdev;
	char link[128];
};

struct xbuf {                 /* a live handle of a file and the checksum of its buffer */
	int file;             /* index in wl.files */
	uint32_t handle;
	uint64_t size, sum;
};

struct xmap {
	uint64_t start, length, delta, sum;   /* delta: offset of the mapping in its buffer */
	int prot, file;
	uint32_t handle;
};

struct expect {
	char magic[16];
	int pid;
	bool child;
	int nfds, nbufs, nmaps;
	struct xfd fds[X_FDS];
	struct xbuf bufs[X_BUFS];
	struct xmap maps[X_MAPS];
	struct wl_state model;
};

static struct expect ex;      /* in memory: must come back as it was written */
static bool degraded, other_node;

/* ---- small helpers --------------------------------------------------------------------- */

static int xioctl(int fd, unsigned long cmd, void *arg)
{
	int r;

	do
		r = ioctl(fd, cmd, arg);
	while (r == -1 && (errno == EINTR || errno == EAGAIN));
	return r;
}

static uint64_t fnv(const volatile uint8_t *p, uint64_t n)
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

static void guard_install(void)
{
	struct sigaction sa = { .sa_handler = on_fault };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
}

/* fnv of [p, p+n), or -signal if reading it faulted */
static int guarded_fnv(const void *p, uint64_t n, uint64_t *sum)
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
static int guarded_poke(volatile uint8_t *w, volatile uint8_t *r, bool *seen)
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

static void fill(void *p, uint64_t n, unsigned seed)
{
	uint8_t *b = p;

	for (uint64_t i = 0; i < n; i++)
		b[i] = (uint8_t)(seed * 37 + i * 7 + (i >> 12) * 13 + (i >> 9));
}

static void dirfile(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(buf, len, "%s/", wl.dir);

	va_start(ap, fmt);
	vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
}

static void write_file(const char *name, const char *text)
{
	char path[300], tmp[310];
	FILE *o;

	dirfile(path, sizeof(path), "%s", name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	o = fopen(tmp, "we");
	if (!o || fputs(text, o) < 0 || fclose(o) != 0 || rename(tmp, path) != 0)
		wl_die("write %s", path);
}

static void wait_file(const char *name)
{
	struct timespec tick = { 0, 10 * 1000 * 1000 };
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

static int fd_of_file(int fi)             /* this process's first DRM fd of model file fi */
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

static int export_fd(int fd, uint32_t handle)   /* dma-buf fd or -errno */
{
	struct drm_prime_handle p = { .handle = handle, .flags = DRM_CLOEXEC | DRM_RDWR, .fd = -1 };

	return xioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p) == 0 ? p.fd : -errno;
}

static int64_t import_fd(int fd, int dmabuf)    /* handle or -errno */
{
	struct drm_prime_handle p = { .fd = dmabuf };

	return xioctl(fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &p) == 0 ? (int64_t)p.handle : -errno;
}

static int64_t dumb_offset(int fd, uint32_t handle)  /* fake offset or -errno */
{
	struct drm_mode_map_dumb m = { .handle = handle };

	return xioctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &m) == 0 ? (int64_t)m.offset : -errno;
}

/*
 * Maps a buffer on its own (not through the model): a card file through MODE_MAP_DUMB, a
 * render file (which refuses MAP_DUMB) through a dma-buf export. NULL on failure (why in err).
 */
static void *map_buffer(int fi, uint32_t handle, uint64_t size, int prot, char *err, size_t errlen)
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
			snprintf(err, errlen, "mmap of handle %u at offset %#llx: %s", handle,
				 (unsigned long long)off, strerror(errno));
	}
	return p == MAP_FAILED ? NULL : p;
}

static int buffer_sum(int fi, uint32_t handle, uint64_t size, uint64_t *sum, char *err, size_t errlen)
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
static void fill_through_temp_map(int fd, uint32_t handle, uint64_t size, unsigned seed)
{
	void *p = wl_mmap(fd, handle, size, PROT_READ | PROT_WRITE);

	fill(p, size, seed);
	wl_munmap(p, size);
}

/* ---- /proc/self ---------------------------------------------------------------------- */

static FILE *rep;              /* the report being written (its fd is not the workload's) */

static int read_fds(struct xfd *out, int max)
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

struct vma {
	uint64_t start, end, offset;
	char perms[8], path[128];
};

/* The /proc/self/maps entry starting at start, or false. */
static bool find_vma(uint64_t start, struct vma *v)
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
static const char *fl_str(int fl, char *buf, size_t len)
{
	static const struct { int bit; const char *name; } bits[] = {
		{ O_APPEND, "O_APPEND" }, { O_NONBLOCK, "O_NONBLOCK" }, { O_DSYNC, "O_DSYNC" },
		{ O_DIRECT, "O_DIRECT" }, { 0100000 /* x86_64's; glibc says 0 */, "O_LARGEFILE" },
		{ O_DIRECTORY, "O_DIRECTORY" },
		{ O_NOFOLLOW, "O_NOFOLLOW" }, { O_NOATIME, "O_NOATIME" }, { O_PATH, "O_PATH" },
		{ O_SYNC & ~O_DSYNC, "__O_SYNC" }, { FASYNC, "FASYNC" },
	};
	int acc = fl & O_ACCMODE, rest = fl & ~O_ACCMODE;
	size_t n = (size_t)snprintf(buf, len, "%s", acc == O_RDONLY ? "O_RDONLY" : acc == O_WRONLY ? "O_WRONLY" : "O_RDWR");

	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]) && n < len; i++)
		if (rest & bits[i].bit) {
			n += (size_t)snprintf(buf + n, len - n, "|%s", bits[i].name);
			rest &= ~bits[i].bit;
		}
	if (rest && n < len)
		snprintf(buf + n, len - n, "|%#o", rest);
	return buf;
}

static const char *prot_str(int prot)
{
	return (prot & PROT_WRITE) ? "rw" : "r-";
}

/* ---- report ---------------------------------------------------------------------------- */

static int nfail;

static void note(bool good, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(bool good, const char *fmt, ...)
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

static void report_open(const char *what)
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

static void report_close(const char *what)
{
	char name[64], text[64];

	fclose(rep);
	rep = NULL;
	snprintf(name, sizeof(name), "%s.%d", what, (int)getpid());
	if (nfail)
		snprintf(text, sizeof(text), "FAIL %d\n", nfail);
	else
		snprintf(text, sizeof(text), "PASS\n");
	write_file(name, text);
	printf("%s %s: %s", wl.is_child ? "child" : "parent", what, text);
}

/* ---- the expectation -------------------------------------------------------------------- */

static void record_expect(void)
{
	char err[200], path[300];
	FILE *o;

	memset(&ex, 0, sizeof(ex));
	snprintf(ex.magic, sizeof(ex.magic), "wl_criu.expect1");
	ex.pid = getpid();
	ex.child = wl.is_child;
	ex.nfds = read_fds(ex.fds, X_FDS);
	for (int fi = 0; fi < wl.nfiles; fi++) {
		struct wl_file *f = &wl.files[fi];

		if (fd_of_file(fi) < 0)
			continue;
		for (int h = 0; h < f->nhandles; h++) {
			struct xbuf *b = &ex.bufs[ex.nbufs++];

			b->file = fi;
			b->handle = f->handles[h].handle;
			b->size = f->handles[h].size;
			if (buffer_sum(fi, b->handle, b->size, &b->sum, err, sizeof(err)) != 0)
				wl_die("checksum of %s handle %u: %s", f->label, b->handle, err);
		}
	}
	for (int i = 0; i < wl.nmaps; i++) {
		struct wl_map *m = &wl.maps[i];
		struct xmap *x = &ex.maps[ex.nmaps++];
		int64_t base = dumb_offset(fd_of_file(m->file), (uint32_t)m->handle);

		if (m->handle < 0 || base < 0)
			wl_die("mapping %#llx has no handle", (unsigned long long)m->start);
		*x = (struct xmap){ .start = m->start, .length = m->length, .delta = m->offset - (uint64_t)base,
				    .sum = fnv((const uint8_t *)(uintptr_t)m->start, m->length), .prot = m->prot,
				    .file = m->file, .handle = (uint32_t)m->handle };
	}
	ex.model = wl;

	dirfile(path, sizeof(path), "expect.%d.bin", (int)getpid());
	o = fopen(path, "we");
	if (!o || fwrite(&ex, sizeof(ex), 1, o) != 1 || fclose(o) != 0)
		wl_die("write %s", path);
	dirfile(path, sizeof(path), "expect.%d.txt", (int)getpid());
	o = fopen(path, "we");
	if (!o)
		wl_die("write %s", path);
	fprintf(o, "pid %d (%s)\n", ex.pid, ex.child ? "child" : "parent");
	for (int i = 0; i < ex.nfds; i++)
		fprintf(o, "fd %d: F_GETFD %#x F_GETFL %#o %s%s\n", ex.fds[i].fd, ex.fds[i].fdflags,
			ex.fds[i].flflags, ex.fds[i].link, ex.fds[i].chr ? " (char device)" : "");
	for (int fi = 0; fi < wl.nfiles; fi++) {
		if (fd_of_file(fi) < 0)
			continue;
		fprintf(o, "file %s (%s, fd %d, driver %s): handles", wl.files[fi].label, wl.files[fi].path,
			fd_of_file(fi), wl.files[fi].driver);
		for (int i = 0; i < ex.nbufs; i++)
			if (ex.bufs[i].file == fi)
				fprintf(o, " %u", ex.bufs[i].handle);
		fputc('\n', o);
	}
	for (int i = 0; i < ex.nbufs; i++)
		fprintf(o, "buffer %s.%u: %llu bytes, fnv %016llx\n", wl.files[ex.bufs[i].file].label,
			ex.bufs[i].handle, (unsigned long long)ex.bufs[i].size, (unsigned long long)ex.bufs[i].sum);
	for (int i = 0; i < ex.nmaps; i++)
		fprintf(o, "map %#llx+%#llx %s: %s.%u at +%#llx, fnv %016llx\n",
			(unsigned long long)ex.maps[i].start, (unsigned long long)ex.maps[i].length,
			prot_str(ex.maps[i].prot), wl.files[ex.maps[i].file].label, ex.maps[i].handle,
			(unsigned long long)ex.maps[i].delta, (unsigned long long)ex.maps[i].sum);
	fclose(o);
}

static const struct xbuf *xbuf_find(int fi, uint32_t handle)
{
	for (int i = 0; i < ex.nbufs; i++)
		if (ex.bufs[i].file == fi && ex.bufs[i].handle == handle)
			return &ex.bufs[i];
	return NULL;
}

/* ---- verification ------------------------------------------------------------------------ */

static void verify_fds(void)
{
	struct xfd now[X_FDS];
	int n = read_fds(now, X_FDS);

	for (int i = 0; i < ex.nfds; i++) {
		const struct xfd *w = &ex.fds[i];
		const struct xfd *g = NULL;
		struct wl_fd *mf = wl_fd_find(w->fd);

		for (int j = 0; j < n; j++)
			if (now[j].fd == w->fd)
				g = &now[j];
		if (!g) {
			note(false, "fd %d (%s) is missing", w->fd, w->link);
			continue;
		}
		note(g->fdflags == w->fdflags, "fd %d: F_GETFD %#x (before: %#x)", w->fd, g->fdflags, w->fdflags);
		char gfl[96], wfl[96];
		note(g->flflags == w->flflags, "fd %d: F_GETFL %#o %s (before: %#o %s)", w->fd, g->flflags,
		     fl_str(g->flflags, gfl, sizeof(gfl)), w->flflags, fl_str(w->flflags, wfl, sizeof(wfl)));
		if (mf && mf->kind == WL_FD_DRM) {
			struct wl_file *f = &wl.files[mf->file];
			char driver[32];

			if (!g->chr || major(g->rdev) != 226) {
				note(false, "fd %d: %s is not a DRM device", w->fd, g->link);
				continue;
			}
			wl_driver_name(w->fd, driver, sizeof(driver));
			note(strcmp(driver, f->driver) == 0, "fd %d: driver %s (before: %s)", w->fd, driver, f->driver);
			if (other_node)
				note(true, "fd %d: %s %u:%u (before: %s %u:%u)", w->fd, g->link, major(g->rdev),
				     minor(g->rdev), w->link, major(w->rdev), minor(w->rdev));
			else
				note(g->rdev == w->rdev && strcmp(g->link, w->link) == 0, "fd %d: %s %u:%u (before: %s %u:%u)",
				     w->fd, g->link, major(g->rdev), minor(g->rdev), w->link, major(w->rdev), minor(w->rdev));
		} else if (mf && mf->kind == WL_FD_DMABUF) {
			bool dmabuf = strncmp(g->link, "/dmabuf:", 8) == 0 || strncmp(g->link, "anon_inode:dmabuf", 17) == 0;

			note(dmabuf || degraded, "fd %d: %s (before: %s)%s", w->fd, g->link, w->link,
			     dmabuf ? "" : " (not a dma-buf: accepted in degraded mode)");
		} else {
			note(strcmp(g->link, w->link) == 0, "fd %d: %s (before: %s)", w->fd, g->link, w->link);
		}
	}
	for (int j = 0; j < n; j++) {
		bool known = false;

		for (int i = 0; i < ex.nfds; i++)
			known |= ex.fds[i].fd == now[j].fd;
		if (!known)
			note(false, "fd %d (%s, F_GETFD %#x) is open but was not before the dump", now[j].fd,
			     now[j].link, now[j].fdflags);
	}
}

/* fds of one model file are one open file, of two files two (kcmp); a child shares with P. */
static void verify_sharing(void)
{
	pid_t self = getpid(), parent = getppid();

	for (int i = 0; i < wl.nfds; i++) {
		for (int j = i + 1; j < wl.nfds; j++) {
			const struct wl_fd *a = &wl.fds[i], *b = &wl.fds[j];
			bool want = a->kind == b->kind && a->file == b->file &&
				    (a->kind == WL_FD_DRM || a->handle == b->handle);
			long r = syscall(SYS_kcmp, self, self, KCMP_FILE, a->fd, b->fd);

			if (a->kind != b->kind)
				continue;
			note(r >= 0 && (r == 0) == want, "fds %d and %d: kcmp says %s, expected %s", a->fd, b->fd,
			     r < 0 ? strerror(errno) : r == 0 ? "one open file" : "two open files",
			     want ? "one" : "two");
		}
		if (wl.is_child) {
			long r = syscall(SYS_kcmp, parent, self, KCMP_FILE, wl.fds[i].fd, wl.fds[i].fd);

			note(r == 0, "fd %d is the same open file as the parent's fd %d (kcmp: %s)", wl.fds[i].fd,
			     wl.fds[i].fd, r < 0 ? strerror(errno) : r == 0 ? "same" : "different");
		}
	}
}

/* The exact handle set of every file this process holds an fd of, probed with PRIME export
 * (a present handle gives a dma-buf whose size is the buffer's; an absent one ENOENT). */
static void verify_handles(void)
{
	for (int fi = 0; fi < wl.nfiles; fi++) {
		struct wl_file *f = &wl.files[fi];
		int fd = fd_of_file(fi);
		uint32_t max = 0;
		char present[256] = "", *p = present;

		if (fd < 0)
			continue;
		for (int h = 0; h < f->nhandles; h++)
			if (f->handles[h].handle > max)
				max = f->handles[h].handle;
		for (uint32_t h = 1; h <= max + 4; h++) {
			struct wl_handle *m = wl_handle_find(f, h);
			int d = export_fd(fd, h);
			off_t size = d >= 0 ? lseek(d, 0, SEEK_END) : -1;

			if (d >= 0) {
				close(d);
				p += snprintf(p, present + sizeof(present) - p, " %u", h);
			}
			if (degraded)
				continue;
			if (m && d < 0)
				note(false, "file %s (fd %d): handle %u is missing (PRIME export: %s)", f->label, fd, h,
				     strerror(-d));
			else if (m)
				note((uint64_t)size == m->size, "file %s (fd %d): handle %u present, %lld bytes (before: %llu)",
				     f->label, fd, h, (long long)size, (unsigned long long)m->size);
			else if (d >= 0)
				note(false, "file %s (fd %d): handle %u exists (%lld bytes) but did not before the dump "
				     "(a filler left behind?)", f->label, fd, h, (long long)size);
			else
				note(d == -ENOENT, "file %s (fd %d): handle %u absent (%s)", f->label, fd, h, strerror(-d));
		}
		fprintf(rep, "info file %s (fd %d): live handles:%s\n", f->label, fd, present);
	}
}

static void verify_contents(void)
{
	char err[200];

	for (int i = 0; i < ex.nbufs; i++) {
		const struct xbuf *b = &ex.bufs[i];
		uint64_t sum;

		if (buffer_sum(b->file, b->handle, b->size, &sum, err, sizeof(err)) != 0)
			note(false, "buffer %s.%u: %s", wl.files[b->file].label, b->handle, err);
		else
			note(sum == b->sum, "buffer %s.%u: contents %s", wl.files[b->file].label, b->handle,
			     sum == b->sum ? "as before" : "differ");
	}
}

/* A byte changed through one view of a buffer is seen through the other. */
static void write_through(const struct xmap *x)
{
	volatile uint8_t *old = (volatile uint8_t *)(uintptr_t)x->start;
	const struct xbuf *b = xbuf_find(x->file, x->handle);
	char err[200];
	uint8_t *fresh;
	bool seen = false;
	int sig;

	if (!b)
		return;
	fresh = map_buffer(x->file, x->handle, b->size, PROT_READ | PROT_WRITE, err, sizeof(err));
	if (!fresh) {
		note(false, "mapping %#llx: fresh mapping of %s.%u: %s", (unsigned long long)x->start,
		     wl.files[x->file].label, x->handle, err);
		return;
	}
	if (x->prot & PROT_WRITE)
		sig = guarded_poke(old, fresh + x->delta, &seen);
	else
		sig = guarded_poke(fresh + x->delta, old, &seen);
	note(!sig && seen, "mapping %#llx: a write through %s is seen through the other (%s.%u)%s%s",
	     (unsigned long long)x->start, (x->prot & PROT_WRITE) ? "it" : "a fresh mapping",
	     wl.files[x->file].label, x->handle, sig ? ": fault: " : "", sig ? strsignal(-sig) : "");
	munmap(fresh, b->size);
}

static void verify_maps(void)
{
	for (int i = 0; i < ex.nmaps; i++) {
		const struct xmap *x = &ex.maps[i];
		struct vma v;
		char want[8];
		int fd = fd_of_file(x->file);

		snprintf(want, sizeof(want), "%s", prot_str(x->prot));
		if (!find_vma(x->start, &v)) {
			note(false, "mapping %#llx+%#llx (%s.%u): nothing mapped there", (unsigned long long)x->start,
			     (unsigned long long)x->length, wl.files[x->file].label, x->handle);
			continue;
		}
		note(v.end - v.start == x->length && strncmp(v.perms, want, 2) == 0,
		     "mapping %#llx: length %#llx %s (before: %#llx %s), now %s %s", (unsigned long long)x->start,
		     (unsigned long long)(v.end - v.start), v.perms, (unsigned long long)x->length, want, v.perms,
		     v.path[0] ? v.path : "[anonymous]");
		if (v.end - v.start < x->length)
			continue;
		uint64_t sum = 0;
		int sig = guarded_fnv((const void *)(uintptr_t)x->start, x->length, &sum);
		note(!sig && sum == x->sum, "mapping %#llx: contents %s", (unsigned long long)x->start,
		     sig ? strsignal(-sig) : sum == x->sum ? "as before" : "differ");
		if (sig)
			continue;
		if (degraded)
			continue;
		int64_t base = dumb_offset(fd, x->handle);
		note(v.perms[3] == 's' && strncmp(v.path, "/dev/dri/", 9) == 0 && base >= 0 &&
		     v.offset == (uint64_t)base + x->delta,
		     "mapping %#llx: %s of %s at offset %#llx, %s.%u's offset is %#llx + %#llx",
		     (unsigned long long)x->start, v.perms[3] == 's' ? "shared" : "private", v.path,
		     (unsigned long long)v.offset, wl.files[x->file].label, x->handle, (unsigned long long)base,
		     (unsigned long long)x->delta);
		write_through(x);
	}
}

/* dma-buf fds export the buffer their handle names: size, contents, and importing one into
 * a file that has that buffer returns the existing handle. */
static void verify_dmabufs(void)
{
	for (int i = 0; i < wl.nfds; i++) {
		const struct wl_fd *e = &wl.fds[i];
		const struct xbuf *b;
		off_t size;
		void *p;

		if (e->kind != WL_FD_DMABUF || !(b = xbuf_find(e->file, e->handle)))
			continue;
		size = lseek(e->fd, 0, SEEK_END);
		note((uint64_t)size == b->size, "dma-buf fd %d: size %lld (buffer %s.%u: %llu)", e->fd,
		     (long long)size, wl.files[e->file].label, e->handle, (unsigned long long)b->size);
		p = mmap(NULL, b->size, PROT_READ, MAP_SHARED, e->fd, 0);
		if (p == MAP_FAILED) {
			note(false, "dma-buf fd %d: mmap: %s", e->fd, strerror(errno));
		} else {
			uint64_t sum = 0;
			int sig = guarded_fnv(p, b->size, &sum);

			note(!sig && sum == b->sum, "dma-buf fd %d: contents are %s.%u's%s%s", e->fd,
			     wl.files[e->file].label, e->handle, sig ? ": fault: " : "", sig ? strsignal(-sig) : "");
			munmap(p, b->size);
		}
		/* every file holding an import of this buffer must get that handle back */
		for (int fi = 0; fi < wl.nfiles; fi++) {
			int fd = fd_of_file(fi);

			for (int k = 0; fd >= 0 && k < ex.nbufs; k++) {
				const struct xbuf *o = &ex.bufs[k];
				int64_t h;

				if (o->file != fi || o->sum != b->sum || o->size != b->size)
					continue;
				h = import_fd(fd, e->fd);
				note(h == o->handle, "dma-buf fd %d imported into file %s: handle %lld (expected %u)",
				     e->fd, wl.files[fi].label, (long long)h, o->handle);
			}
		}
	}
	/* a buffer shared by two files (PRIME import) is still one buffer */
	for (int i = 0; i < ex.nbufs; i++) {
		for (int j = 0; j < ex.nbufs; j++) {
			const struct xbuf *a = &ex.bufs[i], *b = &ex.bufs[j];
			int d;
			int64_t h;

			if (a->file == b->file || a->sum != b->sum || a->size != b->size)
				continue;
			d = export_fd(fd_of_file(a->file), a->handle);
			if (d < 0) {
				note(false, "buffer %s.%u: PRIME export: %s", wl.files[a->file].label, a->handle, strerror(-d));
				continue;
			}
			h = import_fd(fd_of_file(b->file), d);
			close(d);
			note(h == b->handle, "buffer %s.%u is %s.%u (import gives handle %lld)", wl.files[a->file].label,
			     a->handle, wl.files[b->file].label, b->handle, (long long)h);
		}
	}
}

static void verify(void)
{
	char path[300];
	struct expect *disk = malloc(sizeof(*disk));
	FILE *in;

	report_open("result");
	dirfile(path, sizeof(path), "expect.%d.bin", (int)getpid());
	in = fopen(path, "re");
	if (!disk || !in || fread(disk, sizeof(*disk), 1, in) != 1) {
		note(false, "cannot read %s (%s)", path, strerror(errno));
	} else {
		note(memcmp(disk, &ex, sizeof(ex)) == 0, "the expectation in memory is the one written before the dump");
		ex = *disk;           /* check against what was written */
	}
	if (in)
		fclose(in);
	free(disk);
	verify_fds();
	verify_sharing();
	verify_maps();            /* first: the checks after it map and unmap */
	verify_handles();         /* present handles, before anything that could create one */
	if (!degraded) {
		verify_contents();
		verify_dmabufs();
	}
	report_close("result");
}

/* Restored mappings have new fake offsets, and the node may have changed: update the model
 * (for the truth of later phases) from what the kernel says now. */
static void refresh_model(void)
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

/* ---- work after restore ------------------------------------------------------------------ */

static void expect_handle(const char *what, uint32_t got, uint32_t want)
{
	if (degraded)
		note(true, "%s: handle %u", what, got);
	else
		note(got == want, "%s: handle %u (lowest free: %u)", what, got, want);
}

static void check_buffer_rw(int fd, uint32_t handle, uint64_t size, unsigned seed)
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

/* Degraded mode: the handles are whatever the restore left; the model follows the kernel. */
static void resync_handles(void)
{
	for (int fi = 0; fi < wl.nfiles; fi++) {
		struct wl_file *f = &wl.files[fi];
		int fd = fd_of_file(fi);

		if (fd < 0)
			continue;
		f->nhandles = 0;
		f->ngrants = 0;
		for (uint32_t h = 1; h <= 32; h++) {
			int d = export_fd(fd, h);

			if (d < 0)
				continue;
			f->handles[f->nhandles++] = (struct wl_handle){ .handle = h, .size = (uint64_t)lseek(d, 0, SEEK_END),
									.origin = "dumb" };
			close(d);
		}
	}
}

static void work_parent(int a, int b, int r)
{
	report_open("work");
	uint32_t n2 = wl_create_dumb(a, 1024, 2, 32);
	expect_handle("A: new buffer", n2, 2);
	check_buffer_rw(a, n2, 2 * PAGE, 90);
	expect_handle("A: next new buffer", wl_create_dumb(a, 1024, 1, 32), 5);
	expect_handle("A: next new buffer", wl_create_dumb(a, 1024, 1, 32), 7);
	expect_handle("B: new buffer", wl_create_dumb(b, 1024, 3, 32), 3);
	int d = wl_export(a, n2, true);
	expect_handle("R: import of A's new buffer", wl_import(r, d), 2);
	wl_close(d);
	report_close("work");
}

static void work_child(void)
{
	/* the node the restored card0 file is on now (another minor with --other-node) */
	const char *card = wl_file_of_fd(3)->path;

	report_open("work");
	int n = wl_open(card, O_RDWR);
	note(true, "opened %s as fd %d", card, n);
	uint32_t h = wl_create_dumb(n, 1024, 2, 32);
	note(h == 1, "new file: first buffer gets handle %u (expected 1)", h);
	check_buffer_rw(n, h, 2 * PAGE, 91);
	report_close("work");
}

/* ---- main -------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
	char text[32];

	close_range(3, ~0u, 0);            /* inherited ports (virtme: 3-5) would stop criu */
	wl_init(argc, argv);
	guard_install();
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--degraded") == 0)
			degraded = true;
		else if (strcmp(argv[i], "--other-node") == 0)
			other_node = true;
		else
			wl_die("unknown option %s", argv[i]);
	}
	snprintf(text, sizeof(text), "%d\n", (int)getpid());
	write_file("pid.parent", text);

	int a = wl_open(WL_CARD, O_RDWR);
	int b = wl_open(WL_CARD, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	int r = wl_open(WL_RENDER, O_RDWR | O_CLOEXEC);
	static const uint32_t apages[] = { 0, 4, 1, 4, 2, 1, 3 }, bpages[] = { 0, 1, 2, 1, 5 };

	for (uint32_t i = 1; i <= 6; i++)
		if (wl_create_dumb(a, 1024, apages[i], 32) != i)
			wl_die("A: handle %u expected", i);
	wl_destroy_dumb(a, 2);
	wl_destroy_dumb(a, 5);
	uint8_t *m1 = wl_mmap(a, 1, 4 * PAGE, PROT_READ | PROT_WRITE);
	fill(m1, 4 * PAGE, 1);
	uint8_t *m1ro = wl_mmap(a, 1, 4 * PAGE, PROT_READ);
	uint8_t *m3 = wl_mmap(a, 3, 4 * PAGE, PROT_READ | PROT_WRITE);
	fill(m3, 4 * PAGE, 3);
	wl_munmap(m3 + 3 * PAGE, PAGE);
	fill_through_temp_map(a, 4, 2 * PAGE, 4);
	fill_through_temp_map(a, 6, 3 * PAGE, 6);

	for (uint32_t i = 1; i <= 4; i++)
		if (wl_create_dumb(b, 1024, bpages[i], 32) != i)
			wl_die("B: handle %u expected", i);
	wl_destroy_dumb(b, 1);
	wl_destroy_dumb(b, 3);
	uint8_t *mb2 = wl_mmap(b, 2, 2 * PAGE, PROT_READ | PROT_WRITE);
	fill(mb2, 2 * PAGE, 12);
	fill_through_temp_map(b, 4, 5 * PAGE, 14);

	int t = wl_export(a, 6, true);
	if (wl_import(b, t) != 1)
		wl_die("B: the import of A's 6 should take the free handle 1");
	wl_close(t);
	int e = wl_export(a, 4, true);
	if (wl_import(r, e) != 1)
		wl_die("R: the import of A's 4 should be handle 1");
	wl_dup3(a, 20, false);

	pid_t child = wl_fork();
	if (child == 0) {
		snprintf(text, sizeof(text), "%d\n", (int)getpid());
		write_file("pid.child", text);
		wl_close(b);
		wl_close(20);
		wl_munmap(m1ro, 4 * PAGE);
		wl_munmap(mb2, 2 * PAGE);
		wl_mmap(a, 6, 3 * PAGE, PROT_READ | PROT_WRITE);
	}
	printf("%s %d: fds A=%d B=%d R=%d E=%d, state built\n", child ? "parent" : "child", (int)getpid(), a, b,
	       r, e);
	record_expect();
	wl_phase(1);

	/* restored (or never dumped): the parent verifies first, then the child */
	if (child) {
		verify();
		write_file("pverified", "");
	} else {
		wait_file("pverified");
		verify();
	}
	if (degraded)
		resync_handles();
	else
		refresh_model();
	wl_phase(2);

	if (child)
		work_parent(a, b, r);
	else
		work_child();
	wl_phase(3);

	if (child == 0)
		return 0;
	wl_finish();
	snprintf(text, sizeof(text), "done.%d", (int)getpid());
	write_file(text, "0\n");
	return 0;
}
