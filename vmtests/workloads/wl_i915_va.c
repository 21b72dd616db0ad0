/* SPDX-License-Identifier: MIT */
/*
 * A VA-API-like i915 workload for the VM suite (run against vmtests/i915test's gwi915 fixture).
 * Buffers go through libdrm_intel, Intel's buffer manager that VA-API drivers of the gen9 era
 * were built on: tiled surfaces with GTT mappings, a linear bitstream buffer with a CPU
 * (legacy GEM_MMAP) mapping, contexts. What libdrm_intel cannot do (VMs, contexts with
 * extensions, GEM_CREATE_EXT with placements and PAT, MMAP_OFFSET, userptr, perf streams,
 * out-fences) is done with raw ioctls, as media drivers do.
 *
 * It records no ground truth of its own: vmtests/check_i915.py compares gpuwatch's manifest
 * with what the kernel says (the fixture's debugfs state, /proc/PID/maps, /proc/PID/fd).
 *
 * usage: wl_i915_va DIR
 * Phases (ready.N / go.N files in DIR, as the other workloads): 1 = everything created and
 * mapped (one surface destroyed, one context destroyed: holes in both tables), a forked
 * decoder child with its own fd; 2 = some state torn down (a VM, a context, a mapped buffer's
 * handle closed while its mapping stays, part of a mapping unmapped), a perf stream and an
 * out-fence fd held. Then everything is released and it exits 0.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <i915_drm.h>
#include <intel_bufmgr.h>
#include <xf86drm.h>

static const char *g_dir;

static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "wl_i915_va[%d]: ", getpid());
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

static void xioctl(int fd, unsigned long req, void *arg, const char *what)
{
	if (drmIoctl(fd, req, arg))
		die("%s: %s", what, strerror(errno));
}

/* the phase barrier: DIR/<name>.N, then wait for DIR/go.N */
static void phase(int n, const char *name)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s.%d", g_dir, name, n);
	int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0)
		die("%s: %s", path, strerror(errno));
	close(fd);
	snprintf(path, sizeof path, "%s/go.%d", g_dir, n);
	while (access(path, F_OK) != 0)
		usleep(20000);
}

/* the render node whose driver is "i915" */
static int open_i915(char *path, size_t len)
{
	DIR *d = opendir("/dev/dri");
	struct dirent *e;
	int fd = -1;

	if (!d)
		die("/dev/dri: %s", strerror(errno));
	while (fd < 0 && (e = readdir(d))) {
		if (strncmp(e->d_name, "renderD", 7))
			continue;
		snprintf(path, len, "/dev/dri/%s", e->d_name);
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

static uint32_t vm_create(int fd)
{
	struct drm_i915_gem_vm_control vm = {0};
	xioctl(fd, DRM_IOCTL_I915_GEM_VM_CREATE, &vm, "GEM_VM_CREATE");
	return vm.vm_id;
}

/* CONTEXT_CREATE_EXT with SETPARAM extensions: VM, and optionally priority and an engine map */
static uint32_t context_create_ext(int fd, uint32_t vm, int prio, int nengines, uint32_t flags)
{
	struct {
		uint64_t extensions;
		struct i915_engine_class_instance engines[2];
	} __attribute__((packed)) map = {0, {{I915_ENGINE_CLASS_VIDEO, 0}, {I915_ENGINE_CLASS_RENDER, 0}}};
	struct drm_i915_gem_context_create_ext_setparam p_eng = {
		.base = {.name = I915_CONTEXT_CREATE_EXT_SETPARAM},
		.param = {.param = I915_CONTEXT_PARAM_ENGINES, .size = 8 + 4 * nengines, .value = (uintptr_t)&map}};
	struct drm_i915_gem_context_create_ext_setparam p_prio = {
		.base = {.name = I915_CONTEXT_CREATE_EXT_SETPARAM, .next_extension = nengines ? (uintptr_t)&p_eng : 0},
		.param = {.param = I915_CONTEXT_PARAM_PRIORITY, .value = (uint64_t)(int64_t)prio}};
	struct drm_i915_gem_context_create_ext_setparam p_vm = {
		.base = {.name = I915_CONTEXT_CREATE_EXT_SETPARAM, .next_extension = (uintptr_t)&p_prio},
		.param = {.param = I915_CONTEXT_PARAM_VM, .value = vm}};
	struct drm_i915_gem_context_create_ext c = {.flags = I915_CONTEXT_CREATE_FLAGS_USE_EXTENSIONS | flags,
						    .extensions = (uintptr_t)&p_vm};
	xioctl(fd, DRM_IOCTL_I915_GEM_CONTEXT_CREATE_EXT, &c, "GEM_CONTEXT_CREATE_EXT");
	return c.ctx_id;
}

/* GEM_CREATE_EXT in device memory (system as fallback) with a PAT index; mapped WB */
struct ext_buf {
	uint32_t handle;
	uint64_t size, offset;
	uint8_t *map;
};

static struct ext_buf create_ext_mapped(int fd, uint64_t size, uint64_t mmap_type)
{
	struct drm_i915_gem_memory_class_instance regions[] = {{I915_MEMORY_CLASS_DEVICE, 0},
							       {I915_MEMORY_CLASS_SYSTEM, 0}};
	struct {
		struct i915_user_extension base;
		uint32_t pat_index, rsvd;
	} pat = {{.name = 2 /* I915_GEM_CREATE_EXT_SET_PAT (Linux 6.5+) */}, 3, 0};
	struct drm_i915_gem_create_ext_memory_regions mr = {
		.base = {.name = I915_GEM_CREATE_EXT_MEMORY_REGIONS, .next_extension = (uintptr_t)&pat},
		.num_regions = 2,
		.regions = (uintptr_t)regions};
	struct drm_i915_gem_create_ext c = {.size = size, .extensions = (uintptr_t)&mr};
	struct ext_buf b = {0};

	xioctl(fd, DRM_IOCTL_I915_GEM_CREATE_EXT, &c, "GEM_CREATE_EXT");
	struct drm_i915_gem_mmap_offset mo = {.handle = c.handle, .flags = mmap_type};
	xioctl(fd, DRM_IOCTL_I915_GEM_MMAP_OFFSET, &mo, "GEM_MMAP_OFFSET");
	b.handle = c.handle;
	b.size = c.size;
	b.offset = mo.offset;
	b.map = mmap(NULL, c.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, mo.offset);
	if (b.map == MAP_FAILED)
		die("mmap of GEM_CREATE_EXT buffer: %s", strerror(errno));
	memset(b.map, 0x5a, c.size);
	return b;
}

/* the decoder child: its own fd (a second file), a context and a WC-mapped buffer */
static void child(void)
{
	char path[300];
	int fd = open_i915(path, sizeof path);
	uint32_t ctx = context_create_ext(fd, vm_create(fd), 0, 0, 0);
	struct ext_buf b = create_ext_mapped(fd, 64 << 10, I915_MMAP_OFFSET_WC);

	(void)ctx;
	phase(1, "cready");
	phase(2, "cready");
	munmap(b.map, b.size);
	close(fd);
	exit(0);
}

static void wait_child_ready(pid_t pid, int n)
{
	char path[512];
	snprintf(path, sizeof path, "%s/cready.%d", g_dir, n);
	while (access(path, F_OK) != 0) {
		int st;
		if (waitpid(pid, &st, WNOHANG) == pid)
			die("the child exited before phase %d (status 0x%x)", n, st);
		usleep(20000);
	}
}

int main(int argc, char **argv)
{
	char path[300];
	if (argc < 2)
		die("usage: wl_i915_va DIR");
	g_dir = argv[1];
	int fd = open_i915(path, sizeof path);

	/* --- libdrm_intel: surfaces, a bitstream buffer, contexts --- */
	drm_intel_bufmgr *bufmgr = drm_intel_bufmgr_gem_init(fd, 4096);
	if (!bufmgr)
		die("drm_intel_bufmgr_gem_init refused the device");
	drm_intel_bo *surf[4];
	for (int i = 0; i < 4; i++) {
		uint32_t tiling = I915_TILING_X;
		unsigned long pitch = 0;
		surf[i] = drm_intel_bo_alloc_tiled(bufmgr, "surface", 256, 64, 4, &tiling, &pitch, 0);
		if (!surf[i] || tiling != I915_TILING_X)
			die("drm_intel_bo_alloc_tiled %d failed (tiling %u)", i, tiling);
	}
	for (int i = 0; i < 3; i += 2) { /* surfaces 0 and 2 mapped through the GTT */
		if (drm_intel_gem_bo_map_gtt(surf[i]))
			die("drm_intel_gem_bo_map_gtt %d failed", i);
		memset(surf[i]->virtual, 0x10 + i, surf[i]->size);
	}
	drm_intel_bo *bits = drm_intel_bo_alloc(bufmgr, "bitstream", 64 << 10, 4096);
	if (!bits || drm_intel_bo_map(bits, 1)) /* legacy GEM_MMAP: a CPU mapping */
		die("bitstream buffer: alloc or map failed");
	memset(bits->virtual, 0xb5, bits->size);
	drm_intel_bo_unreference(surf[1]); /* a hole in the handle table */

	drm_intel_context *ctx_a = drm_intel_gem_context_create(bufmgr);
	drm_intel_context *ctx_b = drm_intel_gem_context_create(bufmgr);
	if (!ctx_a || !ctx_b)
		die("drm_intel_gem_context_create failed");
	drm_intel_gem_context_destroy(ctx_a); /* a hole in the context table */

	/* --- raw i915 uapi: VMs, contexts on them, a placed buffer, userptr --- */
	uint32_t vm_a = vm_create(fd), vm_b = vm_create(fd);
	uint32_t ctx_dec = context_create_ext(fd, vm_a, -100, 2, I915_CONTEXT_CREATE_FLAGS_SINGLE_TIMELINE);
	uint32_t ctx_vpp = context_create_ext(fd, vm_a, 0, 0, 0);
	uint32_t ctx_enc = context_create_ext(fd, vm_b, 10, 0, 0);
	struct ext_buf placed = create_ext_mapped(fd, 128 << 10, I915_MMAP_OFFSET_WB);
	void *user = aligned_alloc(4096, 64 << 10);
	struct drm_i915_gem_userptr up = {.user_ptr = (uintptr_t)user, .user_size = 64 << 10};
	if (!user)
		die("aligned_alloc failed");
	xioctl(fd, DRM_IOCTL_I915_GEM_USERPTR, &up, "GEM_USERPTR");

	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0)
		child();
	wait_child_ready(pid, 1);
	phase(1, "ready");

	/* --- phase 2: tear some down, hold a perf stream and an out-fence --- */
	struct drm_i915_gem_context_destroy cd = {.ctx_id = ctx_vpp};
	xioctl(fd, DRM_IOCTL_I915_GEM_CONTEXT_DESTROY, &cd, "GEM_CONTEXT_DESTROY");
	struct drm_i915_gem_vm_control vd = {.vm_id = vm_b}; /* ctx_enc keeps using it */
	xioctl(fd, DRM_IOCTL_I915_GEM_VM_DESTROY, &vd, "GEM_VM_DESTROY");
	struct drm_gem_close gc = {.handle = placed.handle}; /* its mapping stays */
	xioctl(fd, DRM_IOCTL_GEM_CLOSE, &gc, "GEM_CLOSE");
	if (munmap((uint8_t *)surf[0]->virtual + 4096, 4096)) /* a hole inside a GTT mapping */
		die("munmap: %s", strerror(errno));

	uint64_t props[] = {DRM_I915_PERF_PROP_SAMPLE_OA, 1, DRM_I915_PERF_PROP_OA_METRICS_SET, 1};
	struct drm_i915_perf_open_param po = {
		.flags = I915_PERF_FLAG_FD_CLOEXEC, .num_properties = 2, .properties_ptr = (uintptr_t)props};
	int perf = drmIoctl(fd, DRM_IOCTL_I915_PERF_OPEN, &po);
	if (perf < 0)
		die("PERF_OPEN: %s", strerror(errno));
	struct drm_i915_gem_exec_object2 obj = {.handle = bits->handle};
	struct drm_i915_gem_execbuffer2 eb = {.buffers_ptr = (uintptr_t)&obj,
					      .buffer_count = 1,
					      .flags = 0 /* engine map index 0: video */ | I915_EXEC_FENCE_OUT,
					      .rsvd1 = ctx_dec};
	xioctl(fd, DRM_IOCTL_I915_GEM_EXECBUFFER2_WR, &eb, "EXECBUFFER2_WR");
	int fence = (int)(eb.rsvd2 >> 32);

	wait_child_ready(pid, 2);
	phase(2, "ready");

	/* --- release everything --- */
	int st = 0;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		die("the child failed (status 0x%x)", st);
	close(fence);
	close(perf);
	(void)ctx_enc;
	munmap(placed.map, placed.size);
	drm_intel_gem_context_destroy(ctx_b);
	drm_intel_bo_unmap(bits);
	drm_intel_bo_unreference(bits);
	for (int i = 0; i < 4; i++)
		if (i != 1)
			drm_intel_bo_unreference(surf[i]);
	drm_intel_bufmgr_destroy(bufmgr);
	free(user);
	close(fd);
	return 0;
}
