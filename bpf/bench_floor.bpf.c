// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Benchmark controls, not part of gpuwatch, on drm_ioctl, the function gpuwatch's ioctl hook
 * group traces. Loaded by vmtests/bench/bench_floor.c (one of two sets):
 *   empty:  an empty fentry and an empty fexit program: what the BPF trampoline alone costs
 *           every DRM ioctl, the floor under anything attached there;
 *   record: an fexit program alone (gpuwatch's shape) that writes one ring-buffer record of
 *           the size of gpuwatch's fexit ioctl record (struct gw_ev_ioctl_after, 120 bytes) with
 *           the argument read back from user memory, for every DRM ioctl, drained by
 *           bench_floor: the floor of any tracer that records each ioctl's result, without
 *           gpuwatch's filters, its entry-to-exit join or its decoding.
 *   follow: the same record, written only for what gpuwatch's design must look at before it:
 *           gpuwatch's own followed test (the current task in one cgroup, bench_floor's
 *           gw_cgroup slot 0, and neither the tracer nor its children), its DRM file test and
 *           the syscall's fd (fexit.bpf.h), in the record. The floor of a tracer that follows
 *           one container's DRM fds, without gpuwatch's ioctl filter, decoding or wakeup policy.
 */
#include "fexit.bpf.h" /* gw_followed_task, gw_is_drm_file_btf, gw_ioctl_syscall_fd */
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("fentry/drm_ioctl")
int BPF_PROG(floor_fentry, struct file *filp, unsigned int cmd, unsigned long arg)
{
	return 0;
}

SEC("fexit/drm_ioctl")
int BPF_PROG(floor_fexit, struct file *filp, unsigned int cmd, unsigned long arg, long ret)
{
	return 0;
}

struct floor_rec { /* the size and layout class of struct gw_ev_ioctl_after */
	__u64 hdr[sizeof(struct gw_hdr) / 8];
	__u64 file, aux_file;
	__u32 cmd;
	__s32 ret;
	__u32 arg_size;
	__s32 fd;
	__u8 arg[GW_IOCTL_ARG_MAX];
};
_Static_assert(sizeof(struct floor_rec) == sizeof(struct gw_ev_ioctl_after),
	       "a record of the size of gpuwatch's fexit ioctl record");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} floor_ring SEC(".maps");

static __always_inline int floor_record(struct file *filp, unsigned int cmd, unsigned long arg, long ret, int fd)
{
	__u32 size = GW_IOC_SIZE(cmd);
	struct floor_rec *r = bpf_ringbuf_reserve(&floor_ring, sizeof(*r), 0);

	if (!r)
		return 0;
	if (size > GW_IOCTL_ARG_MAX)
		size = GW_IOCTL_ARG_MAX;
	/* every field written, the argument's bytes alone of arg[] (as gpuwatch's record) */
	r->hdr[0] = r->hdr[1] = r->hdr[2] = 0;
	r->file = (__u64)filp;
	r->aux_file = 0;
	r->cmd = cmd;
	r->ret = ret;
	r->arg_size = size;
	r->fd = fd;
	if (size && bpf_probe_read_user(r->arg, size, (void *)arg)) {
		bpf_ringbuf_discard(r, 0);
		return 0;
	}
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("fexit/drm_ioctl")
int BPF_PROG(floor_record_fexit, struct file *filp, unsigned int cmd, unsigned long arg, long ret)
{
	return floor_record(filp, cmd, arg, ret, -1);
}

SEC("fexit/drm_ioctl")
int BPF_PROG(floor_follow_fexit, struct file *filp, unsigned int cmd, unsigned long arg, long ret)
{
	struct task_struct *t = gw_followed_task();

	if (!t || ret < 0 || !gw_is_drm_file_btf(filp))
		return 0;
	return floor_record(filp, cmd, arg, ret, gw_ioctl_syscall_fd(t));
}
