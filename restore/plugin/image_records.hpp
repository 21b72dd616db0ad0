// Internal to the plugin's images (images.cpp, file_image.cpp): what every image kind shares.
// Each kind is read with gw::jsonin's strict reader inside read_image, which checks the schema
// and turns every FormatError into one ImageError line prefixed with the image's name.
#pragma once

#include "images.hpp"
#include "manifest/json_reader.hpp"

namespace gwcriu::records
{

using json = nlohmann::json;
using gw::jsonin::Obj;

json opt(const std::optional<uint32_t> &v);
json holders_json(const std::vector<Holder> &hs);
// parent's "device": an index into the devices image's list
const SavedDevice &read_device(const Obj &parent, const Devices &devices);
std::vector<Holder> read_holders(const Obj &top);
// a buffer size: a positive multiple of the page size, at most GPUWATCH_MAX_OBJECT_SIZE
uint64_t object_size(const Obj &o, const char *key);

// read(top) on the image's top object, once its schema is checked
template <typename F> auto read_image(const std::string &text, const std::string &name, const char *schema, F &&read)
{
	try {
		json j = gw::jsonin::parse(text);
		Obj top(j, "");
		if (top.req_str("schema", 64) != schema)
			top.fail("schema", "is not " + std::string(schema));
		return read(top);
	} catch (const gw::jsonin::FormatError &e) {
		throw ImageError(name + ": " + e.what());
	}
}

} // namespace gwcriu::records
