// The devices image (gpuwatch-devices.json) the tests' images name: the writers add to one
// table, the parsers read it.
#pragma once

#include <functional>
#include <string>

#include "images.hpp"

inline gwcriu::Devices &test_devices()
{
	static gwcriu::Devices devices;
	return devices;
}

inline gwcriu::DeviceIndex test_index()
{
	return [](const gwcriu::SavedDevice &d) {
		gwcriu::Devices &all = test_devices();
		for (std::size_t i = 0; i < all.size(); ++i)
			if (all[i] == d)
				return static_cast<uint32_t>(i);
		all.push_back(d);
		return static_cast<uint32_t>(all.size() - 1);
	};
}

// /dev/dri/card0 of vgem as the tests' images save it
inline gwcriu::SavedDevice vgem_card0()
{
	gwcriu::SavedDevice d;
	d.path = "/dev/dri/card0";
	d.kind = "card";
	d.minor = 0;
	d.driver = "vgem";
	d.bus = "platform";
	d.platform = "vgem";
	d.mode = 020660;
	d.gid = 44;
	return d;
}

// A 64 x 64 legacy (ADDFB, 32 bpp, depth 24) framebuffer `id` on `handle`
inline gwcriu::KmsFramebuffer legacy_framebuffer(uint32_t id, uint32_t handle)
{
	gwcriu::KmsFramebuffer fb;
	fb.id = id;
	fb.width = 64;
	fb.height = 64;
	fb.legacy = true;
	fb.bpp = 32;
	fb.depth = 24;
	fb.planes.push_back({handle, 256, 0, 0});
	return fb;
}

// The ImageError the restore's reader gives for file image `f` damaged by `damage` (read as
// `name`), or "" when it reads it.
inline std::string file_image_error(const gwcriu::FileImage &f, const std::function<void(nlohmann::json &)> &damage,
				    const std::string &name)
{
	nlohmann::json j = gwcriu::to_json(f, test_index());
	damage(j);
	try {
		gwcriu::parse_file_image(j.dump(), name, test_devices());
	} catch (const gwcriu::ImageError &e) {
		return e.what();
	}
	return "";
}
