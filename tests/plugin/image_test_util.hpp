// The devices image (gpuwatch-devices.json) the tests' images name: the writers add to one
// table, the parsers read it.
#pragma once

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
