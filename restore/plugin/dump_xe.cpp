#include "dump_xe.hpp"

#include <algorithm>

#include "dump.hpp"

namespace gwcriu {
namespace {

using json = nlohmann::json;

std::string num(uint64_t v) { return std::to_string(v); }

bool live_vm(const json &mf, uint64_t id)
{
	const json &vms = jget(mf, "vms");
	return vms.is_array() && std::any_of(vms.begin(), vms.end(), [&](const json &v) { return jget(v, "id") == id; });
}

uint32_t u32_or(const json &v, uint32_t dflt) { return v.is_number_unsigned() ? v.get<uint32_t>() : dflt; }

// The file's lowest handle of manifest object `object`, or 0.
uint32_t handle_of_object(const json &mf, const json &object)
{
	uint32_t best = 0;
	for (const json &h : jget(mf, "handles"))
		if (jget(h, "object") == object && jget(h, "handle").is_number_unsigned()) {
			uint32_t n = jget(h, "handle").get<uint32_t>();
			best = best == 0 ? n : std::min(best, n);
		}
	return best;
}

constexpr uint16_t kVmBindClass = 5; // DRM_XE_ENGINE_CLASS_VM_BIND

} // namespace

bool is_xe(const DeviceRec &d) { return d.driver == "xe"; }

std::optional<XeBuffer> xe_buffer_of(const json &h, const json &mf, std::vector<std::string> *degraded)
{
	if (jget(h, "origin") != "xe.gem_create")
		return std::nullopt;
	const json &p = jget(h, "params");
	std::string who = "handle " + (jget(h, "handle").is_number() ? num(jget(h, "handle").get<uint64_t>()) : "?");
	XeBuffer b;
	b.placement = u32_or(jget(p, "placement"), 0);
	b.flags = u32_or(jget(p, "flags"), 0);
	b.vm_id = u32_or(jget(p, "vm_id"), 0);
	b.cpu_caching = static_cast<uint16_t>(u32_or(jget(p, "cpu_caching"), 0));
	if (b.placement == 0 || b.cpu_caching == 0 || b.cpu_caching > 2) {
		degraded->push_back(who + ": its xe creation parameters were not recorded: it comes back as a plain buffer");
		return std::nullopt;
	}
	if (b.vm_id && !live_vm(mf, b.vm_id)) {
		degraded->push_back(who + ": private to VM " + num(b.vm_id) +
		                    ", whose id was destroyed since: it comes back as a buffer of no VM");
		b.vm_id = 0;
	}
	if (jget(p, "properties").is_object() && !jget(p, "properties").empty())
		degraded->push_back(who + ": GEM_CREATE extensions (PXP) are not replayed");
	return b;
}

XeFileState xe_state_of(const json &mf, std::vector<std::string> *degraded)
{
	XeFileState st;
	for (const json &vj : jget(mf, "vms")) {
		if (!jget(vj, "id").is_number_unsigned())
			continue;
		XeVm vm;
		vm.id = jget(vj, "id").get<uint32_t>();
		vm.flags = u32_or(jget(vj, "flags"), 0);
		std::string who = "VM " + num(vm.id);
		if (jget(vj, "params").is_object() && !jget(vj, "params").empty())
			degraded->push_back(who + ": VM_CREATE extensions are not replayed");
		for (const json &bj : jget(vj, "bindings")) {
			XeBinding b;
			b.addr = jget(bj, "addr").get<uint64_t>();
			b.range = jget(bj, "range").get<uint64_t>();
			b.pat_index = static_cast<uint16_t>(u32_or(jget(bj, "pat_index"), 0));
			b.flags = u32_or(jget(bj, "flags"), 0);
			std::string at = who + " binding at " + num(b.addr);
			if (jget(bj, "userptr").is_number_unsigned()) {
				b.userptr = jget(bj, "userptr").get<uint64_t>();
			} else {
				b.offset = jget(bj, "offset").is_number_unsigned() ? jget(bj, "offset").get<uint64_t>() : 0;
				if (jget(bj, "handle").is_number_unsigned()) {
					b.handle = jget(bj, "handle").get<uint32_t>();
				} else if (!jget(bj, "object").is_null()) {
					uint32_t h = handle_of_object(mf, jget(bj, "object"));
					if (!h) {
						degraded->push_back(at + ": its buffer has no handle left in the file: not bound again");
						continue;
					}
					b.handle = h;
				} // else a NULL (sparse) binding: no buffer
			}
			vm.bindings.push_back(b);
		}
		std::sort(vm.bindings.begin(), vm.bindings.end(), [](const XeBinding &a, const XeBinding &b) { return a.addr < b.addr; });
		st.vms.push_back(std::move(vm));
	}
	std::sort(st.vms.begin(), st.vms.end(), [](const XeVm &a, const XeVm &b) { return a.id < b.id; });
	for (const json &qj : jget(mf, "exec_queues")) {
		if (!jget(qj, "id").is_number_unsigned())
			continue;
		XeQueue q;
		q.id = jget(qj, "id").get<uint32_t>();
		q.vm = u32_or(jget(qj, "vm"), 0);
		q.flags = u32_or(jget(qj, "flags"), 0);
		q.width = static_cast<uint16_t>(u32_or(jget(qj, "width"), 0));
		q.num_placements = static_cast<uint16_t>(u32_or(jget(qj, "num_placements"), 0));
		for (const json &e : jget(qj, "instances"))
			q.instances.push_back({static_cast<uint16_t>(u32_or(jget(e, "class"), 0)),
			                       static_cast<uint16_t>(u32_or(jget(e, "instance"), 0)),
			                       static_cast<uint16_t>(u32_or(jget(e, "gt"), 0))});
		std::string who = "exec queue " + num(q.id);
		if (q.instances.empty() || q.instances.size() != std::size_t{q.width} * q.num_placements) {
			degraded->push_back(who + ": its engines were not recorded whole: not recreated");
			continue;
		}
		if (jget(qj, "params").is_object())
			for (const auto &[name, v] : jget(qj, "params").items()) {
				if (name.rfind("property_", 0) == 0 && v.is_number_unsigned())
					q.properties.push_back({static_cast<uint32_t>(std::stoul(name.substr(9))), v.get<uint64_t>()});
				else
					degraded->push_back(who + ": property " + name + " is not replayed");
			}
		q.vm_destroyed = q.instances[0].engine_class != kVmBindClass && q.vm != 0 && !live_vm(mf, q.vm);
		st.queues.push_back(std::move(q));
	}
	std::sort(st.queues.begin(), st.queues.end(), [](const XeQueue &a, const XeQueue &b) { return a.id < b.id; });
	return st;
}

} // namespace gwcriu
