/* SPDX-License-Identifier: MIT */
/*
 * The CRIU workload: builds DRM state on vgem (or WL_CARD's driver) in two processes, records what it expects to
 * find after a checkpoint/restore, then (after the harness restored it, or right away when it
 * was never dumped) verifies itself and keeps working. Usage: wl_criu DIR [--degraded]
 * [--other-node]. Runs as a detached session leader (fds 3 and up are closed at start).
 *
 * State before the dump (fds of the parent P; the child C is forked after all of it):
 *   3  A = card0 O_RDWR           handles 1 (4 pages), 3 (4p), 4 (2p), 6 (3p); 2, 5 destroyed
 *   4  B = card0 O_RDWR|O_NONBLOCK|O_CLOEXEC
 *                                 handles 1 (= A's 6, PRIME import), 2 (2p), 4 (5p); 3 destroyed
 *   5  R = renderD128 O_CLOEXEC   handle 1 (= A's 4, PRIME import of E)
 *   6  E = dma-buf of A's 4 (close-on-exec), kept open
 *   20 dup of A
 *   mappings (MAP_SHARED): A.1 rw (4p) and A.1 read-only (4p); A.3 rw with its last page
 *   unmapped; B.2 rw. A.4, A.6, B.4: written through a temporary mapping. Every buffer holds
 *   its own byte pattern. (No mapping starts inside a buffer: vgem, like every driver that
 *   uses drm_gem_mmap, only maps from a buffer's first page, so such a window cannot be
 *   mapped again at restore; the plugin puts a copy there, and says so.)
 * C shares A, R, E (fork); it closes B and fd 20, unmaps A.1's read-only mapping and B.2's,
 * and maps A.6 (rw, its own mapping).
 *
 * Protocol (files in DIR, phases of wl_phase()):
 *   pid.parent / pid.child     pids
 *   expect.<pid>.bin / .txt    what must hold after restore (fds with F_GETFD/F_GETFL, every
 *                              file's exact handle set with sizes, mappings, buffer checksums)
 *   phase 1 (truth.1, ready.1) the harness dumps and restores here (or not), then go.1
 *   P verifies, then C (after pverified): result.<pid> ("PASS" or "FAIL n") + result.<pid>.log
 *   phase 2 (truth.2)          state as before the dump (mapping offsets re-read: restored
 *                              mappings have new fake offsets)
 *   P and C work: new buffers get the lowest free handle numbers (A: 2, 5, 7; B: 3; R: 2),
 *   C opens a new card0 file (handle 1): work.<pid> ("PASS"/"FAIL n") + work.<pid>.log
 *   phase 3 (truth.3), then both exit; P writes done.<pid> after reaping C.
 * A card without PRIME (bochs-drm on 6.1, which has no render node either: R is a second
 * file of the card, guest/kms.sh sc_on_driver): B's handle 1 and R's are buffers of their own
 * (3 and 2 pages, each with its byte pattern), there is no dma-buf fd E, R's new buffer after
 * the restore is made rather than imported, and handles are probed through MODE_MAP_DUMB
 * (handle_size) instead of PRIME export.
 * --degraded: after a restore without the gpuwatch daemon: handles may be lost; fds (same
 *   numbers and flags, DRM fds on a vgem node) and mappings (same place, prot and contents)
 *   must hold. --other-node: the DRM fds may be on another vgem node (minor changed).
 */
#define _GNU_SOURCE
#include "wl_criu.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

bool degraded, other_node, have_prime;

/* ---- work after restore ------------------------------------------------------------------ */

static void expect_handle(const char *what, uint32_t got, uint32_t want)
{
	if (degraded)
		note(true, "%s: handle %u", what, got);
	else
		note(got == want, "%s: handle %u (lowest free: %u)", what, got, want);
}

/* Degraded mode: the handles are whatever the restore left; the model follows the kernel. */
static void resync_handles(void)
{
	for (int fi = 0; fi < wl.nfiles; fi++) {
		struct wl_file *f = &wl.files[fi];
		int fd = fd_of_file(fi);

		if (fd < 0)
			continue;
		f->nhandles = 0;
		f->ngrants = 0;
		for (uint32_t h = 1; h <= 32; h++) {
			int64_t size = handle_size(fd, h);

			if (size > 0)
				f->handles[f->nhandles++] =
					(struct wl_handle){.handle = h, .size = (uint64_t)size, .origin = "dumb"};
		}
	}
}

static void work_parent(int a, int b, int r)
{
	report_open("work");
	uint32_t n2 = wl_create_dumb(a, 1024, 2, 32);
	expect_handle("A: new buffer", n2, 2);
	check_buffer_rw(a, n2, 2 * PAGE, 90);
	expect_handle("A: next new buffer", wl_create_dumb(a, 1024, 1, 32), 5);
	expect_handle("A: next new buffer", wl_create_dumb(a, 1024, 1, 32), 7);
	expect_handle("B: new buffer", wl_create_dumb(b, 1024, 3, 32), 3);
	if (have_prime) {
		int d = wl_export(a, n2, true);
		expect_handle("R: import of A's new buffer", wl_import(r, d), 2);
		wl_close(d);
	} else {
		expect_handle("R: new buffer", wl_create_dumb(r, 1024, 1, 32), 2);
	}
	report_close("work");
}

static void work_child(void)
{
	/* the node the restored card0 file is on now (another minor with --other-node) */
	const char *card = wl_file_of_fd(3)->path;

	report_open("work");
	int n = wl_open(card, O_RDWR);
	note(true, "opened %s as fd %d", card, n);
	uint32_t h = wl_create_dumb(n, 1024, 2, 32);
	note(h == 1, "new file: first buffer gets handle %u (expected 1)", h);
	check_buffer_rw(n, h, 2 * PAGE, 91);
	report_close("work");
}

/* ---- main -------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
	char text[32];

	close_range(3, ~0u, 0); /* inherited ports (virtme: 3-5) would stop criu */
	wl_init(argc, argv);
	guard_install();
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--degraded") == 0)
			degraded = true;
		else if (strcmp(argv[i], "--other-node") == 0)
			other_node = true;
		else
			wl_die("unknown option %s", argv[i]);
	}
	snprintf(text, sizeof(text), "%d\n", (int)getpid());
	wl_write_file("pid.parent", text);

	int a = wl_open(WL_CARD, O_RDWR);
	int b = wl_open(WL_CARD, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	int r = wl_open(WL_RENDER, O_RDWR | O_CLOEXEC);
	static const uint32_t apages[] = {0, 4, 1, 4, 2, 1, 3}, bpages[] = {0, 1, 2, 1, 5};

	for (uint32_t i = 1; i <= 6; i++)
		if (wl_create_dumb(a, 1024, apages[i], 32) != i)
			wl_die("A: handle %u expected", i);
	wl_destroy_dumb(a, 2);
	wl_destroy_dumb(a, 5);
	uint8_t *m1 = wl_mmap(a, 1, 4 * PAGE, PROT_READ | PROT_WRITE);
	fill(m1, 4 * PAGE, 1);
	uint8_t *m1ro = wl_mmap(a, 1, 4 * PAGE, PROT_READ);
	uint8_t *m3 = wl_mmap(a, 3, 4 * PAGE, PROT_READ | PROT_WRITE);
	fill(m3, 4 * PAGE, 3);
	wl_munmap(m3 + 3 * PAGE, PAGE);
	fill_through_temp_map(a, 4, 2 * PAGE, 4);
	fill_through_temp_map(a, 6, 3 * PAGE, 6);

	for (uint32_t i = 1; i <= 4; i++)
		if (wl_create_dumb(b, 1024, bpages[i], 32) != i)
			wl_die("B: handle %u expected", i);
	wl_destroy_dumb(b, 1);
	wl_destroy_dumb(b, 3);
	uint8_t *mb2 = wl_mmap(b, 2, 2 * PAGE, PROT_READ | PROT_WRITE);
	fill(mb2, 2 * PAGE, 12);
	fill_through_temp_map(b, 4, 5 * PAGE, 14);

	int e = -1;
	have_prime = wl_has_prime(a);
	if (have_prime) {
		int t = wl_export(a, 6, true);
		if (wl_import(b, t) != 1)
			wl_die("B: the import of A's 6 should take the free handle 1");
		wl_close(t);
		e = wl_export(a, 4, true);
		if (wl_import(r, e) != 1)
			wl_die("R: the import of A's 4 should be handle 1");
	} else {
		if (wl_create_dumb(b, 1024, 3, 32) != 1)
			wl_die("B: a new buffer should take the free handle 1");
		fill_through_temp_map(b, 1, 3 * PAGE, 16);
		if (wl_create_dumb(r, 1024, 2, 32) != 1)
			wl_die("R: its first buffer should be handle 1");
		fill_through_temp_map(r, 1, 2 * PAGE, 15);
	}
	wl_dup3(a, 20, false);

	pid_t child = wl_fork();
	if (child == 0) {
		snprintf(text, sizeof(text), "%d\n", (int)getpid());
		wl_write_file("pid.child", text);
		wl_close(b);
		wl_close(20);
		wl_munmap(m1ro, 4 * PAGE);
		wl_munmap(mb2, 2 * PAGE);
		wl_mmap(a, 6, 3 * PAGE, PROT_READ | PROT_WRITE);
	}
	printf("%s %d: fds A=%d B=%d R=%d E=%d, state built\n", child ? "parent" : "child", (int)getpid(), a, b, r, e);
	record_expect();
	wl_phase(1);

	/* restored (or never dumped): the parent verifies first, then the child */
	if (child) {
		verify();
		wl_write_file("pverified", "");
	} else {
		wait_file("pverified");
		verify();
	}
	if (degraded)
		resync_handles();
	else
		refresh_model();
	wl_phase(2);

	if (child)
		work_parent(a, b, r);
	else
		work_child();
	wl_phase(3);

	if (child == 0)
		return 0;
	wl_finish();
	snprintf(text, sizeof(text), "done.%d", (int)getpid());
	wl_write_file(text, "0\n");
	return 0;
}
