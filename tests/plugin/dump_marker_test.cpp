// Images of an earlier dump into the same directory are removed before a dump writes its own;
// the action script's marker says which files belong to the dump under way.
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <gtest/gtest.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include "dump_marker.hpp"
#include "sysutil.hpp"

namespace
{

struct TempDir {
	std::string path;
	TempDir()
	{
		char t[] = "/tmp/gw-marker.XXXXXX";
		path = mkdtemp(t);
	}
	~TempDir() { std::system(("rm -rf " + path).c_str()); }
	void write(const std::string &name, const std::string &text) { std::ofstream(path + "/" + name) << text; }
	bool has(const std::string &name) const { return access((path + "/" + name).c_str(), F_OK) == 0; }
};

} // namespace

TEST(DumpMarker, OnlyRegularGpuwatchFilesAreRemoved)
{
	TempDir d;
	d.write("gpuwatch-i915-maps.json", "{}");
	d.write("gpuwatch-object-3.bin", "x");
	d.write("core-1.img", "criu's");
	d.write("victim", "not ours");
	ASSERT_EQ(symlink((d.path + "/victim").c_str(), (d.path + "/gpuwatch-link.json").c_str()), 0);
	ASSERT_EQ(mkdir((d.path + "/gpuwatch-dir").c_str(), 0700), 0);
	gw::UniqueFd fd(open(d.path.c_str(), O_RDONLY | O_DIRECTORY));
	EXPECT_EQ(gwaction::remove_gpuwatch_images(fd.get()), 2);
	EXPECT_FALSE(d.has("gpuwatch-i915-maps.json"));
	EXPECT_FALSE(d.has("gpuwatch-object-3.bin"));
	EXPECT_TRUE(d.has("core-1.img"));
	EXPECT_TRUE(d.has("victim"));
	EXPECT_TRUE(d.has("gpuwatch-link.json")) << "a symlink is not followed nor removed";
	EXPECT_TRUE(d.has("gpuwatch-dir"));
}

TEST(DumpMarker, NamesOneCriuProcess)
{
	TempDir d;
	gw::UniqueFd fd(open(d.path.c_str(), O_RDONLY | O_DIRECTORY));
	EXPECT_FALSE(gwaction::dump_marker_is(fd.get(), getpid())) << "no marker";
	d.write(gwaction::kDumpMarker, gwaction::dump_marker(getpid(), 4242));
	EXPECT_TRUE(gwaction::dump_marker_is(fd.get(), getpid()));
	EXPECT_EQ(gwaction::dump_marker_root(fd.get(), getpid()), std::optional<uint32_t>(4242));
	EXPECT_FALSE(gwaction::dump_marker_is(fd.get(), getppid())) << "another criu";
	d.write(gwaction::kDumpMarker, gwaction::dump_marker(getppid(), 4242));
	EXPECT_FALSE(gwaction::dump_marker_is(fd.get(), getpid())) << "an earlier dump's marker";
	EXPECT_EQ(gwaction::dump_marker_root(fd.get(), getpid()), std::nullopt);
}

// The plugin trusts the marker only as far as it names this criu; the root it records is a
// hint the plugin checks (the task must be seized by this criu), and a damaged marker is none.
TEST(DumpMarker, DamagedMarkerNamesNoDump)
{
	TempDir d;
	gw::UniqueFd fd(open(d.path.c_str(), O_RDONLY | O_DIRECTORY));
	std::string good = gwaction::dump_marker(getpid(), 7);
	for (const std::string &bad : {std::string("{"), std::string("[]"), std::string("{\"criu_pid\": -1}"),
				       good.substr(0, good.size() / 2), std::string(5000, ' ') + good}) {
		d.write(gwaction::kDumpMarker, bad);
		EXPECT_EQ(gwaction::dump_marker_root(fd.get(), getpid()), std::nullopt) << bad;
	}
	std::string rootless = good;
	rootless.replace(rootless.find("\"tree_root\":7"), 13, "\"tree_root\":-7");
	d.write(gwaction::kDumpMarker, rootless);
	EXPECT_EQ(gwaction::dump_marker_root(fd.get(), getpid()), std::optional<uint32_t>(0))
		<< "this dump's marker without a usable root: the plugin scans /proc";
}
