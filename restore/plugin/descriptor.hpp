// The plugin descriptor CRIU looks up (CR_PLUGIN_DESC), with room for every hook of the CRIU
// releases gpuwatch knows. criu-plugin.h sizes its cr_plugin_desc_t for the CRIU it comes
// from (10 hooks in Debian 12's 3.17.1); CRIU reads only the first max_hooks entries and
// refuses a descriptor announcing more hooks than it has ("Corrupted plugin"). So the
// descriptor is defined here, in a file that does not include criu-plugin.h, with the same
// layout (plugin.cpp checks it against the header), and plugin.cpp sets max_hooks to the
// running CRIU's count at load time.
#pragma once

namespace gwcriu
{

// Hook numbers CRIU added after 3.19 (criu-plugin.h of 4.0 and 4.2). The ones of 3.17 come
// from the header itself.
constexpr unsigned kHookPauseDevices = 10;      // 4.0+, (int pid), before a task is seized
constexpr unsigned kHookCheckpointDevices = 11; // 4.0+, (int pid), seized, before its mappings are read
constexpr unsigned kHookPostForking = 12;       // 4.2+, (void)
constexpr unsigned kMaxKnownHooks = 13;         // CR_PLUGIN_HOOK__MAX of 4.2

struct PluginDescriptor {
	const char *name;
	int (*init)(int stage);
	void (*exit)(int stage, int ret);
	unsigned int version;
	unsigned int max_hooks;
	void *hooks[kMaxKnownHooks];
};

// CR_PLUGIN_DESC itself.
PluginDescriptor &descriptor();

} // namespace gwcriu
