/* SPDX-License-Identifier: MIT */
/*
 * Workload library: the ground truth JSON (schema gpuwatch.truth/v1), one file per process
 * and phase, and the optional handle self-check.
 *
 * { "schema": "gpuwatch.truth/v1", "phase": 1, "pid": 42, "comm": "wl_prime",
 *   "fds":   [ { "fd": 3, "file": "42.0", "cloexec": false },
 *              { "fd": 6, "dmabuf": { "file": "42.0", "handle": 1 }, "cloexec": true } ],
 *   "mmaps": [ { "start": N, "length": N, "prot": "rw", "shared": true, "file": "42.0",
 *                "offset": N, "handle": 1 } ],            (handle null: no handle names it)
 *   "files": [ { "label": "42.0", "path": "/dev/dri/card0", "rdev": "226:0", "driver": "vgem",
 *                "flags": "O_RDWR", "handles_known": true, "changed_ns": N,
 *                "handles": [ { "handle": 1, "size": 16384, "origin": "dumb" } ],
 *                "undecoded_ioctls": [ "vgem ioctl 0x01" ],
 *                "framebuffers": [ { "id": 40, "width": 640, "height": 480, "handles": [ 1 ] } ],
 *                "crtcs": [ { "crtc": 35, "fb": 40, "hdisplay": 640, "vdisplay": 480, "connectors": 1 } ] } ] }
 * Only the files this process refers to (by fd, dma-buf fd or mapping) are listed.
 */
#define _GNU_SOURCE
#include "wl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = ((const struct wl_handle *)a)->handle, y = ((const struct wl_handle *)b)->handle;
	return (x > y) - (x < y);
}

static int cmp_fd(const void *a, const void *b)
{
	return ((const struct wl_fd *)a)->fd - ((const struct wl_fd *)b)->fd;
}

static int cmp_map(const void *a, const void *b)
{
	uint64_t x = ((const struct wl_map *)a)->start, y = ((const struct wl_map *)b)->start;
	return (x > y) - (x < y);
}

static void prot_string(int prot, char *buf)
{
	char *p = buf;

	if (prot & PROT_READ)
		*p++ = 'r';
	if (prot & PROT_WRITE)
		*p++ = 'w';
	if (prot & PROT_EXEC)
		*p++ = 'x';
	*p = '\0';
}

static void write_fds(FILE *o)
{
	qsort(wl.fds, wl.nfds, sizeof(wl.fds[0]), cmp_fd);
	fprintf(o, "  \"fds\": [");
	for (int i = 0; i < wl.nfds; i++) {
		struct wl_fd *e = &wl.fds[i];

		fprintf(o, "%s\n    { \"fd\": %d, ", i ? "," : "", e->fd);
		if (e->kind == WL_FD_DRM)
			fprintf(o, "\"file\": \"%s\", ", wl.files[e->file].label);
		else
			fprintf(o, "\"dmabuf\": { \"file\": \"%s\", \"handle\": %u }, ", wl.files[e->file].label,
				e->handle);
		fprintf(o, "\"cloexec\": %s }", e->cloexec ? "true" : "false");
	}
	fprintf(o, "\n  ],\n");
}

static void write_maps(FILE *o)
{
	char prot[4];

	qsort(wl.maps, wl.nmaps, sizeof(wl.maps[0]), cmp_map);
	fprintf(o, "  \"mmaps\": [");
	for (int i = 0; i < wl.nmaps; i++) {
		struct wl_map *m = &wl.maps[i];

		prot_string(m->prot, prot);
		fprintf(o,
			"%s\n    { \"start\": %llu, \"length\": %llu, \"prot\": \"%s\", \"shared\": %s, "
			"\"file\": \"%s\", \"offset\": %llu, \"handle\": ",
			i ? "," : "", (unsigned long long)m->start, (unsigned long long)m->length, prot,
			m->shared ? "true" : "false", wl.files[m->file].label, (unsigned long long)m->offset);
		if (m->handle < 0)
			fprintf(o, "null }");
		else
			fprintf(o, "%lld }", (long long)m->handle);
	}
	fprintf(o, "\n  ],\n");
}

static bool file_referenced(int fi)
{
	for (int i = 0; i < wl.nfds; i++)
		if (wl.fds[i].file == fi)
			return true;
	for (int i = 0; i < wl.nmaps; i++)
		if (wl.maps[i].file == fi)
			return true;
	return false;
}

static void write_files(FILE *o)
{
	bool first = true;

	fprintf(o, "  \"files\": [");
	for (int fi = 0; fi < wl.nfiles; fi++) {
		struct wl_file *f = &wl.files[fi];

		if (!file_referenced(fi))
			continue;
		qsort(f->handles, f->nhandles, sizeof(f->handles[0]), cmp_u32);
		fprintf(o,
			"%s\n    { \"label\": \"%s\", \"path\": \"%s\", \"rdev\": \"%u:%u\", "
			"\"driver\": \"%s\", \"flags\": \"%s\", \"handles_known\": %s, "
			"\"changed_ns\": %llu,\n      \"handles\": [",
			first ? "" : ",", f->label, f->path, f->maj, f->min, f->driver, f->flags,
			f->handles_known ? "true" : "false", (unsigned long long)f->changed_ns);
		for (int h = 0; h < f->nhandles; h++)
			fprintf(o, "%s{ \"handle\": %u, \"size\": %llu, \"origin\": \"%s\" }", h ? ", " : " ",
				f->handles[h].handle, (unsigned long long)f->handles[h].size, f->handles[h].origin);
		fprintf(o, " ],\n      \"undecoded_ioctls\": [");
		for (int u = 0; u < f->nundecoded; u++)
			fprintf(o, "%s\"%s\"", u ? ", " : " ", f->undecoded[u]);
		fprintf(o, " ],\n      \"framebuffers\": [");
		for (int b = 0; b < f->nfbs; b++)
			fprintf(o, "%s{ \"id\": %u, \"width\": %u, \"height\": %u, \"handles\": [ %u ] }",
				b ? ", " : " ", f->fbs[b].id, f->fbs[b].width, f->fbs[b].height, f->fbs[b].handle);
		fprintf(o, " ],\n      \"crtcs\": [");
		for (int c = 0; c < f->ncrtcs; c++)
			fprintf(o,
				"%s{ \"crtc\": %u, \"fb\": %u, \"hdisplay\": %u, \"vdisplay\": %u, \"connectors\": %u "
				"}",
				c ? ", " : " ", f->crtcs[c].crtc, f->crtcs[c].fb, f->crtcs[c].hdisplay,
				f->crtcs[c].vdisplay, f->crtcs[c].connectors);
		fprintf(o, " ] }");
		first = false;
	}
	fprintf(o, "\n  ]\n");
}

void wl_write_truth(int phase)
{
	char path[300], tmp[320], comm[17] = {0};
	FILE *o;

	if (wl.selfcheck)
		wl_selfcheck();
	prctl(PR_GET_NAME, comm);
	snprintf(path, sizeof(path), "%s/truth.%d.%d.json", wl.dir, phase, (int)getpid());
	snprintf(tmp, sizeof(tmp), "%s/.truth.%d.%d.tmp", wl.dir, phase, (int)getpid());
	o = fopen(tmp, "w");
	if (!o)
		wl_die("create %s", tmp);
	fprintf(o, "{ \"schema\": \"gpuwatch.truth/v1\", \"phase\": %d, \"pid\": %d, \"comm\": \"%s\",\n", phase,
		(int)getpid(), comm);
	write_fds(o);
	write_maps(o);
	write_files(o);
	fprintf(o, "}\n");
	if (fclose(o) != 0 || rename(tmp, path) != 0)
		wl_die("write %s", path);
}

/*
 * Probe every handle number from 1 to (highest modelled + 4) of every file this process holds
 * a DRM fd of, with PRIME_HANDLE_TO_FD: a handle exists iff the model has it, with the same
 * size (the dma-buf's lseek(SEEK_END)). A forked child probes only the files it changed since
 * the fork (another process may have changed the others). The probe leaves each probed
 * object with a cached dma-buf: use it to verify the workloads, not while gpuwatch watches.
 */
void wl_selfcheck(void)
{
	for (int i = 0; i < wl.nfds; i++) {
		struct wl_fd *e = &wl.fds[i];
		struct wl_file *f = &wl.files[e->file];
		uint32_t max = 0;

		if (e->kind != WL_FD_DRM || (wl.is_child && f->changed_ns < wl.fork_ns))
			continue;
		for (int h = 0; h < f->nhandles; h++)
			if (f->handles[h].handle > max)
				max = f->handles[h].handle;
		for (uint32_t h = 1; h <= max + 4; h++) {
			struct wl_handle *m = wl_handle_find(f, h);
			uint64_t size = 0;
			int r = wl_probe_handle(e->fd, h, &size);

			errno = 0;
			if (m && r != 0)
				wl_die("selfcheck: file %s (fd %d): handle %u is in the model but the kernel says %s",
				       f->label, e->fd, h, strerror(-r));
			if (!m && r != -ENOENT)
				wl_die("selfcheck: file %s (fd %d): handle %u is not in the model but probing it gave "
				       "%s",
				       f->label, e->fd, h, r ? strerror(-r) : "success");
			if (m && size != m->size)
				wl_die("selfcheck: file %s handle %u: model size %llu, kernel %llu", f->label, h,
				       (unsigned long long)m->size, (unsigned long long)size);
		}
	}
}
