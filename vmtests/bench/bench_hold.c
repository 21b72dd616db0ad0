/* SPDX-License-Identifier: MIT */
/*
 * The checkpoint/restore benchmark's workload: holds S MiB in N pieces, either as N vgem dumb
 * buffers (each mapped and filled: the CRIU plugin saves and restores them) or as the same
 * bytes in one anonymous mapping (no DRM state: plain CRIU's pages), then waits to be dumped.
 *
 * usage: bench_hold DIR gpu|anon|stateless N S_MIB [WRITE_KIB]
 *   Each piece is S/N bytes rounded down to whole pages (one page at least): the bytes held
 *   are N times that, the same for gpu and anon. Every 8-byte word holds a pattern of its
 *   piece and place. When built it writes DIR/pid and then DIR/ready ("BYTES" held), and
 *   polls for DIR/go (every 50 ms). After go (after a restore) it checks the first and last
 *   word of every page through its own mappings and writes DIR/result: "OK" or the first
 *   failure; then exits 0. stateless: built as gpu, for a stateless checkpoint
 *   (GPUWATCH_CHECKPOINT_MODE=stateless): after go every page must read zero instead (the
 *   mappings come back as zero-filled memory). It prints nothing before go (CRIU restores regular files only at
 *   their dumped size).
 *   WRITE_KIB (iterative migration: criu pre-dump, then the final dump): until go it keeps
 *   writing the first WRITE_KIB of what it holds (from piece 0 on), one pass every 20 ms; a
 *   pass stores its number in the second word of each page there. After go the numbers must
 *   be what one moment of the passes left: from page to page the same or one lower, never 0.
 */
#define _GNU_SOURCE
#include "bench.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <drm.h>
#include <drm_mode.h>

#define PAGE 4096ull

static const char *dir;

static void put_file(const char *name, const char *text)
{
	char path[512], tmp[520];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text) || close(fd) != 0 ||
	    rename(tmp, path) != 0)
		bench_die("bench_hold", path);
}

static int exists(const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

static inline uint64_t pattern(uint64_t piece, uint64_t word)
{
	return (piece << 40) ^ (word * 0x9E3779B97F4A7C15ull) ^ 0x5a5a5a5a;
}

static void fill(uint64_t *p, uint64_t piece, uint64_t bytes)
{
	for (uint64_t w = 0; w < bytes / 8; w++)
		p[w] = pattern(piece, w);
}

/* first and last word of every page; 0 or the word index that differs + 1 */
static uint64_t check(const uint64_t *p, uint64_t piece, uint64_t bytes, int zero)
{
	for (uint64_t w = 0; w < bytes / 8; w += PAGE / 8) {
		if (p[w] != (zero ? 0 : pattern(piece, w)))
			return w + 1;
		if (p[w + PAGE / 8 - 1] != (zero ? 0 : pattern(piece, w + PAGE / 8 - 1)))
			return w + PAGE / 8;
	}
	return 0;
}

/* the pages of the write region, in order: piece i, page j */
struct region {
	uint64_t **maps, piece, pages;
};

static uint64_t *region_word(const struct region *r, uint64_t k)
{
	uint64_t per = r->piece / PAGE;
	return &r->maps[k / per][(k % per) * (PAGE / 8) + 1];
}

static void write_pass(const struct region *r, uint64_t gen)
{
	for (uint64_t k = 0; k < r->pages; k++)
		*(volatile uint64_t *)region_word(r, k) = gen;
}

/* 0, or a message about the first page that does not fit one moment of the passes */
static const char *region_check(const struct region *r, uint64_t *at)
{
	uint64_t first = r->pages ? *region_word(r, 0) : 1, prev = first;
	for (uint64_t k = 0; k < r->pages; k++) {
		uint64_t v = *region_word(r, k);
		*at = k;
		if (v == 0 || v > prev || v + 1 < first)
			return "write region: pass numbers from two moments";
		prev = v;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	char text[256];

	if (argc < 5 ||
	    (strcmp(argv[2], "gpu") != 0 && strcmp(argv[2], "anon") != 0 && strcmp(argv[2], "stateless") != 0)) {
		fprintf(stderr, "usage: bench_hold DIR gpu|anon|stateless N S_MIB [WRITE_KIB]\n");
		return 2;
	}
	dir = argv[1];
	int stateless = strcmp(argv[2], "stateless") == 0;
	int gpu = stateless || strcmp(argv[2], "gpu") == 0;
	uint64_t n = strtoull(argv[3], NULL, 10), mib = strtoull(argv[4], NULL, 10);
	if (n == 0 || mib == 0 || n > 100000) {
		fprintf(stderr, "bench_hold: N must be 1..100000 and S_MIB positive\n");
		return 2;
	}
	uint64_t piece = (mib << 20) / n / PAGE * PAGE;
	if (piece == 0)
		piece = PAGE;
	uint64_t **maps = calloc(n, sizeof(*maps));
	if (!maps)
		bench_die("bench_hold", "calloc");

	if (gpu) {
		int card = open("/dev/dri/card0", O_RDWR | O_CLOEXEC);
		if (card < 0)
			bench_die("bench_hold", "open /dev/dri/card0");
		for (uint64_t i = 0; i < n; i++) {
			/* 1024 x 32 bpp = one page per row: exactly `piece` bytes */
			struct drm_mode_create_dumb c = {.width = 1024, .height = (uint32_t)(piece / PAGE), .bpp = 32};
			struct drm_mode_map_dumb m = {0};
			if (ioctl(card, DRM_IOCTL_MODE_CREATE_DUMB, &c) != 0)
				bench_die("bench_hold", "MODE_CREATE_DUMB");
			if (c.size != piece) {
				fprintf(stderr, "bench_hold: dumb buffer of %llu bytes, expected %llu\n",
					(unsigned long long)c.size, (unsigned long long)piece);
				return 2;
			}
			m.handle = c.handle;
			if (ioctl(card, DRM_IOCTL_MODE_MAP_DUMB, &m) != 0)
				bench_die("bench_hold", "MODE_MAP_DUMB");
			maps[i] = mmap(NULL, piece, PROT_READ | PROT_WRITE, MAP_SHARED, card, (off_t)m.offset);
			if (maps[i] == MAP_FAILED)
				bench_die("bench_hold", "mmap of a dumb buffer");
		}
	} else {
		uint8_t *a = mmap(NULL, piece * n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (a == MAP_FAILED)
			bench_die("bench_hold", "mmap anonymous");
		for (uint64_t i = 0; i < n; i++)
			maps[i] = (uint64_t *)(a + i * piece);
	}
	for (uint64_t i = 0; i < n; i++)
		fill(maps[i], i, piece);

	struct region r = {maps, piece, 0};
	if (argc > 5) {
		r.pages = strtoull(argv[5], NULL, 10) * 1024 / PAGE;
		if (r.pages > piece * n / PAGE)
			r.pages = piece * n / PAGE;
		write_pass(&r, 1);
	}

	snprintf(text, sizeof(text), "%d\n", (int)getpid());
	put_file("pid", text);
	snprintf(text, sizeof(text), "%llu\n", (unsigned long long)(piece * n));
	put_file("ready", text);
	for (uint64_t gen = 2; !exists("go"); gen++) {
		if (r.pages) {
			write_pass(&r, gen);
			usleep(20000);
		} else {
			usleep(50000);
		}
	}

	snprintf(text, sizeof(text), "OK\n");
	for (uint64_t i = 0; i < n; i++) {
		uint64_t bad = check(maps[i], i, piece, stateless);
		if (bad) {
			snprintf(text, sizeof(text), "FAIL piece %llu word %llu %s\n", (unsigned long long)i,
				 (unsigned long long)(bad - 1), stateless ? "is not zero" : "differs");
			break;
		}
	}
	uint64_t at = 0;
	const char *torn = stateless ? NULL : region_check(&r, &at);
	if (torn && strncmp(text, "OK", 2) == 0)
		snprintf(text, sizeof(text), "FAIL %s (page %llu)\n", torn, (unsigned long long)at);
	put_file("result", text);
	return 0;
}
