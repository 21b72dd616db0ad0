// `gpuwatch attach`: follow one cgroup and keep its manifest up to date until a signal.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "hook_paths.hpp"
#include "tracer.hpp"

namespace gw
{

struct AttachOptions {
	std::string cgroup;          // cgroup v2 directory, or empty with pid set
	std::optional<uint32_t> pid; // follow the cgroup this process is in
	std::string manifest;        // where the manifest is written (atomically)
	std::string run_dir;         // registration + control socket (see control.hpp)
	uint32_t ring_bytes = 4u << 20;
	unsigned debounce_ms = 50; // a change is on disk within debounce_ms (+ write time)
	bool verbose = false;
	bool log_records = false; // one stderr line per record (debugging)
	HookRequest hooks;        // --hooks / GPUWATCH_HOOKS
};

// The ioctls the decoder knows, as the tracer's knobs (core nrs, each driver's name and
// private nrs): attach and check load the programs with the same knobs.
void set_decoded_ioctls(Tracer::Options &topts);

// Runs in the foreground until SIGINT/SIGTERM; writes a final manifest and returns 0.
// Throws gw::Error (one line) if it cannot start; then no manifest file is created.
int run_attach(const AttachOptions &opts);

} // namespace gw
