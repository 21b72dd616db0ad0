#include "hook_paths.hpp"

#include "sysutil.hpp"

namespace gw
{

const char *group_name(HookGroup g)
{
	switch (g) {
	case HookGroup::ioctl: return "ioctl";
	case HookGroup::mmap: return "mmap";
	case HookGroup::cloexec: return "cloexec";
	case HookGroup::syscalls: return "syscalls";
	}
	return "?";
}

const FexitTarget &fexit_target(HookGroup g)
{
	// bpf/gpuwatch.bpf.c reads these arguments by position; the names are checked against the
	// kernel's BTF so that a reordered prototype falls back to the tracepoints, not misreads.
	static const FexitTarget targets[] = {
		{"drm_ioctl", "drm", {"filp", "cmd", "arg"}, "fexit"},
		{"mmap_region", nullptr, {"file", "addr", "len", "vm_flags|vma_flags", "pgoff", "uf"}, "fexit"},
		{"set_close_on_exec", nullptr, {"fd", "flag"}, "fexit"},
		/* and the other x86-64 entry points of the group (bpf/gpuwatch.bpf.c): all take regs */
		{"__x64_sys_close", nullptr, {"regs"}, "fentry+fexit"},
	};
	return targets[static_cast<size_t>(g)];
}

static std::string join(const std::vector<std::string> &v)
{
	std::string s;
	for (const auto &x : v)
		s += (s.empty() ? "" : ", ") + x;
	return s;
}

std::string check_params(const FexitTarget &t, const std::vector<std::string> &have)
{
	bool fits = have.size() == t.params.size();
	for (size_t i = 0; fits && i < have.size(); i++) {
		std::string alts = "|" + t.params[i] + "|";
		fits = !have[i].empty() && alts.find("|" + have[i] + "|") != std::string::npos;
	}
	if (fits)
		return "";
	return std::string(t.function) + " takes (" + join(have) + ") here; gpuwatch's program reads (" +
	       join(t.params) + ")";
}

const char *mode_name(HookMode m)
{
	switch (m) {
	case HookMode::automatic: return "auto";
	case HookMode::tracepoint: return "tracepoint";
	case HookMode::fexit: return "fexit";
	}
	return "?";
}

HookRequest resolve_hook_request(const std::string &flag, const char *env)
{
	HookRequest r;
	std::string value;
	if (!flag.empty()) {
		r.source = "--hooks";
		value = flag;
	} else if (env && *env) {
		r.source = "GPUWATCH_HOOKS";
		value = env;
	} else {
		return r;
	}
	if (value == "auto")
		r.mode = HookMode::automatic;
	else if (value == "tracepoint")
		r.mode = HookMode::tracepoint;
	else if (value == "fexit")
		r.mode = HookMode::fexit;
	else
		throw Error(r.source + "=" + value + ": expected auto, tracepoint or fexit");
	return r;
}

bool HookPlan::any_fexit() const
{
	for (const auto &c : groups)
		if (c.fexit)
			return true;
	return false;
}

std::string HookPlan::path() const
{
	size_t n = 0;
	for (const auto &c : groups)
		n += c.fexit;
	if (n == groups.size())
		return "fexit";
	if (n == 0)
		return "tracepoint";
	std::string s = "mixed:";
	for (HookGroup g : kHookGroups)
		s += std::string(" ") + group_name(g) + "=" + (fexit(g) ? "fexit" : "tracepoint");
	return s;
}

std::map<std::string, std::string> HookPlan::manifest_paths() const
{
	std::map<std::string, std::string> m;
	for (HookGroup g : kHookGroups)
		m[group_name(g)] = fexit(g) ? "fexit" : "tracepoint";
	return m;
}

nlohmann::json HookPlan::to_json() const
{
	nlohmann::json groups_j = nlohmann::json::object();
	for (HookGroup g : kHookGroups)
		groups_j[group_name(g)] = {{"path", fexit(g) ? "fexit" : "tracepoint"}, {"reason", (*this)[g].reason}};
	return {{"mode", mode_name(request.mode)},
		{"mode_source", request.source},
		{"path", path()},
		{"hooks", groups_j}};
}

std::string HookPlan::describe() const
{
	std::string s;
	for (HookGroup g : kHookGroups) {
		std::string name = std::string(group_name(g)) + ":";
		name.resize(10, ' ');
		s += name + (fexit(g) ? "fexit      " : "tracepoint ") + "(" + (*this)[g].reason + ")\n";
	}
	return s;
}

HookPlan plan_hooks(const HookRequest &req, const FexitProbes &probes)
{
	HookPlan plan;
	plan.request = req;
	for (HookGroup g : kHookGroups) {
		const FexitTarget &t = fexit_target(g);
		HookChoice &c = plan.groups[static_cast<size_t>(g)];
		const FexitProbe &p = probes[static_cast<size_t>(g)];
		if (req.mode == HookMode::tracepoint) {
			c.reason = "forced by " + req.source + "=tracepoint";
		} else if (p.ok) {
			c.fexit = true;
			c.reason = std::string(t.programs) + " on " + t.function + " load and attach";
		} else if (req.mode == HookMode::fexit) {
			throw Error(req.source + "=fexit: the " + group_name(g) + " hooks cannot use " + t.programs +
				    " on " + t.function + ": " + p.why_not);
		} else {
			c.reason = p.why_not;
		}
	}
	return plan;
}

HookPlan fallback_to_tracepoints(HookPlan plan, const std::string &why)
{
	for (auto &c : plan.groups)
		if (c.fexit)
			c = HookChoice{false, "loading with the fexit programs failed, all on tracepoints: " + why};
	return plan;
}

} // namespace gw
