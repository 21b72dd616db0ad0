// Which CRIU runs (the one that loaded the plugin, or the parent of the action-script helper),
// and what its plugin ABI offers. One plugin build serves CRIU 3.17 to 4.2; the plugin version
// CRIU announces never changed (0x200), so the ABI is read from what the criu binary exports in
// its dynamic symbol table (it is linked with -rdynamic):
//
//   size of cr_plugin_ctl   = 16 * (1 + number of hooks): 176 (10 hooks, 3.17-3.19),
//                             208 (12 hooks: + PAUSE_DEVICES, CHECKPOINT_DEVICES, 4.0-4.1),
//                             224 (13 hooks: + POST_FORKING, 4.2), 256 (15 hooks: criu-dev,
//                             where RESTORE_EXT_FILE takes a second argument: refused)
//   rpc_query_external_files  exported from 3.19 (action-scripts.c). From 3.19 on (CRIU commit
//                             a68975c06) CRIU owns the fd UPDATE_VMA_MAP returns and closes it
//                             after the mapping is made; 3.17/3.18 dup it and leave it alone
//   dont_use_freeze_cgroup    exported by 4.0 only: 4.0 also runs CHECKPOINT_DEVICES at
//                             pre-dump (4.1 moved it to `criu dump` only, commit 7f0d107fe)
#pragma once

#include <cstddef>
#include <string>
#include <sys/types.h>
#include <vector>

namespace gwaction
{

struct CriuAbi {
	unsigned hooks = 0;                 // CR_PLUGIN_HOOK__MAX of the running CRIU; 0 when unknown
	std::string versions;               // the CRIU releases with this ABI, e.g. "3.19", "4.0-4.1"
	bool owns_vma_fd = false;           // UPDATE_VMA_MAP: CRIU closes the returned fd (3.19+)
	bool checkpoint_devices = false;    // CHECKPOINT_DEVICES (11) and PAUSE_DEVICES (10) exist (4.0+)
	bool checkpoint_at_predump = false; // CHECKPOINT_DEVICES also runs for `criu pre-dump` (4.0)
	std::string refusal;                // non-empty: an ABI this build does not know (one line)
	bool is_criu = false;               // it exports cr_plugin_ctl: a CRIU, known or not
};

// What the running process exports, as classify() needs it (detect() reads it with dlsym).
struct CriuSymbols {
	bool have_ctl = false; // cr_plugin_ctl is exported
	size_t ctl_size = 0;   // its st_size
	bool rpc_query_external_files = false;
	bool dont_use_freeze_cgroup = false;
};

// Pure: the ABI of a CRIU that exports these symbols.
CriuAbi classify(const CriuSymbols &s);
// The ABI of the CRIU this process runs in (the plugin, inside criu), detected once.
const CriuAbi &criu_abi();
// The ABI of the criu binary at `path` (e.g. /proc/PID/exe of the criu that runs the action
// script), read from its ELF dynamic symbol table. Throws gw::Error (one line) when the file
// cannot be read as ELF. In criu_abi_elf.cpp (library gwaction_elf, libelf): the action
// script's, not linked into the plugin.
CriuAbi criu_abi_of_binary(const std::string &path);

// The plugin directory a criu command line names: the last --libdir/-L (CRIU keeps one), made
// absolute against `cwd`; "" when it names none (configuration files, CRIU_LIBS_DIR or the
// default decide then, and `criu swrk` takes its options over RPC).
std::string libdir_of_cmdline(const std::vector<std::string> &argv, const std::string &cwd);
// One line when the criu with this pid was given, on its command line, a plugin directory
// without gpuwatch_criu.so (a tool's own --libdir after gpuwatch's replaces it); else "".
std::string plugin_missing_from_libdir(pid_t criu);

} // namespace gwaction
