// libFuzzer target: every parser of the CRIU plugin's JSON images (what `criu restore` reads as
// root from an image directory that may come from elsewhere). The input's first byte picks
// the image kind; the rest is its text, or, after a NUL, a devices image and then the text
// (the other parsers name devices by index into it). Any input must parse or give one
// gw::Error (ImageError); another exception, a sanitizer report or a crash is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "images.hpp"

namespace
{

// gpuwatch-devices.json of a vgem dump (card0, renderD128), used when the input gives none
const char *const kVgemDevices =
	R"({"schema":"gpuwatch.criu.devices/v1","devices":[)"
	R"({"bus":"platform","driver":"vgem","gid":44,"kind":"card","major":226,"minor":0,"mode":8624,)"
	R"("path":"/dev/dri/card0","pci_id":"","pci_slot":"","platform":"vgem","uid":0},)"
	R"({"bus":"platform","driver":"vgem","gid":108,"kind":"render","major":226,"minor":128,"mode":8624,)"
	R"("path":"/dev/dri/renderD128","pci_id":"","pci_slot":"","platform":"vgem","uid":0}]})";

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned kind = data[0] % 5;
	std::string rest(reinterpret_cast<const char *>(data + 1), size - 1);
	std::size_t nul = rest.find('\0');
	std::string devices = nul == std::string::npos ? kVgemDevices : rest.substr(0, nul);
	std::string text = nul == std::string::npos ? rest : rest.substr(nul + 1);
	try {
		gwcriu::Devices devs = gwcriu::parse_devices_image(devices, "gpuwatch-devices.json");
		switch (kind) {
		case 0: gwcriu::parse_file_image(text, "gpuwatch-file-1.json", devs); break;
		case 1: gwcriu::parse_dmabuf_image(text, "gpuwatch-dmabuf-2.json", devs); break;
		case 2: gwcriu::parse_vmas_image(text, "gpuwatch-vmas.json", devs); break;
		case 3: gwcriu::parse_fence_image(text, "gpuwatch-fence-3.json", devs); break;
		default: gwcriu::parse_devices_image(text, "gpuwatch-devices.json"); break;
		}
	} catch (const gw::Error &) {
	}
	return 0;
}
