#include "dump_xe.hpp"

#include <algorithm>

#include "dump.hpp"

namespace gwcriu
{
namespace
{

namespace mf = gw::manifest;

uint32_t u32(uint64_t v)
{
	return v <= UINT32_MAX ? static_cast<uint32_t>(v) : 0;
}

// The file's lowest handle of manifest object `object`, or 0.
uint32_t handle_of_object(const mf::File &f, uint64_t object)
{
	uint32_t best = 0;
	for (const mf::Handle &h : f.handles)
		if (h.object == object && h.handle <= UINT32_MAX) {
			uint32_t n = static_cast<uint32_t>(h.handle);
			best = best == 0 ? n : std::min(best, n);
		}
	return best;
}

constexpr uint16_t kVmBindClass = 5; // DRM_XE_ENGINE_CLASS_VM_BIND

} // namespace

bool is_xe(const SavedDevice &d)
{
	return d.driver == "xe";
}

std::optional<XeBuffer> xe_buffer_of(const mf::Handle &h, const mf::File &f, std::vector<std::string> *degraded)
{
	if (h.origin != "xe.gem_create")
		return std::nullopt;
	const mf::CreateParams &p = h.create;
	std::string who = "handle " + num(h.handle);
	XeBuffer b;
	b.placement = p.placement.value_or(0);
	b.flags = p.flags.value_or(0);
	b.vm_id = p.vm_id.value_or(0);
	b.cpu_caching = static_cast<uint16_t>(p.cpu_caching.value_or(0));
	if (b.placement == 0 || b.cpu_caching == 0 || b.cpu_caching > 2) {
		degraded->push_back(who +
				    ": its xe creation parameters were not recorded: it comes back as a plain buffer");
		return std::nullopt;
	}
	if (b.vm_id && !f.has_vm(b.vm_id)) {
		degraded->push_back(who + ": private to VM " + num(b.vm_id) +
				    ", whose id was destroyed since: it comes back as a buffer of no VM");
		b.vm_id = 0;
	}
	if (p.extensions)
		degraded->push_back(who + ": GEM_CREATE extensions (PXP) are not replayed");
	return b;
}

XeFileState xe_state_of(const mf::File &f, std::vector<std::string> *degraded)
{
	XeFileState st;
	for (const mf::Vm &vj : f.vms.value_or(std::vector<mf::Vm>{})) {
		if (vj.id > UINT32_MAX)
			continue;
		XeVm vm;
		vm.id = static_cast<uint32_t>(vj.id);
		vm.flags = vj.flags;
		std::string who = "VM " + num(vm.id);
		if (vj.params.is_object() && !vj.params.empty())
			degraded->push_back(who + ": VM_CREATE extensions are not replayed");
		for (const mf::Binding &bj : vj.bindings) {
			XeBinding b;
			b.addr = bj.addr;
			b.range = bj.range;
			b.pat_index = static_cast<uint16_t>(bj.pat_index);
			b.flags = bj.flags;
			std::string at = who + " binding at " + num(b.addr);
			if (bj.userptr) {
				b.userptr = *bj.userptr;
			} else {
				b.offset = bj.offset;
				if (bj.handle) {
					b.handle = u32(*bj.handle);
				} else if (bj.object) {
					uint32_t h = handle_of_object(f, *bj.object);
					if (!h) {
						degraded->push_back(
							at +
							": its buffer has no handle left in the file: not bound again");
						continue;
					}
					b.handle = h;
				} // else a NULL (sparse) binding: no buffer
			}
			vm.bindings.push_back(b);
		}
		std::sort(vm.bindings.begin(), vm.bindings.end(),
			  [](const XeBinding &a, const XeBinding &b) { return a.addr < b.addr; });
		st.vms.push_back(std::move(vm));
	}
	std::sort(st.vms.begin(), st.vms.end(), [](const XeVm &a, const XeVm &b) { return a.id < b.id; });
	for (const mf::ExecQueue &qj : f.exec_queues.value_or(std::vector<mf::ExecQueue>{})) {
		if (qj.id > UINT32_MAX)
			continue;
		XeQueue q;
		q.id = static_cast<uint32_t>(qj.id);
		q.vm = u32(qj.vm);
		q.flags = qj.flags;
		q.width = qj.width;
		q.num_placements = qj.num_placements;
		for (const mf::QueueInstance &e : qj.instances)
			q.instances.push_back({e.engine_class, e.instance, e.gt});
		std::string who = "exec queue " + num(q.id);
		if (q.instances.empty() || q.instances.size() != std::size_t{q.width} * q.num_placements) {
			degraded->push_back(who + ": its engines were not recorded whole: not recreated");
			continue;
		}
		for (const auto &[property, value] : qj.properties)
			q.properties.push_back({property, value});
		for (const std::string &name : qj.other_params)
			degraded->push_back(who + ": property " + name + " is not replayed");
		q.vm_destroyed = q.instances[0].engine_class != kVmBindClass && q.vm != 0 && !f.has_vm(q.vm);
		st.queues.push_back(std::move(q));
	}
	std::sort(st.queues.begin(), st.queues.end(), [](const XeQueue &a, const XeQueue &b) { return a.id < b.id; });
	return st;
}

} // namespace gwcriu
