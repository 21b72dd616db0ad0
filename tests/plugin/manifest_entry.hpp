// A manifest file entry as the plugin gets it: through the manifest reader (gw::manifest).
#pragma once

#include <nlohmann/json.hpp>

#include "manifest/manifest.hpp"

// The typed form of file entry `f` (a render node of minor 129), read as part of a manifest.
inline gw::manifest::File typed_manifest_file(nlohmann::json f)
{
	f["path"] = "/dev/dri/renderD129";
	f["rdev"] = "226:129";
	f["flags"] = "O_RDWR";
	nlohmann::json m = {{"schema", gw::manifest::kSchema},
			    {"cgroup", "/sys/fs/cgroup/x"},
			    {"complete", true},
			    {"lost_events", 0},
			    {"processes", nlohmann::json::array()},
			    {"files", nlohmann::json::array({f})}};
	return gw::manifest::from_json(m).files.at(0);
}
