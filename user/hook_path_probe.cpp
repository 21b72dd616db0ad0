#include "hook_path_probe.hpp"

#include <bpf/btf.h>
#include <cerrno>
#include <memory>
#include <optional>
#include <sys/utsname.h>
#include <unistd.h>

#include "sysutil.hpp"
#include "tracer.hpp"

namespace gw
{

namespace
{

bool exists(const std::string &path)
{
	return ::access(path.c_str(), F_OK) == 0;
}

struct BtfFree {
	void operator()(btf *b) const { btf__free(b); }
};
using BtfPtr = std::unique_ptr<btf, BtfFree>;

std::string params_check(const btf *b, int id, const FexitTarget &t)
{
	const btf_type *fn = btf__type_by_id(b, id);
	const btf_type *proto = fn ? btf__type_by_id(b, fn->type) : nullptr;
	if (!proto || !btf_is_func_proto(proto))
		return std::string(t.function) + ": malformed BTF";
	std::vector<std::string> names;
	const btf_param *p = btf_params(proto);
	for (unsigned i = 0; i < btf_vlen(proto); i++) {
		const char *n = btf__name_by_offset(b, p[i].name_off);
		names.emplace_back(n ? n : "");
	}
	if (std::string why = check_params(t, names); !why.empty())
		return why;
	/* the programs read one 8-byte context slot per parameter (a wider struct takes two) */
	for (unsigned i = 0; i < names.size(); i++) {
		long long size = btf__resolve_size(b, p[i].type);
		if (size <= 0 || size > 8)
			return std::string(t.function) + "'s parameter " + names[i] + " is " + std::to_string(size) +
			       " bytes here; gpuwatch's program reads one register per parameter";
	}
	return "";
}

} // namespace

std::string find_fexit_target(const FexitTarget &t)
{
	BtfPtr vmlinux(btf__load_vmlinux_btf());
	if (!vmlinux)
		return "no kernel BTF (/sys/kernel/btf/vmlinux): " + errno_text(errno);
	int id = btf__find_by_name_kind(vmlinux.get(), t.function, BTF_KIND_FUNC);
	if (id > 0)
		return params_check(vmlinux.get(), id, t);
	std::string missing = std::string(t.function) + " not found in kernel BTF";
	if (!t.module)
		return missing;
	std::string mod = t.module;
	if (!exists("/sys/module/" + mod))
		return missing + ": " + mod + " module not loaded";
	if (!exists("/sys/kernel/btf/" + mod))
		return missing + ": the " + mod + " module has no BTF (CONFIG_DEBUG_INFO_BTF_MODULES)";
	BtfPtr mbtf(btf__load_module_btf(t.module, vmlinux.get()));
	if (!mbtf)
		return missing + ": reading /sys/kernel/btf/" + mod + " failed: " + errno_text(errno);
	id = btf__find_by_name_kind(mbtf.get(), t.function, BTF_KIND_FUNC);
	if (id <= 0)
		return missing + " (vmlinux or the " + mod + " module)";
	return params_check(mbtf.get(), id, t);
}

const FexitProbes &probe_fexit()
{
	static std::optional<FexitProbes> cache;
	if (cache)
		return *cache;
	FexitProbes probes;
	for (HookGroup g : kHookGroups) {
		FexitProbe &p = probes[static_cast<size_t>(g)];
		p.why_not = find_fexit_target(fexit_target(g));
		if (p.why_not.empty())
			p.why_not = Tracer::try_fexit(g);
		p.ok = p.why_not.empty();
	}
	cache = probes;
	return *cache;
}

FexitProbes fexit_targets_present()
{
	FexitProbes probes;
	for (HookGroup g : kHookGroups) {
		FexitProbe &p = probes[static_cast<size_t>(g)];
		p.why_not = find_fexit_target(fexit_target(g));
		p.ok = p.why_not.empty();
	}
	return probes;
}

KernelInfo kernel_info()
{
	KernelInfo k;
	struct utsname u {
	};
	if (::uname(&u) == 0)
		k.release = u.release;
	k.btf = exists("/sys/kernel/btf/vmlinux");
	k.drm_loaded = exists("/sys/module/drm");
	if (!k.drm_loaded)
		k.drm = "not loaded (no /sys/module/drm)";
	else if (exists("/sys/kernel/btf/drm"))
		k.drm = "loaded, module BTF present";
	else
		k.drm = "loaded (built in, or a module without BTF)";
	return k;
}

} // namespace gw
