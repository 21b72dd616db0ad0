#include "restore_i915.hpp"

#include <algorithm>
#include <cerrno>
#include <i915_drm.h>
#include <optional>

#include "log.hpp"
#include "restore.hpp"

namespace gwcriu
{
namespace
{

std::string region_text(const i915::Region &r)
{
	return std::string(r.mem_class == I915_MEMORY_CLASS_SYSTEM   ? "system"
			   : r.mem_class == I915_MEMORY_CLASS_DEVICE ? "device"
								     : "class " + num(r.mem_class)) +
	       " " + num(r.instance);
}

void expect_id(uint32_t got, uint32_t want, const std::string &what)
{
	expect_number("i915 " + what, got, want);
}

} // namespace

I915Restore::I915Restore(int fd, const FileImage &f) : fd_(fd), f_(f) {}

void I915Restore::contexts()
{
	if (!f_.i915)
		return;
	const I915FileState &st = *f_.i915;
	std::vector<uint32_t> vm_fillers, ctx_fillers;
	uint32_t top_vm = st.vms.empty() ? 0 : st.vms.back();
	for (uint32_t id = 1; id <= top_vm; ++id) {
		uint32_t got = 0;
		if (int e = i915::vm_create(fd_, &got); e != 0)
			throw Error("cannot create i915 VM " + num(id) + ": " + gw::errno_text(-e));
		expect_id(got, id, "VM");
		if (!std::binary_search(st.vms.begin(), st.vms.end(), id))
			vm_fillers.push_back(got);
	}
	uint32_t next = 1;
	for (const I915Context &c : st.contexts) {
		if (c.id == 0) { // the default context exists from open: only its parameters
			for (const i915::CtxParam &p : c.params)
				if (int e = i915::context_setparam(fd_, 0, p); e != 0)
					notes_.push_back("context 0: parameter " + num(p.param) + " not reapplied (" +
							 gw::errno_text(-e) + ")");
			if (c.engines || c.vm)
				notes_.push_back("context 0: its engine map or VM cannot be set again after open");
			continue;
		}
		for (; next < c.id; ++next) {
			uint32_t got = 0;
			if (int e = i915::context_create(fd_, 0, std::nullopt, std::nullopt, {}, &got); e != 0)
				throw Error("cannot create filler context " + num(next) + ": " + gw::errno_text(-e));
			expect_id(got, next, "context");
			ctx_fillers.push_back(got);
		}
		// A context whose VM id was destroyed keeps its VM: give it a VM under a temporary id
		// (above every live one, the holes being filled) and destroy that id again.
		std::optional<uint32_t> vm = c.vm, temp;
		if (c.vm && c.vm_destroyed) {
			uint32_t t = 0;
			if (int e = i915::vm_create(fd_, &t); e != 0)
				throw Error("cannot create the VM of context " + num(c.id) + ": " + gw::errno_text(-e));
			vm = temp = t;
		}
		uint32_t got = 0;
		int e = i915::context_create(fd_, c.flags & ~I915_CONTEXT_CREATE_FLAGS_USE_EXTENSIONS, vm, c.engines,
					     c.params, &got);
		if (temp)
			i915::vm_destroy(fd_, *temp);
		if (e != 0)
			throw Error("cannot recreate context " + num(c.id) + " (flags " + num(c.flags) + ", " +
				    (c.vm ? "VM " + num(*c.vm) : std::string("own VM")) + ", " + num(c.params.size()) +
				    " parameters" + (c.engines ? ", engine map" : "") + "): " + gw::errno_text(-e));
		expect_id(got, c.id, "context");
		next = c.id + 1;
	}
	for (uint32_t id : ctx_fillers)
		i915::context_destroy(fd_, id);
	for (uint32_t id : vm_fillers)
		i915::vm_destroy(fd_, id);
	log_info("file %u: %zu i915 VMs and %zu contexts recreated with their ids (%zu + %zu fillers closed)",
		 f_.criu_id, st.vms.size(), st.contexts.size(), vm_fillers.size(), ctx_fillers.size());
}

std::vector<i915::Region> I915Restore::placements(const HandleRec &h)
{
	const std::vector<i915::Region> &want = h.i915->placements;
	if (want.empty())
		return want;
	if (!regions_known_) {
		int err = 0;
		regions_ = i915::memory_regions(fd_, &err);
		regions_known_ = true;
		if (err)
			notes_.push_back("the device's memory regions could not be queried (" + gw::errno_text(-err) +
					 "): placements are asked for as they were");
	}
	if (regions_.empty())
		return want;
	std::vector<i915::Region> out;
	std::string gone;
	for (const i915::Region &r : want) {
		bool here = std::any_of(regions_.begin(), regions_.end(), [&](const i915::Region &d) {
			return d.mem_class == r.mem_class && d.instance == r.instance;
		});
		if (here)
			out.push_back(r);
		else
			gone += (gone.empty() ? "" : ", ") + region_text(r);
	}
	if (out.empty())
		out.push_back({I915_MEMORY_CLASS_SYSTEM, 0});
	if (!gone.empty()) {
		std::string now;
		for (const i915::Region &r : out)
			now += (now.empty() ? "" : ", ") + region_text(r);
		notes_.push_back("handle " + num(h.handle) + ": this device has no " + gone +
				 " memory region; placed in " + now);
	}
	return out;
}

uint32_t I915Restore::create(const HandleRec &h, bool *filled)
{
	const I915Buffer &b = *h.i915;
	uint32_t got = 0;
	int e = 0;
	*filled = false;
	if (b.kind == "create") {
		e = i915::gem_create(fd_, h.size, &got);
	} else if (b.kind == "create_ext") {
		e = i915::gem_create_ext(fd_, h.size, b.flags, placements(h), b.protected_content, b.pat, &got);
	} else if (b.kind == "userptr") {
		// Over the same address of the task's memory, restored by CRIU (the driver pins pages
		// only when the GPU uses them). PROBE would check the range now, before CRIU has put
		// that memory back in place: it is dropped.
		uint32_t flags = b.flags & ~uint32_t{I915_USERPTR_PROBE};
		e = i915::userptr(fd_, b.user_ptr, h.size, flags, &got);
		if (e == 0 && flags != b.flags)
			notes_.push_back("handle " + num(h.handle) + ": userptr recreated without I915_USERPTR_PROBE");
		if (e == 0)
			*filled = true; // its contents are the task's memory
	} else {
		throw Error("handle " + num(h.handle) + " has no i915 creation to replay");
	}
	if (e != 0)
		throw Error("cannot recreate handle " + num(h.handle) + " (i915 " + b.kind + ", " + num(h.size) +
			    " bytes): " + gw::errno_text(-e));
	if (b.kind != "userptr" && h.object)
		*filled = fill_handle(fd_, got, h.size, h.object, h.saved);
	return got;
}

uint32_t I915Restore::filler(uint64_t size)
{
	uint32_t got = 0;
	if (int e = i915::gem_create(fd_, size, &got); e != 0)
		throw Error("cannot create a filler buffer: " + gw::errno_text(-e));
	return got;
}

void I915Restore::attributes(const HandleRec &h, uint32_t handle)
{
	if (!h.i915)
		return;
	const I915Buffer &b = *h.i915;
	if (b.tiling)
		if (int e = i915::set_tiling(fd_, handle, b.tiling->first, b.tiling->second); e != 0)
			notes_.push_back("handle " + num(h.handle) + ": tiling not reapplied (" + gw::errno_text(-e) +
					 ")");
	if (b.caching)
		if (int e = i915::set_caching(fd_, handle, *b.caching); e != 0)
			notes_.push_back("handle " + num(h.handle) + ": caching not reapplied (" + gw::errno_text(-e) +
					 ")");
}

} // namespace gwcriu
