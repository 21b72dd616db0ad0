// CR_PLUGIN_DESC (see descriptor.hpp). Filled in by plugin.cpp's constructor, which runs inside
// CRIU's dlopen(), before CRIU reads it.
#include "descriptor.hpp"

extern "C" {
__attribute__((visibility("default"))) gwcriu::PluginDescriptor CR_PLUGIN_DESC = {};
}

namespace gwcriu
{

PluginDescriptor &descriptor()
{
	return CR_PLUGIN_DESC;
}

} // namespace gwcriu
