// `gpuwatch check`: can gpuwatch run on this kernel, and which hooks would it use? Probes and
// loads the BPF object exactly as `attach` does, following no cgroup, attaches it and
// detaches it at once.
#pragma once

#include "hook_paths.hpp"

namespace gw
{

struct CheckOptions {
	HookRequest hooks;    // --hooks / GPUWATCH_HOOKS, as for attach
	bool json = false;    // one JSON object instead of text
	bool verbose = false; // libbpf's messages on stderr
};

// Prints the report on stdout and returns 0 when gpuwatch can run (on either path). Throws
// gw::Error (one line) when it cannot: not root, no BTF, the programs do not load or attach,
// or --hooks=fexit where a group cannot use fexit.
int run_check(const CheckOptions &opts);

} // namespace gw
