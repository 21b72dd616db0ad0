/* SPDX-License-Identifier: MIT */
/*
 * The i915 CRIU workload (run against vmtests/i915test's gwi915 fixture): a VA-API-like client
 * that is checkpointed and restored, and checks itself before, during and after.
 *
 * usage: wl_i915_criu DIR
 * Runs as a detached session leader (fds 3 and up are closed at start). Two processes, each
 * with its own open file of the i915 render node (the child is forked before either opens it):
 *   parent (libdrm_intel + raw ioctls):
 *     handles 1, 3: X-tiled surfaces mapped through the GTT (drm_intel_gem_bo_map_gtt)
 *     handle 4:     X-tiled surface, unmapped, written with PWRITE (drm_intel_bo_subdata)
 *     handle 5:     bitstream buffer with a legacy CPU mapping (drm_intel_bo_map: GEM_MMAP)
 *     handle 6:     GEM_CREATE_EXT device+system, PAT 3, mapped WB and also WC (two offsets)
 *     handle 7:     GEM_CREATE_EXT system, caching NONE, mapped WC
 *     handle 8:     GEM_CREATE, Y-tiled (stride 128), unmapped, written with PWRITE
 *     handles 10, 11: userptr over aligned_alloc'd memory and over an anonymous mmap
 *     holes: 2 (a surface unreferenced), 9 (a buffer closed)
 *     VM ids 1, 3 (2 destroyed: a hole); contexts 1 (libdrm, own VM), 2 (VM 1, priority -100,
 *     engines video:0,render:0, single timeline), 3 (VM 1: two contexts on one VM),
 *     5 (VM 3, priority 10, engines video-enhance:0); 4 destroyed (a hole)
 *   child (raw ioctls): VM 1; contexts 1 (VM 1), 3 (VM 1, priority -5, engines render:0,copy:0),
 *     2 destroyed; handles 1 (GEM_CREATE_EXT system, mapped WC), 3 (X-tiled, stride 512,
 *     mapped GTT through MMAP_OFFSET), 4 (userptr); 2 destroyed.
 * Every buffer and userptr range holds its own pattern.
 *
 * Protocol (files in DIR; the phases are the workloads' protocol of wl.h, wl_sync):
 *   pid.parent, pid.child      pids
 *   expect.<pid>.txt           what each process expects of itself (for the record)
 *   ready.1                    both processes built their state and verified it once (phase 1)
 *   verify.<pid>               rewritten every ~100 ms: "PASS <round>", or "FAIL <round> <reason>"
 *                              from the first failed round on (sticky; a round fails when its
 *                              check fails twice in a row: a checkpoint may land inside one);
 *                              verify.<pid>.log lists every failure of that round
 *   hold                       while it exists, neither process writes a file: each writes
 *                              held.<pid> once and waits (a --leave-running checkpoint must not
 *                              catch a verify.<pid>.tmp open that the running original then
 *                              renames away before the image is restored elsewhere)
 *   sabotage                   (tests of this test) the parent breaks one thing, see sabotage()
 *   go.1                       each process writes new patterns through every mapping and reads
 *                              them back through a fresh mapping of the same handle (or PREAD),
 *                              makes new buffers, contexts and a VM (they must get the lowest
 *                              free ids), probes VM ids and engine maps; result.<pid>: "PASS" or
 *                              "FAIL <reason>" (result.<pid>.log: every failure); then exits
 *                              (0 or 1). The parent reaps the child and writes exit.<pid>:
 *                              "<its status> child <child's status>".
 * What is checked each round: every expected handle answers GET_TILING/GET_CACHING with its
 * tiling and caching; each mapping is in /proc/self/maps at its address with its length,
 * "rw-s" and its kind (anon_inode:i915.gem, or the legacy "/i915 (deleted)" shmem), and for a
 * GEM mapping the fake offset MMAP_OFFSET gives for the handle and type now is the mapping's;
 * contents through every mapping and through PREAD for the unmapped buffers; userptr objects
 * still are userptr objects (MMAP_OFFSET -ENODEV) and their memory holds its pattern; holes and
 * the next few numbers are absent (ENOENT); every context answers CONTEXT_GETPARAM(PRIORITY)
 * with its priority, destroyed ones ENOENT. GETPARAM(VM) is never used: it mints a VM id.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <i915_drm.h>
#include <intel_bufmgr.h>
#include <xf86drm.h>

#include "wl.h"

#define MT_NONE   (-1)
#define MT_LEGACY 100 /* legacy GEM_MMAP (a shmem mapping made inside the ioctl) */
#define MAXB      16
#define MAXC      8

struct buf {
	const char *name;
	uint32_t handle;
	uint64_t size;
	uint32_t tiling, caching;
	bool userptr;
	int mt[2]; /* mapping types, MT_NONE when unused */
	uint8_t *map[2];
	uint32_t seed;
};

struct ctx {
	uint32_t id;
	int64_t prio;
	int nengines; /* 0: the default engines */
};

struct model {
	const char *role;
	int fd;
	struct buf b[MAXB];
	int nb;
	struct ctx c[MAXC];
	int nc;
	uint32_t hole_h[4], hole_c[4], vms[4], hole_vm[2];
	int nhh, nhc, nvm, nhvm;
	uint8_t *umem[2]; /* userptr ranges, with their pattern */
	uint64_t ulen[2];
	uint32_t useed[2];
	int nu;
};

static const char *g_dir;
static struct model M;
static char g_fail[512]; /* first failure of the current check */
static FILE *g_log;      /* failures of the current check, one per line */
static int g_nfail;

static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "wl_i915_criu[%d]: ", getpid());
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

static void bad(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (!g_nfail++)
		snprintf(g_fail, sizeof g_fail, "%s", line);
	if (g_log)
		fprintf(g_log, "FAIL %s\n", line);
}

static void xioctl(int fd, unsigned long req, void *arg, const char *what)
{
	if (drmIoctl(fd, req, arg))
		die("%s: %s", what, strerror(errno));
}

/* 0 or -errno */
static int tryioctl(int fd, unsigned long req, void *arg)
{
	return drmIoctl(fd, req, arg) ? -errno : 0;
}

static void write_file(const char *name, const char *fmt, ...)
{
	char path[512], tmp[520];
	va_list ap;
	snprintf(path, sizeof path, "%s/%s", g_dir, name);
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		die("%s: %s", tmp, strerror(errno));
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	if (fclose(f) || rename(tmp, path))
		die("%s: %s", path, strerror(errno));
}

static bool exists(const char *name)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", g_dir, name);
	return access(path, F_OK) == 0;
}

/* ---- patterns, read safely ------------------------------------------------------------ */

static void fill(uint8_t *p, uint64_t len, uint32_t seed)
{
	for (uint64_t i = 0; i < len / 4; i++) {
		uint32_t w = (seed * 0x01000193u) ^ (uint32_t)(i * 0x9e3779b1u);
		memcpy(p + 4 * i, &w, 4);
	}
}

static sigjmp_buf g_jmp;
static volatile sig_atomic_t g_guard;

static void on_fault(int sig)
{
	if (g_guard)
		siglongjmp(g_jmp, sig);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* -1: matches; else the first differing byte offset; -2: a fault while reading */
static int64_t compare(const uint8_t *p, uint64_t len, uint32_t seed)
{
	static uint8_t want[1 << 20];
	int64_t r = -1;
	if (len > sizeof want)
		die("buffer of %llu bytes: too big for the checker", (unsigned long long)len);
	fill(want, len, seed);
	if (sigsetjmp(g_jmp, 1)) {
		g_guard = 0;
		return -2;
	}
	g_guard = 1;
	if (memcmp(p, want, len)) {
		for (uint64_t i = 0; i < len; i++)
			if (p[i] != want[i]) {
				r = (int64_t)i;
				break;
			}
	}
	g_guard = 0;
	return r;
}

static void check_bytes(const char *what, const uint8_t *p, uint64_t len, uint32_t seed)
{
	int64_t r = compare(p, len, seed);
	if (r == -2)
		bad("%s: fault while reading it", what);
	else if (r >= 0)
		bad("%s: contents differ at byte %lld (of %llu)", what, (long long)r, (unsigned long long)len);
}

/* ---- i915 helpers ---------------------------------------------------------------------- */

static const char *mt_name(int mt)
{
	switch (mt) {
	case I915_MMAP_OFFSET_GTT: return "gtt";
	case I915_MMAP_OFFSET_WC: return "wc";
	case I915_MMAP_OFFSET_WB: return "wb";
	case I915_MMAP_OFFSET_UC: return "uc";
	case MT_LEGACY: return "legacy";
	}
	return "none";
}

/* the render node whose driver is "i915" */
static int open_i915(void)
{
	DIR *d = opendir("/dev/dri");
	struct dirent *e;
	int fd = -1;
	if (!d)
		die("/dev/dri: %s", strerror(errno));
	while (fd < 0 && (e = readdir(d))) {
		char path[300];
		if (strncmp(e->d_name, "renderD", 7))
			continue;
		snprintf(path, sizeof path, "/dev/dri/%s", e->d_name);
		int f = open(path, O_RDWR | O_CLOEXEC);
		drmVersionPtr v = f >= 0 ? drmGetVersion(f) : NULL;
		if (v && !strcmp(v->name, "i915"))
			fd = f;
		else if (f >= 0)
			close(f);
		drmFreeVersion(v);
	}
	closedir(d);
	if (fd < 0)
		die("no render node of an i915 driver (is the gwi915 fixture loaded?)");
	return fd;
}

static int mmap_offset(int fd, uint32_t handle, int mt, uint64_t *off)
{
	struct drm_i915_gem_mmap_offset mo = {.handle = handle, .flags = (uint64_t)mt};
	int r = tryioctl(fd, DRM_IOCTL_I915_GEM_MMAP_OFFSET, &mo);
	*off = mo.offset;
	return r;
}

static uint8_t *map_gem(int fd, struct buf *b, int mt)
{
	uint64_t off;
	if (mmap_offset(fd, b->handle, mt, &off))
		die("MMAP_OFFSET %s of %s: %s", mt_name(mt), b->name, strerror(errno));
	void *p = mmap(NULL, b->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
	if (p == MAP_FAILED)
		die("mmap %s of %s: %s", mt_name(mt), b->name, strerror(errno));
	return p;
}

static uint32_t vm_create(int fd)
{
	struct drm_i915_gem_vm_control vm = {0};
	xioctl(fd, DRM_IOCTL_I915_GEM_VM_CREATE, &vm, "GEM_VM_CREATE");
	return vm.vm_id;
}

static void vm_destroy(int fd, uint32_t id)
{
	struct drm_i915_gem_vm_control vm = {.vm_id = id};
	xioctl(fd, DRM_IOCTL_I915_GEM_VM_DESTROY, &vm, "GEM_VM_DESTROY");
}

/* CONTEXT_CREATE_EXT with SETPARAM VM (when vm != 0), PRIORITY and ENGINES (nengines of eng) */
static int context_create_ext(int fd, uint32_t vm, int64_t prio, int nengines,
			      const struct i915_engine_class_instance *eng, uint32_t flags, uint32_t *id)
{
	struct {
		uint64_t extensions;
		struct i915_engine_class_instance engines[4];
	} __attribute__((packed)) map = {0};
	struct drm_i915_gem_context_create_ext_setparam p_eng = {
		.base = {.name = I915_CONTEXT_CREATE_EXT_SETPARAM},
		.param = {.param = I915_CONTEXT_PARAM_ENGINES, .size = 8 + 4 * nengines, .value = (uintptr_t)&map}};
	struct drm_i915_gem_context_create_ext_setparam p_prio = {
		.base = {.name = I915_CONTEXT_CREATE_EXT_SETPARAM, .next_extension = nengines ? (uintptr_t)&p_eng : 0},
		.param = {.param = I915_CONTEXT_PARAM_PRIORITY, .value = (uint64_t)prio}};
	struct drm_i915_gem_context_create_ext_setparam p_vm = {
		.base = {.name = I915_CONTEXT_CREATE_EXT_SETPARAM, .next_extension = (uintptr_t)&p_prio},
		.param = {.param = I915_CONTEXT_PARAM_VM, .value = vm}};
	struct drm_i915_gem_context_create_ext c = {.flags = I915_CONTEXT_CREATE_FLAGS_USE_EXTENSIONS | flags,
						    .extensions = vm ? (uintptr_t)&p_vm : (uintptr_t)&p_prio};
	for (int i = 0; i < nengines; i++)
		map.engines[i] = eng[i];
	int r = tryioctl(fd, DRM_IOCTL_I915_GEM_CONTEXT_CREATE_EXT, &c);
	*id = c.ctx_id;
	return r;
}

static void context_destroy(int fd, uint32_t id)
{
	struct drm_i915_gem_context_destroy cd = {.ctx_id = id};
	xioctl(fd, DRM_IOCTL_I915_GEM_CONTEXT_DESTROY, &cd, "GEM_CONTEXT_DESTROY");
}

static int ctx_getparam(int fd, uint32_t id, uint64_t param, uint64_t *value)
{
	struct drm_i915_gem_context_param p = {.ctx_id = id, .param = param};
	int r = tryioctl(fd, DRM_IOCTL_I915_GEM_CONTEXT_GETPARAM, &p);
	*value = p.value;
	return r;
}

static uint32_t gem_create(int fd, uint64_t size)
{
	struct drm_i915_gem_create c = {.size = size};
	xioctl(fd, DRM_IOCTL_I915_GEM_CREATE, &c, "GEM_CREATE");
	return c.handle;
}

/* GEM_CREATE_EXT with memory regions (device first when dev) and a PAT index (unless < 0) */
static uint32_t gem_create_ext(int fd, uint64_t size, bool dev, int pat)
{
	struct drm_i915_gem_memory_class_instance regions[] = {{I915_MEMORY_CLASS_DEVICE, 0},
							       {I915_MEMORY_CLASS_SYSTEM, 0}};
	struct {
		struct i915_user_extension base;
		uint32_t pat_index, rsvd;
	} ext_pat = {{.name = 2 /* I915_GEM_CREATE_EXT_SET_PAT (Linux 6.5+) */}, (uint32_t)pat, 0};
	struct drm_i915_gem_create_ext_memory_regions mr = {
		.base = {.name = I915_GEM_CREATE_EXT_MEMORY_REGIONS,
			 .next_extension = pat >= 0 ? (uintptr_t)&ext_pat : 0},
		.num_regions = dev ? 2 : 1,
		.regions = (uintptr_t)(dev ? regions : regions + 1)};
	struct drm_i915_gem_create_ext c = {.size = size, .extensions = (uintptr_t)&mr};
	xioctl(fd, DRM_IOCTL_I915_GEM_CREATE_EXT, &c, "GEM_CREATE_EXT");
	return c.handle;
}

static void gem_close(int fd, uint32_t h)
{
	struct drm_gem_close gc = {.handle = h};
	xioctl(fd, DRM_IOCTL_GEM_CLOSE, &gc, "GEM_CLOSE");
}

static void set_tiling(int fd, uint32_t h, uint32_t mode, uint32_t stride)
{
	struct drm_i915_gem_set_tiling t = {.handle = h, .tiling_mode = mode, .stride = stride};
	xioctl(fd, DRM_IOCTL_I915_GEM_SET_TILING, &t, "GEM_SET_TILING");
}

static void set_caching(int fd, uint32_t h, uint32_t caching)
{
	struct drm_i915_gem_caching c = {.handle = h, .caching = caching};
	xioctl(fd, DRM_IOCTL_I915_GEM_SET_CACHING, &c, "GEM_SET_CACHING");
}

static int pread_buf(int fd, uint32_t h, void *dst, uint64_t len)
{
	struct drm_i915_gem_pread p = {.handle = h, .size = len, .data_ptr = (uintptr_t)dst};
	return tryioctl(fd, DRM_IOCTL_I915_GEM_PREAD, &p);
}

static void pwrite_buf(int fd, uint32_t h, const void *src, uint64_t len)
{
	struct drm_i915_gem_pwrite p = {.handle = h, .size = len, .data_ptr = (uintptr_t)src};
	xioctl(fd, DRM_IOCTL_I915_GEM_PWRITE, &p, "GEM_PWRITE");
}

static uint32_t userptr(int fd, void *p, uint64_t len)
{
	struct drm_i915_gem_userptr up = {.user_ptr = (uintptr_t)p, .user_size = len};
	xioctl(fd, DRM_IOCTL_I915_GEM_USERPTR, &up, "GEM_USERPTR");
	return up.handle;
}

/* ---- the model ------------------------------------------------------------------------- */

static struct buf *add_buf(const char *name, uint32_t handle, uint64_t size, uint32_t tiling)
{
	if (M.nb == MAXB)
		die("too many buffers");
	struct buf *b = &M.b[M.nb++];
	*b = (struct buf){.name = name,
			  .handle = handle,
			  .size = size,
			  .tiling = tiling,
			  .caching = I915_CACHING_CACHED,
			  .mt = {MT_NONE, MT_NONE},
			  .seed = 0x1000u * (uint32_t)getpid() + handle};
	return b;
}

static void add_map(struct buf *b, int mt, uint8_t *p)
{
	int i = b->mt[0] == MT_NONE ? 0 : 1;
	b->mt[i] = mt;
	b->map[i] = p;
}

static void add_ctx(uint32_t id, int64_t prio, int nengines)
{
	M.c[M.nc++] = (struct ctx){id, prio, nengines};
}

/* every buffer's pattern: through its first mapping, else PWRITE; userptr ranges too */
static void write_patterns(uint32_t xor)
{
	static uint8_t tmp[1 << 20];
	for (int i = 0; i < M.nb; i++) {
		struct buf *b = &M.b[i];
		b->seed ^= xor;
		if (b->userptr)
			continue;
		if (b->map[0]) {
			fill(b->map[0], b->size, b->seed);
		} else {
			fill(tmp, b->size, b->seed);
			pwrite_buf(M.fd, b->handle, tmp, b->size);
		}
	}
	for (int i = 0; i < M.nu; i++) {
		M.useed[i] ^= xor;
		fill(M.umem[i], M.ulen[i], M.useed[i]);
	}
}

static void write_expectations(void)
{
	char name[64], *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	fprintf(f, "role %s pid %d\n", M.role, getpid());
	for (int i = 0; i < M.nb; i++) {
		struct buf *b = &M.b[i];
		fprintf(f, "handle %u %s size %llu tiling %u caching %u%s seed 0x%x", b->handle, b->name,
			(unsigned long long)b->size, b->tiling, b->caching, b->userptr ? " userptr" : "", b->seed);
		for (int k = 0; k < 2; k++)
			if (b->mt[k] != MT_NONE)
				fprintf(f, " map %s %p", mt_name(b->mt[k]), (void *)b->map[k]);
		fputc('\n', f);
	}
	for (int i = 0; i < M.nu; i++)
		fprintf(f, "usermem %p len %llu seed 0x%x\n", (void *)M.umem[i], (unsigned long long)M.ulen[i],
			M.useed[i]);
	for (int i = 0; i < M.nc; i++)
		fprintf(f, "context %u priority %lld engines %d\n", M.c[i].id, (long long)M.c[i].prio, M.c[i].nengines);
	for (int i = 0; i < M.nvm; i++)
		fprintf(f, "vm %u\n", M.vms[i]);
	for (int i = 0; i < M.nhh; i++)
		fprintf(f, "hole handle %u\n", M.hole_h[i]);
	for (int i = 0; i < M.nhc; i++)
		fprintf(f, "hole context %u\n", M.hole_c[i]);
	for (int i = 0; i < M.nhvm; i++)
		fprintf(f, "hole vm %u\n", M.hole_vm[i]);
	fclose(f);
	snprintf(name, sizeof name, "expect.%d.txt", getpid());
	write_file(name, "%s", text);
	free(text);
}

/* ---- verification ---------------------------------------------------------------------- */

struct vma {
	uint64_t start, end, offset;
	char perms[8], name[128];
};

static bool find_vma(uint64_t addr, struct vma *v)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	bool found = false;
	if (!f)
		return false;
	while (!found && fgets(line, sizeof line, f)) {
		unsigned long long s, e, off;
		char perms[8], name[128] = "";
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %127[^\n]", &s, &e, perms, &off, name) < 4)
			continue;
		if (s != addr)
			continue;
		*v = (struct vma){.start = s, .end = e, .offset = off};
		snprintf(v->perms, sizeof v->perms, "%s", perms);
		snprintf(v->name, sizeof v->name, "%s", name);
		found = true;
	}
	fclose(f);
	return found;
}

static uint32_t max_handle(void)
{
	uint32_t m = 0;
	for (int i = 0; i < M.nb; i++)
		m = M.b[i].handle > m ? M.b[i].handle : m;
	for (int i = 0; i < M.nhh; i++)
		m = M.hole_h[i] > m ? M.hole_h[i] : m;
	return m;
}

static uint32_t max_ctx(void)
{
	uint32_t m = 0;
	for (int i = 0; i < M.nc; i++)
		m = M.c[i].id > m ? M.c[i].id : m;
	for (int i = 0; i < M.nhc; i++)
		m = M.hole_c[i] > m ? M.hole_c[i] : m;
	return m;
}

static void verify_mapping(struct buf *b, int k)
{
	char what[96];
	struct vma v;
	snprintf(what, sizeof what, "handle %u (%s) %s mapping at %p", b->handle, b->name, mt_name(b->mt[k]),
		 (void *)b->map[k]);
	if (!find_vma((uintptr_t)b->map[k], &v)) {
		bad("%s: no mapping starts there", what);
		return;
	}
	const char *want = b->mt[k] == MT_LEGACY ? "/i915 (deleted)" : "anon_inode:i915.gem";
	if (v.end - v.start != b->size || strcmp(v.perms, "rw-s") || strcmp(v.name, want))
		bad("%s: maps says length %llu %s '%s', expected %llu rw-s '%s'", what,
		    (unsigned long long)(v.end - v.start), v.perms, v.name, (unsigned long long)b->size, want);
	if (b->mt[k] != MT_LEGACY) {
		uint64_t off;
		int r = mmap_offset(M.fd, b->handle, b->mt[k], &off);
		if (r)
			bad("%s: MMAP_OFFSET %s of the handle: %s", what, mt_name(b->mt[k]), strerror(-r));
		else if (off != v.offset)
			bad("%s: the mapping's fake offset is 0x%llx, the handle's %s offset 0x%llx (not this handle's "
			    "mapping)",
			    what, (unsigned long long)v.offset, mt_name(b->mt[k]), (unsigned long long)off);
	} else if (v.offset != 0) {
		bad("%s: legacy mapping at file offset 0x%llx, expected 0", what, (unsigned long long)v.offset);
	}
	check_bytes(what, b->map[k], b->size, b->seed);
}

static void verify(void)
{
	static uint8_t tmp[1 << 20];
	char what[96];
	for (int i = 0; i < M.nb; i++) {
		struct buf *b = &M.b[i];
		struct drm_i915_gem_get_tiling t = {.handle = b->handle};
		struct drm_i915_gem_caching c = {.handle = b->handle};
		int r = tryioctl(M.fd, DRM_IOCTL_I915_GEM_GET_TILING, &t);
		if (r) {
			bad("handle %u (%s): GET_TILING: %s (the handle is gone)", b->handle, b->name, strerror(-r));
			continue;
		}
		if (t.tiling_mode != b->tiling)
			bad("handle %u (%s): tiling %u, expected %u", b->handle, b->name, t.tiling_mode, b->tiling);
		r = tryioctl(M.fd, DRM_IOCTL_I915_GEM_GET_CACHING, &c);
		if (r || c.caching != b->caching)
			bad("handle %u (%s): caching %u (%s), expected %u", b->handle, b->name, c.caching,
			    r ? strerror(-r) : "ok", b->caching);
		if (b->userptr) {
			uint64_t off;
			r = mmap_offset(M.fd, b->handle, I915_MMAP_OFFSET_WC, &off);
			if (r != -ENODEV)
				bad("handle %u (%s): MMAP_OFFSET answers %s, a userptr object answers ENODEV (not a "
				    "userptr any more)",
				    b->handle, b->name, r ? strerror(-r) : "an offset");
			continue;
		}
		for (int k = 0; k < 2; k++)
			if (b->mt[k] != MT_NONE)
				verify_mapping(b, k);
		snprintf(what, sizeof what, "handle %u (%s) through PREAD", b->handle, b->name);
		r = pread_buf(M.fd, b->handle, tmp, b->size);
		if (r)
			bad("%s: %s", what, strerror(-r));
		else
			check_bytes(what, tmp, b->size, b->seed);
	}
	for (int i = 0; i < M.nu; i++) {
		snprintf(what, sizeof what, "userptr memory at %p", (void *)M.umem[i]);
		check_bytes(what, M.umem[i], M.ulen[i], M.useed[i]);
	}
	/* holes and the numbers after the highest: absent */
	uint32_t top = max_handle();
	for (uint32_t h = 1; h <= top + 3; h++) {
		bool expected = false, hole = false;
		for (int i = 0; i < M.nb; i++)
			expected |= M.b[i].handle == h;
		for (int i = 0; i < M.nhh; i++)
			hole |= M.hole_h[i] == h;
		if (expected || (!hole && h <= top))
			continue;
		struct drm_i915_gem_get_tiling t = {.handle = h};
		int r = tryioctl(M.fd, DRM_IOCTL_I915_GEM_GET_TILING, &t);
		if (r != -ENOENT)
			bad("handle %u exists (GET_TILING: %s): it was %s", h, r ? strerror(-r) : "ok",
			    hole ? "closed before the dump (a hole)" : "never made");
	}
	/* contexts: 0 and every expected one answer their priority; holes and the next ones ENOENT */
	for (int i = 0; i < M.nc; i++) {
		uint64_t v;
		int r = ctx_getparam(M.fd, M.c[i].id, I915_CONTEXT_PARAM_PRIORITY, &v);
		if (r)
			bad("context %u: GETPARAM(PRIORITY): %s", M.c[i].id, strerror(-r));
		else if ((int64_t)v != M.c[i].prio)
			bad("context %u: priority %lld, expected %lld", M.c[i].id, (long long)(int64_t)v,
			    (long long)M.c[i].prio);
	}
	uint32_t ctop = max_ctx();
	for (uint32_t id = 1; id <= ctop + 2; id++) {
		bool expected = false, hole = false;
		uint64_t v;
		for (int i = 0; i < M.nc; i++)
			expected |= M.c[i].id == id;
		for (int i = 0; i < M.nhc; i++)
			hole |= M.hole_c[i] == id;
		if (expected || (!hole && id <= ctop))
			continue;
		int r = ctx_getparam(M.fd, id, I915_CONTEXT_PARAM_PRIORITY, &v);
		if (r != -ENOENT)
			bad("context %u exists (GETPARAM: %s): it was %s", id, r ? strerror(-r) : "ok",
			    hole ? "destroyed before the dump (a hole)" : "never made");
	}
}

/* runs one check (fn), records its failures in NAME.<pid>.log; returns the failure count */
static int run_check(void (*fn)(void), const char *name)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s.%d.log", g_dir, name, getpid());
	g_nfail = 0;
	g_fail[0] = 0;
	g_log = fopen(path, "w");
	fn();
	if (g_log)
		fclose(g_log);
	g_log = NULL;
	return g_nfail;
}

/* ---- sabotage: what a broken restore would do (tests of the test) ------------------------ */

static void sabotage(const char *kind)
{
	struct buf *wb = NULL, *pw = NULL, *up = NULL, *gtt = NULL;
	for (int i = 0; i < M.nb; i++) {
		struct buf *b = &M.b[i];
		if (b->mt[0] == I915_MMAP_OFFSET_WB && !wb)
			wb = b;
		if (b->mt[0] == MT_NONE && !b->userptr && !pw)
			pw = b;
		if (b->userptr && !up)
			up = b;
		if (b->mt[0] == I915_MMAP_OFFSET_GTT && !gtt)
			gtt = b;
	}
	fprintf(stderr, "wl_i915_criu[%d]: sabotage: %s\n", getpid(), kind);
	if (!strcmp(kind, "byte")) { /* contents lost in one buffer */
		gtt->map[0][gtt->size / 2] ^= 0xff;
	} else if (!strcmp(kind, "anoncopy")) { /* a mapping that is an anonymous copy */
		void *copy = malloc(wb->size);
		memcpy(copy, wb->map[0], wb->size);
		if (mmap(wb->map[0], wb->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
		    MAP_FAILED)
			die("sabotage anoncopy: %s", strerror(errno));
		memcpy(wb->map[0], copy, wb->size);
		free(copy);
	} else if (!strcmp(kind, "othertype")) { /* a mapping of the right handle with another type */
		uint64_t off;
		if (mmap_offset(M.fd, wb->handle, I915_MMAP_OFFSET_UC, &off) ||
		    mmap(wb->map[0], wb->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, M.fd, off) == MAP_FAILED)
			die("sabotage othertype: %s", strerror(errno));
	} else if (!strcmp(kind, "handle")) { /* a handle lost */
		gem_close(M.fd, pw->handle);
	} else if (!strcmp(kind, "filler")) { /* a filler left in a hole */
		gem_create(M.fd, 4096);
	} else if (!strcmp(kind, "tiling")) {
		set_tiling(M.fd, pw->handle, I915_TILING_NONE, 0);
	} else if (!strcmp(kind, "caching")) {
		set_caching(M.fd, pw->handle, I915_CACHING_NONE);
	} else if (!strcmp(kind, "userptr")) { /* a userptr recreated as a plain buffer */
		uint32_t fill[8], n = 0, h;
		gem_close(M.fd, up->handle);
		while ((h = gem_create(M.fd, up->size)) != up->handle && n < 8)
			fill[n++] = h;
		while (n)
			gem_close(M.fd, fill[--n]);
	} else if (!strcmp(kind, "priority")) {
		struct drm_i915_gem_context_param p = {.ctx_id = M.c[M.nc - 1].id,
						       .param = I915_CONTEXT_PARAM_PRIORITY,
						       .value = (uint64_t)(M.c[M.nc - 1].prio - 1)};
		xioctl(M.fd, DRM_IOCTL_I915_GEM_CONTEXT_SETPARAM, &p, "CONTEXT_SETPARAM");
	} else if (!strcmp(kind, "context")) { /* a context lost */
		context_destroy(M.fd, M.c[M.nc - 1].id);
	} else if (!strcmp(kind, "ctxfiller")) { /* a filler context left in a hole */
		struct drm_i915_gem_context_create c = {0};
		xioctl(M.fd, DRM_IOCTL_I915_GEM_CONTEXT_CREATE, &c, "CONTEXT_CREATE");
	} else if (!strcmp(kind, "vmfiller")) { /* a filler VM left in a hole (seen by go.after) */
		vm_create(M.fd);
	} else if (!strcmp(kind, "usermem")) { /* userptr memory lost */
		memset(M.umem[0], 0, 4096);
	} else {
		die("unknown sabotage %s", kind);
	}
}

/* ---- after the restore: new work ------------------------------------------------------- */

static uint32_t lowest_free(const uint32_t *holes, int n, uint32_t top, int nth)
{
	uint32_t sorted[8];
	int k = 0;
	memcpy(sorted, holes, sizeof(uint32_t) * (size_t)n);
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			if (sorted[j] < sorted[i]) {
				uint32_t t = sorted[i];
				sorted[i] = sorted[j];
				sorted[j] = t;
			}
	for (; k < n; k++)
		if (k == nth)
			return sorted[k];
	return top + 1 + (uint32_t)(nth - n);
}

static void after_work(void)
{
	static uint8_t tmp[1 << 20];
	char what[128];

	/* new patterns through every mapping, read back through a fresh mapping of the handle */
	write_patterns(0x5a5a0000u);
	for (int i = 0; i < M.nb; i++) {
		struct buf *b = &M.b[i];
		if (b->userptr)
			continue;
		for (int k = 0; k < 2; k++) {
			if (b->mt[k] == MT_NONE)
				continue;
			if (k == 1) /* the second mapping sees what the first wrote */
				check_bytes("second mapping after a write through the first", b->map[1], b->size,
					    b->seed);
			if (b->mt[k] == MT_LEGACY)
				continue; /* PREAD below reads its shmem object */
			uint64_t off;
			int r = mmap_offset(M.fd, b->handle, b->mt[k], &off);
			snprintf(what, sizeof what,
				 "handle %u (%s): a fresh %s mapping after writing through the old one", b->handle,
				 b->name, mt_name(b->mt[k]));
			void *p = r ? MAP_FAILED : mmap(NULL, b->size, PROT_READ, MAP_SHARED, M.fd, off);
			if (p == MAP_FAILED) {
				bad("%s: %s", what, strerror(r ? -r : errno));
				continue;
			}
			check_bytes(what, p, b->size, b->seed);
			munmap(p, b->size);
		}
		snprintf(what, sizeof what, "handle %u (%s): PREAD after writing", b->handle, b->name);
		int r = pread_buf(M.fd, b->handle, tmp, b->size);
		if (r)
			bad("%s: %s", what, strerror(-r));
		else
			check_bytes(what, tmp, b->size, b->seed);
	}

	/* new buffers: the lowest free numbers given the holes */
	uint32_t top = max_handle();
	uint32_t batch = 0;
	for (int n = 0; n < M.nhh + 1; n++) {
		uint32_t h = gem_create(M.fd, 4096), want = lowest_free(M.hole_h, M.nhh, top, n);
		if (h != want)
			bad("new buffer %d got handle %u, expected %u (the handle table differs)", n + 1, h, want);
		batch = h;
	}
	/* VM ids: each expected one names a VM (a context can use it), a hole names none */
	for (int i = 0; i < M.nvm; i++) {
		uint32_t id;
		int r = context_create_ext(M.fd, M.vms[i], 0, 0, NULL, 0, &id);
		if (r)
			bad("VM id %u: a context cannot use it (%s)", M.vms[i], strerror(-r));
		else
			context_destroy(M.fd, id);
	}
	for (int i = 0; i < M.nhvm; i++) {
		uint32_t id;
		int r = context_create_ext(M.fd, M.hole_vm[i], 0, 0, NULL, 0, &id);
		if (r != -ENOENT)
			bad("VM id %u was destroyed before the dump, but a context %s", M.hole_vm[i],
			    r ? "creation did not fail with ENOENT" : "could use it");
		if (!r)
			context_destroy(M.fd, id);
	}
	uint32_t vtop = 0;
	for (int i = 0; i < M.nvm; i++)
		vtop = M.vms[i] > vtop ? M.vms[i] : vtop;
	for (int i = 0; i < M.nhvm; i++)
		vtop = M.hole_vm[i] > vtop ? M.hole_vm[i] : vtop;
	uint32_t v = vm_create(M.fd), vwant = lowest_free(M.hole_vm, M.nhvm, vtop, 0);
	if (v != vwant)
		bad("new VM got id %u, expected %u (the VM id table differs)", v, vwant);
	/* new contexts: the lowest free ids */
	uint32_t ctop = max_ctx();
	for (int n = 0; n < M.nhc + 1; n++) {
		struct drm_i915_gem_context_create c = {0};
		xioctl(M.fd, DRM_IOCTL_I915_GEM_CONTEXT_CREATE, &c, "CONTEXT_CREATE");
		uint32_t want = lowest_free(M.hole_c, M.nhc, ctop, n);
		if (c.ctx_id != want)
			bad("new context %d got id %u, expected %u (the context table differs)", n + 1, c.ctx_id, want);
	}
	/* engine maps: with N engines, index N-1 is accepted and N is not; default: BSD works */
	for (int i = 0; i < M.nc; i++) {
		struct drm_i915_gem_exec_object2 obj = {.handle = batch};
		struct drm_i915_gem_execbuffer2 eb = {
			.buffers_ptr = (uintptr_t)&obj, .buffer_count = 1, .rsvd1 = M.c[i].id};
		int n = M.c[i].nengines;
		eb.flags = n ? (uint64_t)(n - 1) : I915_EXEC_BSD;
		int r = tryioctl(M.fd, DRM_IOCTL_I915_GEM_EXECBUFFER2, &eb);
		if (r)
			bad("context %u: EXECBUFFER2 on engine %llu: %s", M.c[i].id, (unsigned long long)eb.flags,
			    strerror(-r));
		if (n) {
			eb.flags = (uint64_t)n;
			r = tryioctl(M.fd, DRM_IOCTL_I915_GEM_EXECBUFFER2, &eb);
			if (r != -EINVAL)
				bad("context %u: its engine map has %d engines, but EXECBUFFER2 on index %d answers %s",
				    M.c[i].id, n, n, r ? strerror(-r) : "ok");
		}
	}
}

/* ---- the two processes ----------------------------------------------------------------- */

static drm_intel_bufmgr *g_bufmgr;

static void build_parent(void)
{
	M.role = "parent";
	M.fd = open_i915();
	g_bufmgr = drm_intel_bufmgr_gem_init(M.fd, 4096);
	if (!g_bufmgr)
		die("drm_intel_bufmgr_gem_init refused the device");
	drm_intel_bo *surf[4];
	for (int i = 0; i < 4; i++) {
		uint32_t tiling = I915_TILING_X;
		unsigned long pitch = 0;
		surf[i] = drm_intel_bo_alloc_tiled(g_bufmgr, "surface", 256, 64, 4, &tiling, &pitch, 0);
		if (!surf[i] || tiling != I915_TILING_X || surf[i]->handle != i + 1)
			die("drm_intel_bo_alloc_tiled %d failed (tiling %u)", i, tiling);
		if (i == 1)
			continue;
		struct buf *b = add_buf(i == 3 ? "surface-pwrite" : "surface-gtt", surf[i]->handle, surf[i]->size,
					I915_TILING_X);
		if (i != 3) {
			if (drm_intel_gem_bo_map_gtt(surf[i]))
				die("drm_intel_gem_bo_map_gtt %d failed", i);
			add_map(b, I915_MMAP_OFFSET_GTT, surf[i]->virtual);
		}
	}
	drm_intel_bo *bits = drm_intel_bo_alloc(g_bufmgr, "bitstream", 64 << 10, 4096);
	if (!bits || bits->handle != 5 || drm_intel_bo_map(bits, 1)) /* legacy GEM_MMAP: a CPU mapping */
		die("bitstream buffer: alloc or map failed");
	add_map(add_buf("bitstream-legacy", bits->handle, bits->size, I915_TILING_NONE), MT_LEGACY, bits->virtual);

	struct buf *b =
		add_buf("ext-dev+sys-pat3", gem_create_ext(M.fd, 128 << 10, true, 3), 128 << 10, I915_TILING_NONE);
	add_map(b, I915_MMAP_OFFSET_WB, map_gem(M.fd, b, I915_MMAP_OFFSET_WB));
	add_map(b, I915_MMAP_OFFSET_WC, map_gem(M.fd, b, I915_MMAP_OFFSET_WC));
	b = add_buf("ext-sys-uncached", gem_create_ext(M.fd, 64 << 10, false, -1), 64 << 10, I915_TILING_NONE);
	set_caching(M.fd, b->handle, I915_CACHING_NONE);
	b->caching = I915_CACHING_NONE;
	add_map(b, I915_MMAP_OFFSET_WC, map_gem(M.fd, b, I915_MMAP_OFFSET_WC));
	b = add_buf("plain-ytiled-pwrite", gem_create(M.fd, 16 << 10), 16 << 10, I915_TILING_Y);
	set_tiling(M.fd, b->handle, I915_TILING_Y, 128);
	uint32_t tmp = gem_create(M.fd, 8192);

	M.umem[0] = aligned_alloc(4096, 64 << 10);
	M.ulen[0] = 64 << 10;
	M.umem[1] = mmap(NULL, 32 << 10, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	M.ulen[1] = 32 << 10;
	if (!M.umem[0] || M.umem[1] == MAP_FAILED)
		die("userptr memory: %s", strerror(errno));
	M.nu = 2;
	for (int i = 0; i < 2; i++) {
		M.useed[i] = 0xabc000u + (uint32_t)i;
		b = add_buf(i ? "userptr-mmap" : "userptr-malloc", userptr(M.fd, M.umem[i], M.ulen[i]), M.ulen[i],
			    I915_TILING_NONE);
		b->userptr = true;
	}
	gem_close(M.fd, tmp);
	drm_intel_bo_unreference(surf[1]);
	M.hole_h[M.nhh++] = 2;
	M.hole_h[M.nhh++] = tmp;

	/* contexts: libdrm's (own VM), then on VMs; VM 2 and context 4 destroyed (holes) */
	drm_intel_context *lib = drm_intel_gem_context_create(g_bufmgr);
	uint32_t id;
	if (!lib || drm_intel_gem_context_get_id(lib, &id) || id != 1)
		die("drm_intel_gem_context_create failed");
	add_ctx(0, 0, 0);
	add_ctx(1, 0, 0);
	uint32_t vm_a = vm_create(M.fd), vm_x = vm_create(M.fd), vm_b = vm_create(M.fd);
	const struct i915_engine_class_instance dec[] = {{I915_ENGINE_CLASS_VIDEO, 0}, {I915_ENGINE_CLASS_RENDER, 0}};
	const struct i915_engine_class_instance vpp[] = {{I915_ENGINE_CLASS_VIDEO_ENHANCE, 0}};
	if (context_create_ext(M.fd, vm_a, -100, 2, dec, I915_CONTEXT_CREATE_FLAGS_SINGLE_TIMELINE, &id))
		die("CONTEXT_CREATE_EXT: %s", strerror(errno));
	add_ctx(id, -100, 2);
	if (context_create_ext(M.fd, vm_a, 0, 0, NULL, 0, &id))
		die("CONTEXT_CREATE_EXT: %s", strerror(errno));
	add_ctx(id, 0, 0);
	uint32_t ctmp;
	if (context_create_ext(M.fd, vm_x, 7, 0, NULL, 0, &ctmp))
		die("CONTEXT_CREATE_EXT: %s", strerror(errno));
	if (context_create_ext(M.fd, vm_b, 10, 1, vpp, 0, &id))
		die("CONTEXT_CREATE_EXT: %s", strerror(errno));
	add_ctx(id, 10, 1);
	context_destroy(M.fd, ctmp);
	vm_destroy(M.fd, vm_x);
	M.hole_c[M.nhc++] = ctmp;
	M.vms[M.nvm++] = vm_a;
	M.vms[M.nvm++] = vm_b;
	M.hole_vm[M.nhvm++] = vm_x;
}

static void build_child(void)
{
	M.role = "child";
	M.fd = open_i915();
	uint32_t vm = vm_create(M.fd), id, tmp;
	const struct i915_engine_class_instance eng[] = {{I915_ENGINE_CLASS_RENDER, 0}, {I915_ENGINE_CLASS_COPY, 0}};
	add_ctx(0, 0, 0);
	if (context_create_ext(M.fd, vm, 0, 0, NULL, 0, &id))
		die("CONTEXT_CREATE_EXT: %s", strerror(errno));
	add_ctx(id, 0, 0);
	if (context_create_ext(M.fd, vm, 0, 0, NULL, 0, &tmp) || context_create_ext(M.fd, vm, -5, 2, eng, 0, &id))
		die("CONTEXT_CREATE_EXT: %s", strerror(errno));
	add_ctx(id, -5, 2);
	context_destroy(M.fd, tmp);
	M.hole_c[M.nhc++] = tmp;
	M.vms[M.nvm++] = vm;

	struct buf *b = add_buf("ext-sys-wc", gem_create_ext(M.fd, 64 << 10, false, -1), 64 << 10, I915_TILING_NONE);
	add_map(b, I915_MMAP_OFFSET_WC, map_gem(M.fd, b, I915_MMAP_OFFSET_WC));
	uint32_t gone = gem_create(M.fd, 8192);
	b = add_buf("xtiled-gtt", gem_create(M.fd, 32 << 10), 32 << 10, I915_TILING_X);
	set_tiling(M.fd, b->handle, I915_TILING_X, 512);
	add_map(b, I915_MMAP_OFFSET_GTT, map_gem(M.fd, b, I915_MMAP_OFFSET_GTT));
	M.umem[0] = aligned_alloc(4096, 16 << 10);
	M.ulen[0] = 16 << 10;
	M.useed[0] = 0xdef000u;
	M.nu = 1;
	b = add_buf("userptr-malloc", userptr(M.fd, M.umem[0], M.ulen[0]), M.ulen[0], I915_TILING_NONE);
	b->userptr = true;
	gem_close(M.fd, gone);
	M.hole_h[M.nhh++] = gone;
}

/* while phase 1 waits for go.1 (wl_sync's idle): hold, sabotage, a verification round every
 * ~100 ms into verify.<pid> */
static bool g_sabotaged, g_held;
static unsigned long g_round;
static char g_sticky[600];
static uint64_t g_next_round_ns;

static void check_round(void)
{
	char name[64];
	if (exists("hold")) {
		if (!g_held) {
			snprintf(name, sizeof name, "held.%d", getpid());
			write_file(name, "held\n");
			g_held = true;
		}
		return;
	}
	g_held = false;
	if (wl_now_ns() < g_next_round_ns)
		return;
	if (!g_sabotaged && exists("sabotage")) {
		char path[512], kind[64] = "";
		snprintf(path, sizeof path, "%s/sabotage", g_dir);
		/* the shell creates the file before it writes the kind: an empty read is tried
		 * again next round, not taken as done */
		FILE *f = fopen(path, "r");
		if (f && fscanf(f, "%63s", kind) == 1) {
			sabotage(kind);
			g_sabotaged = true;
		}
		if (f)
			fclose(f);
	}
	g_round++;
	snprintf(name, sizeof name, "verify.%d", getpid());
	if (!g_sticky[0]) {
		/* A checkpoint can land inside a round: /proc/self/maps read before the freeze, the
		 * ioctls answered after the restore (a mapping's old fake offset against the handle's
		 * new one). A failure counts when a second round, begun after it, fails too. */
		if (run_check(verify, "verify") && run_check(verify, "verify"))
			snprintf(g_sticky, sizeof g_sticky, "FAIL %lu %s", g_round, g_fail);
		else
			write_file(name, "PASS %lu\n", g_round);
	}
	if (g_sticky[0])
		write_file(name, "%s\n", g_sticky);
	g_next_round_ns = wl_now_ns() + 100 * 1000 * 1000ull;
}

/* builds, checks once, phase 1 (ready.1) verifying every ~100 ms until go.1, then works */
static int run(bool is_parent)
{
	char name[64];
	if (is_parent)
		build_parent();
	else
		build_child();
	write_patterns(0);
	write_expectations();
	if (run_check(verify, "verify"))
		die("the state just built does not verify: %s", g_fail);
	write_file(is_parent ? "pid.parent" : "pid.child", "%d\n", getpid());
	g_sabotaged = !is_parent;
	wl_sync(1, check_round);
	int fails = run_check(after_work, "result");
	snprintf(name, sizeof name, "result.%d", getpid());
	if (fails)
		write_file(name, "FAIL %s\n", g_fail);
	else
		write_file(name, "PASS\n");
	return fails ? 1 : 0;
}

int main(int argc, char **argv)
{
	wl_init(argc, argv);
	g_dir = wl.dir;
	close_range(3, ~0u, 0); /* virtme's ports and anything else CRIU could not dump */
	signal(SIGBUS, on_fault);
	signal(SIGSEGV, on_fault);
	pid_t child = wl_fork();
	if (child == 0)
		exit(run(false));
	int rc = run(true), st = 0;
	if (waitpid(child, &st, 0) != child)
		st = -1;
	int cst = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	char name[64];
	snprintf(name, sizeof name, "exit.%d", getpid());
	write_file(name, "%d child %d\n", rc || cst, cst);
	return rc || cst;
}
