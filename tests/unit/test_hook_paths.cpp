// Hook paths: the request (--hooks, GPUWATCH_HOOKS), the plan from probe results, its texts,
// the BTF parameter check, and the manifest's "hooks" field.
#include <gtest/gtest.h>

#include "hook_paths.hpp"
#include "model.hpp"
#include "sysutil.hpp"

namespace
{

using namespace gw;
using json = nlohmann::json;

FexitProbes probes(bool ioctl, bool mmap, bool cloexec, bool syscalls = true)
{
	FexitProbes p;
	p[0] = {ioctl, ioctl ? "" : "drm_ioctl not found in kernel BTF: drm module not loaded"};
	p[1] = {mmap, mmap ? "" : "fexit mmap_region: loading refused: Operation not permitted"};
	p[2] = {cloexec, cloexec ? "" : "fexit set_close_on_exec: loading refused: Operation not permitted"};
	p[3] = {syscalls, syscalls ? "" : "__x64_sys_close not found in kernel BTF"};
	return p;
}

TEST(HookRequest, FlagWinsOverEnvironmentWhichWinsOverDefault)
{
	HookRequest r = resolve_hook_request("", nullptr);
	EXPECT_EQ(r.mode, HookMode::automatic);
	EXPECT_EQ(r.source, "default");
	r = resolve_hook_request("", "");
	EXPECT_EQ(r.source, "default");
	r = resolve_hook_request("", "tracepoint");
	EXPECT_EQ(r.mode, HookMode::tracepoint);
	EXPECT_EQ(r.source, "GPUWATCH_HOOKS");
	r = resolve_hook_request("fexit", "tracepoint");
	EXPECT_EQ(r.mode, HookMode::fexit);
	EXPECT_EQ(r.source, "--hooks");
	r = resolve_hook_request("auto", "fexit");
	EXPECT_EQ(r.mode, HookMode::automatic);
	EXPECT_STREQ(mode_name(r.mode), "auto");
}

TEST(HookRequest, BadValueNamesItsSource)
{
	try {
		resolve_hook_request("", "kprobe");
		FAIL() << "accepted GPUWATCH_HOOKS=kprobe";
	} catch (const Error &e) {
		EXPECT_STREQ(e.what(), "GPUWATCH_HOOKS=kprobe: expected auto, tracepoint or fexit");
	}
	EXPECT_THROW(resolve_hook_request("Fexit", nullptr), Error);
}

TEST(HookPlan, AutoTakesFexitPerGroupWhereItWorks)
{
	HookPlan p = plan_hooks(HookRequest{}, probes(false, true, true));
	EXPECT_FALSE(p.fexit(HookGroup::ioctl));
	EXPECT_TRUE(p.fexit(HookGroup::mmap));
	EXPECT_TRUE(p.fexit(HookGroup::cloexec));
	EXPECT_TRUE(p.any_fexit());
	EXPECT_TRUE(p.fexit(HookGroup::syscalls));
	EXPECT_EQ(p.path(), "mixed: ioctl=tracepoint mmap=fexit cloexec=fexit syscalls=fexit");
	EXPECT_EQ(p[HookGroup::ioctl].reason, "drm_ioctl not found in kernel BTF: drm module not loaded");
	EXPECT_EQ(p[HookGroup::mmap].reason, "fexit on mmap_region load and attach");
	EXPECT_EQ(nlohmann::json(p.manifest_paths()),
		  json({{"ioctl", "tracepoint"}, {"mmap", "fexit"}, {"cloexec", "fexit"}, {"syscalls", "fexit"}}));

	EXPECT_EQ(plan_hooks(HookRequest{}, probes(true, true, true)).path(), "fexit");
	EXPECT_EQ(plan_hooks(HookRequest{}, probes(true, true, true, false)).path(),
		  "mixed: ioctl=fexit mmap=fexit cloexec=fexit syscalls=tracepoint");
	HookPlan none = plan_hooks(HookRequest{}, probes(false, false, false, false));
	EXPECT_EQ(none.path(), "tracepoint");
	EXPECT_FALSE(none.any_fexit());
}

TEST(HookPlan, TracepointModeIgnoresTheProbes)
{
	HookPlan p = plan_hooks(resolve_hook_request("tracepoint", nullptr), probes(true, true, true));
	EXPECT_EQ(p.path(), "tracepoint");
	for (HookGroup g : kHookGroups)
		EXPECT_EQ(p[g].reason, "forced by --hooks=tracepoint") << group_name(g);
}

TEST(HookPlan, FexitModeFailsWithOneLineNamingTheGroupAndWhy)
{
	EXPECT_EQ(plan_hooks(resolve_hook_request("", "fexit"), probes(true, true, true)).path(), "fexit");
	try {
		plan_hooks(resolve_hook_request("", "fexit"), probes(true, false, true));
		FAIL() << "fexit mode accepted an unavailable group";
	} catch (const Error &e) {
		std::string m = e.what();
		EXPECT_EQ(m, "GPUWATCH_HOOKS=fexit: the mmap hooks cannot use fexit on mmap_region: "
			     "fexit mmap_region: loading refused: Operation not permitted");
		EXPECT_EQ(m.find('\n'), std::string::npos);
	}
}

TEST(HookPlan, FallbackKeepsTracepointReasonsAndExplainsTheRest)
{
	HookPlan p = fallback_to_tracepoints(plan_hooks(HookRequest{}, probes(false, true, true)), "E2BIG");
	EXPECT_EQ(p.path(), "tracepoint");
	EXPECT_EQ(p[HookGroup::ioctl].reason, "drm_ioctl not found in kernel BTF: drm module not loaded");
	EXPECT_EQ(p[HookGroup::mmap].reason, "loading with the fexit programs failed, all on tracepoints: E2BIG");
}

TEST(HookPlan, TextsAreOneLinePerGroup)
{
	HookPlan p = plan_hooks(HookRequest{}, probes(true, false, true, false));
	EXPECT_EQ(p.describe(), "ioctl:    fexit      (fexit on drm_ioctl load and attach)\n"
				"mmap:     tracepoint (fexit mmap_region: loading refused: Operation not permitted)\n"
				"cloexec:  fexit      (fexit on set_close_on_exec load and attach)\n"
				"syscalls: tracepoint (__x64_sys_close not found in kernel BTF)\n");
	json j = p.to_json();
	EXPECT_EQ(j["mode"], "auto");
	EXPECT_EQ(j["mode_source"], "default");
	EXPECT_EQ(j["path"], "mixed: ioctl=fexit mmap=tracepoint cloexec=fexit syscalls=tracepoint");
	EXPECT_EQ(j["hooks"]["mmap"]["path"], "tracepoint");
	EXPECT_EQ(j["hooks"]["ioctl"]["reason"], "fexit on drm_ioctl load and attach");
}

TEST(FexitTarget, ParameterNamesMustFitWhatTheProgramsRead)
{
	const FexitTarget &mm = fexit_target(HookGroup::mmap);
	EXPECT_STREQ(mm.function, "mmap_region");
	EXPECT_EQ(check_params(mm, {"file", "addr", "len", "vm_flags", "pgoff", "uf"}), "");
	EXPECT_EQ(check_params(mm, {"file", "addr", "len", "vma_flags", "pgoff", "uf"}), "");
	EXPECT_EQ(check_params(mm, {"file", "addr", "len", "prot", "flags", "vm_flags", "pgoff", "uf"}),
		  "mmap_region takes (file, addr, len, prot, flags, vm_flags, pgoff, uf) here; gpuwatch's program "
		  "reads (file, addr, len, vm_flags|vma_flags, pgoff, uf)");
	EXPECT_NE(check_params(mm, {"addr", "file", "len", "vm_flags", "pgoff", "uf"}), "");
	EXPECT_NE(check_params(mm, {"file", "addr", "len", "", "pgoff", "uf"}), "");
	EXPECT_EQ(check_params(fexit_target(HookGroup::ioctl), {"filp", "cmd", "arg"}), "");
	EXPECT_STREQ(fexit_target(HookGroup::ioctl).module, "drm");
	EXPECT_EQ(check_params(fexit_target(HookGroup::cloexec), {"fd", "flag"}), "");
}

json minimal_manifest()
{
	return {{"schema", "gpuwatch.manifest/v1"},
		{"cgroup", "/sys/fs/cgroup/x"},
		{"complete", true},
		{"lost_events", 0},
		{"files", json::array()},
		{"processes", json::array()}};
}

TEST(ManifestHooks, OptionalButStringsWhenPresent)
{
	json m = minimal_manifest();
	EXPECT_NO_THROW(gw::manifest::validate(m));
	m["hooks"] = plan_hooks(HookRequest{}, probes(true, false, true)).manifest_paths();
	EXPECT_NO_THROW(gw::manifest::validate(m));
	m["hooks"]["mmap"] = 2;
	try {
		gw::manifest::validate(m);
		FAIL() << "accepted a numeric hook path";
	} catch (const ManifestError &e) {
		EXPECT_STREQ(e.what(), "field hooks.mmap is an unsigned integer, expected a string");
	}
	m["hooks"] = "fexit";
	EXPECT_THROW(gw::manifest::validate(m), ManifestError);
}

} // namespace
