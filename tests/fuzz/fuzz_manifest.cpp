// libFuzzer target: the manifest reader (gpuwatch show, the CRIU plugin's GPUWATCH_MANIFEST
// and image copy). Any input must give a manifest or a ManifestError; a manifest that reads
// must serialize and read back the same. Anything else (another exception, a sanitizer
// report, a crash) is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "manifest/manifest.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	std::string text(reinterpret_cast<const char *>(data), size);
	gw::manifest::Manifest m;
	try {
		m = gw::manifest::parse(text, "fuzz.json");
	} catch (const gw::ManifestError &) {
		return 0;
	}
	std::string once = gw::manifest::serialize(m);
	if (gw::manifest::serialize(gw::manifest::parse(once, "again.json")) != once)
		std::abort(); // what the writer wrote, the reader must read back unchanged
	return 0;
}
