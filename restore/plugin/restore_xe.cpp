#include "restore_xe.hpp"

#include <algorithm>
#include <cerrno>

#include "log.hpp"
#include "restore.hpp"
#include "uapi/xe_uapi.h"

namespace gwcriu
{
namespace
{

std::string hexnum(uint64_t v)
{
	char b[32];
	snprintf(b, sizeof(b), "%#llx", static_cast<unsigned long long>(v));
	return b;
}

void expect_id(uint32_t got, uint32_t want, const std::string &what)
{
	expect_number("xe " + what, got, want);
}

} // namespace

XeRestore::XeRestore(int fd, const FileImage &f) : fd_(fd), f_(f) {}

void XeRestore::vms()
{
	if (!f_.xe)
		return;
	const XeFileState &st = *f_.xe;
	uint32_t top = st.vms.empty() ? 0 : st.vms.back().id;
	for (const XeQueue &q : st.queues) // a destroyed VM id below or above: its filler carries the queue
		if (q.vm_destroyed)
			top = std::max(top, q.vm);
	auto it = st.vms.begin();
	for (uint32_t id = 1; id <= top; ++id) {
		bool real = it != st.vms.end() && it->id == id;
		uint32_t got = 0;
		if (int e = xe::vm_create(fd_, real ? it->flags : 0, &got); e != 0)
			throw Error("cannot create xe VM " + num(id) +
				    (real ? " (flags " + hexnum(it->flags) + ")" : " (filler)") + ": " +
				    gw::errno_text(-e));
		expect_id(got, id, "VM");
		if (real)
			++it;
		else
			vm_fillers_.push_back(got);
	}
}

uint32_t XeRestore::create(const HandleRec &h, bool *filled)
{
	const XeBuffer &b = *h.xe;
	uint32_t got = 0;
	if (int e = xe::gem_create(fd_, h.size, b.placement, b.flags, b.vm_id, b.cpu_caching, &got); e != 0)
		throw Error("cannot recreate handle " + num(h.handle) + " (xe GEM_CREATE, " + num(h.size) +
			    " bytes, placement " + hexnum(b.placement) + ", flags " + hexnum(b.flags) + ", VM " +
			    num(b.vm_id) + ", caching " + num(b.cpu_caching) + "): " + gw::errno_text(-e));
	*filled = fill_handle(fd_, got, h.size, h.object, h.saved);
	return got;
}

uint32_t XeRestore::filler(uint64_t size)
{
	uint32_t got = 0;
	if (int e = xe::gem_create(fd_, size, 1, 0, 0, GW_XE_GEM_CPU_CACHING_WB, &got); e != 0)
		throw Error("cannot create a filler buffer: " + gw::errno_text(-e));
	return got;
}

void XeRestore::bindings()
{
	std::size_t n = 0;
	for (const XeVm &vm : f_.xe->vms)
		for (const XeBinding &b : vm.bindings) {
			uint32_t op = b.userptr ? GW_XE_VM_BIND_OP_MAP_USERPTR : GW_XE_VM_BIND_OP_MAP;
			uint64_t off = b.userptr ? *b.userptr : b.offset;
			// MAP_USERPTR runs before CRIU has put the task's memory back: a driver that pins the
			// pages at bind time (real xe) may refuse it (see README, Known limits).
			if (int e = xe::bind(fd_, vm.id, op, b.handle.value_or(0), off, b.addr, b.range, b.pat_index,
					     b.flags);
			    e != 0)
				throw Error("cannot bind again VM " + num(vm.id) + " " + hexnum(b.addr) + "+" +
					    hexnum(b.range) + " (" +
					    (b.userptr  ? "userptr " + hexnum(*b.userptr)
					     : b.handle ? "handle " + num(*b.handle) + " offset " + hexnum(b.offset)
							: "null") +
					    ", PAT " + num(b.pat_index) + ", flags " + hexnum(b.flags) +
					    "): " + gw::errno_text(-e));
			++n;
		}
	log_info("file %u: %zu xe bindings replayed", f_.criu_id, n);
}

void XeRestore::queues()
{
	const XeFileState &st = *f_.xe;
	std::vector<uint32_t> fillers;
	uint32_t next = 1;
	for (const XeQueue &q : st.queues) {
		for (; next < q.id; ++next) { // a filler like the queue that follows the hole, without properties
			uint32_t got = 0;
			if (int e = xe::queue_create(fd_, q.vm, 0, q.width, q.num_placements, q.instances, {}, &got);
			    e != 0)
				throw Error("cannot create filler exec queue " + num(next) + ": " + gw::errno_text(-e));
			expect_id(got, next, "exec queue");
			fillers.push_back(got);
		}
		uint32_t got = 0;
		if (int e = xe::queue_create(fd_, q.vm, q.flags, q.width, q.num_placements, q.instances, q.properties,
					     &got);
		    e != 0)
			throw Error("cannot recreate exec queue " + num(q.id) + " (VM " + num(q.vm) + ", width " +
				    num(q.width) + ", " + num(q.num_placements) + " placements, " +
				    num(q.properties.size()) + " properties): " + gw::errno_text(-e));
		expect_id(got, q.id, "exec queue");
		if (q.vm_destroyed)
			notes_.push_back("exec queue " + num(q.id) + ": its VM (id " + num(q.vm) +
					 ", destroyed since) comes back empty, with flags 0");
		next = q.id + 1;
	}
	for (uint32_t id : fillers)
		xe::queue_destroy(fd_, id);
	log_info("file %u: %zu xe exec queues recreated with their ids (%zu fillers closed)", f_.criu_id,
		 st.queues.size(), fillers.size());
}

void XeRestore::finish()
{
	if (!f_.xe)
		return;
	bindings();
	queues();
	for (uint32_t id : vm_fillers_)
		xe::vm_destroy(fd_, id);
	log_info("file %u: %zu xe VMs recreated with their ids (%zu fillers closed)", f_.criu_id, f_.xe->vms.size(),
		 vm_fillers_.size());
	vm_fillers_.clear();
}

} // namespace gwcriu
