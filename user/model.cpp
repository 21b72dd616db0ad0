// The device-state model, entry points: one record at a time through dispatch (contract in
// model.hpp, ownership rules in model_ops.hpp), and the Model API. Files and their reference
// counts: model_files.cpp; fds, mappings and processes: model_tasks.cpp; GEM state:
// model_gem.cpp and model_intel.cpp; the manifest form: model_manifest.cpp.
#include "model.hpp"

#include "drm_devices.hpp"

#include "model_ops.hpp"

namespace gw
{

static_assert(GW_DRM_MAJOR == kDrmMajor, "the BPF programs and user space must agree on the DRM major");

ApplyStatus ModelOps::malformed()
{
	++m.malformed_;
	changed = true;
	return ApplyStatus::malformed;
}

Process *ModelOps::process(uint32_t tgid)
{
	return m.last_proc_.find(m.procs_, tgid);
}

Process &ModelOps::process_or_create(uint32_t tgid)
{
	auto [it, inserted] = m.procs_.try_emplace(tgid);
	if (inserted) {
		it->second.pid = tgid;
		changed = true;
	}
	return it->second;
}

ApplyStatus ModelOps::dispatch(std::span<const std::byte> rec)
{
	if (abi::check_record(rec) != abi::RecordError::none)
		return malformed();
	switch (abi::read_header(rec)->kind) {
	case GW_EV_FD: return on_fd(*abi::read_record<gw_ev_fd>(rec));
	case GW_EV_CLOSE: return on_close(*abi::read_record<gw_ev_close>(rec));
	case GW_EV_CLOSE_RANGE: return on_close_range(*abi::read_record<gw_ev_close_range>(rec));
	case GW_EV_IOCTL:
	case GW_EV_IOCTL_AFTER: return on_ioctl(*abi::read_ioctl(rec));
	case GW_EV_MMAP: return on_mmap(*abi::read_record<gw_ev_mmap>(rec));
	case GW_EV_MUNMAP: return on_munmap(*abi::read_record<gw_ev_munmap>(rec));
	case GW_EV_MREMAP: return on_mremap(*abi::read_record<gw_ev_mremap>(rec));
	case GW_EV_FORK: return on_fork(*abi::read_record<gw_ev_fork>(rec));
	case GW_EV_EXEC: return on_exec(*abi::read_record<gw_ev_exec>(rec));
	case GW_EV_EXIT: return on_exit(*abi::read_record<gw_ev_exit>(rec));
	case GW_EV_CGROUP_MOVE: return ApplyStatus::ok; // the daemon's business
	case GW_EV_IOCTL_EXT: {
		auto x = *abi::read_record<gw_ev_ioctl_ext>(rec);
		m.pending_ext_[x.hdr.tid] = x; // consumed by this thread's next ioctl record
		return ApplyStatus::ok;
	}
	}
	return malformed();
}

// --- Model ------------------------------------------------------------------------------
Model::Model(std::string cgroup) : cgroup_(std::move(cgroup)) {}

ApplyStatus Model::apply(std::span<const std::byte> record)
{
	ModelOps ops{*this};
	ApplyStatus st = ops.dispatch(record);
	if (ops.need_gc)
		ops.gc();
	else if (!ops.lost_files.empty() || !ops.lost_bufs.empty() || !ops.lost_objs.empty())
		ops.collect();
	ops.verify_collect();
	if (ops.changed)
		++generation_;
	return st;
}

void Model::add_process(uint32_t tgid, std::string comm)
{
	auto [it, inserted] = procs_.try_emplace(tgid);
	it->second.pid = tgid;
	if (inserted || it->second.comm != comm) {
		it->second.comm = std::move(comm);
		++generation_;
	}
}

void Model::remove_process(uint32_t tgid)
{
	ModelOps ops{*this};
	ops.drop_pending(tgid);
	auto it = procs_.find(tgid);
	if (it == procs_.end())
		return;
	ops.uncount_mappings(it->second);
	last_proc_ = {};
	procs_.erase(it);
	ops.gc();
	++generation_;
}

bool Model::has_process(uint32_t tgid) const
{
	return procs_.count(tgid) > 0;
}

std::vector<uint32_t> Model::pids() const
{
	std::vector<uint32_t> out;
	for (const auto &[pid, p] : procs_)
		out.push_back(pid);
	return out;
}

void Model::set_kernel_counters(uint64_t lost_events, uint64_t failed_reads)
{
	if (lost_events == lost_events_ && failed_reads == failed_reads_)
		return;
	lost_events_ = lost_events;
	failed_reads_ = failed_reads;
	++generation_;
}

void Model::mark_incomplete(const std::string &reason)
{
	if (std::find(incomplete_.begin(), incomplete_.end(), reason) != incomplete_.end())
		return;
	incomplete_.push_back(reason);
	++generation_;
}

void Model::set_node_namer(NodeNamer namer)
{
	namer_ = namer;
}

} // namespace gw
