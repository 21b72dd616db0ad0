// Feature probing for the fexit path: per hook group, whether the kernel function exists in
// the kernel's BTF with the expected parameters, and whether the group's fentry/fexit
// programs load and attach (Tracer::try_fexit). Never keyed on the kernel version.
#pragma once

#include <string>

#include "hook_paths.hpp"

namespace gw
{

// Probes each group once per process (later calls return the cached result).
const FexitProbes &probe_fexit();
// Only the BTF half of probe_fexit (cheap: no program loaded): ok where the kernel has the
// target function with the parameters the programs read. What Tracer assumes first.
FexitProbes fexit_targets_present();

// "" when t.function is in the kernel's BTF (vmlinux, or t.module's) with the parameters
// gpuwatch's programs read; else why not ("drm_ioctl not found in kernel BTF: drm module not loaded").
std::string find_fexit_target(const FexitTarget &t);

// What `gpuwatch check` reports besides the hooks.
struct KernelInfo {
	std::string release; // uname -r
	bool btf = false;    // /sys/kernel/btf/vmlinux
	bool drm_loaded = false;
	std::string drm; // "loaded, with BTF", "not loaded", ...
};
KernelInfo kernel_info();

} // namespace gw
