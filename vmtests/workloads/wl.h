/* SPDX-License-Identifier: MIT */
/*
 * Workload library of the VM suite: every DRM operation a workload performs goes through a
 * wl_* wrapper that does the real syscall/ioctl and records what the kernel answered in a
 * small model of this process's DRM state (its fds, its mappings, and the files it knows
 * with their GEM handles). At the end of a phase the model is written as the ground truth
 * JSON that vmtests/check_manifest.py compares with gpuwatch's manifest.
 *
 * File identity: each open() gets a label "<pid>.<n>" that fork children inherit with the
 * model; dup/fork share the label, a second open gets a new one. Handle tables belong to
 * files, which several processes may share: after a fork, only one process may change a
 * shared file's handles (the checker keeps the record with the newest "changed_ns").
 *
 * Every wrapper dies (exit 2, message on stderr) when the kernel refuses: a workload that
 * could not do what it meant to is a broken test, not a gpuwatch failure.
 *
 * Phase protocol with the runner (vmtests/guest/): a workload is run as `wl_x DIR [args]`.
 * wl_phase(n) writes DIR/truth.<n>.<pid>.json; in a forked child it then creates
 * DIR/cready.<n>.<pid>; the main process waits for the cready files of its live children,
 * creates DIR/ready.<n>, and every process waits for DIR/go.<n> before going on. wl_sync(n)
 * is the same without the truth (a workload that checks itself instead of being compared
 * with a model: wl_criu_scratch).
 */
#ifndef WL_H
#define WL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define WL_MAX_FILES    16
#define WL_MAX_HANDLES  64
#define WL_MAX_FDS      64
#define WL_MAX_MAPS     64
#define WL_MAX_CHILDREN 8

/* the DRM nodes the workloads open: vgem's (card0, renderD128) unless the harness names
 * another driver's in the environment (WL_CARD, WL_RENDER: guest/kms.sh, sc_on_driver); a
 * driver without a render node gives its card node for both */
const char *wl_card(void);
const char *wl_render(void);
#define WL_CARD   wl_card()
#define WL_RENDER wl_render()

struct wl_handle {
	uint32_t handle;
	uint64_t size;
	char origin[32]; /* "dumb", "prime", "flink", "virtio_gpu.resource_create", ... */
};

struct wl_grant { /* an mmap offset granted to a file by MODE_MAP_DUMB */
	uint64_t offset;
	uint32_t handle;
};

struct wl_file {
	char label[24];
	char path[64];
	unsigned maj, min;
	char flags[48];      /* "O_RDWR", "O_RDONLY|O_NONBLOCK", ... */
	char driver[32];     /* DRM_IOCTL_VERSION name */
	bool handles_known;  /* false: opened before gpuwatch attached (see --preexisting) */
	uint64_t changed_ns; /* CLOCK_MONOTONIC of the last handle change */
	int nhandles;
	struct wl_handle handles[WL_MAX_HANDLES];
	int ngrants;
	struct wl_grant grants[WL_MAX_HANDLES];
	int nundecoded;
	char undecoded[4][32]; /* ioctls gpuwatch does not decode that succeeded (its names) */
	int nfbs;
	struct wl_fb {
		uint32_t id, width, height, handle; /* ADDFB: one plane */
	} fbs[4];
	int ncrtcs;
	struct wl_crtc { /* MODE_SETCRTC with a mode: the manifest's "display" */
		uint32_t crtc, fb, hdisplay, vdisplay, connectors;
	} crtcs[2];
};

enum wl_fd_kind {
	WL_FD_DRM = 1,
	WL_FD_DMABUF = 2
};

struct wl_fd {
	int fd;
	int kind;        /* enum wl_fd_kind */
	int file;        /* index in wl.files: the DRM file, or the exporter of a dma-buf */
	uint32_t handle; /* dma-buf: the exported handle in the exporter */
	bool cloexec;
};

struct wl_map {
	uint64_t start, length;
	int prot; /* PROT_* */
	bool shared;
	int file;        /* index in wl.files */
	uint64_t offset; /* byte offset in the file (fake offset + delta) */
	int64_t handle;  /* -1: no handle of the file names the buffer (null) */
};

struct wl_state {
	char dir[200];
	char exe[256];    /* this program, for wl_exec_self */
	bool is_child;    /* forked by wl_fork */
	bool selfcheck;   /* WL_SELFCHECK=1: probe every handle before writing the truth */
	uint64_t fork_ns; /* in a forked child: when it was forked */
	int nextlabel;
	int nfiles;
	struct wl_file files[WL_MAX_FILES];
	int nfds;
	struct wl_fd fds[WL_MAX_FDS];
	int nmaps;
	struct wl_map maps[WL_MAX_MAPS];
	int nchildren;
	pid_t children[WL_MAX_CHILDREN];
};

extern struct wl_state wl;

/* wl_util.c */
void wl_die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
uint64_t wl_now_ns(void);
void wl_init(int argc, char **argv);                    /* argv[1] = DIR; sets up wl */
void wl_write_file(const char *name, const char *text); /* DIR/name whole (a tmp file renamed) or dies */

/* wl_model.c: model bookkeeping (no syscalls) */
struct wl_file *wl_file_of_fd(int fd);
struct wl_fd *wl_fd_find(int fd);
struct wl_handle *wl_handle_find(struct wl_file *f, uint32_t handle);
void wl_handle_add(struct wl_file *f, uint32_t handle, uint64_t size, const char *origin);
void wl_handle_remove(struct wl_file *f, uint32_t handle);
void wl_fd_add(int fd, int kind, int file, uint32_t handle, bool cloexec);
void wl_fd_remove(int fd);
void wl_maps_cut(uint64_t start, uint64_t length); /* munmap semantics on the model */

/* wl_fdops.c: fds */
int wl_open(const char *path, int oflags);
int wl_dup(int fd);                            /* dup() */
int wl_dupfd(int fd, int minfd, bool cloexec); /* fcntl(F_DUPFD / F_DUPFD_CLOEXEC) */
int wl_dup3(int fd, int newfd, bool cloexec);  /* dup2() or dup3(O_CLOEXEC) */
void wl_close(int fd);
void wl_close_range(unsigned first, unsigned last, bool cloexec_only);
void wl_set_cloexec(int fd, bool on);   /* fcntl(F_SETFD) */
void wl_ioctl_cloexec(int fd, bool on); /* ioctl(FIOCLEX / FIONCLEX) */

/* wl_gem.c: GEM handles and PRIME */
uint32_t wl_create_dumb(int fd, uint32_t width, uint32_t height, uint32_t bpp);
/* the same, or 0 when the driver refuses the parameters (EINVAL: virtio_gpu takes 32 bpp only) */
uint32_t wl_try_create_dumb(int fd, uint32_t width, uint32_t height, uint32_t bpp);
void wl_destroy_dumb(int fd, uint32_t handle);
void wl_gem_close(int fd, uint32_t handle);
uint32_t wl_flink(int fd, uint32_t handle);
uint32_t wl_gem_open(int fd, uint32_t name);
/* GET_CAP(PRIME) gives import and export (bochs-drm on 6.1 has neither: the workloads then
 * leave their dma-buf parts out) */
bool wl_has_prime(int fd);
int wl_export(int fd, uint32_t handle, bool cloexec);
/* vgem's own FENCE_ATTACH then FENCE_SIGNAL on handle: driver-private ioctls gpuwatch does not
 * decode ("vgem ioctl 0x01", "vgem ioctl 0x02" in the file's undecoded_ioctls) */
void wl_vgem_fence(int fd, uint32_t handle);
int wl_vgem_fence_raw(int fd, uint32_t handle);   /* the same without the model: 0 or -errno */
void wl_note_undecoded(int fd, const char *name); /* an ioctl gpuwatch does not decode succeeded */
/* MODE_SETCRTC succeeded: CRTC crtc shows fb in a hdisplay x vdisplay mode on `connectors` */
void wl_note_crtc(int fd, uint32_t crtc, uint32_t fb, uint32_t hdisplay, uint32_t vdisplay, uint32_t connectors);
uint32_t wl_addfb(int fd, uint32_t width, uint32_t height, uint32_t handle); /* MODE_ADDFB, XRGB8888 */
uint32_t wl_import(int fd, int dmabuf_fd);
int wl_probe_handle(int fd, uint32_t handle, uint64_t *size); /* 0 or -errno, see selfcheck */
void wl_driver_name(int fd, char *buf, size_t len);           /* DRM_IOCTL_VERSION */

/* wl_mmap.c: mappings of DRM files */
uint64_t wl_map_offset(int fd, uint32_t handle);
void *wl_mmap(int fd, uint32_t handle, uint64_t length, int prot);
void wl_munmap(void *addr, uint64_t length);
void *wl_mremap(void *old, uint64_t old_len, uint64_t new_len, int flags, void *new_addr);
void *wl_reserve(uint64_t length); /* an anonymous PROT_NONE range, for MREMAP_FIXED */

/* wl_truth.c */
void wl_write_truth(int phase);
void wl_selfcheck(void); /* probes handles; dies on a model mismatch */

/* wl_phase.c */
void wl_phase(int phase);                                         /* truth, then wl_sync */
void wl_sync(int phase, void (*idle)(void));                      /* ready, wait for go (idle at each poll) */
pid_t wl_fork(void);                                              /* like fork(); the parent tracks the child */
void wl_reap(pid_t pid);                                          /* waitpid, dies unless it exited 0 */
int wl_finish(void);                                              /* reaps all children; returns the exit status */
void wl_exec_self(char *const extra[]) __attribute__((noreturn)); /* saves the model, execs itself */
bool wl_after_exec(int argc, char **argv);                        /* true (and model restored) after wl_exec_self */

#endif
