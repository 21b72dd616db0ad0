// libFuzzer target: what a container or an administrator's file gives gpuwatch's root tools
// outside CRIU images. The input's first byte picks: an OCI config.json (does it give a DRM
// device?), an OCI state (is its id a plain name?), or a CRIU configuration file
// (container-config merges gpuwatch's lines into it; criu-args reads which it sets). Parsed as
// the tools parse them; a gw::Error is an answer, anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "container_config.hpp"
#include "containers.hpp"
#include "criu_args.hpp"
#include "sysutil.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	std::string text(reinterpret_cast<const char *>(data + 1), size - 1);
	try {
		switch (data[0] % 3) {
		case 0: { // the OCI hook's config.json (oci_hook.cpp reads it so)
			nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
			if (!j.is_discarded())
				(void)gw::oci_config_has_drm_device(j);
			break;
		}
		case 1: { // the OCI state on the hook's stdin
			nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
			if (!j.is_discarded())
				(void)gw::checked_container_id(j);
			break;
		}
		default: { // a CRIU configuration file
			gw::CriuPaths p{"/usr/lib/gpuwatch/criu", "/usr/libexec/gpuwatch/gpuwatch-criu-action"};
			std::istringstream in(text);
			for (std::string line; std::getline(in, line);)
				(void)gw::criu_conf_option(line);
			(void)gw::criu_args(p, text);
			std::string merged = gw::merge_criu_conf(text, p.plugin_dir, p.action_script, nullptr);
			// once merged, the file loads gpuwatch: criu-args has nothing to add
			if (!gw::criu_args(p, merged).empty())
				std::abort();
			break;
		}
		}
	} catch (const gw::Error &) {
	}
	return 0;
}
