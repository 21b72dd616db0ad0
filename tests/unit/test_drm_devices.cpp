// Device enumeration and the equivalent-device choice, on a fake sysfs tree.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

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
		  const std::string &vendor = "", const std::string &device = "", const std::string &drm_name = "")
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
		fs::create_directories(root_ / "dev/char");
		fs::create_directory_symlink(drmdir, root_ / "dev/char" / ("226:" + std::to_string(minor)));
		drm_names_[minor] = drm_name.empty() ? (driver.empty() ? dev : driver) : drm_name;
	}
	// the DRM_IOCTL_VERSION name each node would answer (the fake tree has no device to ask)
	gw::DriverNamer namer() const
	{
		return [this](const gw::DrmDevice &d) {
			auto it = drm_names_.find(d.minor);
			return it == drm_names_.end() ? std::string() : it->second;
		};
	}
	std::optional<gw::DrmDevice> choose(const gw::SavedDevice &saved, std::string *why)
	{
		return gw::choose_equivalent_device(saved, why, root_, namer());
	}
	fs::path root_;
	std::map<int, std::string> drm_names_;
};

TEST_F(FakeSysfs, ListsCardAndRenderNodesWithDriverAndPciId)
{
	node("card0", 0, "vgem");
	node("renderD128", 128, "vgem");
	node("card1", 1, "0000:00:02.0", "i915", "8086", "46a6");
	node("card1-HDMI-A-1", 999, "0000:00:02.0-connector", "i915");
	auto devs = gw::list_drm_devices(root_, namer());
	ASSERT_EQ(devs.size(), 3u);
	EXPECT_EQ(devs[0].name, "card0");
	EXPECT_EQ(devs[0].driver, "vgem");
	EXPECT_EQ(devs[0].pci_id, "");
	EXPECT_EQ(devs[1].name, "card1");
	EXPECT_EQ(devs[1].driver, "i915");
	EXPECT_EQ(devs[1].pci_id, "8086:46a6");
	EXPECT_EQ(devs[1].bus, "pci");
	EXPECT_EQ(devs[1].pci_slot, "0000:00:02.0");
	EXPECT_EQ(devs[0].bus, "platform");
	EXPECT_EQ(devs[0].platform, "vgem");
	EXPECT_TRUE(devs[2].render());
	EXPECT_EQ(devs[2].path(), "/dev/dri/renderD128");
}

TEST_F(FakeSysfs, SameNodeWhenItStillHasTheDriver)
{
	node("card0", 0, "vgem");
	std::string why;
	auto d = choose({"/dev/dri/card0", 226, 0, "vgem", ""}, &why);
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
	auto d = choose({"/dev/dri/card0", 226, 0, "vgem", ""}, &why);
	ASSERT_TRUE(d);
	EXPECT_EQ(d->name, "card1");
	EXPECT_NE(why.find("is now /dev/dri/card1"), std::string::npos) << why;
	d = choose({"/dev/dri/renderD129", 226, 129, "vgem", ""}, &why);
	ASSERT_TRUE(d);
	EXPECT_EQ(d->name, "renderD128");
}

TEST_F(FakeSysfs, PciIdMustMatchAndNoneIsAClearMessage)
{
	node("card0", 0, "0000:00:02.0", "i915", "8086", "9a49");
	std::string why;
	EXPECT_FALSE(choose({"/dev/dri/card0", 226, 0, "i915", "8086:46a6"}, &why));
	EXPECT_EQ(why, "no DRM device for /dev/dri/card0 (driver i915, PCI id 8086:46a6) on this host");
	EXPECT_TRUE(choose({"/dev/dri/card0", 226, 0, "i915", "8086:9a49"}, &why));
	EXPECT_FALSE(choose({"/dev/dri/card0", 226, 0, "xe", ""}, &why));
}

// bochs: sysfs's driver is "bochs-drm", DRM_IOCTL_VERSION's (the manifest's) "bochs": the choice
// goes by the DRM name, the one the dump recorded.
TEST_F(FakeSysfs, DriverNameIsTheDrmName)
{
	node("card0", 0, "0000:00:03.0", "bochs-drm", "1234", "1111", "bochs");
	std::string why;
	auto d = choose({"/dev/dri/card0", 226, 0, "bochs", "1234:1111"}, &why);
	ASSERT_TRUE(d) << why;
	EXPECT_EQ(d->driver, "bochs");
	EXPECT_FALSE(choose({"/dev/dri/card0", 226, 0, "bochs-drm", "1234:1111"}, &why));
}

// The pure rule, on candidates as either side lists them.
gw::DrmDevice dev(const std::string &name, uint32_t minor, const std::string &driver, const std::string &pci_id = "",
		  const std::string &slot = "", const std::string &bus = "")
{
	gw::DrmDevice d;
	d.name = name;
	d.minor = minor;
	d.driver = driver;
	d.pci_id = pci_id;
	d.pci_slot = slot;
	d.bus = bus.empty() && !pci_id.empty() ? "pci" : bus;
	return d;
}

TEST(ChooseEquivalent, PrefersTheSavedNodeThenItsPathThenItsMinorThenItsSlot)
{
	gw::SavedDevice saved{"/dev/dri/card1", 226, 1, "i915", "8086:46a6", "0000:00:02.0"};
	std::vector<gw::DrmDevice> c = {dev("card0", 0, "i915", "8086:46a6", "0000:03:00.0"),
					dev("card2", 2, "i915", "8086:46a6", "0000:00:02.0"),
					dev("card1", 1, "i915", "8086:46a6", "0000:00:02.0")};
	gw::DeviceChoice ch = gw::choose_equivalent(saved, c);
	ASSERT_TRUE(ch.index);
	EXPECT_EQ(*ch.index, 2u);
	EXPECT_TRUE(ch.same);
	c.pop_back(); // the saved node is gone: the same PCI slot, not the lowest minor
	ch = gw::choose_equivalent(saved, c);
	ASSERT_TRUE(ch.index);
	EXPECT_EQ(c[*ch.index].name, "card2");
	EXPECT_FALSE(ch.same);
	EXPECT_NE(ch.why.find("is now /dev/dri/card2"), std::string::npos) << ch.why;
	c[1].pci_slot = "0000:00:04.0"; // no slot match: the lowest minor
	ch = gw::choose_equivalent(saved, c);
	EXPECT_EQ(c[*ch.index].name, "card0");
}

TEST(ChooseEquivalent, KindDriverAndPciIdMustMatch)
{
	gw::SavedDevice saved{"/dev/dri/renderD128", 226, 128, "i915", "8086:46a6", ""};
	EXPECT_FALSE(gw::choose_equivalent(saved, {dev("card0", 0, "i915", "8086:46a6")}).index)
		<< "a card for a render node";
	EXPECT_FALSE(gw::choose_equivalent(saved, {dev("renderD128", 128, "xe", "8086:46a6")}).index);
	EXPECT_FALSE(gw::choose_equivalent(saved, {dev("renderD128", 128, "i915", "8086:9a49")}).index);
	EXPECT_FALSE(gw::choose_equivalent(saved, {dev("renderD128", 128, "i915", "", "", "platform")}).index)
		<< "known not to be PCI";
	EXPECT_TRUE(gw::choose_equivalent(saved, {dev("renderD128", 128, "i915")}).index) << "bus unknown: tolerated";
	EXPECT_FALSE(gw::choose_equivalent(saved, {dev("renderD128", 128, "")}).index) << "driver unknown";
	gw::DeviceChoice none = gw::choose_equivalent(saved, {});
	EXPECT_EQ(none.why, "no DRM device for /dev/dri/renderD128 (driver i915, PCI id 8086:46a6) on this host");
}

TEST(DrmNodePath, OfMinorNeverNamesAnotherDevice)
{
	EXPECT_EQ(gw::drm_node_path_of_minor(0), "/dev/dri/card0");
	EXPECT_EQ(gw::drm_node_path_of_minor(63), "/dev/dri/card63");
	EXPECT_EQ(gw::drm_node_path_of_minor(128), "/dev/dri/renderD128");
	EXPECT_EQ(gw::drm_node_path_of_minor(191), "/dev/dri/renderD191");
	for (uint32_t m : {64u, 70u, 127u, 192u, 255u, 1u << 20})
		EXPECT_EQ(gw::drm_node_path_of_minor(m), "") << m;
}

TEST(DrmNodePath, OnlyCardAndRenderNodesUnderDevDri)
{
	EXPECT_TRUE(gw::is_drm_node_path("/dev/dri/card0"));
	EXPECT_TRUE(gw::is_drm_node_path("/dev/dri/renderD128"));
	EXPECT_TRUE(gw::is_drm_node_path("/dev/dri/card9999"));
	std::string kind;
	EXPECT_TRUE(gw::is_drm_node_path("/dev/dri/renderD129", &kind));
	EXPECT_EQ(kind, "render");
	for (const char *bad : {"/dev/dri/card0/../../../etc/passwd", "/dev/dri/../sda", "/dev/sda", "/dev/dri/card",
				"/dev/dri/controlD64", "dev/dri/card0", "/dev/dri/card0\n", "/dev/dri//card0", "",
				"/dev/dri/card10000", "/dev/dri/renderD", "/dev/dri/renderD12x", "/dev/dri/card-1",
				"/dev/dri/Card0", "/dev/dri/render128", "/dev/dri/card0 "})
		EXPECT_FALSE(gw::is_drm_node_path(bad)) << bad;
}

} // namespace
