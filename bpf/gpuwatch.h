/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * gpuwatch event ABI: the records the BPF programs write into the ring buffer
 * (and the snapshot iterators write into their seq files), read by user/.
 *
 * Plain C, fixed-width types, explicit padding. Every record starts with
 * struct gw_hdr whose `kind` selects the record type and whose `size` is the
 * record's size in bytes; userspace checks both before it reads anything else.
 * user/event_abi.hpp static_asserts every size below.
 */
#ifndef GPUWATCH_ABI_H
#define GPUWATCH_ABI_H

#ifndef __BPF__
#include <linux/types.h>
#endif

#define GW_DRM_MAJOR     226
#define GW_DMA_BUF_MAGIC 0x444d4142 /* "DMAB", include/uapi/linux/magic.h */
#define GW_IOCTL_ARG_MAX 64         /* bytes of an ioctl argument captured */
#define GW_NAME_LEN      16         /* driver name, comm */
#define GW_EXT_NODES_MAX 8          /* extension-chain nodes captured per ioctl */
#define GW_EXT_NODE_SIZE 64         /* bytes captured of each node */
#define GW_EXT_BLOBS_MAX 2          /* arrays behind pointers captured per ioctl */
#define GW_EXT_BLOB_SIZE 1024       /* bytes captured of each (12 xe bind ops); a power of two */

enum gw_kind {
	GW_EV_FD = 1,      /* an fd now refers to a DRM or dma-buf file (open, dup, fcntl, cloexec change, snapshot) */
	GW_EV_CLOSE,       /* an fd referring to a DRM or dma-buf file is being closed */
	GW_EV_CLOSE_RANGE, /* close_range() succeeded: userspace applies it to the fds it knows */
	GW_EV_IOCTL,       /* a state-changing DRM ioctl succeeded */
	GW_EV_MMAP,        /* a mapping of a DRM file was created (or found by the snapshot) */
	GW_EV_MUNMAP, /* a range was unmapped, or replaced by a MAP_FIXED mapping, in a process with DRM mappings */
	GW_EV_MREMAP, /* a range was moved/resized in a process with DRM mappings */
	GW_EV_FORK,   /* a new process (not a thread) was forked */
	GW_EV_EXEC,   /* a process exec'd: mappings and close-on-exec fds are gone */
	GW_EV_EXIT,   /* the last thread of a process exited */
	GW_EV_CGROUP_MOVE, /* a process was moved into some cgroup (dst_cgid); userspace decides */
	GW_EV_IOCTL_EXT,   /* user memory an ioctl's argument points to; precedes its GW_EV_IOCTL */
	GW_EV_IOCTL_AFTER, /* a GW_EV_IOCTL whose argument was read once, after the call: in[] == out[] */
	GW_EV_KIND_MAX,
};

/* how a GW_EV_FD came to be */
enum gw_fd_source {
	GW_FD_OPEN = 1, /* open/openat/openat2 */
	GW_FD_DUP,      /* dup/dup2/dup3/fcntl(F_DUPFD*) */
	GW_FD_FLAGS,    /* fcntl(F_SETFD) or ioctl(FIOCLEX/FIONCLEX): only cloexec changed */
	GW_FD_SNAPSHOT, /* found by the attach-time snapshot (BPF task_file iterator) */
};

enum gw_file_type {
	GW_FILE_DRM = 1,    /* character device, major 226 */
	GW_FILE_DMABUF = 2, /* dma-buf (superblock magic DMA_BUF_MAGIC) */
	GW_FILE_SYNC = 3,   /* anon_inode:sync_file (an out-fence, e.g. i915 EXECBUFFER2_WR) */
	GW_FILE_PERF = 4,   /* anon_inode:[i915_perf] (i915 PERF_OPEN) */
};

/* drivers whose private ioctls (nr 0x40-0x9f) the tracer records; their names are
 * filled into rodata by userspace, in this order, from its decoder tables */
enum gw_driver {
	GW_DRV_OTHER = 0,
	GW_DRV_I915 = 1,
	GW_DRV_XE = 2,
	GW_DRV_VIRTIO_GPU = 3,
	GW_DRV_MAX,
};

/* how a mapping reaches its DRM file */
enum gw_map_via {
	GW_VIA_FILE = 0,       /* the VMA's file is the DRM file (most drivers, xe) */
	GW_VIA_I915_ANON = 1,  /* anon_inode:i915.gem: i915 swapped the VMA's file; `dev` names the device */
	GW_VIA_I915_SHMEM = 2, /* a GEM object's shmem file "i915" (legacy GEM_MMAP), found by the snapshot */
};

/* which hook produced an event (for `gpuwatch check` and tests) */
enum gw_hook {
	GW_HOOK_TRACEPOINT = 1,
	GW_HOOK_FEXIT = 2,
	GW_HOOK_ITER = 3,
};

struct gw_hdr {
	__u16 kind; /* enum gw_kind */
	__u16 size; /* sizeof the whole record */
	__u8 hook;  /* enum gw_hook */
	__u8 pad0[3];
	__u32 tgid;     /* process */
	__u32 tid;      /* thread */
	__u64 reserved; /* 0. (It held bpf_ktime_get_ns(), which nothing read: in a guest whose
			 * clocksource is the HPET that read cost each record 2 us.) */
};                      /* 24 bytes */

struct gw_ev_fd {
	struct gw_hdr hdr;
	__u64 file; /* struct file * : the identity of the open file */
	__s32 fd;
	__u32 f_flags; /* file->f_flags (O_ACCMODE, O_NONBLOCK, ...) */
	__u32 major;
	__u32 minor;
	__u8 type;    /* enum gw_file_type */
	__u8 source;  /* enum gw_fd_source */
	__u8 cloexec; /* close-on-exec bit of this fd */
	__u8 pad0[5];
	char driver[GW_NAME_LEN]; /* drm_file->minor->dev->driver->name, "" if unknown or dma-buf */
	__u64 dev;                /* struct drm_device * of a DRM file (0 if unknown): joins i915.gem mappings */
};                                /* 80 bytes */

struct gw_ev_close {
	struct gw_hdr hdr;
	__u64 file;
	__s32 fd;
	__u32 pad0;
}; /* 40 bytes */

struct gw_ev_close_range {
	struct gw_hdr hdr;
	__u32 first;
	__u32 last;
	__u32 flags; /* CLOSE_RANGE_CLOEXEC: set cloexec instead of closing */
	__u32 pad0;
}; /* 40 bytes */

struct gw_ev_ioctl {
	struct gw_hdr hdr;
	__u64 file;     /* the DRM file the ioctl was issued on */
	__u64 aux_file; /* PRIME_FD_TO_HANDLE: the dma-buf imported; PRIME_HANDLE_TO_FD: the dma-buf created */
	__u32 cmd;      /* full ioctl command (dir, size, type 'd', nr) */
	__s32 fd;
	__u16 arg_size;             /* bytes valid in in[] and out[]: min(_IOC_SIZE(cmd), GW_IOCTL_ARG_MAX) */
	__u8 drv;                   /* enum gw_driver of the file, for nr 0x40-0x9f */
	__u8 undecoded;             /* 1: an ioctl the decoder does not know succeeded; no argument read (arg_size 0) */
	__s32 ret;                  /* the ioctl's return value (0, or a new fd for i915 PERF_OPEN) */
	__u8 in[GW_IOCTL_ARG_MAX];  /* the argument as read at syscall entry (tracepoint path) or exit (fexit) */
	__u8 out[GW_IOCTL_ARG_MAX]; /* the argument as read at syscall exit */
};                                  /* 184 bytes */

/* The fexit path's ioctl record: it reads the argument once, after the call (bpf/fexit.bpf.h),
 * so in[] and out[] would hold the same bytes. It carries them once: a gw_ev_ioctl up to in[]
 * (the same fields at the same offsets), 64 bytes shorter, which userspace reads as the
 * gw_ev_ioctl with out[] = in[] (gw::abi::read_ioctl). */
struct gw_ev_ioctl_after {
	struct gw_hdr hdr;
	__u64 file;
	__u64 aux_file;
	__u32 cmd;
	__s32 fd;
	__u16 arg_size;
	__u8 drv;
	__u8 undecoded;
	__s32 ret;
	__u8 in[GW_IOCTL_ARG_MAX]; /* the argument as read after the call: in[] and out[] of a gw_ev_ioctl */
};                                 /* 120 bytes */

/* prot bits as PROT_READ/WRITE/EXEC; shared = MAP_SHARED / VM_SHARED */
struct gw_ev_mmap {
	struct gw_hdr hdr;
	__u64 file; /* the DRM file mapped */
	__u64 start;
	__u64 length;
	__u64 offset; /* byte offset into the file (the fake offset for GEM) */
	__s32 fd;     /* -1 for snapshot records */
	__u32 prot;
	__u32 flags; /* mmap flags as passed (0 for snapshot records) */
	__u8 shared;
	__u8 via; /* enum gw_map_via */
	__u8 pad0[2];
	__u64 dev; /* GW_VIA_I915_ANON: the struct drm_device *; file is 0 then */
};                 /* 80 bytes */

struct gw_ev_munmap {
	struct gw_hdr hdr;
	__u64 start;
	__u64 length;
}; /* 40 bytes */

struct gw_ev_mremap {
	struct gw_hdr hdr;
	__u64 old_start;
	__u64 old_length;
	__u64 new_start; /* result of mremap */
	__u64 new_length;
	__u32 flags;
	__u32 pad0;
}; /* 64 bytes */

struct gw_ev_fork {
	struct gw_hdr hdr; /* hdr.tgid is the parent */
	__u32 child_tgid;
	__u32 pad0;
}; /* 32 bytes */

struct gw_ev_exec {
	struct gw_hdr hdr;
	char comm[GW_NAME_LEN];
}; /* 40 bytes */

struct gw_ev_exit {
	struct gw_hdr hdr;
}; /* 24 bytes */

struct gw_ev_cgroup_move {
	struct gw_hdr hdr;
	__u64 dst_cgid; /* kernfs id of the destination cgroup (== its directory's inode number) */
	__u8 threadgroup;
	__u8 pad0[7];
}; /* 40 bytes */

/*
 * User memory behind an ioctl argument, read at the ioctl's successful exit: the extension
 * chain (i915_user_extension / drm_xe_user_extension: each node starts with the u64 address
 * of the next) and up to two arrays the argument or a node points to (i915 memory regions,
 * a context parameter's value, xe exec-queue placements, xe bind ops). Emitted just before
 * the GW_EV_IOCTL record of the same thread, which it belongs to.
 */
struct gw_ext_node {
	__u64 uaddr; /* where the node was read */
	__u8 data[GW_EXT_NODE_SIZE];
}; /* 72 bytes */

struct gw_ext_blob {
	__u64 uaddr;
	__u32 len;   /* bytes valid in data */
	__u16 owner; /* index of the node it hangs off, GW_EXT_OWNER_ARG for the argument */
	__u16 pad0;
	__u8 data[GW_EXT_BLOB_SIZE];
}; /* 1040 bytes */
#define GW_EXT_OWNER_ARG 0xffff

struct gw_ev_ioctl_ext {
	struct gw_hdr hdr;
	__u64 file;
	__u32 cmd;
	__u8 n_nodes;
	__u8 n_blobs;
	__u8 truncated; /* a chain longer than GW_EXT_NODES_MAX, an array larger than a blob, or a failed read */
	__u8 pad0;
	struct gw_ext_node nodes[GW_EXT_NODES_MAX];
	struct gw_ext_blob blobs[GW_EXT_BLOBS_MAX];
}; /* 2696 bytes */

/* kernel-side counters, in the object's .bss, read by userspace */
/* The ring's wakeup policy asks how many bytes wait once per `step` bytes written (a power of
 * two), not once per record (bpf/maps.bpf.h, gw_submit): on the one record that reaches or
 * crosses a multiple of `step` in the stream of records. at: where the record's data starts,
 * modulo step (or shifted by any constant the stream shares); size: its gw_hdr.size. The
 * kernel puts an 8-byte header before each record and rounds each to 8 bytes. */
#define GW_RINGBUF_HDR_SZ 8
static inline int gw_ring_step_crossed_at(__u64 at, __u32 size, __u64 step)
{
	__u64 start = (at - GW_RINGBUF_HDR_SZ) & (step - 1);
	__u64 len = ((size + 7) & ~7U) + GW_RINGBUF_HDR_SZ;

	return start + len >= step;
}

struct gw_counters {
	__u64 lost_events;  /* ring buffer full: bpf_ringbuf_reserve failed */
	__u64 failed_reads; /* bpf_probe_read_* of an argument or kernel struct failed */
	__u64 pending_full; /* syscall-entry state could not be stored (no task storage for it, or no scratch) */
};

#endif /* GPUWATCH_ABI_H */
