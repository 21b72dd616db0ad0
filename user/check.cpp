#include "check.hpp"

#include <cstdio>
#include <iostream>

#include "daemon.hpp"
#include "hook_path_probe.hpp"
#include "sysutil.hpp"
#include "tracer.hpp"

namespace gw
{

int run_check(const CheckOptions &opts)
{
	require_root("gpuwatch check");
	require_kernel_btf();
	ensure_tracefs();
	KernelInfo k = kernel_info();

	Tracer::Options topts;
	topts.cgroup_fd = -1; /* follows nothing */
	set_decoded_ioctls(topts);
	topts.verbose = opts.verbose;
	topts.hooks = opts.hooks;
	Tracer t(topts, [](std::span<const std::byte>) {});
	const HookPlan &plan = t.hooks();

	if (opts.json) {
		nlohmann::json j = plan.to_json();
		j["kernel"] = k.release;
		j["btf"] = k.btf;
		j["drm"] = {{"loaded", k.drm_loaded}, {"detail", k.drm}};
		j["can_run"] = true;
		std::cout << j.dump(1) << "\n";
		return 0;
	}
	std::cout << "kernel:   " << k.release << "\n"
		  << "btf:      /sys/kernel/btf/vmlinux " << (k.btf ? "present" : "absent") << "\n"
		  << "drm:      " << k.drm << "\n"
		  << "request:  " << mode_name(plan.request.mode) << " (" << plan.request.source << ")\n"
		  << plan.describe() << "path:     " << plan.path() << "\n"
		  << "gpuwatch can run here: its BPF programs load and attach\n";
	return 0;
}

} // namespace gw
