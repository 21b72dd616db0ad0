/* SPDX-License-Identifier: MIT */
/* Workload library: phases (truth, ready, go), fork bookkeeping, exec of oneself. */
#define _GNU_SOURCE
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WAIT_TIMEOUT_S 900

static void touch(const char *name)
{
	char path[300];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", wl.dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		wl_die("create %s", path);
	close(fd);
}

/* Waits until DIR/name exists; dies after WAIT_TIMEOUT_S or when child `watch` (if > 0) exits.
 * idle (if set) runs at every poll. */
static void wait_for(const char *name, pid_t watch, void (*idle)(void))
{
	struct timespec tick = {0, 10 * 1000 * 1000};
	char path[300];
	uint64_t deadline = wl_now_ns() + WAIT_TIMEOUT_S * 1000000000ull;
	int status;

	snprintf(path, sizeof(path), "%s/%s", wl.dir, name);
	while (access(path, F_OK) != 0) {
		errno = 0;
		if (watch > 0 && waitpid(watch, &status, WNOHANG) == watch)
			wl_die("child %d ended (status %#x) while waiting for %s", (int)watch, status, name);
		if (wl_now_ns() > deadline)
			wl_die("timed out waiting for %s", path);
		if (idle)
			idle();
		nanosleep(&tick, NULL);
	}
}

void wl_sync(int phase, void (*idle)(void))
{
	char name[64];

	if (wl.is_child) {
		snprintf(name, sizeof(name), "cready.%d.%d", phase, (int)getpid());
		touch(name);
	} else {
		for (int i = 0; i < wl.nchildren; i++) {
			snprintf(name, sizeof(name), "cready.%d.%d", phase, (int)wl.children[i]);
			wait_for(name, wl.children[i], NULL);
		}
		snprintf(name, sizeof(name), "ready.%d", phase);
		touch(name);
	}
	snprintf(name, sizeof(name), "go.%d", phase);
	wait_for(name, 0, idle);
}

void wl_phase(int phase)
{
	wl_write_truth(phase);
	wl_sync(phase, NULL);
}

pid_t wl_fork(void)
{
	pid_t pid;

	if (wl.nchildren == WL_MAX_CHILDREN)
		wl_die("too many children");
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		wl_die("fork");
	if (pid == 0) {
		wl.is_child = true;
		wl.nchildren = 0;
		wl.fork_ns = wl_now_ns();
		return 0;
	}
	wl.children[wl.nchildren++] = pid;
	return pid;
}

void wl_reap(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		wl_die("waitpid %d", (int)pid);
	errno = 0;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		wl_die("child %d failed (status %#x)", (int)pid, status);
	for (int i = 0; i < wl.nchildren; i++)
		if (wl.children[i] == pid)
			wl.children[i--] = wl.children[--wl.nchildren];
}

int wl_finish(void)
{
	while (wl.nchildren > 0)
		wl_reap(wl.children[0]);
	return 0;
}

void wl_exec_self(char *const extra[])
{
	char path[300];
	char *argv[16] = {wl.exe, wl.dir, "--after-exec"};
	int n = 3;
	FILE *o;

	snprintf(path, sizeof(path), "%s/state.%d", wl.dir, (int)getpid());
	o = fopen(path, "we");
	if (!o || fwrite(&wl, sizeof(wl), 1, o) != 1 || fclose(o) != 0)
		wl_die("save model to %s", path);
	for (int i = 0; extra && extra[i] && n < 15; i++)
		argv[n++] = extra[i];
	argv[n] = NULL;
	fflush(NULL);
	execv(wl.exe, argv);
	wl_die("execv %s", wl.exe);
}

/* After wl_exec_self: reload the model, then apply exec to it after checking the kernel did. */
bool wl_after_exec(int argc, char **argv)
{
	struct wl_state saved = wl;
	char path[300];
	FILE *in;

	if (argc < 3 || strcmp(argv[2], "--after-exec") != 0)
		return false;
	snprintf(path, sizeof(path), "%s/state.%d", wl.dir, (int)getpid());
	in = fopen(path, "re");
	if (!in || fread(&wl, sizeof(wl), 1, in) != 1)
		wl_die("load model from %s", path);
	fclose(in);
	memcpy(wl.exe, saved.exe, sizeof(wl.exe));
	wl.selfcheck = saved.selfcheck;
	for (int i = 0; i < wl.nfds; i++) {
		struct wl_fd *e = &wl.fds[i];
		int fl = fcntl(e->fd, F_GETFD);

		errno = 0;
		if (e->cloexec && fl >= 0)
			wl_die("fd %d was close-on-exec but is still open after exec", e->fd);
		if (!e->cloexec && (fl < 0 || (fl & FD_CLOEXEC)))
			wl_die("fd %d should have survived exec without close-on-exec (F_GETFD %d)", e->fd, fl);
		if (e->cloexec)
			wl_fd_remove(e->fd), i--;
	}
	wl.nmaps = 0;
	return true;
}
