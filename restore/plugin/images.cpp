// The plugin's images: their names, the records every kind shares (device, holders), and the
// dma-buf, fence and vmas images. The DRM file image is file_image.cpp.
#include "image_records.hpp"
#include "manifest/manifest.hpp"
#include "drm_devices.hpp"

#include <algorithm>
#include <set>

namespace gwcriu
{

using records::json;
using records::Obj;
namespace jsonin = gw::jsonin;

namespace
{
constexpr const char *kDmabufSchema = "gpuwatch.criu.dmabuf/v1";
constexpr const char *kVmasSchema = "gpuwatch.criu.vmas/v1";
constexpr const char *kFenceSchema = "gpuwatch.criu.fence/v1";

json late_json(const std::optional<LateMap> &l)
{
	if (!l)
		return nullptr;
	return {{"kind", l->kind}, {"mmap_type", records::opt(l->mmap_type)}, {"fd", l->fd}, {"wc", l->wc}};
}

std::optional<LateMap> read_late_map(const Obj &vma)
{
	auto found = vma.opt_object_at("late");
	if (!found)
		return std::nullopt;
	const Obj &o = *found;
	LateMap l;
	l.kind = o.req_str("kind", 8);
	if (l.kind != "gem" && l.kind != "shmem")
		o.fail("kind", "is neither gem nor shmem");
	l.mmap_type = o.u32_or_null("mmap_type", false, 4);
	if (l.kind == "gem" && !l.mmap_type)
		o.fail("mmap_type", "is missing for a gem mapping");
	l.fd = static_cast<int>(o.req_u32("fd", INT32_MAX));
	l.wc = o.req_bool("wc");
	return l;
}
} // namespace

// --- what every kind shares ----------------------------------------------------------------------
namespace records
{
json opt(const std::optional<uint32_t> &v)
{
	return v ? json(*v) : json(nullptr);
}

json holders_json(const std::vector<Holder> &hs)
{
	json a = json::array();
	for (const Holder &h : hs)
		a.push_back({{"pid", h.pid}, {"vpid", h.vpid}, {"fds", h.fds}});
	return a;
}

const SavedDevice &read_device(const Obj &parent, const Devices &devices)
{
	uint64_t i = parent.req_u64("device");
	if (i >= devices.size())
		parent.fail("device", "is " + std::to_string(i) + ", which names no entry of " + gw::kDevicesImage);
	return devices[i];
}

std::vector<Holder> read_holders(const Obj &top)
{
	std::vector<Holder> out;
	top.each(top.req_array("holders"), "holders", [&](const Obj &o) {
		Holder h;
		h.pid = o.req_u32("pid", 1u << 30);
		h.vpid = o.req_u32("vpid", 1u << 30);
		const json &fds = o.req_array("fds");
		for (std::size_t k = 0; k < fds.size(); ++k) {
			if (!jsonin::is_unsigned(fds[k]) || fds[k].get<uint64_t>() >= (1 << 30))
				jsonin::fail(o.at("fds", k), "is not an fd number");
			h.fds.push_back(fds[k].get<int>());
		}
		if (h.pid == 0 || h.vpid == 0)
			o.fail("pid", "is 0");
		out.push_back(std::move(h));
	});
	return out;
}

uint64_t object_size(const Obj &o, const char *key)
{
	uint64_t s = o.req_u64(key, max_object_size());
	if (s == 0 || s % page_size())
		o.fail(key, "is " + std::to_string(s) + ", not a positive multiple of the page size");
	return s;
}
} // namespace records

uint32_t max_handle()
{
	return static_cast<uint32_t>(std::min<uint64_t>(env_u64("GPUWATCH_MAX_HANDLE", 65536), 1u << 24));
}
uint64_t max_object_size()
{
	return env_u64("GPUWATCH_MAX_OBJECT_SIZE", uint64_t{1} << 40);
}
uint64_t max_fillers()
{
	return env_u64("GPUWATCH_MAX_FILLERS", 65536);
}

namespace
{
// numbers from 1 up to the highest of `ids` (ascending) that are not among them
template <class C, class Id> uint64_t holes(const C &ids, Id id)
{
	uint64_t present = 0, last = 0;
	for (const auto &e : ids)
		if (uint64_t v = id(e); v >= 1)
			present++, last = std::max(last, v);
	return last - present;
}
} // namespace

uint64_t fillers_needed(const FileImage &f)
{
	uint64_t n = holes(f.handles, [](const HandleRec &h) { return h.handle; });
	if (f.i915)
		n += holes(f.i915->vms, [](uint32_t v) { return v; }) +
		     holes(f.i915->contexts, [](const I915Context &c) { return c.id; });
	if (f.xe)
		n += holes(f.xe->vms, [](const XeVm &v) { return v.id; }) +
		     holes(f.xe->queues, [](const XeQueue &q) { return q.id; });
	return n;
}

void check_filler_budget(const std::vector<const FileImage *> &files)
{
	uint64_t total = 0;
	for (const FileImage *f : files)
		total += fillers_needed(*f);
	if (total > max_fillers())
		throw ImageError("the files need " + std::to_string(total) +
				 " filler objects (holes in their handle, VM, context and queue numbers), more than "
				 "GPUWATCH_MAX_FILLERS (" +
				 std::to_string(max_fillers()) + ")");
}

std::string file_image_name(uint32_t id)
{
	return "gpuwatch-file-" + std::to_string(id) + ".json";
}
std::string dmabuf_image_name(uint32_t id)
{
	return "gpuwatch-dmabuf-" + std::to_string(id) + ".json";
}
std::string fence_image_name(uint32_t id)
{
	return "gpuwatch-fence-" + std::to_string(id) + ".json";
}
std::string object_base_name(uint64_t n)
{
	return "gpuwatch-object-" + std::to_string(n);
}
std::string object_image_name(uint64_t n)
{
	return object_base_name(n) + ".bin";
}
std::string object_checksum_name(uint64_t n)
{
	return object_base_name(n) + ".xxh64";
}
std::string object_crc32_name(uint64_t n)
{
	return object_base_name(n) + ".crc32";
}
std::string manifest_image_name(std::size_t i)
{
	return i == 0 ? "gpuwatch-manifest.json" : "gpuwatch-manifest." + std::to_string(i) + ".json";
}

// --- the dma-buf image ---------------------------------------------------------------------------
json to_json(const DmabufImage &d, const DeviceIndex &device_index)
{
	return {{"schema", kDmabufSchema},
		{"criu_id", d.criu_id},
		{"object", d.object},
		{"size", d.size},
		{"saved", d.saved},
		{"f_flags", d.f_flags},
		{"device", device_index(d.device)},
		{"holders", records::holders_json(d.holders)},
		{"degraded", d.degraded}};
}

DmabufImage parse_dmabuf_image(const std::string &text, const std::string &name, const Devices &devices)
{
	return records::read_image(text, name, kDmabufSchema, [&](const Obj &top) {
		DmabufImage d;
		d.criu_id = top.req_u32("criu_id");
		d.object = top.req_u64("object");
		if (d.object == 0)
			top.fail("object", "is 0");
		d.size = records::object_size(top, "size");
		d.saved = top.req_bool("saved");
		d.f_flags = top.req_u32("f_flags");
		d.device = records::read_device(top, devices);
		d.holders = records::read_holders(top);
		d.degraded = top.req_strings("degraded");
		return d;
	});
}

// --- the fence image -----------------------------------------------------------------------------
json to_json(const FenceImage &f, const DeviceIndex &device_index)
{
	json props = json::array();
	for (const auto &[k, v] : f.properties)
		props.push_back({k, v});
	return {{"schema", kFenceSchema},
		{"criu_id", f.criu_id},
		{"kind", f.kind},
		{"f_flags", f.f_flags},
		{"device", device_index(f.device)},
		{"perf_flags", f.perf_flags},
		{"properties", props},
		{"holders", records::holders_json(f.holders)}};
}

FenceImage parse_fence_image(const std::string &text, const std::string &name, const Devices &devices)
{
	return records::read_image(text, name, kFenceSchema, [&](const Obj &top) {
		FenceImage f;
		f.criu_id = top.req_u32("criu_id");
		f.kind = top.req_str("kind", 16);
		if (f.kind != "sync_file" && f.kind != "i915_perf")
			top.fail("kind", "is neither sync_file nor i915_perf");
		f.f_flags = top.req_u32("f_flags");
		f.device = records::read_device(top, devices);
		f.perf_flags = top.req_u32("perf_flags");
		const json &ps = top.req_array("properties");
		if (ps.size() > 64)
			top.fail("properties", "has more than 64 entries");
		for (std::size_t i = 0; i < ps.size(); ++i)
			f.properties.push_back(jsonin::pair_u64(ps[i], top.at("properties", i)));
		if (f.kind == "i915_perf" && f.properties.empty())
			top.fail("properties", "is empty for a perf stream");
		f.holders = records::read_holders(top);
		return f;
	});
}

// --- the vmas image ------------------------------------------------------------------------------
json to_json(const std::vector<VmaRec> &vmas, const DeviceIndex &device_index)
{
	json a = json::array();
	for (const VmaRec &v : vmas)
		a.push_back({{"pid", v.pid},
			     {"vpid", v.vpid},
			     {"start", v.start},
			     {"length", v.length},
			     {"offset", v.offset},
			     {"prot", v.prot},
			     {"file", records::opt(v.file)},
			     {"device", device_index(v.device)},
			     {"handle", records::opt(v.handle)},
			     {"object", v.object},
			     {"object_size", v.object_size},
			     {"delta", v.delta},
			     {"saved", v.saved},
			     {"late", late_json(v.late)},
			     {"stateless", v.stateless}});
	return {{"schema", kVmasSchema}, {"vmas", a}};
}

std::vector<VmaRec> parse_vmas_image(const std::string &text, const std::string &name, const Devices &devices)
{
	return records::read_image(text, name, kVmasSchema, [&](const Obj &top) {
		std::vector<VmaRec> out;
		std::set<std::pair<uint32_t, uint64_t>> seen;
		top.each(top.req_array("vmas"), "vmas", [&](const Obj &o) {
			VmaRec v;
			v.pid = o.req_u32("pid", 1u << 30);
			v.vpid = o.req_u32("vpid", 1u << 30);
			v.start = o.req_u64("start");
			v.length = o.req_u64("length", max_object_size());
			v.offset = o.req_u64("offset");
			if (v.start % page_size() || v.length == 0 || v.length % page_size() ||
			    v.start + v.length < v.start || v.offset % page_size())
				jsonin::fail(o.where(), "is not a page-aligned, non-empty range");
			if (!seen.insert({v.vpid, v.start}).second)
				o.fail("start", "repeats another mapping of the same task");
			v.prot = o.req_str("prot", 8);
			v.file = o.u32_or_null("file", true);
			v.device = records::read_device(o, devices);
			v.handle = o.u32_or_null("handle", true, max_handle());
			v.object = o.req_u64("object");
			v.object_size = v.object ? records::object_size(o, "object_size") : o.req_u64("object_size");
			v.delta = o.req_u64("delta");
			if (v.object &&
			    (v.delta % page_size() || v.delta >= v.object_size || v.length > v.object_size - v.delta))
				o.fail("delta", "puts the mapping outside its object");
			v.saved = o.req_bool("saved");
			v.late = read_late_map(o);
			v.stateless = o.opt_bool("stateless", false);
			if (v.late && !v.stateless && (!v.file || !v.handle || !v.object))
				o.fail("late", "is set on a mapping without a file, handle and buffer");
			if (v.stateless && (v.handle || v.object || v.saved))
				o.fail("stateless", "is set on a mapping with a handle, buffer or contents");
			out.push_back(std::move(v));
		});
		return out;
	});
}

Devices parse_devices_image(const std::string &text, const std::string &name)
{
	try {
		return gw::parse_devices_image(text);
	} catch (const jsonin::FormatError &e) {
		throw ImageError(name + ": " + e.what());
	}
}

} // namespace gwcriu
