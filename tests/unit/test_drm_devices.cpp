// Device enumeration and the equivalent-device choice, on a fake sysfs tree.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "drm_devices.hpp"

namespace fs = std::filesystem;

namespace
{

class FakeSysfs : public ::testing::Test
{
protected:
	void SetUp() override
	{
		root_ = fs::temp_directory_path() / ("gw-sysfs-" + std::to_string(::getpid()) + "-" +
						     ::testing::UnitTest::GetInstance()->current_test_info()->name());
		fs::remove_all(root_);
		fs::create_directories(root_ / "class/drm");
	}
	void TearDown() override { fs::remove_all(root_); }

	// a platform device with no driver bound (vgem), or a PCI device bound to `driver`
	void node(const std::string &name, int minor, const std::string &dev, const std::string &driver = "",
		  const std::string &vendor = "", const std::string &device = "")
	{
		bool pci = !vendor.empty();
		fs::path devdir = root_ / "devices" / (pci ? "pci0000:00" : "platform") / dev;
		fs::path drmdir = devdir / "drm" / name;
		fs::create_directories(drmdir);
		std::ofstream(drmdir / "dev") << "226:" << minor << "\n";
		fs::create_directories(root_ / "bus" / (pci ? "pci" : "platform"));
		if (!fs::exists(devdir / "subsystem"))
			fs::create_directory_symlink(root_ / "bus" / (pci ? "pci" : "platform"), devdir / "subsystem");
		if (!driver.empty() && !fs::exists(devdir / "driver")) {
			fs::create_directories(root_ / "drivers" / driver);
			fs::create_directory_symlink(root_ / "drivers" / driver, devdir / "driver");
		}
		if (pci) {
			std::ofstream(devdir / "vendor") << "0x" << vendor << "\n";
			std::ofstream(devdir / "device") << "0x" << device << "\n";
		}
		if (!fs::exists(drmdir / "device"))
			fs::create_directory_symlink(devdir, drmdir / "device");
		fs::create_directory_symlink(drmdir, root_ / "class/drm" / name);
	}
	fs::path root_;
};

TEST_F(FakeSysfs, ListsCardAndRenderNodesWithDriverAndPciId)
{
	node("card0", 0, "vgem");
	node("renderD128", 128, "vgem");
	node("card1", 1, "0000:00:02.0", "i915", "8086", "46a6");
	node("card1-HDMI-A-1", 999, "0000:00:02.0-connector", "i915");
	auto devs = gw::list_drm_devices(root_);
	ASSERT_EQ(devs.size(), 3u);
	EXPECT_EQ(devs[0].name, "card0");
	EXPECT_EQ(devs[0].driver, "vgem");
	EXPECT_EQ(devs[0].pci_id, "");
	EXPECT_EQ(devs[1].name, "card1");
	EXPECT_EQ(devs[1].driver, "i915");
	EXPECT_EQ(devs[1].pci_id, "8086:46a6");
	EXPECT_EQ(devs[1].bus, "pci:0000:00:02.0");
	EXPECT_TRUE(devs[2].render());
	EXPECT_EQ(devs[2].path(), "/dev/dri/renderD128");
}

TEST_F(FakeSysfs, SameNodeWhenItStillHasTheDriver)
{
	node("card0", 0, "vgem");
	std::string why;
	auto d = gw::choose_equivalent_device({"/dev/dri/card0", 226, 0, "vgem", ""}, &why, root_);
	ASSERT_TRUE(d);
	EXPECT_EQ(d->minor, 0u);
	EXPECT_NE(why.find("same device"), std::string::npos) << why;
}

TEST_F(FakeSysfs, MinorChangedPicksTheSameDriverAndKind)
{
	node("card0", 0, "vkms");
	node("card1", 1, "vgem");
	node("renderD128", 128, "vgem");
	std::string why;
	auto d = gw::choose_equivalent_device({"/dev/dri/card0", 226, 0, "vgem", ""}, &why, root_);
	ASSERT_TRUE(d);
	EXPECT_EQ(d->name, "card1");
	EXPECT_NE(why.find("is now /dev/dri/card1"), std::string::npos) << why;
	d = gw::choose_equivalent_device({"/dev/dri/renderD129", 226, 129, "vgem", ""}, &why, root_);
	ASSERT_TRUE(d);
	EXPECT_EQ(d->name, "renderD128");
}

TEST_F(FakeSysfs, PciIdMustMatchAndNoneIsAClearMessage)
{
	node("card0", 0, "0000:00:02.0", "i915", "8086", "9a49");
	std::string why;
	EXPECT_FALSE(gw::choose_equivalent_device({"/dev/dri/card0", 226, 0, "i915", "8086:46a6"}, &why, root_));
	EXPECT_EQ(why, "no DRM device for /dev/dri/card0 (driver i915, PCI id 8086:46a6) on this host");
	EXPECT_TRUE(gw::choose_equivalent_device({"/dev/dri/card0", 226, 0, "i915", "8086:9a49"}, &why, root_));
	EXPECT_FALSE(gw::choose_equivalent_device({"/dev/dri/card0", 226, 0, "xe", ""}, &why, root_));
}

TEST(DrmNodePath, OnlyCardAndRenderNodesUnderDevDri)
{
	EXPECT_TRUE(gw::is_drm_node_path("/dev/dri/card0"));
	EXPECT_TRUE(gw::is_drm_node_path("/dev/dri/renderD128"));
	for (const char *bad : {"/dev/dri/card0/../../../etc/passwd", "/dev/dri/../sda", "/dev/sda", "/dev/dri/card",
				"/dev/dri/controlD64", "dev/dri/card0", "/dev/dri/card0\n", "/dev/dri//card0", ""})
		EXPECT_FALSE(gw::is_drm_node_path(bad)) << bad;
}

} // namespace
