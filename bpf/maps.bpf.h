/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Maps, knobs and counters shared by every gpuwatch program.
 *
 * How the tables join: a syscall's entry stores what only the entry can see (its
 * arguments, the ioctl argument as passed in, the struct file behind the fd) in `pending`,
 * keyed by thread; the exit takes it back out and, if the syscall succeeded, emits one
 * record into `events` carrying both. Records name DRM state by the struct file pointer,
 * never by (pid, fd); userspace keeps the (pid, fd) -> file table.
 */
#ifndef GPUWATCH_MAPS_BPF_H
#define GPUWATCH_MAPS_BPF_H

#include "kernel_types.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "gpuwatch.h"

/* knobs, set by userspace between open and load */
const volatile __u32 gw_self_tgid = 0;         /* never trace the daemon itself */
const volatile __u64 gw_ioctl_nr_mask[4] = {}; /* core DRM ioctl nrs (0..255) that change state */
/* per enum gw_driver: its drm_driver.name (zero-padded, little-endian words) and the
 * private ioctl nrs (0x40-0x9f, bit nr - 0x40) the decoder knows for it */
const volatile __u64 gw_drv_names[GW_DRV_MAX][2] = {};
const volatile __u64 gw_drv_nr_mask[GW_DRV_MAX][2] = {};
/* ioctls the decoder does not know and that may change a file's state (neither decoded nor
 * a known query): their success alone is recorded (gw_ev_ioctl.undecoded), so the manifest
 * can say which state it did not see. Core nrs, and private nrs per driver (index
 * GW_DRV_OTHER: drivers without a table) */
const volatile __u64 gw_ioctl_note_mask[4] = {};
const volatile __u64 gw_drv_note_mask[GW_DRV_MAX][2] = {};
const volatile bool gw_debug = false;
/* hook groups served by fentry/fexit programs (fexit.bpf.h): their tracepoint twins skip them */
const volatile bool gw_ioctl_fexit = false;   /* DRM ioctls: fentry/fexit on drm_ioctl */
const volatile bool gw_cloexec_fexit = false; /* FIOCLEX, FIONCLEX, F_SETFD: fexit on set_close_on_exec */
/* a record wakes the daemon only when it asked for it (gw_wake_armed, set before it sleeps)
 * or when this many bytes wait in the ring (asked every gw_ring_step bytes): a busy daemon
 * drains in batches, so a burst of records costs the traced task no wakeup per record (see
 * gw_submit) */
const volatile __u64 gw_wake_bytes = 1 << 20;
/* the bytes waiting are asked once per this many written (a power of two: 4096, less for a
 * ring under 16 KiB, so that it stays under gw_wake_bytes; see gw_submit) */
const volatile __u64 gw_ring_step = 4096;
__u32 gw_wake_armed = 0;

/* counters, read by userspace (see struct gw_counters) */
struct gw_counters gw_counters = {};

/* the followed cgroup (slot 0); bpf_current_task_under_cgroup covers its descendants */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u32);
} gw_cgroup SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20); /* userspace may resize before load */
} gw_events SEC(".maps");

enum gw_sc {
	GW_SC_CLOSE_RANGE = 1,
	GW_SC_DUP2,
	GW_SC_FCNTL,
	GW_SC_IOCTL,
	GW_SC_FDFLAGS_IOCTL,
	GW_SC_MMAP,
	GW_SC_MUNMAP,
	GW_SC_MREMAP,
};

struct gw_pending {
	u32 sc;   /* enum gw_sc */
	u32 note; /* GW_SC_IOCTL: GW_IOCTL_NOTE, only the ioctl's success is recorded */
	u64 args[6];
	u64 file; /* the struct file behind the fd argument, if it matters */
	u64 aux_file;
	u8 in[GW_IOCTL_ARG_MAX];
};

/* a thread's syscall in flight: what its entry read, for its exit (sc 0: none). The thread's
 * own storage, not a map keyed by tid: no hash, lock or element allocation on the path of
 * every followed DRM ioctl, and nothing to delete when the thread exits. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct gw_pending);
} gw_pending_map SEC(".maps");

/* tgids that hold (or held) a DRM mapping: only their munmap/mremap/MAP_FIXED are reported */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, u32);
	__type(value, u8);
} gw_has_maps SEC(".maps");

/* tgids the snapshot iterators report (filled by userspace before each snapshot) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, u32);
	__type(value, u8);
} gw_snap_pids SEC(".maps");

/* the scratch for a pending record (too large for the 512-byte stack with the rest): the
 * thread's own (task storage), not the CPU's. fentry/fexit and syscall-tracepoint programs run
 * migrate-disabled but preemptible on preemptible kernels, and they call helpers while they
 * fill it: a per-CPU scratch could be overwritten by another task's program on the same CPU
 * in the middle. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct gw_pending);
} gw_scratch SEC(".maps");

#define GW_COUNT(field) __sync_fetch_and_add(&gw_counters.field, 1)

/* the current task when it is followed, else NULL. One task pointer, read with plain loads:
 * the ioctl fast path takes the record's ids and the syscall's registers from it too (every
 * helper call is a kernel call on every traced DRM ioctl). */
static __always_inline struct task_struct *gw_followed_task(void)
{
	struct task_struct *t = bpf_get_current_task_btf();

	if (t->tgid == gw_self_tgid || bpf_current_task_under_cgroup(&gw_cgroup, 0) != 1)
		return NULL;
	/* nor the daemon's children (its background manifest writer), should it run inside the
	 * cgroup it follows: their syscalls would change the model and start another writer */
	return t->real_parent->tgid != gw_self_tgid ? t : NULL;
}

static __always_inline bool gw_followed(void)
{
	return gw_followed_task() != NULL;
}

/* a record of task t (the current task) */
static __always_inline void *gw_reserve_from(struct task_struct *t, u32 size, u16 kind, u8 hook)
{
	struct gw_hdr *h = bpf_ringbuf_reserve(&gw_events, size, 0);
	if (!h) {
		GW_COUNT(lost_events);
		return NULL;
	}
	h->kind = kind;
	h->size = size;
	h->hook = hook;
	h->pad0[0] = h->pad0[1] = h->pad0[2] = 0;
	h->tgid = t->tgid;
	h->tid = t->pid;
	h->reserved = 0;
	return h;
}

static __always_inline void *gw_reserve(u32 size, u16 kind, u8 hook)
{
	return gw_reserve_from(bpf_get_current_task_btf(), size, kind, hook);
}

/* gw_ring_step_crossed_at (gpuwatch.h) for a record just reserved. The ring's data pages are
 * one contiguous mapping (mapped twice over, so a record never wraps) whose size is a multiple
 * of the step, and records follow one another in it: a record's address less any fixed address
 * (a global's) is its place in the stream modulo the step, shifted by a constant. (A pointer
 * less a pointer is a scalar for a program loaded with CAP_PERFMON or CAP_SYS_ADMIN, as the
 * daemon's are.) */
static __always_inline bool gw_ring_step_crossed(const struct gw_hdr *rec)
{
	return gw_ring_step_crossed_at((u64)rec - (u64)&gw_wake_armed, rec->size, gw_ring_step);
}

/* bpf_ringbuf_submit with the wakeup policy above: the first record after the daemon armed
 * the flag wakes it (two CPUs racing for the flag both wake it: harmless). The bytes waiting
 * are asked once per gw_ring_step bytes written, not per record: the query reads the ring's
 * producer and consumer positions, each on a page of its own (about 0.6 us of each traced DRM
 * ioctl in one measurement under TCG: docs/benchmarks.md), and the threshold is a quarter of
 * the ring. */
static __always_inline void gw_submit(void *rec)
{
	u64 flags = BPF_RB_NO_WAKEUP;
	if (gw_wake_armed) {
		gw_wake_armed = 0;
		flags = BPF_RB_FORCE_WAKEUP;
	} else if (gw_ring_step_crossed(rec) && bpf_ringbuf_query(&gw_events, BPF_RB_AVAIL_DATA) >= gw_wake_bytes) {
		flags = BPF_RB_FORCE_WAKEUP;
	}
	bpf_ringbuf_submit(rec, flags);
}

#define GW_RESERVE(type, kind, hook)         ((type *)gw_reserve(sizeof(type), kind, hook))
#define GW_RESERVE_FROM(t, type, kind, hook) ((type *)gw_reserve_from(t, sizeof(type), kind, hook))

#endif
