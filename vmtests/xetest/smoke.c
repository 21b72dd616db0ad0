// SPDX-License-Identifier: MIT
/*
 * gwxe smoke test: run in the VM as root on the fixture's card node. Each case prints
 * PASS/FAIL with what was expected; the last line is "N passed, N failed".
 *
 * usage: gwxe-smoke /dev/dri/cardN
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <drm.h>

#include "xe_user.h"

static int passed, failed;
static const char *node;

static void check(int ok, const char *name, const char *fmt, ...)
{
	if (ok) {
		printf("PASS %s\n", name);
		passed++;
		return;
	}
	va_list ap;
	printf("FAIL %s: ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	failed++;
}

static int open_node(void)
{
	int fd = open(node, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		perror(node);
		exit(1);
	}
	return fd;
}

/* This file's block of debugfs gwxe_state (client id from fdinfo), in buf. */
static int state_of(int fd, char *buf, size_t len)
{
	char path[256], line[512];
	unsigned client = ~0u;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	FILE *f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		sscanf(line, "drm-client-id: %u", &client);
	if (f)
		fclose(f);
	int minor = -1;
	sscanf(strrchr(node, 'd') + 1, "%d", &minor);
	snprintf(path, sizeof(path), "/sys/kernel/debug/dri/%d/gwxe_state", minor);
	f = fopen(path, "r");
	if (!f)
		return -1;
	int in = 0;
	size_t used = 0;
	buf[0] = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned c;
		if (sscanf(line, "client %u ", &c) == 1)
			in = c == client;
		else if (in && used + strlen(line) < len)
			used += (size_t)sprintf(buf + used, "%s", line);
	}
	fclose(f);
	return 0;
}

static void t_version_and_numbers(void)
{
	int fd = open_node();
	char name[32] = "";
	struct drm_version v;
	memset(&v, 0, sizeof(v));
	v.name = name;
	v.name_len = sizeof(name) - 1;
	int r = ioctl(fd, DRM_IOCTL_VERSION, &v);
	check(r == 0 && strcmp(name, "xe") == 0, "driver_name", "DRM_IOCTL_VERSION name '%s' (want xe)", name);
	/* the uapi's values, spelled out: a renumbered fixture must fail here */
	check(GW_XE_IOCTL_GEM_CREATE == 0xc0386441u && GW_XE_IOCTL_VM_BIND == 0x40886445u &&
		      GW_XE_IOCTL_EXEC_QUEUE_CREATE == 0xc0306446u,
	      "ioctl_numbers", "xe_uapi.h command values changed");
	close(fd);
}

static void t_query(void)
{
	int fd = open_node();
	void *buf = NULL;
	uint32_t size = 0;
	int r = xe_query(fd, GW_XE_DEVICE_QUERY_MEM_REGIONS, &buf, &size);
	uint32_t *n = buf;
	check(r == 0 && size == 8 + 2 * 88 && n[0] == 2, "query_mem_regions",
	      "r=%d size %u regions %u (want 0, 184, 2)", r, size, n ? n[0] : 0);
	free(buf);
	buf = NULL;
	r = xe_query(fd, GW_XE_DEVICE_QUERY_ENGINES, &buf, &size);
	n = buf;
	check(r == 0 && size == 8 + 6 * 32 && n[0] == 6, "query_engines", "r=%d size %u engines %u (want 0, 200, 6)", r,
	      size, n ? n[0] : 0);
	free(buf);
	struct gw_xe_device_query q;
	memset(&q, 0, sizeof(q));
	q.query = GW_XE_DEVICE_QUERY_ENGINES;
	q.size = 16;
	q.data = (uintptr_t)&q; /* never written: the size is wrong */
	r = xe_ioctl(fd, GW_XE_IOCTL_DEVICE_QUERY, &q);
	check(r == -EINVAL, "query_wrong_size", "r=%d (want -EINVAL)", r);
	close(fd);
}

static void t_gem(void)
{
	int fd = open_node();
	uint32_t h[4] = {0};
	int r1 = xe_gem_create(fd, 8192, 1, 0, 0, GW_XE_GEM_CPU_CACHING_WB, &h[0]);
	int r2 = xe_gem_create(fd, 4096, 3, 0, 0, GW_XE_GEM_CPU_CACHING_WC, &h[1]);
	int r3 = xe_gem_create(fd, 4096, 2, 0, 0, GW_XE_GEM_CPU_CACHING_WB, &h[2]);
	check(r1 == 0 && r2 == 0 && h[0] == 1 && h[1] == 2, "gem_create_handles", "r=%d,%d handles %u,%u (want 1,2)",
	      r1, r2, h[0], h[1]);
	check(r3 == -EINVAL, "gem_vram_needs_wc", "VRAM placement with WB caching: r=%d (want -EINVAL)", r3);
	check(xe_gem_create(fd, 4096, 4, 0, 0, 1, &h[3]) == -EINVAL &&
		      xe_gem_create(fd, 100, 1, 0, 0, 1, &h[3]) == -EINVAL &&
		      xe_gem_create(fd, 4096, 1, 0, 0, 0, &h[3]) == -EINVAL &&
		      xe_gem_create(fd, 4096, 1, 0, 9, 1, &h[3]) == -ENOENT,
	      "gem_create_checks", "bad placement, unaligned size, caching 0 or unknown VM accepted");
	uint64_t off = 0, off2 = 0;
	int r = xe_mmap_offset(fd, h[0], &off);
	int r4 = xe_mmap_offset(fd, h[0], &off2);
	check(r == 0 && r4 == 0 && off == off2 && off >= (1ull << 32), "mmap_offset", "r=%d offset %#llx twice %#llx",
	      r, (unsigned long long)off, (unsigned long long)off2);
	char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
	int ok = p != MAP_FAILED;
	if (ok) {
		memset(p, 0x5a, 8192);
		char line[512], want[64];
		snprintf(want, sizeof(want), "%lx-", (unsigned long)p);
		FILE *m = fopen("/proc/self/maps", "r");
		ok = 0;
		while (m && fgets(line, sizeof(line), m))
			if (strncmp(line, want, strlen(want)) == 0)
				ok = strstr(line, "/dev/dri/card") != NULL;
		if (m)
			fclose(m);
	}
	check(ok, "mmap_keeps_device_file", "the mapping does not show /dev/dri/cardN in maps");
	struct drm_mode_map_dumb md = {.handle = h[0]};
	r = ioctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &md);
	check(r == 0 && md.offset == off, "map_dumb_same_offset", "MODE_MAP_DUMB offset %#llx vs %#llx",
	      (unsigned long long)md.offset, (unsigned long long)off);
	if (p != MAP_FAILED) {
		char *q = mmap(NULL, 8192, PROT_READ, MAP_SHARED, fd, (off_t)md.offset);
		check(q != MAP_FAILED && q[8191] == 0x5a, "mmap_coherent", "second mapping does not see the bytes");
		munmap(p, 8192);
		if (q != MAP_FAILED)
			munmap(q, 8192);
	}
	struct drm_gem_close gc = {.handle = 1};
	ioctl(fd, DRM_IOCTL_GEM_CLOSE, &gc);
	uint32_t again = 0;
	xe_gem_create(fd, 4096, 1, 0, 0, 1, &again);
	check(again == 1, "handle_lowest_free", "got handle %u after closing 1 (want 1)", again);
	close(fd);
}

static void t_vm_and_bind(void)
{
	int fd = open_node();
	uint32_t v[4] = {0}, x = 0;
	for (int i = 0; i < 3; i++)
		xe_vm_create(fd, 0, &v[i]);
	check(v[0] == 1 && v[1] == 2 && v[2] == 3, "vm_ids", "ids %u %u %u (want 1 2 3)", v[0], v[1], v[2]);
	xe_vm_destroy(fd, 2);
	xe_vm_create(fd, GW_XE_VM_CREATE_FLAG_SCRATCH_PAGE, &x);
	check(x == 2, "vm_lowest_free", "got %u (want 2)", x);
	check(xe_vm_destroy(fd, 7) == -ENOENT && xe_vm_create(fd, GW_XE_VM_CREATE_FLAG_FAULT_MODE, &x) == -EINVAL,
	      "vm_checks", "destroy of unknown VM or FAULT_MODE without LR accepted");
	uint32_t bo = 0, priv = 0;
	xe_gem_create(fd, 4 * 4096, 1, 0, 0, GW_XE_GEM_CPU_CACHING_WB, &bo);
	int rp = xe_gem_create(fd, 4096, 1, 0, 3, GW_XE_GEM_CPU_CACHING_WB, &priv);
	int r1 = xe_bind(fd, 1, GW_XE_VM_BIND_OP_MAP, bo, 0, 0x100000, 4 * 4096, 0, 0);
	int r2 = xe_bind(fd, 1, GW_XE_VM_BIND_OP_UNMAP, 0, 0, 0x101000, 4096, 0, 0);
	static char user[3 * 4096] __attribute__((aligned(4096)));
	int r3 = xe_bind(fd, 1, GW_XE_VM_BIND_OP_MAP_USERPTR, 0, (uintptr_t)user, 0x200000, sizeof(user), 0, 0);
	int r4 = xe_bind(fd, 3, GW_XE_VM_BIND_OP_MAP, priv, 0, 0x300000, 4096, 0, 0);
	int r5 = xe_bind(fd, 1, GW_XE_VM_BIND_OP_MAP, priv, 0, 0x300000, 4096, 0, 0);
	int r6 = xe_bind(fd, 1, GW_XE_VM_BIND_OP_MAP, bo, 0, 0x400000, 4096, 1, 0);
	check(rp == 0 && r1 == 0 && r2 == 0 && r3 == 0 && r4 == 0, "binds", "r=%d %d %d %d %d", rp, r1, r2, r3, r4);
	check(r5 == -EINVAL && r6 == -EINVAL, "bind_checks",
	      "private BO into another VM r=%d, WC PAT on a WB BO r=%d (want -EINVAL both)", r5, r6);
	char st[8192], want[256];
	state_of(fd, st, sizeof(st));
	snprintf(want, sizeof(want),
		 "  vm 1 flags 0x0\n    bind 0x100000+0x1000 handle %u offset 0x0 pat 0 flags 0x0\n"
		 "    bind 0x102000+0x2000 handle %u offset 0x2000 pat 0 flags 0x0\n"
		 "    bind 0x200000+0x3000 userptr 0x%lx pat 0 flags 0x0\n",
		 bo, bo, (unsigned long)user);
	check(strstr(st, want) != NULL, "bind_split_in_debugfs", "want\n%s\ngot\n%s", want, st);
	int fd2 = -1;
	struct drm_prime_handle ph = {.handle = priv, .flags = DRM_CLOEXEC};
	int re = ioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &ph) ? -errno : 0;
	check(re == -EPERM, "private_bo_not_exportable", "PRIME export r=%d (want -EPERM)", re);
	ph.handle = bo;
	re = ioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &ph) ? -errno : 0;
	fd2 = ph.fd;
	check(re == 0, "shared_bo_exportable", "PRIME export r=%d", re);
	if (fd2 >= 0)
		close(fd2);
	xe_bind(fd, 1, GW_XE_VM_BIND_OP_UNMAP_ALL, bo, 0, 0, 0, 0, 0);
	state_of(fd, st, sizeof(st));
	check(strstr(st, "handle 1 offset") == NULL && strstr(st, "userptr") != NULL, "unmap_all",
	      "bindings of the BO remain or the userptr went:\n%s", st);
	close(fd);
}

static void t_queues(void)
{
	int fd = open_node();
	uint32_t vm = 0, q[4] = {0};
	xe_vm_create(fd, 0, &vm);
	struct gw_xe_engine_class_instance rcs = {0, 0, 0, 0}, vcs2[2] = {{2, 0, 0, 0}, {2, 1, 0, 0}},
					   bad = {0, 3, 0, 0}, bind = {GW_XE_ENGINE_CLASS_VM_BIND, 0, 0, 0};
	int r1 = xe_queue_create(fd, vm, 1, 1, &rcs, 2, 5000, &q[0]);
	int r2 = xe_queue_create(fd, vm, 2, 1, vcs2, -1, -1, &q[1]);
	int r3 = xe_queue_create(fd, vm, 1, 1, &bind, -1, -1, &q[2]);
	check(r1 == 0 && r2 == 0 && r3 == 0 && q[0] == 1 && q[1] == 2 && q[2] == 3, "queue_ids",
	      "r=%d %d %d ids %u %u %u (want 1 2 3)", r1, r2, r3, q[0], q[1], q[2]);
	xe_queue_destroy(fd, 2);
	xe_queue_create(fd, vm, 1, 1, &rcs, -1, -1, &q[3]);
	check(q[3] == 2, "queue_lowest_free", "got %u (want 2)", q[3]);
	check(xe_queue_create(fd, vm, 1, 1, &bad, -1, -1, &q[3]) == -EINVAL &&
		      xe_queue_create(fd, 77, 1, 1, &rcs, -1, -1, &q[3]) == -ENOENT &&
		      xe_queue_create(fd, vm, 1, 1, &rcs, 3, -1, &q[3]) == -EINVAL &&
		      xe_queue_destroy(fd, 9) == -ENOENT,
	      "queue_checks", "unknown engine, unknown VM, priority 3 or unknown id accepted");
	xe_vm_destroy(fd, vm); /* the queues keep it */
	char st[8192];
	state_of(fd, st, sizeof(st));
	check(strstr(st, "  queue 1 vm 1 width 1 placements 1 instances 0:0:0 priority 2 timeslice 5000\n") &&
		      strstr(st, "  queue 2 vm 1 width 1 placements 1 instances 0:0:0 priority 1 timeslice 1000\n") &&
		      strstr(st, "  queue 3 vm 1 width 1 placements 1 instances 5:0:0") && !strstr(st, "  vm 1 "),
	      "queues_in_debugfs", "got\n%s", st);
	close(fd);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s /dev/dri/cardN\n", argv[0]);
		return 2;
	}
	node = argv[1];
	t_version_and_numbers();
	t_query();
	t_gem();
	t_vm_and_bind();
	t_queues();
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
