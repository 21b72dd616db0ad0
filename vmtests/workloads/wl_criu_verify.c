/* SPDX-License-Identifier: MIT */
/*
 * The CRIU workload's expectation (see wl_criu.c): what it records before the dump, and the
 * checks after the restore (fds, sharing, mappings, handles, contents, dma-bufs).
 */
#define _GNU_SOURCE
#include "wl_criu.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define KCMP_FILE 0

static struct expect ex; /* in memory: must come back as it was written */

/* ---- the expectation -------------------------------------------------------------------- */

void record_expect(void)
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
		*x = (struct xmap){.start = m->start,
				   .length = m->length,
				   .delta = m->offset - (uint64_t)base,
				   .sum = fnv((const uint8_t *)(uintptr_t)m->start, m->length),
				   .prot = m->prot,
				   .file = m->file,
				   .handle = (uint32_t)m->handle};
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
		fprintf(o, "fd %d: F_GETFD %#x F_GETFL %#o %s%s\n", ex.fds[i].fd, ex.fds[i].fdflags, ex.fds[i].flflags,
			ex.fds[i].link, ex.fds[i].chr ? " (char device)" : "");
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
		fprintf(o, "map %#llx+%#llx %s: %s.%u at +%#llx, fnv %016llx\n", (unsigned long long)ex.maps[i].start,
			(unsigned long long)ex.maps[i].length, prot_str(ex.maps[i].prot),
			wl.files[ex.maps[i].file].label, ex.maps[i].handle, (unsigned long long)ex.maps[i].delta,
			(unsigned long long)ex.maps[i].sum);
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
				note(g->rdev == w->rdev && strcmp(g->link, w->link) == 0,
				     "fd %d: %s %u:%u (before: %s %u:%u)", w->fd, g->link, major(g->rdev),
				     minor(g->rdev), w->link, major(w->rdev), minor(w->rdev));
		} else if (mf && mf->kind == WL_FD_DMABUF) {
			bool dmabuf =
				strncmp(g->link, "/dmabuf:", 8) == 0 || strncmp(g->link, "anon_inode:dmabuf", 17) == 0;

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

/* The expectation process `pid` wrote before the dump (expect.<pid>.bin), malloc'ed; NULL,
 * noted as a failure, when it cannot be read */
static struct expect *read_expect(pid_t pid)
{
	char path[300];
	struct expect *e = malloc(sizeof(*e));
	FILE *in;

	dirfile(path, sizeof(path), "expect.%d.bin", (int)pid);
	in = fopen(path, "re");
	if (!e || !in || fread(e, sizeof(*e), 1, in) != 1) {
		note(false, "cannot read %s (%s)", path, strerror(errno));
		free(e);
		e = NULL;
	}
	if (in)
		fclose(in);
	return e;
}

bool share_by_label;

/* share_by_label: a DRM fd of this child and one of its parent's of the same file label (one
 * open() that fork passed on) must be one open file; the parent's fds are its expectation's */
static void verify_shared_with_parent(void)
{
	pid_t parent = getppid();
	struct expect *pe = read_expect(parent);

	if (pe) {
		for (int i = 0; i < wl.nfds; i++) {
			const struct wl_fd *c = &wl.fds[i];

			for (int j = 0; c->kind == WL_FD_DRM && j < pe->model.nfds; j++) {
				const struct wl_fd *p = &pe->model.fds[j];
				long r;

				if (p->kind != WL_FD_DRM ||
				    strcmp(pe->model.files[p->file].label, wl.files[c->file].label) != 0)
					continue;
				r = syscall(SYS_kcmp, parent, getpid(), KCMP_FILE, p->fd, c->fd);
				note(r == 0, "fd %d (file %s) is the same open file as the parent's fd %d (kcmp: %s)",
				     c->fd, wl.files[c->file].label, p->fd,
				     r < 0    ? strerror(errno)
				     : r == 0 ? "same"
					      : "different");
				break;
			}
		}
	}
	free(pe);
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
			     r < 0    ? strerror(errno)
			     : r == 0 ? "one open file"
				      : "two open files",
			     want ? "one" : "two");
		}
		if (wl.is_child && !share_by_label) {
			long r = syscall(SYS_kcmp, parent, self, KCMP_FILE, wl.fds[i].fd, wl.fds[i].fd);

			note(r == 0, "fd %d is the same open file as the parent's fd %d (kcmp: %s)", wl.fds[i].fd,
			     wl.fds[i].fd,
			     r < 0    ? strerror(errno)
			     : r == 0 ? "same"
				      : "different");
		}
	}
}

/* The exact handle set of every file this process holds an fd of, probed with handle_size
 * (a present handle gives its buffer's size; an absent one ENOENT). */
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
			int64_t size = handle_size(fd, h);
			int d = size < 0 ? (int)size : 0;

			if (d >= 0)
				p += snprintf(p, present + sizeof(present) - p, " %u", h);
			if (degraded)
				continue;
			if (m && d < 0)
				note(false, "file %s (fd %d): handle %u is missing (probe: %s)", f->label, fd, h,
				     strerror(-d));
			else if (m)
				note((uint64_t)size == m->size,
				     "file %s (fd %d): handle %u present, %lld bytes (before: %llu)", f->label, fd, h,
				     (long long)size, (unsigned long long)m->size);
			else if (d >= 0)
				note(false,
				     "file %s (fd %d): handle %u exists (%lld bytes) but did not before the dump "
				     "(a filler left behind?)",
				     f->label, fd, h, (long long)size);
			else
				note(d == -ENOENT, "file %s (fd %d): handle %u absent (%s)", f->label, fd, h,
				     strerror(-d));
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
	     (unsigned long long)x->start, (x->prot & PROT_WRITE) ? "it" : "a fresh mapping", wl.files[x->file].label,
	     x->handle, sig ? ": fault: " : "", sig ? strsignal(-sig) : "");
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
		     sig             ? strsignal(-sig)
		     : sum == x->sum ? "as before"
				     : "differ");
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
		note((uint64_t)size == b->size, "dma-buf fd %d: size %lld (buffer %s.%u: %llu)", e->fd, (long long)size,
		     wl.files[e->file].label, e->handle, (unsigned long long)b->size);
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
				note(false, "buffer %s.%u: PRIME export: %s", wl.files[a->file].label, a->handle,
				     strerror(-d));
				continue;
			}
			h = import_fd(fd_of_file(b->file), d);
			close(d);
			note(h == b->handle, "buffer %s.%u is %s.%u (import gives handle %lld)",
			     wl.files[a->file].label, a->handle, wl.files[b->file].label, b->handle, (long long)h);
		}
	}
}

void verify(void)
{
	struct expect *disk;

	report_open("result");
	disk = read_expect(getpid());
	if (disk) {
		note(memcmp(disk, &ex, sizeof(ex)) == 0,
		     "the expectation in memory is the one written before the dump");
		ex = *disk; /* check against what was written */
	}
	free(disk);
	verify_fds();
	verify_sharing();
	if (wl.is_child && share_by_label)
		verify_shared_with_parent();
	verify_maps();    /* first: the checks after it map and unmap */
	verify_handles(); /* present handles, before anything that could create one */
	if (!degraded) {
		verify_contents();
		verify_dmabufs();
	}
	report_close("result");
}
