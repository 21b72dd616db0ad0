// The model's side of i915 and xe ioctls: buffers with their creation parameters (placements,
// PAT, tiling, userptr), mmap offset grants with their types, the legacy in-ioctl mapping,
// i915 contexts and VMs, xe VMs with their bindings and exec queues, and the fds i915 hands
// out (perf streams, out-fences). Mirrors the kernel's id rules: i915 context 0 exists from
// open (model.cpp, learn_meta); every other id is whatever the kernel returned.
#include <algorithm>
#include <cstdio>

#include <i915_drm.h>
#include <sys/mman.h>

#include "model_ops.hpp"
#include "uapi/xe_uapi.h"

namespace gw
{
namespace
{

using json = nlohmann::json;

template <class... Ts> struct overloaded : Ts... {
	using Ts::operator()...;
};
template <class... Ts> overloaded(Ts...) -> overloaded<Ts...>;

const char *mem_class_name(uint16_t c)
{
	switch (c) {
	case I915_MEMORY_CLASS_SYSTEM: return "system";
	case I915_MEMORY_CLASS_DEVICE: return "device";
	default: return "unknown";
	}
}

const char *tiling_name(uint32_t mode)
{
	switch (mode) {
	case I915_TILING_NONE: return "none";
	case I915_TILING_X: return "X";
	case I915_TILING_Y: return "Y";
	default: return "unknown";
	}
}

std::string hex(const std::vector<uint8_t> &b)
{
	std::string s;
	char buf[3];
	for (uint8_t c : b) {
		std::snprintf(buf, sizeof buf, "%02x", c);
		s += buf;
	}
	return s;
}

// The name a context parameter gets in the manifest, or "param_<n>".
std::string ctx_param_name(uint64_t p)
{
	switch (p) {
	case I915_CONTEXT_PARAM_BAN_PERIOD: return "ban_period";
	case I915_CONTEXT_PARAM_NO_ZEROMAP: return "no_zeromap";
	case I915_CONTEXT_PARAM_GTT_SIZE: return "gtt_size";
	case I915_CONTEXT_PARAM_NO_ERROR_CAPTURE: return "no_error_capture";
	case I915_CONTEXT_PARAM_BANNABLE: return "bannable";
	case I915_CONTEXT_PARAM_PRIORITY: return "priority";
	case I915_CONTEXT_PARAM_SSEU: return "sseu";
	case I915_CONTEXT_PARAM_RECOVERABLE: return "recoverable";
	case I915_CONTEXT_PARAM_VM: return "vm";
	case I915_CONTEXT_PARAM_ENGINES: return "engines";
	case I915_CONTEXT_PARAM_PERSISTENCE: return "persistence";
	case I915_CONTEXT_PARAM_RINGSIZE: return "ringsize";
	case I915_CONTEXT_PARAM_PROTECTED_CONTENT: return "protected_content";
	default: return "param_" + std::to_string(p);
	}
}

// A parameter's manifest value: the scalar, the engine list, or the bytes in hex.
json ctx_param_value(const drm::I915CtxParam &p)
{
	if (p.size == 0)
		return p.param == I915_CONTEXT_PARAM_PRIORITY ? json(static_cast<int64_t>(p.value)) : json(p.value);
	if (!p.data)
		return json{{"size", p.size}, {"captured", false}};
	if (p.param == I915_CONTEXT_PARAM_ENGINES && p.data->size() >= 8) {
		uint64_t ext = 0;
		std::memcpy(&ext, p.data->data(), 8);
		json engines = json::array();
		for (std::size_t off = 8; off + 4 <= p.data->size(); off += 4) {
			i915_engine_class_instance ci{};
			std::memcpy(&ci, p.data->data() + off, sizeof ci);
			engines.push_back({{"class", ci.engine_class}, {"instance", ci.engine_instance}});
		}
		json v = {{"engines", engines}};
		if (ext)
			v["extensions_not_recorded"] = true; // load balancing / bonding / parallel submit
		return v;
	}
	return json{{"size", p.size}, {"bytes", hex(*p.data)}};
}

void set_ctx_param(Context &c, const drm::I915CtxParam &p)
{
	if (p.param == I915_CONTEXT_PARAM_VM) {
		c.vm = static_cast<uint32_t>(p.value);
		return;
	}
	c.params[ctx_param_name(p.param)] = ctx_param_value(p);
	if (p.size && !p.data)
		c.truncated = true;
}

json xe_exts(const std::vector<drm::XeExt> &exts)
{
	json o = json::object();
	for (const auto &e : exts)
		o["property_" + std::to_string(e.property)] = e.value;
	return o;
}

} // namespace

bool ModelOps::apply_intel(Process &p, DrmFile &f, const drm::Op &o)
{
	using namespace drm;
	auto note_truncated = [&](const std::string &what) {
		m.mark_incomplete("file " + std::to_string(f.id) + ": " + what +
				  ": the user memory it points to was not captured whole");
	};
	auto vm_or_note = [&](uint32_t id) -> Vm * {
		auto it = f.vms.find(id);
		if (it != f.vms.end())
			return &it->second;
		f.handles_known = false; // a VM created before tracing began
		Vm &vm = f.vms[id];
		vm.id = id;
		return &vm;
	};
	bool mine = true;
	std::visit(
		overloaded{
			[&](const I915GemCreate &x) {
				json params; // none for GEM_CREATE
				if (x.ext) {
					json pl = json::array();
					for (const auto &r : x.placements)
						pl.push_back({{"class", mem_class_name(r.mem_class)},
							      {"instance", r.instance}});
					params = {{"placements", pl},
						  {"flags", x.flags},
						  {"protected", x.protected_content}};
					if (x.pat_index)
						params["pat_index"] = *x.pat_index;
					if (!x.unknown_exts.empty())
						params["unknown_extensions"] = x.unknown_exts;
				}
				add_handle(f, x.handle, new_object(x.size),
					   x.ext ? "i915.gem_create_ext" : "i915.gem_create", std::move(params));
				if (x.truncated)
					note_truncated("GEM_CREATE_EXT of handle " + std::to_string(x.handle));
			},
			[&](const I915MmapOffset &x) {
				known_handle(f, x.handle);
				// I915_MMAP_OFFSET_GTT .. _FIXED (4, discrete parts); anything else "unknown"
				grant(f, x.offset, x.handle).i915_type =
					static_cast<uint8_t>(std::min<uint64_t>(x.type, 5) + 1);
				changed = true;
			},
			[&](const I915MmapLegacy &x) {
				Handle &h = known_handle(f, x.handle);
				Mapping mp;
				mp.start = x.addr;
				mp.length = page_up(x.size);
				mp.prot = PROT_READ | PROT_WRITE;
				mp.shared = true;
				mp.kfile = f.kfile;
				mp.offset = x.offset;
				mp.object = h.object;
				mp.via = Mapping::Via::i915_gem_mmap;
				map(p, mp);
			},
			[&](const I915Userptr &x) {
				add_handle(f, x.handle, new_object(x.size), "i915.userptr",
					   {{"user_ptr", x.user_ptr}, {"flags", x.flags}});
			},
			[&](const I915SetTiling &x) {
				known_handle(f, x.handle)
					.set_attr("tiling", {{"mode", tiling_name(x.mode)},
							     {"stride", x.stride},
							     {"swizzle", x.swizzle}});
				changed = true;
			},
			[&](const I915SetCaching &x) {
				known_handle(f, x.handle).set_attr("caching", x.caching);
				changed = true;
			},
			[&](const I915ContextCreate &x) {
				Context c;
				c.id = x.id;
				c.flags = x.flags;
				for (const auto &prm : x.params)
					set_ctx_param(c, prm);
				if (!x.unknown_exts.empty())
					c.params["unknown_extensions"] = x.unknown_exts;
				c.truncated = c.truncated || x.truncated;
				if (c.truncated)
					note_truncated("CONTEXT_CREATE_EXT of context " + std::to_string(x.id));
				f.contexts[x.id] = std::move(c);
				changed = true;
			},
			[&](const I915ContextDestroy &x) { changed = f.contexts.erase(x.id) > 0 || changed; },
			[&](const I915ContextSetParam &x) {
				auto it = f.contexts.find(x.p.ctx_id);
				if (it == f.contexts.end()) {
					f.handles_known = false; // a context created before tracing began
					it = f.contexts.emplace(x.p.ctx_id, Context{x.p.ctx_id}).first;
				}
				set_ctx_param(it->second, x.p);
				if (x.truncated)
					note_truncated("CONTEXT_SETPARAM of context " + std::to_string(x.p.ctx_id));
				changed = true;
			},
			[&](const I915ContextVmId &x) {
				Vm &vm = f.vms[x.vm_id];
				vm = Vm{};
				vm.id = x.vm_id;
				vm.params["of_context"] = x.ctx_id; // a name for that context's VM
				auto c = f.contexts.find(x.ctx_id);
				if (c != f.contexts.end() && !c->second.vm)
					c->second.vm = x.vm_id;
				changed = true;
			},
			[&](const I915VmCreate &x) {
				Vm vm;
				vm.id = x.id;
				vm.flags = x.flags;
				if (x.has_exts)
					vm.params["unknown_extensions"] = true;
				f.vms[x.id] = std::move(vm);
				changed = true;
			},
			[&](const I915VmDestroy &x) { changed = f.vms.erase(x.id) > 0 || changed; },
			[&](const I915PerfOpen &x) {
				json props = json::array();
				for (const auto &[k, v] : x.properties)
					props.push_back({k, v});
				m.pending_origin_[{p.pid, x.fd}] = {{"file", f.id},
								    {"ioctl", "PERF_OPEN"},
								    {"flags", x.flags},
								    {"properties", props},
								    {"complete", !x.truncated}};
			},
			[&](const I915ExecFence &x) {
				m.pending_origin_[{p.pid, x.fd}] = {
					{"file", f.id}, {"ioctl", "EXECBUFFER2_WR"}, {"context", x.ctx_id}};
			},
			[&](const XeGemCreate &x) {
				Handle &h = add_handle(f, x.handle, new_object(x.size), "xe.gem_create",
						       x.exts.empty() ? json() : json{{"properties", xe_exts(x.exts)}});
				h.has_small = true;
				uint32_t v[] = {x.placement, x.flags, x.vm_id, x.cpu_caching};
				std::copy(std::begin(v), std::end(v), h.small);
				if (x.truncated)
					note_truncated("xe GEM_CREATE of handle " + std::to_string(x.handle));
			},
			[&](const XeMmapOffset &x) {
				if (x.handle == 0)
					return; // FLAG_PCI_BARRIER: a page of the device, no buffer
				known_handle(f, x.handle);
				grant(f, x.offset, x.handle);
				changed = true;
			},
			[&](const XeVmCreate &x) {
				Vm vm;
				vm.id = x.id;
				vm.flags = x.flags;
				vm.params = xe_exts(x.exts);
				f.vms[x.id] = std::move(vm);
				changed = true;
			},
			[&](const XeVmDestroy &x) {
				if (f.vms.erase(x.id))
					changed = need_gc = true; // its bindings no longer hold their objects
			},
			[&](const XeExecQueueCreate &x) {
				ExecQueue q;
				q.id = x.id;
				q.vm = x.vm_id;
				q.flags = x.flags;
				q.width = x.width;
				q.num_placements = x.num_placements;
				for (const auto &e : x.instances)
					q.instances.push_back(
						{{"class", e.engine_class}, {"instance", e.instance}, {"gt", e.gt}});
				q.params = xe_exts(x.exts);
				f.exec_queues[x.id] = std::move(q);
				if (x.truncated)
					note_truncated("xe EXEC_QUEUE_CREATE of queue " + std::to_string(x.id));
				changed = true;
			},
			[&](const XeExecQueueDestroy &x) { changed = f.exec_queues.erase(x.id) > 0 || changed; },
			[&](const XeVmBind &x) {
				Vm *vm = vm_or_note(x.vm_id);
				for (const XeBindOp &b : x.binds) {
					switch (b.op) {
					case GW_XE_VM_BIND_OP_MAP:
					case GW_XE_VM_BIND_OP_MAP_USERPTR: {
						unbind_range(*vm, b.addr, b.range);
						Binding nb{b.addr,      b.range, b.op == GW_XE_VM_BIND_OP_MAP_USERPTR,
							   0,           0,       b.obj_offset,
							   b.pat_index, b.flags};
						if (!nb.userptr &&
						    b.obj != 0) { // obj 0: a NULL (sparse) or CPU-mirror binding
							nb.handle = b.obj;
							nb.object = known_handle(f, b.obj).object;
							if (GemObject *o = m.objects_.find(nb.object))
								o->bound = true;
						}
						vm->bindings[b.addr] = nb;
						break;
					}
					case GW_XE_VM_BIND_OP_UNMAP: unbind_range(*vm, b.addr, b.range); break;
					case GW_XE_VM_BIND_OP_UNMAP_ALL: { // every binding of the object (not of the handle number)
						uint64_t obj = known_handle(f, b.obj).object;
						std::erase_if(vm->bindings, [&](const auto &kv) {
							return !kv.second.userptr && kv.second.object == obj;
						});
						break;
					}
					default: // PREFETCH and later ops move no binding
						break;
					}
				}
				if (x.truncated)
					note_truncated("xe VM_BIND on VM " + std::to_string(x.vm_id));
				changed = need_gc = true;
			},
			[&](const auto &) { mine = false; },
		},
		o);
	return mine;
}

// Removes [addr, addr+range) from a VM's bindings, keeping the pieces of partly covered ones.
void ModelOps::unbind_range(Vm &vm, uint64_t addr, uint64_t range)
{
	uint64_t end = addr + range;
	std::vector<Binding> pieces;
	for (auto it = vm.bindings.begin(); it != vm.bindings.end();) {
		Binding b = it->second;
		uint64_t bend = b.addr + b.range;
		if (bend <= addr || b.addr >= end) {
			++it;
			continue;
		}
		it = vm.bindings.erase(it);
		if (b.addr < addr) {
			Binding l = b;
			l.range = addr - b.addr;
			pieces.push_back(l);
		}
		if (bend > end) {
			Binding r = b;
			r.addr = end;
			r.range = bend - end;
			r.offset = b.offset + (end - b.addr);
			pieces.push_back(r);
		}
	}
	for (const Binding &b : pieces)
		vm.bindings[b.addr] = b;
	changed = need_gc = true;
}

} // namespace gw
