// Hook paths: which kernel hooks feed each group of records (the syscall tracepoints, or
// fentry/fexit programs on kernel functions), how a choice is requested (auto, tracepoint,
// fexit: --hooks or GPUWATCH_HOOKS) and the printable result. Pure: the probing itself is in
// hook_path_probe.cpp (BTF) and tracer.cpp (a trial load and attach).
#pragma once

#include <array>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gw
{

// Groups of records that can move to the fexit path independently (bpf/fexit.bpf.h).
// syscalls: open*, close, close_range, dup*, fcntl, munmap and mremap.
enum class HookGroup {
	ioctl,
	mmap,
	cloexec,
	syscalls
};
inline constexpr std::array<HookGroup, 4> kHookGroups = {HookGroup::ioctl, HookGroup::mmap, HookGroup::cloexec,
							 HookGroup::syscalls};
const char *group_name(HookGroup g); // "ioctl", "mmap", "cloexec", "syscalls"

// The kernel function a group's fentry/fexit programs attach to.
struct FexitTarget {
	const char *function;            // "drm_ioctl"
	const char *module;              // the module whose BTF holds it when not built in ("drm"), or nullptr
	std::vector<std::string> params; // the parameters the programs read, in order ("a|b": either name)
	const char *programs;            // "fentry+fexit" or "fexit"
};
const FexitTarget &fexit_target(HookGroup g);

// "" when a function's parameter names fit what the programs read, else the reason.
std::string check_params(const FexitTarget &t, const std::vector<std::string> &have);

enum class HookMode {
	automatic,
	tracepoint,
	fexit
};
const char *mode_name(HookMode m); // "auto", "tracepoint", "fexit"

struct HookRequest {
	HookMode mode = HookMode::automatic;
	std::string source = "default"; // "--hooks", "GPUWATCH_HOOKS" or "default"
};
// --hooks (empty: not given) wins over GPUWATCH_HOOKS (nullptr or empty: unset).
// Throws Error naming the source for anything but auto, tracepoint or fexit.
HookRequest resolve_hook_request(const std::string &flag, const char *env);

// Whether one group's fentry/fexit programs loaded and attached, and if not why.
struct FexitProbe {
	bool ok = false;
	std::string why_not;
};
using FexitProbes = std::array<FexitProbe, kHookGroups.size()>;

struct HookChoice {
	bool fexit = false;
	std::string reason;
};

// The decision, per group, with its reasons. Printable (`gpuwatch check`, the daemon's log)
// and written into the manifest ("hooks").
struct HookPlan {
	HookRequest request;
	std::array<HookChoice, kHookGroups.size()> groups;

	const HookChoice &operator[](HookGroup g) const { return groups[static_cast<size_t>(g)]; }
	bool fexit(HookGroup g) const { return (*this)[g].fexit; }
	bool any_fexit() const;
	// "fexit", "tracepoint", or "mixed: ioctl=fexit mmap=tracepoint cloexec=fexit syscalls=fexit"
	std::string path() const;
	std::map<std::string, std::string> manifest_paths() const; // the manifest's "hooks": {"ioctl": "fexit", ...}
	nlohmann::json to_json() const;                            // with the request and every reason
	std::string describe() const;                              // one line per group: "ioctl: fexit (...)"
};

// The plan for a request given each group's probe (not consulted in tracepoint mode).
// Throws Error (one line) in fexit mode when a group cannot use its fexit programs.
HookPlan plan_hooks(const HookRequest &req, const FexitProbes &probes);
// Every group back on the tracepoints (auto mode, when loading the whole object with the
// fexit programs failed although each group's probe had passed).
HookPlan fallback_to_tracepoints(HookPlan plan, const std::string &why);

} // namespace gw
