// gpuwatch's CRIU plugin: the descriptor and the hook table (CRIU 3.17 plugin ABI).
//
// DUMP_EXT_FILE        DRM files (character devices of major 226) and dma-bufs of their buffers
// HANDLE_DEVICE_VMA    accepts mappings of DRM files (their pages are ours to save, not CRIU's)
// RESTORE_EXT_FILE     reopens a DRM file with its handles, or recreates a dma-buf
// UPDATE_VMA_MAP       gives each DRM mapping its new fake offset and the fd to map it through
// RESUME_DEVICES_LATE  tells the gpuwatch daemon to look at the restored tasks
// Everything else is declined with -ENOTSUP, so other plugins (or CRIU's error) handle it.
#include <cerrno>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <type_traits>

extern "C" {
#include <criu-plugin.h>
}

#include "drm_ops.hpp"
#include "dump.hpp"
#include "fence_files.hpp"
#include "late_maps.hpp"
#include "log.hpp"
#include "restore.hpp"

namespace {

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

int gw_init(int stage)
{
	g_stage = stage;
	if (stage == CR_PLUGIN_STAGE__RESTORE)
		return gwcriu::load_restore_images();
	return 0;
}

void gw_exit(int stage, int ret)
{
	// The tasks are still seized: put back the i915 mappings the action script replaced (after
	// --leave-running, a failed dump or a pre-dump the tasks carry on with them).
	if (stage == CR_PLUGIN_STAGE__DUMP || stage == CR_PLUGIN_STAGE__PRE_DUMP)
		guarded("dump end (i915 mappings)", [&] {
			gwcriu::revert_converted_maps();
			return 0;
		});
	if (stage == CR_PLUGIN_STAGE__DUMP)
		guarded("dump end", [&] {
			gwcriu::finish_dump(ret);
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
		if (S_ISCHR(st.st_mode) && major(st.st_rdev) == gwcriu::kDrmMajor)
			return gwcriu::dump_drm_file(fd, static_cast<uint32_t>(id));
		if (gwcriu::is_dmabuf(fd))
			return gwcriu::dump_dmabuf(fd, static_cast<uint32_t>(id));
		return gwcriu::dump_fence_file(fd, static_cast<uint32_t>(id));
	});
}

int gpuwatch_handle_device_vma(int fd, const struct stat *st)
{
	(void)fd; // CRIU's own open of the mapped node (a new file, without the task's handles)
	if (!st || !S_ISCHR(st->st_mode) || major(st->st_rdev) != gwcriu::kDrmMajor)
		return -ENOTSUP;
	if (g_stage != CR_PLUGIN_STAGE__DUMP)
		return 0; // pre-dump: CRIU only needs to know the mapping is ours
	return guarded("HANDLE_DEVICE_VMA", [&] {
		gwcriu::dump_session(); // tasks are frozen now: take the manifest, scan /proc
		return 0;
	});
}

int gpuwatch_restore_ext_file(int id)
{
	return guarded("RESTORE_EXT_FILE", [&] { return gwcriu::restore_ext_file(static_cast<uint32_t>(id)); });
}

// CRIU's development branch (after 4.2) passes `bool *retry_needed` to RESTORE_EXT_FILE and
// reads it afterwards without initialising it: a plugin must always set it. We never ask for a
// retry (*retry_needed = false); a DRM file that needs a buffer another task has not restored
// yet waits for it (GPUWATCH_SHARE_WAIT_MS) or makes a copy. Which signature is registered is
// decided by the criu-plugin.h we are compiled against (see the hook table below): build
// against the header of the CRIU that will load the plugin.
int gpuwatch_restore_ext_file_retry(int id, bool *retry_needed)
{
	if (retry_needed)
		*retry_needed = false;
	return gpuwatch_restore_ext_file(id);
}

int gpuwatch_update_vma_map(const char *path, const uint64_t addr, const uint64_t old_pgoff, uint64_t *new_pgoff,
                            int *plugin_fd)
{
	return guarded("UPDATE_VMA_MAP", [&] { return gwcriu::update_vma_map(path, addr, old_pgoff, new_pgoff, plugin_fd); });
}

int gpuwatch_resume_devices_late(int pid)
{
	return guarded("RESUME_DEVICES_LATE", [&] { return gwcriu::resume_devices_late(pid); });
}

__attribute__((visibility("default"))) cr_plugin_desc_t CR_PLUGIN_DESC = {
	"gpuwatch", gw_init, gw_exit, CRIU_PLUGIN_VERSION, CR_PLUGIN_HOOK__MAX, {},
};

} // extern "C"

namespace {

template <typename F> void *hook_ptr(F *f) { return reinterpret_cast<void *>(f); }

// The RESTORE_EXT_FILE signature of the header we build against: (int) in 3.17..4.2,
// (int, bool *) in the development branch.
void *restore_ext_file_hook()
{
	if constexpr (std::is_same_v<CR_PLUGIN_HOOK__RESTORE_EXT_FILE_t, int(int, bool *)>)
		return hook_ptr(&gpuwatch_restore_ext_file_retry);
	else
		return hook_ptr(&gpuwatch_restore_ext_file);
}

__attribute__((constructor)) void register_hooks()
{
	CR_PLUGIN_DESC.hooks[CR_PLUGIN_HOOK__DUMP_EXT_FILE] = hook_ptr(&gpuwatch_dump_ext_file);
	CR_PLUGIN_DESC.hooks[CR_PLUGIN_HOOK__RESTORE_EXT_FILE] = restore_ext_file_hook();
	CR_PLUGIN_DESC.hooks[CR_PLUGIN_HOOK__HANDLE_DEVICE_VMA] = hook_ptr(&gpuwatch_handle_device_vma);
	CR_PLUGIN_DESC.hooks[CR_PLUGIN_HOOK__UPDATE_VMA_MAP] = hook_ptr(&gpuwatch_update_vma_map);
	CR_PLUGIN_DESC.hooks[CR_PLUGIN_HOOK__RESUME_DEVICES_LATE] = hook_ptr(&gpuwatch_resume_devices_late);
}

} // namespace
