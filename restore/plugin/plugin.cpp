// gpuwatch's CRIU plugin: the hook table, for the plugin ABI of the CRIU that loads it (3.17 to
// 4.2, see criu_abi.hpp).
//
// DUMP_EXT_FILE        DRM files (character devices of major 226) and dma-bufs of their buffers
// HANDLE_DEVICE_VMA    accepts mappings of DRM files (their pages are ours to save, not CRIU's);
//                      in `criu pre-dump`, copies the buffers ahead (chunks.hpp)
// RESTORE_EXT_FILE     reopens a DRM file with its handles, or recreates a dma-buf
// UPDATE_VMA_MAP       gives each DRM mapping its new fake offset and the fd to map it through
// RESUME_DEVICES_LATE  maps converted i915 buffers back, tells the gpuwatch daemon to look at the
//                      restored tasks
// PAUSE_DEVICES        (4.0+) `criu pre-dump` of a task with i915 mappings: refused, one line
// CHECKPOINT_DEVICES   (4.0+) `criu dump`: converts the task's i915 mappings (CRIU has seized it
//                      and has not read its mappings yet)
// Everything else is declined with -ENOTSUP, so other plugins (or CRIU's error) handle it.
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <type_traits>
#include <unistd.h>

extern "C" {
#include <criu-plugin.h>
}

#include "criu_abi.hpp"
#include "descriptor.hpp"
#include "dump_marker.hpp"
#include "drm_ops.hpp"
#include "dump.hpp"
#include "fence_files.hpp"
#include "i915_predump.hpp"
#include "i915_late_maps.hpp"
#include "log.hpp"
#include "proc.hpp"
#include "proc_tree.hpp"
#include "restore.hpp"

// The descriptor defined in descriptor.cpp has cr_plugin_desc_t's layout, with more hooks.
static_assert(offsetof(gwcriu::PluginDescriptor, name) == offsetof(cr_plugin_desc_t, name));
static_assert(offsetof(gwcriu::PluginDescriptor, init) == offsetof(cr_plugin_desc_t, init));
static_assert(offsetof(gwcriu::PluginDescriptor, exit) == offsetof(cr_plugin_desc_t, exit));
static_assert(offsetof(gwcriu::PluginDescriptor, version) == offsetof(cr_plugin_desc_t, version));
static_assert(offsetof(gwcriu::PluginDescriptor, max_hooks) == offsetof(cr_plugin_desc_t, max_hooks));
static_assert(offsetof(gwcriu::PluginDescriptor, hooks) == offsetof(cr_plugin_desc_t, hooks));
static_assert(CR_PLUGIN_HOOK__MAX <= gwcriu::kMaxKnownHooks);
static_assert(CR_PLUGIN_HOOK__RESUME_DEVICES_LATE < gwcriu::kHookPauseDevices);
// The hooks of 3.17 we use keep their (int)-only RESTORE_EXT_FILE in every ABI we accept.
static_assert(std::is_same_v<CR_PLUGIN_HOOK__RESTORE_EXT_FILE_t, int(int)>,
	      "built against a criu-plugin.h whose RESTORE_EXT_FILE is not (int): see criu_abi.hpp");

namespace
{

int g_stage = -1;

// No exception may cross into CRIU (C): each hook body runs under this guard.
template <typename F> int guarded(const char *hook, F &&body)
{
	try {
		return body();
	} catch (const std::exception &e) {
		gwcriu::log_error("%s: %s", hook, e.what());
	} catch (...) {
		gwcriu::log_error("%s: unexpected failure", hook);
	}
	return -1;
}

// pre-dump of a task with i915 mappings: CRIU cannot read them and, since no hook runs after a
// pre-dump, the plugin could not put converted ones back. One line, and the pre-dump fails
// before it touches the task.
int refuse_i915_predump(uint32_t pid)
{
	std::string which;
	if (!gwaction::has_i915_mappings(pid, &which))
		return 0;
	gwcriu::log_error("criu pre-dump: process %u has i915 GEM mappings (%s), which criu pre-dump cannot handle (no "
			  "CRIU runs a device hook after a pre-dump, so converted mappings could not be put back): "
			  "checkpoint it with a single criu dump",
			  pid, which.c_str());
	return -1;
}

int gw_init(int stage)
{
	const gwaction::CriuAbi &abi = gwaction::criu_abi();
	if (!abi.refusal.empty()) {
		gwcriu::log_error("%s", abi.refusal.c_str());
		return -1;
	}
	g_stage = stage;
	gwcriu::log_info("CRIU %s plugin ABI (%u hooks; the fd UPDATE_VMA_MAP returns is %s)", abi.versions.c_str(),
			 abi.hooks, abi.owns_vma_fd ? "CRIU's to close" : "dup'ed by CRIU");
	if (stage == CR_PLUGIN_STAGE__RESTORE)
		return gwcriu::load_restore_images();
	if (stage == CR_PLUGIN_STAGE__DUMP)
		return guarded("dump start", [&] {
			// images of an earlier dump into this directory are not this one's; the action
			// script, when it ran for this dump, removed them and marked what it wrote
			int dir = gwcriu::image_dir();
			if (!gwaction::dump_marker_is(dir, static_cast<uint32_t>(getpid())))
				if (int n = gwaction::remove_gpuwatch_images(dir))
					gwcriu::log_info("removed %d gpuwatch image(s) of an earlier dump from the "
							 "image directory",
							 n);
			return 0;
		});
	if (stage == CR_PLUGIN_STAGE__PRE_DUMP)
		return guarded("pre-dump", [&] {
			// no action script runs for a pre-dump: the buffer copies of an earlier one go here
			if (int n = gwaction::remove_gpuwatch_images(gwcriu::image_dir()))
				gwcriu::log_info("removed %d gpuwatch image(s) of an earlier dump from the image "
						 "directory",
						 n);
			// CRIU 3.x only: `criu pre-dump` has no per-task hook there, so the target is
			// read from criu's own command line. Under RPC (no command line) nothing is
			// checked, and CRIU fails on such a mapping with its own error.
			uint32_t pid = abi.checkpoint_devices ? 0 : gwcriu::tree_root_from_cmdline();
			if (!pid)
				return 0;
			for (uint32_t p : gwaction::process_tree(pid))
				if (refuse_i915_predump(p) != 0)
					return -1;
			return 0;
		});
	return 0;
}

void gw_exit(int stage, int ret)
{
	// The tasks are still seized: put back the i915 mappings converted for the dump (after
	// --leave-running or a failed dump the tasks carry on with them).
	if (stage == CR_PLUGIN_STAGE__DUMP)
		guarded("dump end (i915 mappings)", [&] {
			gwcriu::revert_converted_maps();
			return 0;
		});
	if (stage == CR_PLUGIN_STAGE__DUMP)
		guarded("dump end", [&] {
			gwcriu::finish_dump(ret);
			return 0;
		});
	// A restore that went through must have filled every buffer it left for later: else (a
	// task RESUME_DEVICES_LATE did not reach) those buffers read zero, which is said here.
	if (stage == CR_PLUGIN_STAGE__RESTORE && ret == 0)
		guarded("restore end", [&] {
			std::vector<std::string> left = gwcriu::unfilled_late();
			if (!left.empty())
				gwcriu::log_error(
					"restore: %zu buffers left for RESUME_DEVICES_LATE were never filled and "
					"read zero: %s%s",
					left.size(), left.front().c_str(), left.size() > 1 ? ", ..." : "");
			return 0;
		});
}

} // namespace

extern "C" {

int gpuwatch_dump_ext_file(int fd, int id)
{
	if (g_stage != CR_PLUGIN_STAGE__DUMP)
		return -ENOTSUP;
	return guarded("DUMP_EXT_FILE", [&] {
		struct stat st;
		if (fstat(fd, &st) != 0)
			return -ENOTSUP;
		if (S_ISCHR(st.st_mode) && major(st.st_rdev) == gw::kDrmMajor)
			return gwcriu::dump_drm_file(fd, static_cast<uint32_t>(id));
		if (gwcriu::is_dmabuf(fd))
			return gwcriu::dump_dmabuf(fd, static_cast<uint32_t>(id));
		return gwcriu::dump_fence_file(fd, static_cast<uint32_t>(id));
	});
}

int gpuwatch_handle_device_vma(int fd, const struct stat *st)
{
	(void)fd; // CRIU's own open of the mapped node (a new file, without the task's handles)
	if (!st || !S_ISCHR(st->st_mode) || major(st->st_rdev) != gw::kDrmMajor)
		return -ENOTSUP;
	if (g_stage == CR_PLUGIN_STAGE__PRE_DUMP)
		return guarded("HANDLE_DEVICE_VMA", [&] {
			// the only hook every CRIU calls in a pre-dump, with the tasks seized: the buffers
			// are copied ahead here, once (the final dump stores what changed since)
			gwcriu::predump_buffers();
			return 0;
		});
	if (g_stage != CR_PLUGIN_STAGE__DUMP)
		return 0;
	return guarded("HANDLE_DEVICE_VMA", [&] {
		gwcriu::dump_session(); // tasks are frozen now: take the manifest, scan /proc
		return 0;
	});
}

int gpuwatch_restore_ext_file(int id)
{
	return guarded("RESTORE_EXT_FILE", [&] { return gwcriu::restore_ext_file(static_cast<uint32_t>(id)); });
}

int gpuwatch_update_vma_map(const char *path, const uint64_t addr, const uint64_t old_pgoff, uint64_t *new_pgoff,
			    int *plugin_fd)
{
	return guarded("UPDATE_VMA_MAP",
		       [&] { return gwcriu::update_vma_map(path, addr, old_pgoff, new_pgoff, plugin_fd); });
}

int gpuwatch_resume_devices_late(int pid)
{
	return guarded("RESUME_DEVICES_LATE", [&] { return gwcriu::resume_devices_late(pid); });
}

// 4.0+: before CRIU seizes pid (dump and pre-dump).
int gpuwatch_pause_devices(int pid)
{
	if (g_stage != CR_PLUGIN_STAGE__PRE_DUMP)
		return -ENOTSUP;
	return guarded("PAUSE_DEVICES",
		       [&] { return refuse_i915_predump(static_cast<uint32_t>(pid)) != 0 ? -1 : -ENOTSUP; });
}

// 4.0+: pid is seized (and, with --freeze-cgroup, frozen); its mappings are read next.
int gpuwatch_checkpoint_devices(int pid)
{
	if (g_stage != CR_PLUGIN_STAGE__DUMP)
		return -ENOTSUP; // 4.0 also calls it at pre-dump: PAUSE_DEVICES refused i915 tasks already
	return guarded("CHECKPOINT_DEVICES", [&] {
		// CRIU calls it for every task of every dump: one without i915 mappings has nothing to
		// convert, and a dump without DRM state never starts a session (which reads /proc and
		// gpuwatch's settings); the first DRM hook starts it, the tasks still seized
		if (!gwaction::has_i915_mappings(static_cast<uint32_t>(pid)))
			return -ENOTSUP;
		gwcriu::DumpSession &s = gwcriu::dump_session();
		// a stateless dump takes no manifest, but converting i915 mappings into placeholders
		// (nothing saved, put back at the dump's end) needs their handles: asked once, here
		static bool asked = false;
		if (s.stateless && !asked) {
			asked = true;
			gwcriu::acquire_manifests(s, false,
						  "their i915 mappings are saved as private copies of their bytes");
		}
		return gwcriu::convert_seized_maps(s, static_cast<uint32_t>(pid));
	});
}

} // extern "C"

namespace
{

template <typename F> void *hook_ptr(F *f)
{
	return reinterpret_cast<void *>(f);
}

// Runs inside CRIU's dlopen(), before CRIU reads the descriptor: announce exactly the hooks the
// running CRIU has (it refuses a descriptor with more), or none when its ABI is unknown (then
// init fails with the reason).
__attribute__((constructor)) void register_hooks()
{
	gwcriu::PluginDescriptor &d = gwcriu::descriptor();
	d.name = "gpuwatch";
	d.init = gw_init;
	d.exit = gw_exit;
	d.version = CRIU_PLUGIN_VERSION;
	const gwaction::CriuAbi &abi = gwaction::criu_abi();
	d.max_hooks = abi.refusal.empty() ? abi.hooks : 0;
	if (!abi.refusal.empty())
		return;
	d.hooks[CR_PLUGIN_HOOK__DUMP_EXT_FILE] = hook_ptr(&gpuwatch_dump_ext_file);
	d.hooks[CR_PLUGIN_HOOK__RESTORE_EXT_FILE] = hook_ptr(&gpuwatch_restore_ext_file);
	d.hooks[CR_PLUGIN_HOOK__HANDLE_DEVICE_VMA] = hook_ptr(&gpuwatch_handle_device_vma);
	d.hooks[CR_PLUGIN_HOOK__UPDATE_VMA_MAP] = hook_ptr(&gpuwatch_update_vma_map);
	d.hooks[CR_PLUGIN_HOOK__RESUME_DEVICES_LATE] = hook_ptr(&gpuwatch_resume_devices_late);
	if (abi.checkpoint_devices) {
		d.hooks[gwcriu::kHookPauseDevices] = hook_ptr(&gpuwatch_pause_devices);
		d.hooks[gwcriu::kHookCheckpointDevices] = hook_ptr(&gpuwatch_checkpoint_devices);
	}
}

} // namespace
