#include "snapshot.hpp"

#include <cstring>

#include "gpuwatch.h"
#include "model.hpp"
#include "sysutil.hpp"
#include "tracer.hpp"

namespace gw
{

size_t snapshot_into(Tracer &tracer, Model &model, const std::set<uint32_t> &pids)
{
	if (pids.empty())
		return 0;
	for (uint32_t pid : pids)
		model.add_process(pid, proc_comm(pid));
	auto records = tracer.snapshot(pids);
	for (const auto &rec : records) {
		model.apply(rec);
		gw_hdr h;
		std::memcpy(&h, rec.data(), sizeof(h));
		if (h.kind == GW_EV_MMAP)
			tracer.mark_has_maps(h.tgid);
	}
	return records.size();
}

} // namespace gw
