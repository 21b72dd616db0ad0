#include "drm_devices.hpp"

#include <algorithm>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <xf86drm.h>

#include "sysutil.hpp"

namespace fs = std::filesystem;

namespace gw
{
namespace
{

std::string read_first_line(const fs::path &p)
{
	std::ifstream in(p);
	std::string s;
	std::getline(in, s);
	return s;
}

std::string link_basename(const fs::path &p)
{
	std::error_code ec;
	fs::path target = fs::read_symlink(p, ec);
	return ec ? "" : target.filename().string();
}

std::string strip0x(const std::string &s)
{
	return s.rfind("0x", 0) == 0 ? s.substr(2) : s;
}

std::string kind_of(const std::string &path)
{
	std::string kind;
	return is_drm_node_path(path, &kind) ? kind : "";
}

} // namespace

// ^/dev/dri/(card|renderD)[0-9]{1,4}$, by hand: the CRIU plugin asks at every dump and
// restore, and std::regex's first use (compiling it) cost milliseconds of each under TCG.
bool is_drm_node_path(const std::string &path, std::string *kind)
{
	std::string_view p(path), dir("/dev/dri/");
	if (p.substr(0, dir.size()) != dir)
		return false;
	p.remove_prefix(dir.size());
	const char *k = nullptr;
	for (std::string_view name : {std::string_view("card"), std::string_view("renderD")})
		if (p.substr(0, name.size()) == name) {
			k = name == "card" ? "card" : "render";
			p.remove_prefix(name.size());
			break;
		}
	if (!k || p.empty() || p.size() > 4 ||
	    !std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; }))
		return false;
	if (kind)
		*kind = k;
	return true;
}

std::string drm_node_path_of_minor(uint32_t minor)
{
	if (minor < 64)
		return "/dev/dri/card" + std::to_string(minor);
	if (minor >= 128 && minor < 192)
		return "/dev/dri/renderD" + std::to_string(minor);
	return {};
}

std::string drm_driver_name(int fd)
{
	drmVersionPtr v = drmGetVersion(fd);
	if (!v)
		return {};
	std::string name = v->name ? std::string(v->name, static_cast<std::size_t>(std::max(v->name_len, 0))) : "";
	drmFreeVersion(v);
	return std::string(name.c_str()); // up to a NUL the driver may have put in
}

void read_bus_identity(DrmDevice &d, const std::string &sysfs_root)
{
	fs::path dev = fs::path(sysfs_root) / "dev/char" / (std::to_string(d.major) + ":" + std::to_string(d.minor)) /
		       "device";
	std::error_code ec;
	fs::path real = fs::canonical(dev, ec);
	if (ec)
		return;
	d.bus = link_basename(dev / "subsystem");
	if (d.bus == "pci") {
		std::string vendor = read_first_line(dev / "vendor"), id = read_first_line(dev / "device");
		if (!vendor.empty() && !id.empty())
			d.pci_id = strip0x(vendor) + ":" + strip0x(id);
		d.pci_slot = real.filename().string();
	} else if (d.bus == "platform") {
		d.platform = real.filename().string();
	}
}

std::string driver_name_of_node(const DrmDevice &d)
{
	UniqueFd fd(::open(d.path().c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW));
	struct stat st;
	if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISCHR(st.st_mode) || st.st_rdev != makedev(d.major, d.minor))
		return {};
	return drm_driver_name(fd.get());
}

std::vector<DrmDevice> list_drm_devices(const std::string &sysfs_root, const DriverNamer &namer)
{
	std::vector<DrmDevice> out;
	std::error_code ec;
	for (const auto &ent : fs::directory_iterator(fs::path(sysfs_root) / "class/drm", ec)) {
		DrmDevice d;
		d.name = ent.path().filename().string();
		if (!is_drm_node_path(d.path())) /* not card0-HDMI-A-1, version */
			continue;
		std::string dev = read_first_line(ent.path() / "dev"); /* "226:0" */
		unsigned major = 0, minor = 0;
		if (std::sscanf(dev.c_str(), "%u:%u", &major, &minor) != 2 || major != kDrmMajor)
			continue;
		d.major = major;
		d.minor = minor;
		read_bus_identity(d, sysfs_root);
		d.driver = namer(d);
		out.push_back(std::move(d));
	}
	std::sort(out.begin(), out.end(), [](const DrmDevice &a, const DrmDevice &b) { return a.minor < b.minor; });
	return out;
}

DeviceChoice choose_equivalent(const SavedDevice &saved, const std::vector<DrmDevice> &candidates)
{
	std::string kind = kind_of(saved.path);
	auto equivalent = [&](const DrmDevice &c) {
		if (kind.empty() || kind_of(c.path()) != kind || c.driver.empty() || c.driver != saved.driver)
			return false;
		if (!saved.pci_id.empty() && !c.pci_id.empty() && c.pci_id != saved.pci_id)
			return false;
		if (!saved.pci_id.empty() && c.pci_id.empty() && !c.bus.empty())
			return false; // a PCI device was saved; this one is known not to be PCI
		return true;
	};
	// lower is better: the saved node (path and minor), its path, its minor, its PCI slot, any
	auto rank = [&](const DrmDevice &c) {
		bool path = c.path() == saved.path, minor = c.minor == saved.minor;
		if (path && minor)
			return 0;
		if (path)
			return 1;
		if (minor)
			return 2;
		if (!saved.pci_slot.empty() && c.pci_slot == saved.pci_slot)
			return 3;
		return 4;
	};
	DeviceChoice out;
	for (std::size_t i = 0; i < candidates.size(); ++i) {
		const DrmDevice &c = candidates[i];
		if (!equivalent(c))
			continue;
		if (!out.index || rank(c) < rank(candidates[*out.index]) ||
		    (rank(c) == rank(candidates[*out.index]) && c.minor < candidates[*out.index].minor))
			out.index = i;
	}
	std::string saved_text = saved.path + " (" + std::to_string(saved.major) + ":" + std::to_string(saved.minor) +
				 ", driver " + saved.driver + (saved.pci_id.empty() ? "" : ", PCI id " + saved.pci_id) +
				 ")";
	if (!out.index) {
		out.why = "no DRM device for " + saved.path + " (driver " + saved.driver +
			  (saved.pci_id.empty() ? "" : ", PCI id " + saved.pci_id) + ") on this host";
		return out;
	}
	const DrmDevice &c = candidates[*out.index];
	out.same = rank(c) == 0;
	out.why = out.same ? "same device " + c.path() + " (" + c.driver + ")"
			   : saved_text + " is now " + c.path() + " (" + std::to_string(c.major) + ":" +
				     std::to_string(c.minor) + "), the equivalent " +
				     (kind == "render" ? "render node" : "card node") + " of driver " + c.driver;
	return out;
}

std::optional<DrmDevice> choose_equivalent_device(const SavedDevice &saved, std::string *why,
						  const std::string &sysfs_root, const DriverNamer &namer)
{
	std::vector<DrmDevice> devices = list_drm_devices(sysfs_root, namer);
	DeviceChoice c = choose_equivalent(saved, devices);
	if (why)
		*why = c.why;
	if (!c.index)
		return std::nullopt;
	return devices[*c.index];
}

nlohmann::json to_json(const SavedDevice &d)
{
	return {{"path", d.path},         {"kind", d.kind}, {"major", d.major},   {"minor", d.minor},
		{"driver", d.driver},     {"bus", d.bus},   {"pci_id", d.pci_id}, {"pci_slot", d.pci_slot},
		{"platform", d.platform}, {"mode", d.mode}, {"uid", d.uid},       {"gid", d.gid}};
}

SavedDevice read_saved_device(const jsonin::Obj &o)
{
	SavedDevice d;
	d.path = o.req_str("path", 256);
	if (!is_drm_node_path(d.path, &d.kind))
		o.fail("path", "is not /dev/dri/cardN or /dev/dri/renderDN");
	if (o.req_str("kind", 16) != d.kind)
		o.fail("kind", "does not match the path");
	d.major = o.req_u32("major");
	if (d.major != kDrmMajor)
		o.fail("major", "is not the DRM major " + std::to_string(kDrmMajor));
	d.minor = o.req_u32("minor", (1u << 20) - 1);
	d.driver = o.req_str("driver", 64);
	if (d.driver.empty())
		o.fail("driver", "is empty");
	d.bus = o.req_str("bus", 64);
	d.pci_id = o.req_str("pci_id", 64);
	d.pci_slot = o.req_str("pci_slot", 64);
	d.platform = o.req_str("platform", 128);
	d.mode = o.req_u32("mode");
	d.uid = o.req_u32("uid");
	d.gid = o.req_u32("gid");
	return d;
}

namespace
{
constexpr const char *kDevicesSchema = "gpuwatch.criu.devices/v1";
constexpr std::size_t kMaxDevices = 1024;
} // namespace

nlohmann::json devices_image_json(const std::vector<SavedDevice> &devices)
{
	nlohmann::json a = nlohmann::json::array();
	for (const SavedDevice &d : devices)
		a.push_back(to_json(d));
	return {{"schema", kDevicesSchema}, {"devices", a}};
}

std::vector<SavedDevice> parse_devices_image(const std::string &text)
{
	nlohmann::json j = jsonin::parse(text);
	jsonin::Obj top(j, "");
	if (top.req_str("schema", 64) != kDevicesSchema)
		top.fail("schema", "is not " + std::string(kDevicesSchema));
	const nlohmann::json &list = top.req_array("devices");
	if (list.size() > kMaxDevices)
		top.fail("devices", "has more than " + std::to_string(kMaxDevices) + " entries");
	std::vector<SavedDevice> out;
	top.each(list, "devices", [&](const jsonin::Obj &o) { out.push_back(read_saved_device(o)); });
	return out;
}

} // namespace gw
