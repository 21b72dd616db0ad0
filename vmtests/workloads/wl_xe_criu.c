// SPDX-License-Identifier: MIT
/*
 * wl_xe_criu: an xe client for the criu_xe scenario (guest/criu_xe.sh), run on the gwxe fixture.
 *
 * usage: wl_xe_criu DIR NODE          (NODE: the fixture's render or card node)
 *
 * Builds, on one file of NODE:
 *   VMs 1..6 (flags 0, SCRATCH, LR_MODE, 0, SCRATCH, 0), then destroys 2 and 4: live 1, 3, 5
 *   (and 6 until its queue exists);
 *   buffers: 1 = 64 KiB system WB, 2 = 16 KiB system+VRAM WC scanout, 3 = 8 KiB private to
 *   VM 5, 4 closed again (a hole), 5 = 32 KiB VRAM WC needs-visible-VRAM; each holds its own
 *   byte pattern; 1 and 3 stay mapped through the DRM fd (3 cannot be PRIME-exported);
 *   bindings: VM 1: buffer 1 at 0x100000 (64 KiB, its pages 4-7 unbound again: two pieces),
 *   buffer 2 at 0x200000 (PAT 1), a userptr of 3 pages at 0x300000, a NULL binding at
 *   0x400000; VM 3: buffer 5 at 0x2000000 (PAT 3, DUMPABLE); VM 5: buffer 3 at 0x1000000;
 *   exec queues 1..5 (render on VM 1 priority 0, copy on VM 1, a parallel video queue of
 *   width 2 on VM 3 timeslice 2000, a bind queue, compute on VM 5 priority 2 timeslice 500,
 *   render on VM 6), then destroys queues 2 and 4 and VM 6 (queue 6 keeps it): live queues
 *   1, 3, 5, 6.
 * Writes expect.<pid>.txt (what it checks), pid, then ready, and verifies itself in a loop
 * (every 50 ms) until DIR/go.after exists: the fd is still an xe file of NODE's device; handles
 * 1, 2, 3, 5 exist (GEM_MMAP_OFFSET) and 4, 6 not; 1, 2, 5 have their sizes (PRIME export) and 3
 * refuses export (still VM-private); every buffer and the userptr pages hold their pattern
 * (mapped ones through their old mapping, whose writes a fresh mapping must see); VMs 1, 3, 5
 * exist and 2, 4, 6 not (VM_BIND UNMAP of an unused range: 0 / -EINVAL); queues 1, 3, 5, 6
 * exist and 2, 4, 7 not (GET_PROPERTY BAN). After go.after: new VMs get 2, 4, 6, new queues 2, 4, 7,
 * new buffers 4, 6; buffer 3 still binds to VM 5 only. Writes result.<pid> ("PASS" or "FAIL
 * <reason>", one line) and exits 0 or 1. The bindings themselves are only visible to the
 * kernel: the scenario compares the fixture's debugfs state before and after.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <drm.h>

#include "xe_user.h"

#define KB 1024ull

static const char *dir;
static int fd;
static struct stat node_st;
static char *map1, *map3;
static uint8_t *user; /* the userptr pages */

struct buf {
	uint32_t handle;
	uint64_t size;
	uint32_t placement, flags, vm;
	uint16_t caching;
	uint8_t seed;
};
static struct buf bufs[] = {
	{1, 64 * KB, 1, 0, 0, GW_XE_GEM_CPU_CACHING_WB, 0x11},
	{2, 16 * KB, 3, GW_XE_GEM_CREATE_FLAG_SCANOUT, 0, GW_XE_GEM_CPU_CACHING_WC, 0x22},
	{3, 8 * KB, 1, 0, 5, GW_XE_GEM_CPU_CACHING_WB, 0x33},
	{4, 4 * KB, 1, 0, 0, GW_XE_GEM_CPU_CACHING_WB, 0x44}, /* closed again */
	{5, 32 * KB, 2, GW_XE_GEM_CREATE_FLAG_NEEDS_VISIBLE_VRAM, 0, GW_XE_GEM_CPU_CACHING_WC, 0x55},
};
#define NBUFS (sizeof(bufs) / sizeof(bufs[0]))

static void result(const char *fmt, ...)
{
	char path[512], line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), "%s/result.%d", dir, getpid());
	FILE *f = fopen(path, "w");
	if (f) {
		fprintf(f, "%s\n", line);
		fclose(f);
	}
	fprintf(stderr, "%s\n", line);
	exit(strcmp(line, "PASS") == 0 ? 0 : 1);
}

#define DIE(...) result("FAIL " __VA_ARGS__)

static uint8_t pattern(uint8_t seed, uint64_t i)
{
	return (uint8_t)(seed + i * 7 + (i >> 12));
}

static void fill(volatile uint8_t *p, uint64_t n, uint8_t seed)
{
	for (uint64_t i = 0; i < n; i++)
		p[i] = pattern(seed, i);
}

/* first mismatching byte, or -1 */
static int64_t differs(const volatile uint8_t *p, uint64_t n, uint8_t seed)
{
	for (uint64_t i = 0; i < n; i++)
		if (p[i] != pattern(seed, i))
			return (int64_t)i;
	return -1;
}

static void *map_handle(uint32_t h, uint64_t size)
{
	uint64_t off = 0;
	int r = xe_mmap_offset(fd, h, &off);
	if (r)
		DIE("GEM_MMAP_OFFSET of handle %u: %s", h, strerror(-r));
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
	if (p == MAP_FAILED)
		DIE("mmap of handle %u at offset %#llx: %s", h, (unsigned long long)off, strerror(errno));
	return p;
}

static void build(void)
{
	uint32_t id = 0, vmflags[] = {0, GW_XE_VM_CREATE_FLAG_SCRATCH_PAGE, GW_XE_VM_CREATE_FLAG_LR_MODE,
				      0, GW_XE_VM_CREATE_FLAG_SCRATCH_PAGE, 0};
	for (unsigned i = 0; i < 6; i++) {
		int r = xe_vm_create(fd, vmflags[i], &id);
		if (r || id != i + 1)
			DIE("VM_CREATE %u: r=%d id %u", i + 1, r, id);
	}
	if (xe_vm_destroy(fd, 2) || xe_vm_destroy(fd, 4))
		DIE("VM_DESTROY 2/4");
	for (unsigned i = 0; i < NBUFS; i++) {
		uint32_t h = 0;
		int r = xe_gem_create(fd, bufs[i].size, bufs[i].placement, bufs[i].flags, bufs[i].vm, bufs[i].caching,
				      &h);
		if (r || h != bufs[i].handle)
			DIE("GEM_CREATE of buffer %u: r=%d handle %u", bufs[i].handle, r, h);
		uint8_t *p = map_handle(h, bufs[i].size);
		fill(p, bufs[i].size, bufs[i].seed);
		if (h == 1)
			map1 = (char *)p;
		else if (h == 3)
			map3 = (char *)p;
		else
			munmap(p, bufs[i].size);
	}
	struct drm_gem_close gc = {.handle = 4};
	if (ioctl(fd, DRM_IOCTL_GEM_CLOSE, &gc))
		DIE("GEM_CLOSE 4: %s", strerror(errno));
	user = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (user == MAP_FAILED)
		DIE("mmap of the userptr pages");
	fill(user, 3 * 4096, 0x66);
	struct {
		uint32_t vm, op, obj;
		uint64_t off, addr, range;
		uint16_t pat;
		uint32_t flags;
	} binds[] = {
		{1, GW_XE_VM_BIND_OP_MAP, 1, 0, 0x100000, 64 * KB, 0, 0},
		{1, GW_XE_VM_BIND_OP_UNMAP, 0, 0, 0x104000, 16 * KB, 0, 0},
		{1, GW_XE_VM_BIND_OP_MAP, 2, 0, 0x200000, 16 * KB, 1, 0},
		{1, GW_XE_VM_BIND_OP_MAP_USERPTR, 0, (uintptr_t)user, 0x300000, 12 * KB, 0, 0},
		{1, GW_XE_VM_BIND_OP_MAP, 0, 0, 0x400000, 64 * KB, 0, GW_XE_VM_BIND_FLAG_NULL},
		{3, GW_XE_VM_BIND_OP_MAP, 5, 0, 0x2000000, 32 * KB, 3, GW_XE_VM_BIND_FLAG_DUMPABLE},
		{5, GW_XE_VM_BIND_OP_MAP, 3, 0, 0x1000000, 8 * KB, 0, 0},
	};
	for (unsigned i = 0; i < sizeof(binds) / sizeof(binds[0]); i++) {
		int r = xe_bind(fd, binds[i].vm, binds[i].op, binds[i].obj, binds[i].off, binds[i].addr, binds[i].range,
				binds[i].pat, binds[i].flags);
		if (r)
			DIE("VM_BIND #%u (VM %u op %u at %#llx): %s", i, binds[i].vm, binds[i].op,
			    (unsigned long long)binds[i].addr, strerror(-r));
	}
	struct gw_xe_engine_class_instance rcs = {0, 0, 0, 0}, bcs = {1, 0, 0, 0}, ccs = {4, 0, 0, 0},
					   vcs[2] = {{2, 0, 0, 0}, {2, 1, 0, 0}}, bind = {5, 0, 0, 0};
	struct {
		uint32_t vm;
		uint16_t width;
		const struct gw_xe_engine_class_instance *eci;
		int64_t prio, ts;
	} qs[] = {{1, 1, &rcs, 0, -1},   {1, 1, &bcs, -1, -1}, {3, 2, vcs, -1, 2000},
		  {0, 1, &bind, -1, -1}, {5, 1, &ccs, 2, 500}, {6, 1, &rcs, -1, -1}};
	for (unsigned i = 0; i < 6; i++) {
		int r = xe_queue_create(fd, qs[i].vm, qs[i].width, 1, qs[i].eci, qs[i].prio, qs[i].ts, &id);
		if (r || id != i + 1)
			DIE("EXEC_QUEUE_CREATE %u: r=%d id %u", i + 1, r, id);
	}
	if (xe_queue_destroy(fd, 2) || xe_queue_destroy(fd, 4) || xe_vm_destroy(fd, 6))
		DIE("EXEC_QUEUE_DESTROY 2/4 or VM_DESTROY 6");
}

static bool vm_exists(uint32_t id)
{
	int r = xe_bind(fd, id, GW_XE_VM_BIND_OP_UNMAP, 0, 0, 0x7f0000000000ull, 4096, 0, 0);
	if (r && r != -EINVAL)
		DIE("VM_BIND UNMAP probe of VM %u: %s", id, strerror(-r));
	return r == 0;
}

static bool queue_exists(uint32_t id)
{
	struct gw_xe_exec_queue_get_property p;
	memset(&p, 0, sizeof(p));
	p.exec_queue_id = id;
	p.property = GW_XE_EXEC_QUEUE_GET_PROPERTY_BAN;
	int r = xe_ioctl(fd, GW_XE_IOCTL_EXEC_QUEUE_GET_PROPERTY, &p);
	if (r && r != -ENOENT)
		DIE("GET_PROPERTY of queue %u: %s", id, strerror(-r));
	return r == 0;
}

static void verify(void)
{
	char name[16] = "";
	struct drm_version v;
	memset(&v, 0, sizeof(v));
	v.name = name;
	v.name_len = sizeof(name) - 1;
	struct stat st;
	if (ioctl(fd, DRM_IOCTL_VERSION, &v) || strcmp(name, "xe") || fstat(fd, &st) || st.st_rdev != node_st.st_rdev)
		DIE("fd %d is no longer an xe file of the node (driver '%s')", fd, name);
	for (uint32_t h = 1; h <= 6; h++) {
		uint64_t off;
		bool want = h != 4 && h != 6;
		int r = xe_mmap_offset(fd, h, &off);
		if ((r == 0) != want)
			DIE("handle %u %s (GEM_MMAP_OFFSET: %s)", h, want ? "is missing" : "exists", strerror(-r));
	}
	for (unsigned i = 0; i < NBUFS; i++) {
		const struct buf *b = &bufs[i];
		if (b->handle == 4)
			continue;
		struct drm_prime_handle ph = {.handle = b->handle, .flags = DRM_CLOEXEC};
		int r = ioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &ph) ? -errno : 0;
		if (b->vm) {
			if (r != -EPERM)
				DIE("VM-private buffer %u: PRIME export gave %d, not -EPERM", b->handle, r);
		} else {
			if (r)
				DIE("PRIME export of buffer %u: %s", b->handle, strerror(-r));
			off_t size = lseek(ph.fd, 0, SEEK_END);
			close(ph.fd);
			if ((uint64_t)size != b->size)
				DIE("buffer %u has %lld bytes, not %llu", b->handle, (long long)size,
				    (unsigned long long)b->size);
		}
		uint8_t *p = b->handle == 1   ? (uint8_t *)map1
			     : b->handle == 3 ? (uint8_t *)map3
					      : map_handle(b->handle, b->size);
		int64_t at = differs(p, b->size, b->seed);
		if (at >= 0)
			DIE("buffer %u differs at byte %lld%s", b->handle, (long long)at,
			    p == (uint8_t *)map1 || p == (uint8_t *)map3 ? " (through its old mapping)" : "");
		if (b->handle == 1 || b->handle == 3) { /* the old mapping is still on the buffer */
			uint8_t *q = map_handle(b->handle, b->size);
			p[100] ^= 0xff;
			bool same = q[100] == p[100];
			p[100] ^= 0xff;
			munmap(q, b->size);
			if (!same)
				DIE("a write through buffer %u's old mapping is not seen by a fresh mapping",
				    b->handle);
		} else {
			munmap(p, b->size);
		}
	}
	if (differs(user, 3 * 4096, 0x66) >= 0)
		DIE("the userptr pages lost their pattern");
	for (uint32_t id = 1; id <= 7; id++) {
		bool want = id == 1 || id == 3 || id == 5;
		if (id <= 6 && vm_exists(id) != want)
			DIE("VM %u %s", id, want ? "is missing" : "exists");
		if (queue_exists(id) != (want || id == 6))
			DIE("exec queue %u %s", id, want || id == 6 ? "is missing" : "exists");
	}
}

static void after(void)
{
	uint32_t id = 0, h = 0;
	struct gw_xe_engine_class_instance rcs = {0, 0, 0, 0};
	for (uint32_t want = 2; want <= 6; want += 2) {
		int r = xe_vm_create(fd, 0, &id);
		if (r || id != want)
			DIE("after: new VM got id %u (r=%d), not the lowest free %u", id, r, want);
		r = xe_queue_create(fd, 1, 1, 1, &rcs, -1, -1, &id);
		if (r || id != (want == 6 ? 7 : want))
			DIE("after: new exec queue got id %u (r=%d), not the lowest free %u", id, r,
			    want == 6 ? 7 : want);
	}
	for (uint32_t want = 4; want <= 6; want += 2) {
		int r = xe_gem_create(fd, 4096, 1, 0, 0, GW_XE_GEM_CPU_CACHING_WB, &h);
		if (r || h != want)
			DIE("after: new buffer got handle %u (r=%d), not the lowest free %u", h, r, want);
	}
	int r = xe_bind(fd, 1, GW_XE_VM_BIND_OP_MAP, 3, 0, 0x5000000, 8 * KB, 0, 0);
	if (r != -EINVAL)
		DIE("after: VM-private buffer 3 bound into VM 1 (r=%d, want -EINVAL)", r);
	r = xe_bind(fd, 5, GW_XE_VM_BIND_OP_MAP, 3, 0, 0x5000000, 8 * KB, 0, 0);
	if (r)
		DIE("after: buffer 3 does not bind into its VM 5 again: %s", strerror(-r));
	result("PASS");
}

static bool exists(const char *name)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

static void write_file(const char *name, const char *text)
{
	char path[512], tmp[520];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) || rename(tmp, path))
		DIE("cannot write %s", path);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s DIR NODE\n", argv[0]);
		return 2;
	}
	dir = argv[1];
	close_range(3, ~0u, 0); /* inherited ports would stop criu */
	fd = open(argv[2], O_RDWR | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &node_st))
		DIE("open %s: %s", argv[2], strerror(errno));
	build();
	verify();
	char text[4096];
	snprintf(text, sizeof(text),
		 "fd %d on %s (rdev %#llx)\nhandles 1 2 3 5 (3 private to VM 5), none at 4 6\nVMs 1 3 5\n"
		 "exec queues 1 3 5 6 (6 on the destroyed VM 6)\nmapped: buffer 1 at %p, buffer 3 at %p; userptr pages "
		 "at %p\n",
		 fd, argv[2], (unsigned long long)node_st.st_rdev, (void *)map1, (void *)map3, (void *)user);
	char name[64];
	snprintf(name, sizeof(name), "expect.%d.txt", getpid());
	write_file(name, text);
	snprintf(text, sizeof(text), "%d\n", getpid());
	write_file("pid", text);
	write_file("ready", "");
	while (!exists("go.after")) {
		verify();
		usleep(50000);
	}
	verify();
	after();
	return 0;
}
