// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A benchmark control, not part of gpuwatch: an empty fentry and an empty fexit program on
 * drm_ioctl, the function gpuwatch's ioctl hook group traces. Loaded by
 * vmtests/bench/bench_floor.c, it measures what the BPF trampoline alone costs every DRM
 * ioctl, the floor under anything a program attached there can cost.
 */
#include "kernel_types.h"
#include <bpf/bpf_helpers.h>
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
