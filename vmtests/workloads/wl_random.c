/* SPDX-License-Identifier: MIT */
/*
 * Randomized DRM state for checkpoint/restore (guest/criu_random.sh): `wl_random DIR SEED`
 * builds a random state from SEED alone (the same seed, the same operations) on WL_CARD's
 * driver (vgem by default) in one to four processes, with the wl_* wrappers recording the
 * ground truth, then follows wl_criu's protocol (see wl_criu.c): pid.parent / pid.child,
 * expect.<pid>, phase 1 (the harness dumps and restores), every process verifies itself in
 * turn (result.<pid>), phase 2, work (work.<pid>: a new file and buffer), phase 3, done.<pid>.
 *
 * Operations, drawn per process from a stream of SEED, the process's index and a counter:
 * open (card or render node, O_CLOEXEC and O_NONBLOCK at random), create a dumb buffer (1-4
 * pages, its own byte pattern), close a handle, map a buffer whole (read-write, written, or
 * read-only), unmap a mapping (whole, or its last page), export a buffer (a dma-buf fd kept),
 * import a kept dma-buf into another file, dup an fd (dup, or dup3 to a free number from 20
 * up), close an fd, exec (itself: close-on-exec fds and every mapping go), and in the first
 * process fork (up to three children; a child may exit before the dump).
 *
 * Rules that keep the truth exact (the model cannot follow the rest): only one process
 * changes a file's handles, so handle and mapping operations use the files the process
 * opened after its last fork (owned files); a handle is not closed while it is mapped or a
 * dma-buf fd of this process exports it; the last fd of a file is not closed while a mapping
 * of it remains. Buffers are created on card nodes only (render nodes refuse MODE_CREATE_DUMB
 * and MODE_MAP_DUMB: they get imports). Only buffers a file made are exported (an imported
 * one's export is the first exporter's dma-buf file again). Without PRIME, no export or import.
 *
 * The operations are printed to stdout (`op <proc> <n>: ...`): a failing seed is replayed by
 * running it again.
 */
#define _GNU_SOURCE
#include "wl_criu.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

bool degraded, other_node, have_prime;

#define MAX_CHILDREN 3
#define OPS_MIN      8
#define OPS_SPAN     17 /* 8..24 operations per process */

static uint64_t seed;
static unsigned proc;  /* 0: the first process; 1..3: its children in fork order */
static unsigned step;  /* the next operation of this process */
static uint32_t owned; /* bit fi: file fi was opened by this process after its last fork */
static unsigned pattern = 1;
static unsigned tries; /* operations that did not apply at this step */

static uint64_t mix(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* splitmix64 of (seed, process, step, try, k): the same draw at the same position, across exec */
static uint64_t draw(unsigned k)
{
	return mix(seed ^ ((uint64_t)proc << 56) ^ ((uint64_t)step << 24) ^ ((uint64_t)tries << 12) ^ k);
}

/* the process's fixed properties (its number of operations, ...): no step involved */
static uint64_t trait(unsigned p, unsigned k)
{
	return mix(seed ^ ((uint64_t)p << 56) ^ 0xfeedull << 32 ^ k);
}

static unsigned pick(unsigned k, unsigned n)
{
	return n ? (unsigned)(draw(k) % n) : 0;
}

static bool is_card(int fi)
{
	return strstr(wl.files[fi].path, "card") != NULL;
}

static int nfds_of_file(int fi)
{
	int n = 0;

	for (int i = 0; i < wl.nfds; i++)
		n += wl.fds[i].kind == WL_FD_DRM && wl.fds[i].file == fi;
	return n;
}

static bool file_mapped(int fi)
{
	for (int i = 0; i < wl.nmaps; i++)
		if (wl.maps[i].file == fi)
			return true;
	return false;
}

static bool exported_from(int fi)
{
	for (int i = 0; i < wl.nfds; i++)
		if (wl.fds[i].kind == WL_FD_DMABUF && wl.fds[i].file == fi)
			return true;
	return false;
}

static bool handle_busy(int fi, uint32_t h)
{
	for (int i = 0; i < wl.nmaps; i++)
		if (wl.maps[i].file == fi && wl.maps[i].handle == (int64_t)h)
			return true;
	for (int i = 0; i < wl.nfds; i++)
		if (wl.fds[i].kind == WL_FD_DMABUF && wl.fds[i].file == fi && wl.fds[i].handle == h)
			return true;
	return false;
}

static int total_handles(void)
{
	int n = 0;

	for (int fi = 0; fi < wl.nfiles; fi++)
		if (fd_of_file(fi) >= 0)
			n += wl.files[fi].nhandles;
	return n;
}

/* the k-th owned live file (card only if `card`), or -1 */
static int owned_file(unsigned k, bool card, int except)
{
	int c[WL_MAX_FILES], n = 0;

	for (int fi = 0; fi < wl.nfiles; fi++)
		if ((owned & (1u << fi)) && fd_of_file(fi) >= 0 && (!card || is_card(fi)) && fi != except)
			c[n++] = fi;
	return n ? c[pick(k, (unsigned)n)] : -1;
}

static void op(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void op(const char *fmt, ...)
{
	va_list ap;

	printf("op %u %u: ", proc, step);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* ---- the operations: each does nothing (false) where it does not apply ------------------ */

static bool do_open(void)
{
	int fl = O_RDWR | (pick(2, 2) ? O_CLOEXEC : 0) | (pick(3, 4) ? 0 : O_NONBLOCK);
	const char *node = pick(1, 3) ? WL_CARD : WL_RENDER;

	int live = 0;

	for (int fi = 0; fi < wl.nfiles; fi++)
		live += fd_of_file(fi) >= 0;
	if (live >= 6 || wl.nfiles >= WL_MAX_FILES - 2 || wl.nfds >= 16) /* room left for the work's file */
		return false;
	int fd = wl_open(node, fl);
	owned |= 1u << (wl_file_of_fd(fd) - wl.files);
	op("open %s flags %#x -> fd %d", node, fl, fd);
	return true;
}

static bool do_create(void)
{
	int fi = owned_file(1, true, -1);
	uint32_t pages = 1 + pick(2, 4);

	if (fi < 0 || total_handles() >= 24 || wl.files[fi].nhandles >= 8)
		return false;
	int fd = fd_of_file(fi);
	uint32_t h = wl_create_dumb(fd, 1024, pages, 32);
	fill_through_temp_map(fd, h, pages * PAGE, pattern++);
	op("create %u pages on %s -> handle %u", pages, wl.files[fi].label, h);
	return true;
}

static bool do_gem_close(void)
{
	int fi = owned_file(1, false, -1);

	if (fi < 0 || wl.files[fi].nhandles == 0)
		return false;
	uint32_t h = wl.files[fi].handles[pick(2, (unsigned)wl.files[fi].nhandles)].handle;
	if (handle_busy(fi, h))
		return false;
	wl_gem_close(fd_of_file(fi), h);
	op("gem_close %s.%u", wl.files[fi].label, h);
	return true;
}

static bool do_map(void)
{
	int fi = owned_file(1, true, -1);

	if (fi < 0 || wl.files[fi].nhandles == 0 || wl.nmaps >= 12)
		return false;
	struct wl_handle *h = &wl.files[fi].handles[pick(2, (unsigned)wl.files[fi].nhandles)];
	bool rw = pick(3, 3) != 0;
	uint8_t *p = wl_mmap(fd_of_file(fi), h->handle, h->size, rw ? PROT_READ | PROT_WRITE : PROT_READ);
	if (rw)
		fill(p, h->size, pattern++);
	op("map %s.%u %s at %p", wl.files[fi].label, h->handle, rw ? "rw, written" : "ro", (void *)p);
	return true;
}

static bool do_unmap(void)
{
	if (wl.nmaps == 0)
		return false;
	struct wl_map m = wl.maps[pick(1, (unsigned)wl.nmaps)];
	bool tail = m.length > PAGE && pick(2, 2);
	uint64_t at = tail ? m.start + m.length - PAGE : m.start, len = tail ? PAGE : m.length;

	wl_munmap((void *)at, len);
	op("munmap %#llx+%#llx (%s)", (unsigned long long)at, (unsigned long long)len,
	   tail ? "its last page" : "whole");
	return true;
}

static bool do_export(void)
{
	int fi = owned_file(1, false, -1);

	if (!have_prime || fi < 0 || wl.files[fi].nhandles == 0 || wl.nfds >= 16)
		return false;
	/* only a buffer the file made: exporting an imported one gives the first exporter's dma-buf
	 * file again (the GEM object keeps its dma-buf), which the model cannot name */
	struct wl_handle *hd = &wl.files[fi].handles[pick(2, (unsigned)wl.files[fi].nhandles)];
	if (strcmp(hd->origin, "dumb") != 0)
		return false;
	uint32_t h = hd->handle;
	int d = wl_export(fd_of_file(fi), h, pick(3, 2));
	op("export %s.%u -> dma-buf fd %d", wl.files[fi].label, h, d);
	return true;
}

static bool do_import(void)
{
	int bufs[WL_MAX_FDS], n = 0;

	if (!have_prime || total_handles() >= 24)
		return false;
	for (int i = 0; i < wl.nfds; i++)
		if (wl.fds[i].kind == WL_FD_DMABUF && wl_handle_find(&wl.files[wl.fds[i].file], wl.fds[i].handle))
			bufs[n++] = i;
	if (n == 0)
		return false;
	struct wl_fd d = wl.fds[bufs[pick(1, (unsigned)n)]];
	int fi = owned_file(2, false, d.file);
	if (fi < 0 || wl.files[fi].nhandles >= 8)
		return false;
	uint32_t h = wl_import(fd_of_file(fi), d.fd);
	op("import dma-buf fd %d into %s -> handle %u", d.fd, wl.files[fi].label, h);
	return true;
}

static bool do_dup(void)
{
	if (wl.nfds == 0 || wl.nfds >= 16)
		return false;
	int fd = wl.fds[pick(1, (unsigned)wl.nfds)].fd, to = 20 + (int)pick(2, 20);

	if (pick(3, 2) && !wl_fd_find(to)) {
		bool ce = pick(4, 2);
		wl_dup3(fd, to, ce);
		op("dup3 %d -> %d%s", fd, to, ce ? " O_CLOEXEC" : "");
	} else {
		op("dup %d -> %d", fd, wl_dup(fd));
	}
	return true;
}

static bool do_close(void)
{
	if (wl.nfds == 0)
		return false;
	struct wl_fd e = wl.fds[pick(1, (unsigned)wl.nfds)];

	if (e.kind == WL_FD_DRM && nfds_of_file(e.file) == 1 && (file_mapped(e.file) || exported_from(e.file)))
		return false;
	wl_close(e.fd);
	op("close fd %d", e.fd);
	return true;
}

/* ---- exec and fork ------------------------------------------------------------------------ */

static bool do_exec(void)
{
	char a_seed[24], a_proc[8], a_step[12], a_owned[12], a_pat[12];
	char *extra[] = {a_seed, a_proc, a_step, a_owned, a_pat, NULL};

	if (pick(1, 3)) /* rarer than the rest */
		return false;
	/* a dma-buf fd that survives exec keeps its exporter's file with a surviving fd */
	for (int i = 0; i < wl.nfds; i++) {
		struct wl_fd *d = &wl.fds[i];
		bool kept = false;

		if (d->kind != WL_FD_DMABUF || d->cloexec)
			continue;
		for (int j = 0; j < wl.nfds; j++)
			kept |= wl.fds[j].kind == WL_FD_DRM && wl.fds[j].file == d->file && !wl.fds[j].cloexec;
		if (!kept)
			return false;
	}
	op("exec");
	step++;
	snprintf(a_seed, sizeof(a_seed), "%llu", (unsigned long long)seed);
	snprintf(a_proc, sizeof(a_proc), "%u", proc);
	snprintf(a_step, sizeof(a_step), "%u", step);
	/* close-on-exec fds go: a file without an fd left is no longer this process's */
	snprintf(a_owned, sizeof(a_owned), "%u", owned);
	snprintf(a_pat, sizeof(a_pat), "%u", pattern);
	wl_exec_self(extra);
}

static bool (*const ops[])(void) = {do_open,  do_create, do_create, do_gem_close, do_map,   do_map,
				    do_unmap, do_export, do_import, do_dup,       do_close, do_exec};

static unsigned nops(unsigned p)
{
	return OPS_MIN + (unsigned)(trait(p, 1) % OPS_SPAN);
}

static unsigned nchildren(void)
{
	return (unsigned)(trait(0, 2) % (MAX_CHILDREN + 1));
}

static bool short_lived(unsigned p)
{
	return trait(p, 3) % 4 == 0;
}

/* the first process's step at which it forks child c (1-based) */
static unsigned fork_step(unsigned c)
{
	return nops(0) * c / (nchildren() + 1);
}

static void child_ops(unsigned c);

static void run_ops(void)
{
	unsigned n = nops(proc);

	while (step < n) {
		for (unsigned c = 1; proc == 0 && c <= nchildren(); c++)
			if (fork_step(c) == step && wl.nchildren + 0u < c) {
				pid_t pid = wl_fork();

				if (pid == 0)
					child_ops(c); /* does not return */
				owned = 0;            /* every file so far is the child's too */
				op("fork child %u -> pid %d%s", c, (int)pid,
				   short_lived(c) ? " (exits before the dump)" : "");
			}
		/* a process with no file of its own opens one first: most operations need one */
		bool done = owned_file(0, false, -1) < 0 && do_open();

		for (tries = 0; !done && tries < 8; tries++)
			done = ops[pick(0, sizeof(ops) / sizeof(ops[0]))]();
		tries = 0;
		step++;
	}
}

/* ---- after the operations: wl_criu's protocol ------------------------------------------- */

static void after_ops(void) __attribute__((noreturn));
static void after_ops(void)
{
	char text[200];

	if (proc != 0 && short_lived(proc)) {
		op("exit");
		fflush(NULL);
		exit(0);
	}
	if (proc == 0) {
		pid_t gone[MAX_CHILDREN];
		int ngone = 0;

		for (unsigned c = 1; c <= nchildren() && (int)c <= wl.nchildren; c++)
			if (short_lived(c))
				gone[ngone++] = wl.children[c - 1];
		for (int i = 0; i < ngone; i++)
			wl_reap(gone[i]);
		text[0] = '\0';
		for (int i = 0; i < wl.nchildren; i++)
			snprintf(text + strlen(text), sizeof(text) - strlen(text), "%d\n", (int)wl.children[i]);
		wl_write_file("pid.child", text);
	}
	/* every process's operations are over before any records its expectation: a buffer two
	 * processes hold may be written by one of them until then */
	snprintf(text, sizeof(text), "opsdone.%u", proc);
	wl_write_file(text, "");
	for (unsigned q = 0; q <= nchildren(); q++)
		if (q == 0 || !short_lived(q)) {
			snprintf(text, sizeof(text), "opsdone.%u", q);
			wait_file(text);
		}
	printf("process %u (pid %d): state built, %d fds, %d mappings\n", proc, (int)getpid(), wl.nfds, wl.nmaps);
	record_expect();
	wl_phase(1);

	/* restored (or never dumped): one process after the other, the first process first */
	for (unsigned q = 0; q < proc; q++) {
		snprintf(text, sizeof(text), "verified.%u", q);
		wait_file(text);
	}
	verify();
	snprintf(text, sizeof(text), "verified.%u", proc);
	wl_write_file(text, "");
	for (unsigned c = 1; proc == 0 && c <= nchildren(); c++)
		if (short_lived(c)) {
			snprintf(text, sizeof(text), "verified.%u", c);
			wl_write_file(text, "");
		}
	refresh_model();
	wl_phase(2);

	report_open("work");
	int n = wl_open(WL_CARD, O_RDWR);
	uint32_t h = wl_create_dumb(n, 1024, 2, 32);
	note(h == 1, "a new file's first buffer gets handle %u (expected 1)", h);
	check_buffer_rw(n, h, 2 * PAGE, 90 + proc);
	report_close("work");
	wl_phase(3);

	if (proc == 0) {
		wl_finish();
		snprintf(text, sizeof(text), "done.%d", (int)getpid());
		wl_write_file(text, "0\n");
	}
	fflush(NULL);
	exit(0);
}

static void child_ops(unsigned c)
{
	proc = c;
	step = 0;
	owned = 0; /* every file so far is the parent's too */
	pattern = 1000 * c + 1;
	run_ops();
	after_ops();
}

int main(int argc, char **argv)
{
	char text[32];
	int probe;

	wl_init(argc, argv);
	guard_install();
	share_by_label = true;
	if (wl_after_exec(argc, argv)) {
		if (argc < 8)
			wl_die("after exec: wl_random DIR --after-exec SEED PROC STEP OWNED PATTERN");
		seed = strtoull(argv[3], NULL, 10);
		proc = (unsigned)atoi(argv[4]);
		step = (unsigned)atoi(argv[5]);
		owned = (uint32_t)strtoul(argv[6], NULL, 10);
		pattern = (unsigned)atoi(argv[7]);
	} else {
		close_range(3, ~0u, 0); /* inherited ports (virtme: 3-5) would stop criu */
		if (argc < 3)
			wl_die("usage: wl_random DIR SEED");
		seed = strtoull(argv[2], NULL, 10);
		snprintf(text, sizeof(text), "%d\n", (int)getpid());
		wl_write_file("pid.parent", text);
		printf("seed %llu: %u operations in the first process, %u children\n", (unsigned long long)seed,
		       nops(0), nchildren());
	}
	probe = open(WL_CARD, O_RDWR | O_CLOEXEC);
	if (probe < 0)
		wl_die("open %s", WL_CARD);
	have_prime = wl_has_prime(probe);
	close(probe);
	run_ops(); /* from the start, or from where exec left it */
	after_ops();
}
