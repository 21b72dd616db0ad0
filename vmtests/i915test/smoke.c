// SPDX-License-Identifier: GPL-2.0
/*
 * smoke: checks the gwi915 fixture the way gpuwatch and libdrm_intel will meet it. Run as
 * root in the VM after `insmod gwi915.ko`. Prints one line per case, "PASS name" or
 * "FAIL name: what was expected, what came", then "N passed, N failed"; exits 1 on any
 * failure, 2 when no i915 device is found.
 *
 * usage: smoke [CARD_NODE]     (default: the /dev/dri/card* whose driver is "i915")
 *
 * Each case opens its own DRM file where numbering matters (handles, context and VM ids
 * count per file). Ground truth the uapi cannot show (a context's VM and engines) is read
 * from the fixture's debugfs file dri/N/gwi915_state, keyed by the drm-client-id fdinfo
 * shows.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xf86drm.h>
#include <i915_drm.h>
#include <intel_bufmgr.h>

/* I915_GEM_CREATE_EXT_SET_PAT: newer than libdrm 2.4.114's header */
#define GW_GEM_CREATE_EXT_SET_PAT 2
struct gw_create_ext_set_pat {
	struct i915_user_extension base;
	uint32_t pat_index;
	uint32_t rsvd;
};

static char card_path[64];
static int card_minor = -1;
static char why[1024];

/* A failed expectation: say what was expected and what came, and leave the case. */
#define EXPECT(cond, ...)                                                                                              \
	do {                                                                                                           \
		if (!(cond)) {                                                                                         \
			snprintf(why, sizeof(why), __VA_ARGS__);                                                       \
			return -1;                                                                                     \
		}                                                                                                      \
	} while (0)

static int open_card(void)
{
	return open(card_path, O_RDWR | O_CLOEXEC);
}

/* ioctl returning 0 or -errno */
static int xioctl(int fd, unsigned long req, void *arg)
{
	return drmIoctl(fd, req, arg) ? -errno : 0;
}

static int gem_create(int fd, uint64_t size, uint32_t *handle)
{
	struct drm_i915_gem_create c = {.size = size};
	int ret = xioctl(fd, DRM_IOCTL_I915_GEM_CREATE, &c);

	*handle = c.handle;
	return ret;
}

static int gem_close(int fd, uint32_t handle)
{
	struct drm_gem_close c = {.handle = handle};

	return xioctl(fd, DRM_IOCTL_GEM_CLOSE, &c);
}

static int mmap_offset(int fd, uint32_t handle, uint64_t type, uint64_t *offset)
{
	struct drm_i915_gem_mmap_offset a = {.handle = handle, .flags = type};
	int ret = xioctl(fd, DRM_IOCTL_I915_GEM_MMAP_OFFSET, &a);

	*offset = a.offset;
	return ret;
}

static int pread_bo(int fd, uint32_t handle, uint64_t off, void *buf, uint64_t len)
{
	struct drm_i915_gem_pread a = {.handle = handle, .offset = off, .size = len, .data_ptr = (uintptr_t)buf};
	return xioctl(fd, DRM_IOCTL_I915_GEM_PREAD, &a);
}

static int pwrite_bo(int fd, uint32_t handle, uint64_t off, const void *buf, uint64_t len)
{
	struct drm_i915_gem_pwrite a = {.handle = handle, .offset = off, .size = len, .data_ptr = (uintptr_t)buf};
	return xioctl(fd, DRM_IOCTL_I915_GEM_PWRITE, &a);
}

static void fill(void *p, size_t len, uint32_t seed)
{
	uint32_t *w = p;

	for (size_t i = 0; i < len / 4; i++)
		w[i] = seed * 2654435761u + (uint32_t)i;
}

/* The /proc/self/maps line of the mapping starting at addr: path and offset column. */
static int maps_entry(const void *addr, char *path, size_t path_len, uint64_t *offset)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int found = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end;
		unsigned long long off;
		int pos = 0;

		if (sscanf(line, "%lx-%lx %*s %llx %*s %*s %n", &start, &end, &off, &pos) < 3 ||
		    start != (uintptr_t)addr)
			continue;
		snprintf(path, path_len, "%s", line + pos);
		path[strcspn(path, "\n")] = 0;
		*offset = off;
		found = 0;
		break;
	}
	fclose(f);
	return found;
}

static int fd_link(int fd, char *buf, size_t len)
{
	char p[64];
	ssize_t n;

	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	n = readlink(p, buf, len - 1);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return 0;
}

/* A field of /proc/self/fdinfo/FD ("drm-client-id" ...), or -1. */
static long long fdinfo_field(int fd, const char *key)
{
	char p[64], line[256];
	long long v = -1;
	size_t kl = strlen(key);
	FILE *f;

	snprintf(p, sizeof(p), "/proc/self/fdinfo/%d", fd);
	f = fopen(p, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && line[kl] == ':')
			v = strtoll(line + kl + 1, NULL, 0);
	fclose(f);
	return v;
}

/* The fixture's debugfs block of the client behind fd ("  ctx 1 ...\n  vmid 3 vm 7\n"). */
static int client_state(int fd, char *buf, size_t len)
{
	char p[128], line[512], head[64];
	long long id = fdinfo_field(fd, "drm-client-id");
	bool in = false;
	size_t used = 0;
	FILE *f;

	if (id < 0)
		return -1;
	snprintf(p, sizeof(p), "/sys/kernel/debug/dri/%d/gwi915_state", card_minor);
	if (access(p, R_OK))
		mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	f = fopen(p, "r");
	if (!f)
		return -1;
	snprintf(head, sizeof(head), "client %lld ", id);
	buf[0] = 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "client ", 7))
			in = !strncmp(line, head, strlen(head));
		else if (in && used + strlen(line) < len)
			used += snprintf(buf + used, len - used, "%s", line);
	}
	fclose(f);
	return 0;
}

/* "vm N" of "  ctx ID ..." or of "  vmid ID vm N" in a client block, or -1 */
static long state_vm(const char *state, const char *kind, unsigned int id)
{
	char key[32];
	const char *l, *vm;

	snprintf(key, sizeof(key), "  %s %u ", kind, id);
	l = strstr(state, key);
	if (!l)
		return -1;
	vm = strstr(l, " vm ");
	return vm && vm < strchr(l, '\n') ? strtol(vm + 4, NULL, 10) : -1;
}

static int t_version(void)
{
	int fd = open_card();
	drmVersionPtr v;

	EXPECT(fd >= 0, "open %s: %s", card_path, strerror(errno));
	v = drmGetVersion(fd);
	EXPECT(v, "DRM_IOCTL_VERSION failed: %s", strerror(errno));
	EXPECT(!strcmp(v->name, "i915"), "DRM_IOCTL_VERSION name: expected \"i915\", got \"%s\"", v->name);
	EXPECT(strstr(v->desc, "gpuwatch"), "desc should say it is the gpuwatch fixture, got \"%s\"", v->desc);
	EXPECT(v->version_major == 1 && v->version_minor == 6, "version: expected 1.6 like i915, got %d.%d",
	       v->version_major, v->version_minor);
	drmFreeVersion(v);
	EXPECT(fdinfo_field(fd, "drm-client-id") >= 0, "fdinfo has no drm-client-id line");
	close(fd);
	return 0;
}

static int t_render_node(void)
{
	char path[64];
	drmVersionPtr v;
	uint32_t h;
	int fd;

	/* the render node of the same device, from sysfs */
	snprintf(path, sizeof(path), "/sys/class/drm/card%d/device/drm", card_minor);
	DIR *d = opendir(path);
	struct dirent *e;

	EXPECT(d, "no %s", path);
	snprintf(path, sizeof(path), "(none)");
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "renderD", 7))
			snprintf(path, sizeof(path), "/dev/dri/%s", e->d_name);
	closedir(d);
	fd = open(path, O_RDWR | O_CLOEXEC);
	EXPECT(fd >= 0, "open %s: %s (expected a render node beside %s)", path, strerror(errno), card_path);
	v = drmGetVersion(fd);
	EXPECT(v && !strcmp(v->name, "i915"), "render node driver: expected i915");
	drmFreeVersion(v);
	EXPECT(gem_create(fd, 4096, &h) == 0 && h == 1, "GEM_CREATE on the render node: expected handle 1");
	close(fd);
	return 0;
}

static int getparam(int fd, int param, int *value)
{
	drm_i915_getparam_t g = {.param = param, .value = value};

	return xioctl(fd, DRM_IOCTL_I915_GETPARAM, &g);
}

static int t_getparam(void)
{
	int fd = open_card(), v = 0;

	EXPECT(fd >= 0, "open: %s", strerror(errno));
	EXPECT(getparam(fd, I915_PARAM_CHIPSET_ID, &v) == 0 && v == 0x1912,
	       "CHIPSET_ID: expected 0x1912 (Skylake GT2), got 0x%x", v);
	EXPECT(getparam(fd, I915_PARAM_HAS_EXECBUF2, &v) == 0 && v == 1, "HAS_EXECBUF2: expected 1");
	EXPECT(getparam(fd, I915_PARAM_HAS_EXEC_SOFTPIN, &v) == 0 && v == 1, "HAS_EXEC_SOFTPIN: expected 1");
	EXPECT(getparam(fd, I915_PARAM_HAS_ALIASING_PPGTT, &v) == 0 && v == 2,
	       "HAS_ALIASING_PPGTT: expected 2 (full ppgtt), got %d", v);
	EXPECT(getparam(fd, 9999, &v) == -EINVAL, "an unknown param: expected EINVAL");
	close(fd);
	return 0;
}

static int t_prime(void)
{
	int a = open_card(), b = open_card(), dmabuf;
	uint32_t h, imported, back, page[1024];
	void *m;

	EXPECT(a >= 0 && b >= 0, "open: %s", strerror(errno));
	EXPECT(gem_create(a, 8192, &h) == 0 && gem_create(a, 4096, &back) == 0, "GEM_CREATE failed");
	fill(page, sizeof(page), 6);
	EXPECT(pwrite_bo(a, h, 4096, page, sizeof(page)) == 0, "PWRITE failed");
	EXPECT(drmPrimeHandleToFD(a, h, DRM_CLOEXEC | DRM_RDWR, &dmabuf) == 0, "PRIME export failed: %s",
	       strerror(errno));
	EXPECT(lseek(dmabuf, 0, SEEK_END) == 8192, "dma-buf lseek(SEEK_END): expected the size 8192");
	EXPECT(drmPrimeFDToHandle(b, dmabuf, &imported) == 0 && imported == 1,
	       "import into another file: expected its handle 1, got %u", imported);
	EXPECT(drmPrimeFDToHandle(a, dmabuf, &back) == 0 && back == h,
	       "import back into the exporter: expected its own handle %u, got %u", h, back);
	m = mmap(NULL, 8192, PROT_READ, MAP_SHARED, dmabuf, 0);
	EXPECT(m != MAP_FAILED, "mmap of the dma-buf: %s", strerror(errno));
	EXPECT(!memcmp((char *)m + 4096, page, sizeof(page)), "the dma-buf mapping does not show the object");
	munmap(m, 8192);
	close(dmabuf);
	close(b);
	close(a);
	return 0;
}

static int t_libdrm_map(void)
{
	int fd = open_card();
	drm_intel_bufmgr *bufmgr;
	drm_intel_bo *bo;
	char path[256];
	uint64_t off;
	static uint32_t pat[2048], back[2048];

	EXPECT(fd >= 0, "open: %s", strerror(errno));
	bufmgr = drm_intel_bufmgr_gem_init(fd, 4096);
	EXPECT(bufmgr, "drm_intel_bufmgr_gem_init refused the device (chipset id?)");
	bo = drm_intel_bo_alloc(bufmgr, "smoke", sizeof(pat), 4096);
	EXPECT(bo, "drm_intel_bo_alloc(8 KiB) failed");
	EXPECT(drm_intel_bo_map(bo, 1) == 0, "drm_intel_bo_map (legacy GEM_MMAP) failed");
	EXPECT(maps_entry(bo->virtual, path, sizeof(path), &off) == 0,
	       "no /proc/self/maps line at the GEM_MMAP address %p", bo->virtual);
	EXPECT(!strcmp(path, "/i915 (deleted)") && off == 0,
	       "legacy GEM_MMAP mapping: expected \"/i915 (deleted)\" at offset 0, got \"%s\" at 0x%llx", path,
	       (unsigned long long)off);
	fill(pat, sizeof(pat), 1);
	memcpy(bo->virtual, pat, sizeof(pat));
	drm_intel_bo_unmap(bo);
	EXPECT(drm_intel_bo_get_subdata(bo, 0, sizeof(back), back) == 0, "get_subdata (PREAD) failed");
	EXPECT(!memcmp(pat, back, sizeof(pat)), "PREAD does not return what the CPU map wrote");
	fill(pat, 4096, 2);
	EXPECT(drm_intel_bo_subdata(bo, 4096, 4096, pat) == 0, "subdata (PWRITE) failed");
	EXPECT(drm_intel_bo_map(bo, 0) == 0, "second drm_intel_bo_map failed");
	EXPECT(!memcmp((char *)bo->virtual + 4096, pat, 4096), "the CPU map does not show what PWRITE wrote at 4096");
	drm_intel_bo_unmap(bo);
	drm_intel_bo_unreference(bo);
	drm_intel_bufmgr_destroy(bufmgr);
	close(fd);
	return 0;
}

static int t_libdrm_gtt(void)
{
	int fd = open_card();
	uint32_t tiling = I915_TILING_X, swizzle;
	unsigned long pitch;
	drm_intel_bufmgr *bufmgr;
	struct drm_i915_gem_mmap_gtt g = {0};
	drm_intel_bo *bo;
	char path[256];
	uint64_t off;
	static uint32_t pat[16384], back[16384];

	EXPECT(fd >= 0, "open: %s", strerror(errno));
	bufmgr = drm_intel_bufmgr_gem_init(fd, 4096);
	EXPECT(bufmgr, "drm_intel_bufmgr_gem_init failed");
	bo = drm_intel_bo_alloc_tiled(bufmgr, "tiled", 256, 64, 4, &tiling, &pitch, 0);
	EXPECT(bo, "drm_intel_bo_alloc_tiled(256x64x4, X) failed");
	EXPECT(tiling == I915_TILING_X && pitch % 512 == 0,
	       "tiled bo: expected X tiling and a pitch multiple of 512, got tiling %u pitch %lu", tiling, pitch);
	EXPECT(drm_intel_bo_get_tiling(bo, &tiling, &swizzle) == 0 && tiling == I915_TILING_X &&
		       swizzle == I915_BIT_6_SWIZZLE_NONE,
	       "GET_TILING: expected X with swizzle NONE, got %u/%u", tiling, swizzle);
	EXPECT(drm_intel_gem_bo_map_gtt(bo) == 0, "drm_intel_gem_bo_map_gtt failed: %s", strerror(errno));
	g.handle = bo->handle;
	EXPECT(xioctl(fd, DRM_IOCTL_I915_GEM_MMAP_GTT, &g) == 0, "GEM_MMAP_GTT failed");
	EXPECT(maps_entry(bo->virtual, path, sizeof(path), &off) == 0, "no /proc/self/maps line at the GTT map %p",
	       bo->virtual);
	EXPECT(!strcmp(path, "anon_inode:i915.gem"), "GTT mapping: expected anon_inode:i915.gem in maps, got \"%s\"",
	       path);
	EXPECT(off == g.offset && off >= (1ull << 32),
	       "GTT mapping's maps offset: expected the MMAP_GTT fake offset 0x%llx (>= 4 GiB), got 0x%llx",
	       (unsigned long long)g.offset, (unsigned long long)off);
	EXPECT(bo->size <= sizeof(pat), "tiled bo larger than expected: %lu", bo->size);
	fill(pat, bo->size, 3);
	memcpy(bo->virtual, pat, bo->size);
	EXPECT(pread_bo(fd, bo->handle, 0, back, bo->size) == 0, "PREAD failed");
	EXPECT(!memcmp(pat, back, bo->size), "PREAD does not return what the GTT map wrote");
	drm_intel_bo_unreference(bo); /* no reuse: closes the handle; the map goes with the bufmgr */
	drm_intel_bufmgr_destroy(bufmgr);
	close(fd);
	return 0;
}

static int t_libdrm_contexts(void)
{
	int fd = open_card();
	drm_intel_bufmgr *bufmgr;
	drm_intel_context *c[3];
	uint32_t id[3];

	EXPECT(fd >= 0, "open: %s", strerror(errno));
	bufmgr = drm_intel_bufmgr_gem_init(fd, 4096);
	EXPECT(bufmgr, "drm_intel_bufmgr_gem_init failed");
	c[0] = drm_intel_gem_context_create(bufmgr);
	c[1] = drm_intel_gem_context_create(bufmgr);
	EXPECT(c[0] && c[1], "drm_intel_gem_context_create failed");
	drm_intel_gem_context_get_id(c[0], &id[0]);
	drm_intel_gem_context_get_id(c[1], &id[1]);
	EXPECT(id[0] == 1 && id[1] == 2, "context ids: expected 1 then 2, got %u then %u", id[0], id[1]);
	drm_intel_gem_context_destroy(c[0]);
	c[2] = drm_intel_gem_context_create(bufmgr);
	EXPECT(c[2], "third drm_intel_gem_context_create failed");
	drm_intel_gem_context_get_id(c[2], &id[2]);
	EXPECT(id[2] == 1, "context id after destroying 1: expected 1 (lowest free), got %u", id[2]);
	drm_intel_gem_context_destroy(c[1]);
	drm_intel_gem_context_destroy(c[2]);
	drm_intel_bufmgr_destroy(bufmgr);
	close(fd);
	return 0;
}

static int t_handles(void)
{
	int fd = open_card();
	uint32_t h[3], n;

	EXPECT(fd >= 0, "open: %s", strerror(errno));
	for (int i = 0; i < 3; i++)
		EXPECT(gem_create(fd, 4096, &h[i]) == 0 && h[i] == (uint32_t)i + 1,
		       "GEM_CREATE #%d: expected handle %d, got %u", i + 1, i + 1, h[i]);
	EXPECT(gem_close(fd, 2) == 0, "GEM_CLOSE 2 failed");
	EXPECT(gem_create(fd, 4096, &n) == 0 && n == 2, "after closing 2: expected handle 2, got %u", n);
	EXPECT(gem_close(fd, 3) == 0 && gem_close(fd, 1) == 0, "GEM_CLOSE 3, 1 failed");
	EXPECT(gem_create(fd, 4096, &n) == 0 && n == 1, "holes 1 and 3: expected 1 first, got %u", n);
	EXPECT(gem_create(fd, 4096, &n) == 0 && n == 3, "then expected 3, got %u", n);
	EXPECT(gem_create(fd, 1, &n) == 0 && n == 4, "then expected 4, got %u", n);
	struct drm_i915_gem_mmap lm = {.handle = 4, .size = 4096, .flags = I915_MMAP_WC};
	EXPECT(xioctl(fd, DRM_IOCTL_I915_GEM_MMAP, &lm) == 0 && lm.addr_ptr, "legacy GEM_MMAP with I915_MMAP_WC: %s",
	       strerror(errno));
	lm.flags = 2;
	EXPECT(xioctl(fd, DRM_IOCTL_I915_GEM_MMAP, &lm) == -EINVAL, "legacy GEM_MMAP flag 2: expected EINVAL");
	close(fd);
	return 0;
}

static int t_create_ext(void)
{
	int fd = open_card();
	struct drm_i915_gem_memory_class_instance regions[2] = {{I915_MEMORY_CLASS_DEVICE, 0},
								{I915_MEMORY_CLASS_SYSTEM, 0}};
	struct gw_create_ext_set_pat pat = {.base = {.name = GW_GEM_CREATE_EXT_SET_PAT}, .pat_index = 3};
	struct drm_i915_gem_create_ext_protected_content prot = {
		.base = {.name = I915_GEM_CREATE_EXT_PROTECTED_CONTENT, .next_extension = (uintptr_t)&pat}};
	struct drm_i915_gem_create_ext_memory_regions mr = {
		.base = {.name = I915_GEM_CREATE_EXT_MEMORY_REGIONS}, .num_regions = 2, .regions = (uintptr_t)regions};
	struct i915_user_extension unknown = {.name = 7};
	struct drm_i915_gem_create_ext c = {.size = 10000, .extensions = (uintptr_t)&mr};
	char state[4096];

	EXPECT(fd >= 0, "open: %s", strerror(errno));
	EXPECT(xioctl(fd, DRM_IOCTL_I915_GEM_CREATE_EXT, &c) == 0,
	       "GEM_CREATE_EXT with regions [DEVICE 0, SYSTEM 0]: %s", strerror(errno));
	EXPECT(c.handle == 1 && c.size == 12288,
	       "GEM_CREATE_EXT: expected handle 1 of 12288 bytes (rounded up), got %u of %llu", c.handle,
	       (unsigned long long)c.size);
	EXPECT(client_state(fd, state, sizeof(state)) == 0 &&
		       strstr(state, "handle 1 size 12288 tiling 0 stride 0 caching 1 madv 0 regions 1:0,0:0"),
	       "debugfs should list handle 1 with regions 1:0,0:0, got:\n%s", state);
	c = (struct drm_i915_gem_create_ext){.size = 4096, .extensions = (uintptr_t)&unknown};
	EXPECT(xioctl(fd, DRM_IOCTL_I915_GEM_CREATE_EXT, &c) == -EINVAL,
	       "an unknown extension (name 7): expected EINVAL, got %s", strerror(errno));
	regions[1] = regions[0];
	c = (struct drm_i915_gem_create_ext){.size = 4096, .extensions = (uintptr_t)&mr};
	EXPECT(xioctl(fd, DRM_IOCTL_I915_GEM_CREATE_EXT, &c) == -EINVAL, "a duplicate region: expected EINVAL");
	c = (struct drm_i915_gem_create_ext){.size = 4096, .extensions = (uintptr_t)&prot};
	EXPECT(xioctl(fd, DRM_IOCTL_I915_GEM_CREATE_EXT, &c) == 0 && c.handle == 2,
	       "PROTECTED_CONTENT then SET_PAT(3): expected handle 2, got %s", strerror(errno));
	EXPECT(client_state(fd, state, sizeof(state)) == 0 && strstr(state, "handle 2 ") &&
		       strstr(strstr(state, "handle 2 "), "protected pat 3"),
	       "debugfs should show handle 2 protected with pat 3:\n%s", state);
	pat.pat_index = 32;
	EXPECT(xioctl(fd, DRM_IOCTL_I915_GEM_CREATE_EXT, &c) == -EINVAL, "pat_index 32: expected EINVAL");
	close(fd);
	return 0;
}

static int t_query_regions(void)
{
	int fd = open_card();
	struct drm_i915_query_item item = {.query_id = DRM_I915_QUERY_MEMORY_REGIONS};
	struct drm_i915_query q = {.num_items = 1, .items_ptr = (uintptr_t)&item};
	struct drm_i915_query_memory_regions *r;

	EXPECT(fd >= 0, "open: %s", strerror(errno));
	EXPECT(xioctl(fd, DRM_IOCTL_I915_QUERY, &q) == 0, "QUERY (length) failed");
	EXPECT(item.length == sizeof(*r) + 2 * sizeof(r->regions[0]),
	       "memory regions length: expected header + 2 regions, got %d", item.length);
	r = calloc(1, item.length);
	item.data_ptr = (uintptr_t)r;
	EXPECT(xioctl(fd, DRM_IOCTL_I915_QUERY, &q) == 0 && item.length > 0, "QUERY (data) failed: %d", item.length);
	EXPECT(r->num_regions == 2 && r->regions[0].region.memory_class == I915_MEMORY_CLASS_SYSTEM &&
		       r->regions[1].region.memory_class == I915_MEMORY_CLASS_DEVICE && r->regions[1].probed_size > 0,
	       "regions: expected SYSTEM 0 and DEVICE 0, got %u regions", r->num_regions);
	free(r);
	close(fd);
	return 0;
}

static int ctx_param(int fd, uint32_t ctx, uint64_t param, uint64_t *value, bool set)
{
	struct drm_i915_gem_context_param p = {.ctx_id = ctx, .param = param, .value = set ? *value : 0};
	int ret = xioctl(fd, set ? DRM_IOCTL_I915_GEM_CONTEXT_SETPARAM : DRM_IOCTL_I915_GEM_CONTEXT_GETPARAM, &p);

	if (!set)
		*value = p.value;
	return ret;
}

static int exec_nop(int fd, uint32_t ctx, uint64_t flags, uint32_t handle, uint64_t *rsvd2)
{
	struct drm_i915_gem_exec_object2 obj = {.handle = handle};
	struct drm_i915_gem_execbuffer2 eb = {
		.buffers_ptr = (uintptr_t)&obj, .buffer_count = 1, .flags = flags, .rsvd1 = ctx};
	int ret = xioctl(fd, DRM_IOCTL_I915_GEM_EXECBUFFER2_WR, &eb);

	if (rsvd2)
		*rsvd2 = eb.rsvd2;
	return ret;
}

static int t_vm_context_ext(void)
{
	int fd = open_card();
	struct drm_i915_gem_vm_control vm = {0};
	struct {
		uint64_t extensions;
		struct i915_engine_class_instance engines[3];
	} __attribute__((packed))
	engines = {0, {{I915_ENGINE_CLASS_RENDER, 0}, {I915_ENGINE_CLASS_COPY, 0}, {I915_ENGINE_CLASS_VIDEO, 0}}};
	struct drm_i915_gem_context_create_ext_setparam p_eng = {
		.base = {.name = I915_CONTEXT_CREATE_EXT_SETPARAM},
		.param = {.param = I915_CONTEXT_PARAM_ENGINES, .size = sizeof(engines), .value = (uintptr_t)&engines}};
	struct drm_i915_gem_context_create_ext_setparam p_prio = {
		.base = {.name = I915_CONTEXT_CREATE_EXT_SETPARAM, .next_extension = (uintptr_t)&p_eng},
		.param = {.param = I915_CONTEXT_PARAM_PRIORITY, .value = (uint64_t)-100}};
	struct drm_i915_gem_context_create_ext_setparam p_vm = {
		.base = {.name = I915_CONTEXT_CREATE_EXT_SETPARAM, .next_extension = (uintptr_t)&p_prio},
		.param = {.param = I915_CONTEXT_PARAM_VM, .value = 2}};
	struct drm_i915_gem_context_create_ext c = {.flags = I915_CONTEXT_CREATE_FLAGS_USE_EXTENSIONS |
							     I915_CONTEXT_CREATE_FLAGS_SINGLE_TIMELINE,
						    .extensions = (uintptr_t)&p_vm};
	uint64_t v;
	uint32_t batch;
	char state[4096];

	EXPECT(fd >= 0, "open: %s", strerror(errno));
	EXPECT(xioctl(fd, DRM_IOCTL_I915_GEM_VM_CREATE, &vm) == 0 && vm.vm_id == 1,
	       "first GEM_VM_CREATE: expected vm id 1, got %u", vm.vm_id);
	EXPECT(xioctl(fd, DRM_IOCTL_I915_GEM_VM_CREATE, &vm) == 0 && vm.vm_id == 2,
	       "second GEM_VM_CREATE: expected vm id 2, got %u", vm.vm_id);
	EXPECT(xioctl(fd, DRM_IOCTL_I915_GEM_CONTEXT_CREATE_EXT, &c) == 0 && c.ctx_id == 1,
	       "CONTEXT_CREATE_EXT (VM 2, PRIORITY -100, ENGINES rcs,bcs,vcs): expected ctx 1, got %u (%s)", c.ctx_id,
	       strerror(errno));
	EXPECT(client_state(fd, state, sizeof(state)) == 0, "no debugfs state for this client");
	EXPECT(strstr(state, "  ctx 1 proto ") && strstr(state, "engines 0:0,1:0,2:0"),
	       "debugfs: expected ctx 1 still a proto-context with engines 0:0,1:0,2:0:\n%s", state);
	EXPECT(state_vm(state, "ctx", 1) == state_vm(state, "vmid", 2) && state_vm(state, "ctx", 1) > 0,
	       "debugfs: ctx 1 should use the VM of vm id 2:\n%s", state);
	EXPECT(ctx_param(fd, 1, I915_CONTEXT_PARAM_PRIORITY, &v, false) == 0 && (int64_t)v == -100,
	       "GETPARAM PRIORITY: expected -100, got %lld", (long long)v);
	/* i915: GETPARAM(VM) gives a new id for the context's VM (here 3), never the old one */
	EXPECT(ctx_param(fd, 1, I915_CONTEXT_PARAM_VM, &v, false) == 0 && v == 3,
	       "GETPARAM VM: expected a new vm id 3 (lowest free), got %llu", (unsigned long long)v);
	EXPECT(client_state(fd, state, sizeof(state)) == 0 && state_vm(state, "vmid", 3) == state_vm(state, "vmid", 2),
	       "debugfs: vm ids 2 and 3 should name the same VM:\n%s", state);
	EXPECT(strstr(state, "  ctx 1 final "), "GETPARAM should have finalized ctx 1:\n%s", state);
	EXPECT(ctx_param(fd, 1, I915_CONTEXT_PARAM_ENGINES, &v, false) == -EINVAL,
	       "GETPARAM ENGINES: expected EINVAL as in i915 6.1");
	v = 1;
	EXPECT(ctx_param(fd, 1, I915_CONTEXT_PARAM_VM, &v, true) == -EINVAL,
	       "SETPARAM VM on a used context: expected EINVAL");
	v = (uint64_t)-200;
	EXPECT(ctx_param(fd, 1, I915_CONTEXT_PARAM_PRIORITY, &v, true) == 0,
	       "SETPARAM PRIORITY -200 on a used context failed");
	EXPECT(ctx_param(fd, 1, I915_CONTEXT_PARAM_PRIORITY, &v, false) == 0 && (int64_t)v == -200,
	       "GETPARAM PRIORITY after SETPARAM: expected -200, got %lld", (long long)v);
	EXPECT(gem_create(fd, 4096, &batch) == 0, "GEM_CREATE batch failed");
	EXPECT(exec_nop(fd, 1, 2, batch, NULL) == 0, "execbuf on engine index 2 of 3 failed");
	EXPECT(exec_nop(fd, 1, 3, batch, NULL) == -EINVAL, "execbuf on engine index 3 of 3: expected EINVAL");
	EXPECT(ctx_param(fd, 0, I915_CONTEXT_PARAM_VM, &v, false) == 0 && v == 4,
	       "GETPARAM VM of context 0: expected vm id 4, got %llu", (unsigned long long)v);
	vm.vm_id = 2;
	EXPECT(xioctl(fd, DRM_IOCTL_I915_GEM_VM_DESTROY, &vm) == 0, "VM_DESTROY 2 failed");
	EXPECT(xioctl(fd, DRM_IOCTL_I915_GEM_VM_DESTROY, &vm) == -ENOENT, "VM_DESTROY 2 again: expected ENOENT");
	vm = (struct drm_i915_gem_vm_control){0};
	EXPECT(xioctl(fd, DRM_IOCTL_I915_GEM_VM_CREATE, &vm) == 0 && vm.vm_id == 2,
	       "GEM_VM_CREATE after destroying 2: expected 2, got %u", vm.vm_id);
	close(fd);
	return 0;
}

static int t_mmap_offsets(void)
{
	int fd = open_card(), other = open_card();
	uint64_t wb, wc, gtt, again, off;
	uint32_t h, page[1024], back[1024];
	char path[256];
	void *m_wb, *m_wc;

	EXPECT(fd >= 0 && other >= 0, "open: %s", strerror(errno));
	EXPECT(gem_create(fd, 8192, &h) == 0, "GEM_CREATE failed");
	EXPECT(mmap_offset(fd, h, I915_MMAP_OFFSET_WB, &wb) == 0, "MMAP_OFFSET WB failed");
	EXPECT(mmap_offset(fd, h, I915_MMAP_OFFSET_WC, &wc) == 0, "MMAP_OFFSET WC failed");
	EXPECT(mmap_offset(fd, h, I915_MMAP_OFFSET_GTT, &gtt) == 0, "MMAP_OFFSET GTT failed");
	EXPECT(wb != wc && wb != gtt && wc != gtt,
	       "offsets per (object, type): expected WB, WC, GTT distinct, got 0x%llx 0x%llx 0x%llx",
	       (unsigned long long)wb, (unsigned long long)wc, (unsigned long long)gtt);
	EXPECT(mmap_offset(fd, h, I915_MMAP_OFFSET_WB, &again) == 0 && again == wb,
	       "MMAP_OFFSET WB again: expected the same 0x%llx, got 0x%llx", (unsigned long long)wb,
	       (unsigned long long)again);
	EXPECT(mmap_offset(fd, h, 5, &off) == -EINVAL, "MMAP_OFFSET type 5: expected EINVAL");
	m_wb = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, wb);
	m_wc = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, wc);
	EXPECT(m_wb != MAP_FAILED && m_wc != MAP_FAILED, "mmap of the WB/WC offsets: %s", strerror(errno));
	EXPECT(maps_entry(m_wc, path, sizeof(path), &off) == 0 && !strcmp(path, "anon_inode:i915.gem") && off == wc,
	       "WC map: expected anon_inode:i915.gem at 0x%llx, got \"%s\" at 0x%llx", (unsigned long long)wc, path,
	       (unsigned long long)off);
	fill(page, sizeof(page), 4);
	memcpy((char *)m_wb + 4096, page, sizeof(page));
	EXPECT(!memcmp((char *)m_wc + 4096, page, sizeof(page)), "WC map does not show the WB map's write");
	EXPECT(pread_bo(fd, h, 4096, back, sizeof(back)) == 0 && !memcmp(back, page, sizeof(page)),
	       "PREAD does not show the WB map's write");
	EXPECT(mmap(NULL, 4096, PROT_READ, MAP_SHARED, other, wb) == MAP_FAILED && errno == EACCES,
	       "mmap of the offset through another open file: expected EACCES (offsets are granted per file)");
	fill(page, sizeof(page), 5);
	EXPECT(pwrite_bo(fd, h, 0, page, sizeof(page)) == 0, "PWRITE failed");
	EXPECT(gem_close(fd, h) == 0, "GEM_CLOSE failed");
	EXPECT(!memcmp(m_wb, page, sizeof(page)), "after GEM_CLOSE the mapping should still show the object");
	munmap(m_wb, 8192);
	munmap(m_wc, 8192);
	close(other);
	close(fd);
	return 0;
}

static int t_dumb(void)
{
	int fd = open_card();
	struct drm_mode_create_dumb d = {.width = 100, .height = 10, .bpp = 32};
	struct drm_mode_map_dumb m = {0};
	uint64_t wc;

	EXPECT(fd >= 0, "open: %s", strerror(errno));
	EXPECT(xioctl(fd, DRM_IOCTL_MODE_CREATE_DUMB, &d) == 0, "CREATE_DUMB failed: %s", strerror(errno));
	EXPECT(d.pitch == 448 && d.size == 8192,
	       "dumb 100x10x32: expected pitch 448 (64-aligned), size 8192, got %u, %llu", d.pitch,
	       (unsigned long long)d.size);
	m.handle = d.handle;
	EXPECT(xioctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &m) == 0, "MAP_DUMB failed");
	EXPECT(mmap_offset(fd, d.handle, I915_MMAP_OFFSET_WC, &wc) == 0 && wc == m.offset,
	       "MAP_DUMB: expected the WC offset 0x%llx, got 0x%llx", (unsigned long long)wc,
	       (unsigned long long)m.offset);
	close(fd);
	return 0;
}

static int t_userptr(void)
{
	int fd = open_card();
	struct drm_i915_gem_userptr u = {0};
	uint64_t off;
	void *mem;

	EXPECT(fd >= 0, "open: %s", strerror(errno));
	EXPECT(posix_memalign(&mem, 4096, 3 * 4096) == 0, "posix_memalign failed");
	u.user_ptr = (uintptr_t)mem;
	u.user_size = 3 * 4096;
	EXPECT(xioctl(fd, DRM_IOCTL_I915_GEM_USERPTR, &u) == 0 && u.handle == 1,
	       "USERPTR of 12 KiB: expected handle 1, got %u (%s)", u.handle, strerror(errno));
	u.user_ptr += 8;
	EXPECT(xioctl(fd, DRM_IOCTL_I915_GEM_USERPTR, &u) == -EINVAL, "unaligned user_ptr: expected EINVAL");
	u.user_ptr -= 8;
	u.user_size = 4000;
	EXPECT(xioctl(fd, DRM_IOCTL_I915_GEM_USERPTR, &u) == -EINVAL, "unaligned user_size: expected EINVAL");
	u.user_size = 4096;
	u.flags = I915_USERPTR_PROBE;
	EXPECT(xioctl(fd, DRM_IOCTL_I915_GEM_USERPTR, &u) == 0 && u.handle == 2,
	       "USERPTR with PROBE of mapped memory: expected handle 2");
	u.user_ptr = 4096; /* nothing is mapped at the second page */
	EXPECT(xioctl(fd, DRM_IOCTL_I915_GEM_USERPTR, &u) == -EFAULT, "PROBE of unmapped memory: expected EFAULT");
	EXPECT(mmap_offset(fd, 1, I915_MMAP_OFFSET_WB, &off) == -ENODEV,
	       "MMAP_OFFSET of a userptr object: expected ENODEV as in i915");
	close(fd);
	free(mem);
	return 0;
}

static int t_perf_open(void)
{
	int fd = open_card(), pfd;
	uint64_t props[] = {DRM_I915_PERF_PROP_SAMPLE_OA, 1, DRM_I915_PERF_PROP_OA_METRICS_SET, 1};
	struct drm_i915_perf_open_param p = {.flags = I915_PERF_FLAG_FD_CLOEXEC | I915_PERF_FLAG_FD_NONBLOCK,
					     .num_properties = 2,
					     .properties_ptr = (uintptr_t)props};
	char link[128], buf[64];

	EXPECT(fd >= 0, "open: %s", strerror(errno));
	pfd = drmIoctl(fd, DRM_IOCTL_I915_PERF_OPEN, &p);
	EXPECT(pfd >= 0, "PERF_OPEN failed: %s", strerror(errno));
	EXPECT(fd_link(pfd, link, sizeof(link)) == 0 && !strcmp(link, "anon_inode:[i915_perf]"),
	       "perf fd: expected anon_inode:[i915_perf], got \"%s\"", link);
	EXPECT(fcntl(pfd, F_GETFD) & FD_CLOEXEC, "perf fd: expected close-on-exec (FD_CLOEXEC flag)");
	EXPECT(fcntl(pfd, F_GETFL) & O_NONBLOCK, "perf fd: expected O_NONBLOCK");
	EXPECT(read(pfd, buf, sizeof(buf)) < 0 && errno == EAGAIN, "read of an idle stream: expected EAGAIN");
	close(pfd);
	p.num_properties = 0;
	EXPECT(xioctl(fd, DRM_IOCTL_I915_PERF_OPEN, &p) == -EINVAL, "PERF_OPEN without properties: expected EINVAL");
	close(fd);
	return 0;
}

static int t_execbuf_fence(void)
{
	int fd = open_card(), sfd;
	uint32_t batch, bbe[2] = {0x0a << 23, 0}; /* MI_BATCH_BUFFER_END */
	struct pollfd pfd;
	uint64_t rsvd2 = 0;
	char link[128];

	EXPECT(fd >= 0, "open: %s", strerror(errno));
	EXPECT(gem_create(fd, 4096, &batch) == 0 && pwrite_bo(fd, batch, 0, bbe, sizeof(bbe)) == 0,
	       "batch creation failed");
	EXPECT(exec_nop(fd, 0, I915_EXEC_RENDER | I915_EXEC_FENCE_OUT, batch, &rsvd2) == 0,
	       "EXECBUFFER2_WR with FENCE_OUT failed: %s", strerror(errno));
	sfd = (int)(rsvd2 >> 32);
	EXPECT(sfd > 2 && fd_link(sfd, link, sizeof(link)) == 0 && !strcmp(link, "anon_inode:sync_file"),
	       "FENCE_OUT: expected a sync_file fd in rsvd2's upper half, got fd %d -> \"%s\"", sfd,
	       sfd > 2 ? link : "");
	pfd = (struct pollfd){.fd = sfd, .events = POLLIN};
	EXPECT(poll(&pfd, 1, 1000) == 1, "the out-fence should be signalled at once");
	close(sfd);
	EXPECT(exec_nop(fd, 0, I915_EXEC_RENDER, 99, NULL) == -ENOENT, "execbuf with handle 99: expected ENOENT");
	EXPECT(exec_nop(fd, 7, I915_EXEC_RENDER, batch, NULL) == -ENOENT, "execbuf on context 7: expected ENOENT");
	EXPECT(exec_nop(fd, 0, 5, batch, NULL) == -EINVAL, "execbuf on legacy ring 5: expected EINVAL");
	close(fd);
	return 0;
}

static int t_context0(void)
{
	int fd = open_card();
	struct drm_i915_gem_context_destroy d = {.ctx_id = 0};
	struct drm_i915_gem_context_create c = {0};

	EXPECT(fd >= 0, "open: %s", strerror(errno));
	EXPECT(xioctl(fd, DRM_IOCTL_I915_GEM_CONTEXT_DESTROY, &d) == -ENOENT,
	       "CONTEXT_DESTROY 0: expected ENOENT, got %s", strerror(errno));
	d.ctx_id = 1;
	EXPECT(xioctl(fd, DRM_IOCTL_I915_GEM_CONTEXT_DESTROY, &d) == -ENOENT,
	       "CONTEXT_DESTROY of a never created 1: expected ENOENT");
	EXPECT(xioctl(fd, DRM_IOCTL_I915_GEM_CONTEXT_CREATE, &c) == 0 && c.ctx_id == 1,
	       "plain CONTEXT_CREATE: expected id 1, got %u", c.ctx_id);
	EXPECT(xioctl(fd, DRM_IOCTL_I915_GEM_CONTEXT_DESTROY, &d) == 0, "CONTEXT_DESTROY 1 failed");
	close(fd);
	return 0;
}

static int find_card(const char *arg)
{
	for (int i = 0; i < 16 && !arg; i++) {
		char p[64];
		int fd;

		snprintf(p, sizeof(p), "/dev/dri/card%d", i);
		fd = open(p, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		drmVersionPtr v = drmGetVersion(fd);
		bool ours = v && !strcmp(v->name, "i915");

		drmFreeVersion(v);
		close(fd);
		if (ours) {
			snprintf(card_path, sizeof(card_path), "%s", p);
			card_minor = i;
			return 0;
		}
	}
	if (arg && sscanf(arg, "/dev/dri/card%d", &card_minor) == 1) {
		snprintf(card_path, sizeof(card_path), "%s", arg);
		return 0;
	}
	return -1;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(void);
	} cases[] = {
		{"version", t_version},
		{"render_node", t_render_node},
		{"getparam", t_getparam},
		{"prime", t_prime},
		{"libdrm_bo_map_subdata", t_libdrm_map},
		{"libdrm_tiled_map_gtt", t_libdrm_gtt},
		{"libdrm_context_ids", t_libdrm_contexts},
		{"gem_handles_lowest_free", t_handles},
		{"gem_create_ext", t_create_ext},
		{"query_memory_regions", t_query_regions},
		{"vm_and_context_create_ext", t_vm_context_ext},
		{"mmap_offset_types", t_mmap_offsets},
		{"dumb_buffer", t_dumb},
		{"userptr", t_userptr},
		{"perf_open", t_perf_open},
		{"execbuf_fence_out", t_execbuf_fence},
		{"context0_destroy", t_context0},
	};
	int passed = 0, failed = 0;

	if (find_card(argc > 1 ? argv[1] : NULL)) {
		fprintf(stderr, "smoke: no DRM device named i915 under /dev/dri (is gwi915.ko loaded?)\n");
		return 2;
	}
	printf("smoke: %s (minor %d)\n", card_path, card_minor);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		why[0] = 0;
		if (cases[i].fn() == 0) {
			printf("PASS %s\n", cases[i].name);
			passed++;
		} else {
			printf("FAIL %s: %s\n", cases[i].name, why);
			failed++;
		}
		fflush(stdout);
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
