// The tracer's lifecycle: open, configure, load and attach the BPF object (bpf/), read its
// ring buffer and counters, and run the snapshot iterators.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "gpuwatch.h"
#include "hook_paths.hpp"

namespace gw
{

class Tracer
{
public:
	using RecordFn = std::function<void(std::span<const std::byte>)>;
	struct Options {
		int cgroup_fd = -1;             // the followed cgroup v2 directory
		uint32_t ring_bytes = 4u << 20; // ring buffer size (power of two, >= page)
		std::vector<uint8_t> ioctl_nrs; // core DRM ioctl nrs that change state
		// per enum gw_driver (index 0 unused): the driver's name and its private ioctl nrs
		// (0x40-0x9f) the decoder knows
		std::array<std::string, GW_DRV_MAX> drv_names;
		std::array<std::vector<uint8_t>, GW_DRV_MAX> drv_nrs;
		// the nrs not decoded that may change state: only their success is recorded (core;
		// private per driver, index GW_DRV_OTHER for drivers without a table)
		std::vector<uint8_t> note_nrs;
		std::array<std::vector<uint8_t>, GW_DRV_MAX> drv_note_nrs;
		bool verbose = false; // libbpf's own messages on stderr
		HookRequest hooks;    // auto: fexit per group where it loads and attaches
	};

	// Chooses the hooks (probe_fexit), loads and attaches everything; throws gw::Error with
	// one line on failure. cgroup_fd -1 follows nothing (`gpuwatch check`).
	Tracer(const Options &opts, RecordFn on_record);
	~Tracer();
	Tracer(const Tracer &) = delete;
	Tracer &operator=(const Tracer &) = delete;

	// Records wake the reader only after arm_wakeup() (the next record does, once) or when a
	// quarter of the ring is full: a reader that sleeps on epoll_fd() arms first, then drains
	// once more (a record that came before the arm woke nobody), then sleeps.
	int epoll_fd() const;         // readable when records are waiting (see above)
	int drain();                  // consumes all that is waiting
	void arm_wakeup();            // the next record wakes epoll_fd()
	gw_counters counters() const; // lost events and failed reads, counted in the kernel

	// Runs the task_file and task_vma iterators for these processes; returns their records.
	std::vector<std::vector<std::byte>> snapshot(const std::set<uint32_t> &pids);
	void mark_has_maps(uint32_t tgid); // tells the kernel side this process has DRM mappings

	const HookPlan &hooks() const;
	std::string hook_path() const { return hooks().path(); }

	// Loads group g's fentry/fexit programs alone (with tiny maps), attaches them and detaches
	// them at once: "" if that works, else why not ("fexit mmap_region: loading refused: ...").
	static std::string try_fexit(HookGroup g);

private:
	struct Impl;
	std::unique_ptr<Impl> impl_;
};

} // namespace gw
