// gpuwatch container-config and oci-hook: the CRIU configuration merge, the CRIU version
// rule, the hook definition and the OCI config/state checks.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include "container_config.hpp"
#include "containers.hpp"
#include "criu_args.hpp"
#include "sysutil.hpp"

using json = nlohmann::json;

namespace
{

TEST(CriuConf, NewFileGetsOurLibdirAndNothingElse)
{
	std::vector<std::string> added;
	std::string out = gw::merge_criu_conf("", "/usr/lib/gpuwatch/criu", std::nullopt, &added);
	EXPECT_EQ(
		out,
		"# added by gpuwatch container-config: load the gpuwatch CRIU plugin\nlibdir /usr/lib/gpuwatch/criu\n");
	EXPECT_EQ(added, (std::vector<std::string>{"libdir /usr/lib/gpuwatch/criu"}));
}

TEST(CriuConf, ExistingSettingsAreKeptAndOursAppended)
{
	std::string existing = "# site settings\ntcp-established\nlog-file /var/log/criu.log"; // no final newline
	std::vector<std::string> added;
	std::string out = gw::merge_criu_conf(existing, "/opt/gw/criu", std::string("/opt/gw/action"), &added);
	EXPECT_EQ(out.rfind(existing + "\n", 0), 0u) << out; // untouched, then ours
	EXPECT_NE(out.find("\nlibdir /opt/gw/criu\n"), std::string::npos);
	EXPECT_NE(out.find("\naction-script /opt/gw/action\n"), std::string::npos);
	EXPECT_EQ(added.size(), 2u);
}

TEST(CriuConf, MergingTwiceChangesNothing)
{
	std::string once =
		gw::merge_criu_conf("tcp-established\n", "/opt/gw/criu", std::string("/opt/gw/action"), nullptr);
	std::vector<std::string> added;
	EXPECT_EQ(gw::merge_criu_conf(once, "/opt/gw/criu/", std::string("/opt/gw/action"), &added), once);
	EXPECT_TRUE(added.empty());
	// the same setting written with dashes, '=' or quotes is recognised too
	EXPECT_EQ(gw::merge_criu_conf("--libdir=\"/opt/gw/criu\"\n", "/opt/gw/criu", std::nullopt, &added),
		  "--libdir=\"/opt/gw/criu\"\n");
}

// Issue 16, finding 8: "libdir /x # comment" was read as the directory "/x # comment". CRIU
// reads one word (or a quoted string) and takes a word starting with '#' as a comment.
TEST(CriuConf, ValuesAreReadAsCriuReadsThem)
{
	std::vector<std::string> added;
	EXPECT_EQ(gw::merge_criu_conf("libdir /opt/gw/criu # gpuwatch\n", "/opt/gw/criu", std::nullopt, &added),
		  "libdir /opt/gw/criu # gpuwatch\n");
	EXPECT_TRUE(added.empty());
	EXPECT_EQ(gw::criu_conf_option("libdir \"/a b\" # c"), (std::pair<std::string, std::string>{"libdir", "/a b"}));
	EXPECT_EQ(gw::criu_conf_option("  --action-script /x\t\r"),
		  (std::pair<std::string, std::string>{"action-script", "/x"}));
	EXPECT_EQ(gw::criu_conf_option("libdir #/x"), (std::pair<std::string, std::string>{"libdir", ""}));
	EXPECT_THROW(gw::merge_criu_conf("libdir /usr/lib/criu # not ours\n", "/opt/gw/criu", std::nullopt, nullptr),
		     gw::Error);
}

// Issue 16, finding 8: `container-config --criu-conf` replaced a symlink or a device node with
// a regular file (the host's /dev/zero, in a test), and kept only the first MiB of a larger
// file. It now refuses them, and changes nothing.
TEST(CriuConf, OnlyARegularFileOfAtMost1MiBIsRewritten)
{
	char tmpl[] = "/tmp/gw-criu-conf-XXXXXX";
	ASSERT_NE(::mkdtemp(tmpl), nullptr);
	std::string d = tmpl;
	auto error_of = [](const std::string &path) {
		try {
			gw::read_criu_conf(path);
		} catch (const gw::Error &e) {
			return std::string(e.what());
		}
		return std::string();
	};
	EXPECT_EQ(gw::read_criu_conf(d + "/absent.conf"), "");
	std::ofstream(d + "/default.conf") << "tcp-established\n";
	EXPECT_EQ(gw::read_criu_conf(d + "/default.conf"), "tcp-established\n");
	ASSERT_EQ(::symlink((d + "/default.conf").c_str(), (d + "/link.conf").c_str()), 0);
	EXPECT_EQ(error_of(d + "/link.conf"),
		  d + "/link.conf is not a regular file (a symbolic link: give the file it names)");
	ASSERT_EQ(::mkfifo((d + "/fifo.conf").c_str(), 0600), 0);
	EXPECT_EQ(error_of(d + "/fifo.conf"), d + "/fifo.conf is not a regular file (left as it is)");
	EXPECT_EQ(error_of("/dev/zero"), "/dev/zero is not a regular file (left as it is)");
	std::ofstream(d + "/big.conf") << std::string((1 << 20) + 1, '#');
	EXPECT_EQ(error_of(d + "/big.conf"),
		  d + "/big.conf is larger than 1 MiB: not a CRIU configuration container-config rewrites");
	std::filesystem::remove_all(d);
}

TEST(CriuConf, AnotherPluginDirectoryIsRefusedNotReplaced)
{
	try {
		gw::merge_criu_conf("libdir /usr/lib/criu\n", "/opt/gw/criu", std::nullopt, nullptr);
		FAIL() << "a second libdir was accepted";
	} catch (const gw::Error &e) {
		EXPECT_NE(std::string(e.what()).find("/usr/lib/criu"), std::string::npos) << e.what();
	}
}

TEST(CriuVersion, ActionScriptsRunOverRpcFrom319)
{
	auto v = gw::parse_criu_version("Version: 3.17.1\n");
	ASSERT_TRUE(v);
	EXPECT_EQ(*v, (std::vector<int>{3, 17, 1}));
	EXPECT_FALSE(gw::criu_runs_action_scripts_over_rpc(*v));
	EXPECT_TRUE(gw::criu_runs_action_scripts_over_rpc(*gw::parse_criu_version("Version: 3.19\nGitID: v3.19")));
	EXPECT_TRUE(gw::criu_runs_action_scripts_over_rpc(*gw::parse_criu_version("Version: 4.1.1\n")));
	EXPECT_FALSE(gw::parse_criu_version("criu: command not found"));
}

TEST(OciHook, DefinitionRunsOurBinaryAtItsStage)
{
	json h = gw::oci_hook_definition("/usr/bin/gpuwatch", "prestart");
	EXPECT_EQ(h["version"], "1.0.0");
	EXPECT_EQ(h["hook"]["path"], "/usr/bin/gpuwatch");
	EXPECT_EQ(h["hook"]["args"], json({"gpuwatch", "oci-hook", "prestart"}));
	EXPECT_EQ(h["stages"], json({"prestart"}));
	EXPECT_EQ(h["when"]["always"], true);
}

TEST(OciHook, OnlyADrmCharacterDeviceMakesAContainerOurs)
{
	json drm = json::parse(R"({"linux": {"devices": [
		{"path": "/dev/null", "type": "c", "major": 1, "minor": 3},
		{"path": "/dev/dri/card0", "type": "c", "major": 226, "minor": 0}]}})");
	EXPECT_TRUE(gw::oci_config_has_drm_device(drm));
	json none = json::parse(
		R"({"linux": {"devices": [{"path": "/dev/fuse", "type": "c", "major": 10, "minor": 229}]}})");
	EXPECT_FALSE(gw::oci_config_has_drm_device(none));
	EXPECT_FALSE(gw::oci_config_has_drm_device(json::parse(R"({"linux": {}})")));
	EXPECT_FALSE(gw::oci_config_has_drm_device(json::parse(R"({"process": {}})")));
	json block =
		json::parse(R"({"linux": {"devices": [{"path": "/dev/x", "type": "b", "major": 226, "minor": 0}]}})");
	EXPECT_FALSE(gw::oci_config_has_drm_device(block));
	json junk = json::parse(R"({"linux": {"devices": [7, {"major": "226"}]}})");
	EXPECT_FALSE(gw::oci_config_has_drm_device(junk));
	// issue 16, finding 9: 226.0, and GPU access by bind mount, left the container unfollowed
	EXPECT_TRUE(gw::oci_config_has_drm_device(json::parse(
		R"({"linux": {"devices": [{"path": "/dev/dri/card1", "type": "c", "major": 226.0, "minor": 1}]}})")));
	EXPECT_FALSE(gw::oci_config_has_drm_device(json::parse(
		R"({"linux": {"devices": [{"path": "/dev/x", "type": "c", "major": 226.5, "minor": 1}]}})")));
	EXPECT_TRUE(gw::oci_config_has_drm_device(json::parse(
		R"({"mounts": [{"destination": "/proc", "source": "proc"}, {"destination": "/dev/dri", "source": "/dev/dri", "options": ["rbind"]}]})")));
	EXPECT_TRUE(gw::oci_config_has_drm_device(json::parse(
		R"({"mounts": [{"destination": "/dev/dri/renderD128", "source": "/dev//dri/renderD128"}]})")));
	EXPECT_FALSE(gw::oci_config_has_drm_device(
		json::parse(R"({"mounts": [{"destination": "/dev/drifter", "source": "/srv/dri"}]})")));
}

TEST(OciHook, ContainerIdMustBeAPlainName)
{
	EXPECT_EQ(gw::checked_container_id(json{{"id", "3f2a_b.c-d"}}), "3f2a_b.c-d");
	for (const char *bad : {"../etc", "a/b", "", ".hidden", "x y"})
		EXPECT_THROW(gw::checked_container_id(json{{"id", bad}}), gw::Error) << bad;
	EXPECT_THROW(gw::checked_container_id(json{{"pid", 1}}), gw::Error);
}

} // namespace

TEST(CriuArgs, WhatTheGlobalConfigurationSetsIsNotRepeated)
{
	gw::CriuPaths p{"/usr/lib/gpuwatch/criu", "/usr/libexec/gpuwatch/gpuwatch-criu-action"};
	EXPECT_EQ(gw::criu_args(p, ""),
		  "--libdir /usr/lib/gpuwatch/criu --action-script /usr/libexec/gpuwatch/gpuwatch-criu-action");
	// container-config wrote both: CRIU would load the plugin and run the script already (twice)
	std::string conf = gw::merge_criu_conf("tcp-established\n", p.plugin_dir, p.action_script, nullptr);
	EXPECT_EQ(gw::criu_args(p, conf), "");
	// CRIU 3.17 (no action script under RPC): the libdir only
	conf = gw::merge_criu_conf("", p.plugin_dir + "/", std::nullopt, nullptr);
	EXPECT_EQ(gw::criu_args(p, conf), "--action-script /usr/libexec/gpuwatch/gpuwatch-criu-action");
	// another plugin directory or a comment do not count
	EXPECT_EQ(gw::criu_args(p, "# libdir /usr/lib/gpuwatch/criu\nlibdir /elsewhere\n"),
		  "--libdir /usr/lib/gpuwatch/criu --action-script /usr/libexec/gpuwatch/gpuwatch-criu-action");
	EXPECT_THROW(gw::criu_args({"/opt/my dir", "/x"}, ""), gw::Error);
}

// Issue 16, finding 12: gpuwatch's --libdir replaces CRIU's own plugin directory; criu-args
// names the plugins that are then not loaded (Debian 13: amdgpu_plugin.so, cuda_plugin.so).
TEST(CriuArgs, PluginsTheLibdirReplacesAreNamed)
{
	char tmpl[] = "/tmp/gw-criu-lib.XXXXXX";
	ASSERT_NE(mkdtemp(tmpl), nullptr);
	std::string d = tmpl;
	for (const char *f : {"cuda_plugin.so", "amdgpu_plugin.so", "gpuwatch_criu.so", "README"})
		std::ofstream(d + "/" + f) << "x";
	EXPECT_EQ(gw::plugins_replaced(d), (std::vector<std::string>{"amdgpu_plugin.so", "cuda_plugin.so"}));
	EXPECT_TRUE(gw::plugins_replaced(d + "/absent").empty());
	std::filesystem::remove_all(d);
}

TEST(Containers, IdFromTheRuntimesCgroupName)
{
	const std::string id(64, 'a');
	EXPECT_EQ(gw::container_id_of_cgroup("/sys/fs/cgroup/machine.slice/libpod-" + id + ".scope"), id);
	EXPECT_EQ(gw::container_id_of_cgroup("/sys/fs/cgroup/libpod_parent/libpod-" + id), id);
	EXPECT_EQ(gw::container_id_of_cgroup("/sys/fs/cgroup/kubepods.slice/crio-" + id + ".scope"), id);
	EXPECT_EQ(gw::container_id_of_cgroup("/sys/fs/cgroup/docker/" + id), id);
	EXPECT_FALSE(gw::container_id_of_cgroup("/sys/fs/cgroup/libpod-" + id + "/container"));
	EXPECT_FALSE(gw::container_id_of_cgroup("/sys/fs/cgroup/libpod-" + id.substr(1)));
	EXPECT_FALSE(gw::container_id_of_cgroup("/sys/fs/cgroup/libpod-../../" + id.substr(6)));
	EXPECT_FALSE(gw::container_id_of_cgroup("/sys/fs/cgroup/user.slice"));
	EXPECT_FALSE(gw::container_id_of_cgroup("/sys/fs/cgroup"));
}

TEST(Containers, HookDaemonManifestNamesItsContainer)
{
	EXPECT_EQ(gw::container_of_manifest("/run/gpuwatch", "/run/gpuwatch/containers/abc123/manifest.json"),
		  "abc123");
	EXPECT_FALSE(gw::container_of_manifest("/run/gpuwatch", "/run/gpuwatch/ctr.json"));
	EXPECT_FALSE(gw::container_of_manifest("/run/gpuwatch", "/run/gpuwatch/containers/../x/manifest.json"));
	EXPECT_FALSE(gw::container_of_manifest("/run/gpuwatch", "/run/gpuwatch/containers/a/b/manifest.json"));
	EXPECT_FALSE(gw::container_of_manifest("/run/gpuwatch", "/elsewhere/containers/abc/manifest.json"));
}
