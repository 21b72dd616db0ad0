/* SPDX-License-Identifier: MIT */
/*
 * A checkpoint with no DRM state at all (the VM suite's non-GPU cases, guest/criu_citizen.sh):
 * `wl_plain DIR CASE` sets up one kind of kernel state CRIU checkpoints, writes its pids
 * (DIR/pid.parent, DIR/pid.child), creates DIR/ready.1 and waits for DIR/go.1. The runner
 * dumps and restores it (or not) in between. Then it checks that state is still there and
 * still works, writes DIR/result.<pid> ("PASS", or "FAIL" and the first failure) and exits 0.
 *
 * Cases: pipe unix inet tty timers locks mmap threads tree cgroup ns (see usage()).
 */
#define _GNU_SOURCE
#include "wl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <pty.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static char fail_msg[512];
static pid_t children[WL_MAX_CHILDREN];
static int nchildren;

/* the first failure is the one reported */
static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;

	if (fail_msg[0])
		return;
	va_start(ap, fmt);
	vsnprintf(fail_msg, sizeof(fail_msg), fmt, ap);
	va_end(ap);
}

#define CHECK(cond, ...)                                                                                               \
	do {                                                                                                           \
		if (!(cond))                                                                                           \
			fail(__VA_ARGS__);                                                                             \
	} while (0)

static void dir_path(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/%s", wl.dir, name);
}

static pid_t spawn(void)
{
	pid_t p = fork();

	if (p < 0)
		wl_die("fork");
	if (p > 0) {
		if (nchildren == WL_MAX_CHILDREN)
			wl_die("too many children");
		children[nchildren++] = p;
	}
	return p;
}

/* the handshake: pids, ready.1, then go.1 (the runner dumps and restores in between) */
static void handshake(void)
{
	char buf[256] = "", one[16];
	struct stat st;
	char go[300];

	snprintf(one, sizeof(one), "%d\n", (int)getpid());
	wl_write_file("pid.parent", one);
	for (int i = 0; i < nchildren; i++) {
		snprintf(one, sizeof(one), "%d\n", (int)children[i]);
		strncat(buf, one, sizeof(buf) - strlen(buf) - 1);
	}
	if (nchildren)
		wl_write_file("pid.child", buf);
	wl_write_file("ready.1", "1\n");
	dir_path(go, sizeof(go), "go.1");
	while (stat(go, &st) != 0)
		usleep(20000);
}

/* a child that waits for a byte on fd, then exits with what check() says */
static int wait_byte(int fd)
{
	char c;
	ssize_t n;

	do
		n = read(fd, &c, 1);
	while (n < 0 && errno == EINTR);
	return n == 1 ? c : -1;
}

static int reap(pid_t p)
{
	int st;

	if (waitpid(p, &st, 0) != p)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* ---- pipe: bytes in flight, and a child blocked in read() across the dump ---------------- */
static void case_pipe(void)
{
	int q[2], blocked[2];
	char in[3000], out[3000];
	pid_t c;

	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (char)(i * 7);
	if (pipe(q) || pipe(blocked))
		wl_die("pipe");
	if (write(q[1], in, sizeof(in)) != sizeof(in))
		wl_die("write pipe");
	c = spawn();
	if (c == 0) {
		close(blocked[1]);
		_exit(wait_byte(blocked[0]) == 'x' && getppid() != 1 ? 0 : 1);
	}
	close(blocked[0]);
	handshake();
	CHECK(read(q[0], out, sizeof(out)) == sizeof(out) && !memcmp(in, out, sizeof(in)),
	      "the 3000 bytes in the pipe did not come back intact");
	CHECK(write(q[1], "y", 1) == 1 && read(q[0], out, 1) == 1 && out[0] == 'y', "the pipe no longer carries data");
	CHECK(write(blocked[1], "x", 1) == 1, "cannot write to the child's pipe");
	int rc = reap(c);
	CHECK(rc == 0, "the child blocked in read() exited %d", rc);
}

/* ---- unix sockets: stream and datagram pairs with queued data, a listener on a path ------- */
static void case_unix(void)
{
	int st[2], dg[2], l, cl, a;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char buf[64];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, st) || socketpair(AF_UNIX, SOCK_DGRAM, 0, dg))
		wl_die("socketpair");
	if (write(st[0], "stream-a", 8) != 8 || write(st[1], "stream-b", 8) != 8 || send(dg[0], "one", 3, 0) != 3 ||
	    send(dg[0], "second", 6, 0) != 6)
		wl_die("queue data");
	char path[300];

	dir_path(path, sizeof(path), "listener.sock");
	if (strlen(path) >= sizeof(sa.sun_path))
		wl_die("%s: too long for a unix socket's name", path);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	unlink(sa.sun_path);
	l = socket(AF_UNIX, SOCK_STREAM, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) || listen(l, 4))
		wl_die("unix listener");
	handshake();
	CHECK(read(st[1], buf, 8) == 8 && !memcmp(buf, "stream-a", 8), "stream socket: queued bytes lost");
	CHECK(read(st[0], buf, 8) == 8 && !memcmp(buf, "stream-b", 8), "stream socket: the other way lost");
	CHECK(recv(dg[1], buf, sizeof(buf), 0) == 3 && !memcmp(buf, "one", 3), "datagram 1 lost or merged");
	CHECK(recv(dg[1], buf, sizeof(buf), 0) == 6 && !memcmp(buf, "second", 6), "datagram 2 lost or merged");
	cl = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(cl >= 0 && connect(cl, (struct sockaddr *)&sa, sizeof(sa)) == 0, "cannot connect to the listener's path");
	a = accept(l, NULL, NULL);
	CHECK(a >= 0 && write(cl, "hi", 2) == 2 && read(a, buf, 2) == 2 && !memcmp(buf, "hi", 2),
	      "the restored listener does not accept");
}

/* ---- inet: a TCP listener and a bound UDP socket on loopback ----------------------------- */
static void case_inet(void)
{
	struct sockaddr_in t = {.sin_family = AF_INET}, u = {.sin_family = AF_INET};
	socklen_t len = sizeof(t);
	int l, us, cl, a;
	char buf[8];

	t.sin_addr.s_addr = u.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM, 0);
	us = socket(AF_INET, SOCK_DGRAM, 0);
	if (l < 0 || us < 0 || bind(l, (struct sockaddr *)&t, sizeof(t)) || listen(l, 4) ||
	    getsockname(l, (struct sockaddr *)&t, &len) || bind(us, (struct sockaddr *)&u, sizeof(u)) ||
	    (len = sizeof(u), getsockname(us, (struct sockaddr *)&u, &len)))
		wl_die("inet sockets (is lo up?)");
	handshake();
	cl = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(cl >= 0 && connect(cl, (struct sockaddr *)&t, sizeof(t)) == 0,
	      "cannot connect to the TCP listener (port %d)", ntohs(t.sin_port));
	a = accept(l, NULL, NULL);
	CHECK(a >= 0 && write(cl, "tcp", 3) == 3 && read(a, buf, 3) == 3 && !memcmp(buf, "tcp", 3),
	      "the restored TCP listener does not accept");
	CHECK(sendto(us, "udp", 3, 0, (struct sockaddr *)&u, sizeof(u)) == 3 && recv(us, buf, sizeof(buf), 0) == 3,
	      "the UDP socket lost its port %d", ntohs(u.sin_port));
}

/* ---- tty: a pty pair with its window size and modes --------------------------------------- */
static void case_tty(void)
{
	int m, s;
	struct winsize ws = {.ws_row = 37, .ws_col = 111}, got;
	struct termios tio, now;
	char buf[16];

	if (openpty(&m, &s, NULL, NULL, &ws))
		wl_die("openpty");
	if (tcgetattr(s, &tio))
		wl_die("tcgetattr");
	cfmakeraw(&tio);
	if (tcsetattr(s, TCSANOW, &tio))
		wl_die("tcsetattr");
	handshake();
	CHECK(ioctl(s, TIOCGWINSZ, &got) == 0 && got.ws_row == 37 && got.ws_col == 111, "the window size changed");
	CHECK(tcgetattr(s, &now) == 0 && !(now.c_lflag & ICANON) && !(now.c_lflag & ECHO), "the raw mode was lost");
	CHECK(write(m, "ping", 4) == 4 && read(s, buf, 4) == 4 && !memcmp(buf, "ping", 4), "master to slave broken");
	CHECK(write(s, "pong", 4) == 4 && read(m, buf, 4) == 4 && !memcmp(buf, "pong", 4), "slave to master broken");
}

/* ---- timers: a timerfd, a POSIX timer and an interval timer, all armed --------------------- */
static void on_alarm(int sig)
{
	(void)sig;
}

static void case_timers(void)
{
	struct itimerspec arm = {.it_interval = {1000, 0}, .it_value = {500, 0}}, got;
	struct itimerval iv = {.it_interval = {900, 0}, .it_value = {400, 0}}, ivgot;
	struct sigevent sev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR1};
	timer_t pt;
	int tfd;

	signal(SIGALRM, on_alarm);
	signal(SIGUSR1, on_alarm);
	tfd = timerfd_create(CLOCK_MONOTONIC, 0);
	if (tfd < 0 || timerfd_settime(tfd, 0, &arm, NULL) || timer_create(CLOCK_MONOTONIC, &sev, &pt) ||
	    timer_settime(pt, 0, &arm, NULL) || setitimer(ITIMER_REAL, &iv, NULL))
		wl_die("arm timers");
	handshake();
	CHECK(timerfd_gettime(tfd, &got) == 0 && got.it_interval.tv_sec == 1000 && got.it_value.tv_sec > 0 &&
		      got.it_value.tv_sec <= 500,
	      "timerfd: interval %ld s, next in %ld s (armed 1000 s / 500 s)", (long)got.it_interval.tv_sec,
	      (long)got.it_value.tv_sec);
	CHECK(timer_gettime(pt, &got) == 0 && got.it_interval.tv_sec == 1000 && got.it_value.tv_sec > 0 &&
		      got.it_value.tv_sec <= 500,
	      "POSIX timer: interval %ld s, next in %ld s (armed 1000 s / 500 s)", (long)got.it_interval.tv_sec,
	      (long)got.it_value.tv_sec);
	CHECK(getitimer(ITIMER_REAL, &ivgot) == 0 && ivgot.it_interval.tv_sec == 900 && ivgot.it_value.tv_sec > 0 &&
		      ivgot.it_value.tv_sec <= 400,
	      "ITIMER_REAL: interval %ld s, next in %ld s (armed 900 s / 400 s)", (long)ivgot.it_interval.tv_sec,
	      (long)ivgot.it_value.tv_sec);
}

/* ---- file locks: flock and a POSIX range lock, seen by another process (criu --file-locks) -- */
static void case_locks(void)
{
	char a[300], b[300];
	int fa, fb;
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 10, .l_len = 10};
	pid_t c;

	dir_path(a, sizeof(a), "flock.file");
	dir_path(b, sizeof(b), "posix.file");
	fa = open(a, O_RDWR | O_CREAT, 0600);
	fb = open(b, O_RDWR | O_CREAT, 0600);
	if (fa < 0 || fb < 0 || flock(fa, LOCK_EX) || fcntl(fb, F_SETLK, &fl))
		wl_die("take the locks");
	handshake();
	c = fork();
	if (c < 0)
		wl_die("fork");
	if (c == 0) {
		struct flock q = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 100};
		int ga = open(a, O_RDWR), gb = open(b, O_RDWR);

		if (ga < 0 || gb < 0)
			_exit(10);
		if (flock(ga, LOCK_EX | LOCK_NB) == 0 || errno != EWOULDBLOCK)
			_exit(11);
		if (fcntl(gb, F_GETLK, &q) || q.l_type != F_WRLCK || q.l_start != 10 || q.l_len != 10 ||
		    q.l_pid != getppid())
			_exit(12);
		_exit(0);
	}
	int rc = reap(c);
	CHECK(rc != 10, "cannot open the locked files again");
	CHECK(rc != 11, "the flock is gone: another process took it");
	CHECK(rc != 12, "the POSIX lock on [10, 20) is gone or changed");
	CHECK(rc == 0 || rc == 10 || rc == 11 || rc == 12, "the checking child exited %d", rc);
}

/* ---- mappings: shared anonymous (shared with a child), private anonymous, file-backed ------ */
#define MAP_BYTES (1u << 20)

static void fill(unsigned char *p, unsigned seed)
{
	for (unsigned i = 0; i < MAP_BYTES; i += 64)
		p[i] = (unsigned char)(i / 64 * 31 + seed);
}

static bool same(const unsigned char *p, unsigned seed)
{
	for (unsigned i = 0; i < MAP_BYTES; i += 64)
		if (p[i] != (unsigned char)(i / 64 * 31 + seed))
			return false;
	return true;
}

static void case_mmap(void)
{
	char path[300];
	unsigned char *shared, *priv, *fpriv, *fshared, disk[64];
	int f, go_child[2];
	pid_t c;

	dir_path(path, sizeof(path), "mapped.file");
	f = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (f < 0 || ftruncate(f, MAP_BYTES))
		wl_die("mapped file");
	shared = mmap(NULL, MAP_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	priv = mmap(NULL, MAP_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	fpriv = mmap(NULL, MAP_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE, f, 0);
	fshared = mmap(NULL, MAP_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
	if (shared == MAP_FAILED || priv == MAP_FAILED || fpriv == MAP_FAILED || fshared == MAP_FAILED ||
	    pipe(go_child))
		wl_die("mmap");
	fill(shared, 1);
	fill(priv, 2);
	fill(fshared, 4); /* the file's contents */
	fill(fpriv, 3);   /* the private copy over them */
	c = spawn();
	if (c == 0) { /* after the restore, writes into the shared mapping for the parent to see */
		close(go_child[1]);
		if (wait_byte(go_child[0]) != 'x')
			_exit(1);
		shared[5] = 0xee;
		_exit(same(priv, 2) ? 0 : 2); /* its own copy of the private mapping */
	}
	close(go_child[0]);
	handshake();
	CHECK(same(shared, 1), "the shared anonymous mapping changed");
	CHECK(same(priv, 2), "the private anonymous mapping changed");
	CHECK(same(fpriv, 3), "the private file mapping lost its private copy");
	CHECK(same(fshared, 4), "the shared file mapping changed");
	CHECK(pread(f, disk, 1, 64) == 1 && disk[0] == (unsigned char)(1 * 31 + 4),
	      "the file under the mappings changed");
	CHECK(write(go_child[1], "x", 1) == 1, "cannot wake the child");
	int rc = reap(c);
	CHECK(rc == 0, "the child (private copy check) exited %d", rc);
	CHECK(shared[5] == 0xee, "the anonymous mapping is no longer shared with the child");
}

/* ---- threads: three threads that keep counting -------------------------------------------- */
static atomic_ulong counters[3];

static void *count(void *arg)
{
	atomic_ulong *c = arg;

	for (;;) {
		atomic_fetch_add(c, 1);
		usleep(5000);
	}
	return NULL;
}

static void case_threads(void)
{
	pthread_t t[3];
	unsigned long before[3];
	int n = 0;

	for (int i = 0; i < 3; i++)
		if (pthread_create(&t[i], NULL, count, &counters[i]))
			wl_die("pthread_create");
	usleep(50000);
	handshake();
	for (int i = 0; i < 3; i++)
		before[i] = atomic_load(&counters[i]);
	usleep(300000);
	for (int i = 0; i < 3; i++)
		CHECK(atomic_load(&counters[i]) > before[i], "thread %d stopped counting", i);
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;

	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	CHECK(n == 4, "%d tasks in the thread group, not 4", n);
}

/* ---- tree: children, a grandchild, a zombie; parentage kept -------------------------------- */
static void case_tree(void)
{
	int pa[2], pc[2];
	pid_t a, c, z, me = getpid();

	if (pipe(pa) || pipe(pc))
		wl_die("pipe");
	z = fork(); /* not in pid.child: the runner's "alive" is false for a zombie */
	if (z < 0)
		wl_die("fork");
	if (z == 0)
		_exit(7); /* a zombie through the dump */
	a = spawn();
	if (a == 0) {
		pid_t mine = getpid(), b = fork();

		if (b < 0)
			_exit(20);
		if (b == 0) /* the grandchild: its parent is a */
			_exit(wait_byte(pa[0]) == 'x' && getppid() == mine ? 0 : 1);
		if (wait_byte(pa[0]) != 'x' || getppid() != me)
			_exit(2);
		int rb = reap(b);
		_exit(rb == 0 ? 0 : 10 + rb);
	}
	c = spawn();
	if (c == 0)
		_exit(wait_byte(pc[0]) == 'x' && getppid() == me ? 0 : 1);
	usleep(100000); /* the zombie is one */
	handshake();
	CHECK(write(pa[1], "xx", 2) == 2 && write(pc[1], "x", 1) == 1, "cannot wake the children");
	int ra = reap(a), rc = reap(c), rz = reap(z);
	CHECK(ra == 0, "child a (and its child) exited %d", ra);
	CHECK(rc == 0, "child c exited %d", rc);
	CHECK(rz == 7, "the zombie's status is %d, not 7", rz);
}

/* ---- cgroup: a child in a sub-cgroup of its own; both stay where they were ----------------- */
static void own_cgroup(char *out, size_t n)
{
	FILE *f = fopen("/proc/self/cgroup", "re");

	out[0] = '\0';
	if (!f || !fgets(out, (int)n, f))
		wl_die("/proc/self/cgroup");
	fclose(f);
}

static void case_cgroup(void)
{
	char mine[256], sub[512], procs[600], want_child[512];
	int p[2], fd;
	pid_t c;

	own_cgroup(mine, sizeof(mine));
	if (strncmp(mine, "0::", 3))
		wl_die("not on cgroup v2: %s", mine);
	mine[strcspn(mine, "\n")] = '\0';
	snprintf(sub, sizeof(sub), "/sys/fs/cgroup%s/plain-sub", mine + 3);
	if (mkdir(sub, 0755) && errno != EEXIST)
		wl_die("mkdir %s", sub);
	snprintf(want_child, sizeof(want_child), "%s/plain-sub\n", mine);
	if (pipe(p))
		wl_die("pipe");
	c = spawn();
	if (c == 0) {
		char now[256];

		if (wait_byte(p[0]) != 'x')
			_exit(1);
		own_cgroup(now, sizeof(now));
		_exit(strcmp(now, want_child) ? 3 : 0);
	}
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", sub);
	fd = open(procs, O_WRONLY);
	if (fd < 0 || dprintf(fd, "%d\n", (int)c) < 0)
		wl_die("move the child into %s", sub);
	close(fd);
	handshake();
	char now[256];

	own_cgroup(now, sizeof(now));
	now[strcspn(now, "\n")] = '\0';
	CHECK(!strcmp(now, mine), "the process is in %s, not %s", now, mine);
	CHECK(write(p[1], "x", 1) == 1, "cannot wake the child");
	int rc = reap(c);
	CHECK(rc == 0, "the child is no longer in its sub-cgroup (exit %d)", rc);
}

/* ---- ns: its own UTS and IPC namespaces, a hostname and a SysV shared memory segment ------- */
static void case_ns(void)
{
	char host[64];
	int id;
	char *seg;

	if (unshare(CLONE_NEWUTS | CLONE_NEWIPC) || sethostname("gw-plain", 8))
		wl_die("unshare");
	id = shmget(0x6770, 4096, IPC_CREAT | 0600);
	seg = id < 0 ? (char *)-1 : shmat(id, NULL, 0);
	if (seg == (char *)-1)
		wl_die("shm");
	strcpy(seg, "kept across the dump");
	handshake();
	CHECK(gethostname(host, sizeof(host)) == 0 && !strcmp(host, "gw-plain"), "the hostname is %s", host);
	CHECK(!strcmp(seg, "kept across the dump"), "the SysV segment changed");
	CHECK(shmget(0x6770, 0, 0) == id, "the SysV segment's key no longer names it");
}

static const struct {
	const char *name;
	void (*run)(void);
} cases[] = {
	{"pipe", case_pipe},     {"unix", case_unix},     {"inet", case_inet}, {"tty", case_tty},
	{"timers", case_timers}, {"locks", case_locks},   {"mmap", case_mmap}, {"threads", case_threads},
	{"tree", case_tree},     {"cgroup", case_cgroup}, {"ns", case_ns},
};

int main(int argc, char **argv)
{
	char res[600], name[64];

	wl_init(argc, argv);
	for (size_t i = 0; argc == 3 && i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (strcmp(argv[2], cases[i].name))
			continue;
		cases[i].run();
		snprintf(res, sizeof(res), fail_msg[0] ? "FAIL %s\n" : "PASS\n", fail_msg);
		snprintf(name, sizeof(name), "result.%d", (int)getpid());
		for (int c = 0; c < nchildren; c++)
			kill(children[c], SIGKILL); /* any still running: the case is over */
		wl_write_file(name, res);
		return 0;
	}
	fprintf(stderr, "usage: wl_plain DIR CASE (");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		fprintf(stderr, "%s%s", i ? " " : "", cases[i].name);
	fprintf(stderr, ")\n");
	return 2;
}
