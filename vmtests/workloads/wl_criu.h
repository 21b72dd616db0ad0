/* SPDX-License-Identifier: MIT */
/*
 * Shared declarations of the CRIU workload wl_criu (its header comment in wl_criu.c has the
 * details): wl_criu.c runs the flow (builds the state, phases, work after restore),
 * wl_criu_verify.c records the expectation and checks it after the restore, wl_criu_util.c
 * has the helpers (buffers, guarded reads, protocol files, /proc/self, the report).
 */
#ifndef WL_CRIU_H
#define WL_CRIU_H

#include "wl.h"

#include <stdio.h>

#define PAGE   4096ull
#define X_FDS  32
#define X_BUFS 32
#define X_MAPS 32

struct xfd {
	int fd, fdflags, flflags;
	bool chr;
	uint64_t rdev;
	char link[128];
};

struct xbuf {     /* a live handle of a file and the checksum of its buffer */
	int file; /* index in wl.files */
	uint32_t handle;
	uint64_t size, sum;
};

struct xmap {
	uint64_t start, length, delta, sum; /* delta: offset of the mapping in its buffer */
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

struct vma {
	uint64_t start, end, offset;
	char perms[8], path[128];
};

/* wl_criu.c: the command-line options */
extern bool degraded, other_node;
extern bool have_prime; /* the card has PRIME (bochs-drm on 6.1 has not: see wl_criu.c) */

/* wl_criu_util.c: small helpers */
uint64_t fnv(const volatile uint8_t *p, uint64_t n);
void guard_install(void);
int guarded_fnv(const void *p, uint64_t n, uint64_t *sum);              /* 0 or -signal */
int guarded_poke(volatile uint8_t *w, volatile uint8_t *r, bool *seen); /* 0 or -signal */
void fill(void *p, uint64_t n, unsigned seed);
void dirfile(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void wait_file(const char *name);
int fd_of_file(int fi);
int export_fd(int fd, uint32_t handle);
int64_t import_fd(int fd, int dmabuf);
int64_t dumb_offset(int fd, uint32_t handle);
int64_t handle_size(int fd, uint32_t handle); /* bytes, or -errno (ENOENT: no such handle) */
void *map_buffer(int fi, uint32_t handle, uint64_t size, int prot, char *err, size_t errlen);
int buffer_sum(int fi, uint32_t handle, uint64_t size, uint64_t *sum, char *err, size_t errlen);
void fill_through_temp_map(int fd, uint32_t handle, uint64_t size, unsigned seed);

/* wl_criu_util.c: after a restore, the model follows the mappings' new fake offsets and the
 * node each file is on now; a new buffer written through one mapping and read through another */
void refresh_model(void);
void check_buffer_rw(int fd, uint32_t handle, uint64_t size, unsigned seed);

/* wl_criu_util.c: /proc/self */
int read_fds(struct xfd *out, int max);
bool find_vma(uint64_t start, struct vma *v);
const char *fl_str(int fl, char *buf, size_t len);
const char *prot_str(int prot);

/* wl_criu_util.c: the report (result.<pid>, work.<pid> and their logs) */
extern FILE *rep;
void note(bool good, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void report_open(const char *what);
void report_close(const char *what);

/* wl_criu_verify.c. share_by_label (default false: wl_criu's child holds its parent's fds at
 * the same numbers): a child's DRM fds are checked against its parent's fds of the same file
 * label instead (wl_random: children open, dup and close fds of their own) */
extern bool share_by_label;
void record_expect(void);
void verify(void);

#endif
