// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A test policy, not part of gpuwatch: a cgroup device program of the kind container runtimes
 * install, which refuses every access (open, mknod) to the character devices of one major and
 * allows everything else. vmtests/workloads/gw_devdeny.c attaches it for the VM scenario
 * criu_devdeny, a restore into a container whose device policy denies its DRM device.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 deny_major = 226;

SEC("cgroup/dev")
int deny_one_major(struct bpf_cgroup_dev_ctx *ctx)
{
	/* access_type: (BPF_DEVCG_ACC_* << 16) | BPF_DEVCG_DEV_*; 0 refuses, 1 allows */
	if ((ctx->access_type & 0xffff) == BPF_DEVCG_DEV_CHAR && ctx->major == deny_major)
		return 0;
	return 1;
}
