// The plugin's image format without CRIU or a device: round trips, and every kind of damage
// the restore must refuse with a one-line message naming the image and the field.
#include <cstdlib>
#include <functional>
#include <gtest/gtest.h>

#include "drm_devices.hpp"
#include "manifest/manifest.hpp"
#include "drm_devices.hpp"
#include "images.hpp"
#include "image_test_util.hpp"

using gwcriu::DmabufImage;
using gwcriu::FileImage;
using gwcriu::ImageError;
using gwcriu::VmaRec;
using json = nlohmann::json;

namespace
{

FileImage sample_file()
{
	FileImage f;
	f.criu_id = 9;
	f.device = vgem_card0();
	f.f_flags = 02; // O_RDWR
	f.source = "manifest";
	f.handles_known = true;
	f.handles.push_back({1, 16384, "dumb", 1, true, {{"width", 64}, {"height", 64}, {"bpp", 32}, {"flags", 0}}});
	f.handles.push_back({3, 32768, "prime", 2, false, json::object()});
	f.holders.push_back({100, 7, {3, 9}});
	f.degraded.push_back("nothing, really");
	return f;
}

VmaRec sample_vma()
{
	VmaRec v;
	v.pid = 100;
	v.vpid = 7;
	v.start = 0x7f0000000000;
	v.length = 8192;
	v.offset = 0x100001000;
	v.prot = "rw";
	v.file = 9;
	v.device = vgem_card0();
	v.handle = 3;
	v.object = 2;
	v.object_size = 32768;
	v.delta = 4096;
	v.saved = true;
	return v;
}

// The message of the ImageError that parsing `j` (a file image) throws, "" if none.
std::string file_error(const json &j)
{
	try {
		gwcriu::parse_file_image(j.dump(), "gpuwatch-file-9.json", test_devices());
	} catch (const ImageError &e) {
		return e.what();
	}
	return "";
}

json damaged(const std::function<void(json &)> &damage)
{
	json j = gwcriu::to_json(sample_file(), test_index());
	damage(j);
	return j;
}

} // namespace

TEST(Images, FileRoundTrip)
{
	FileImage f =
		gwcriu::parse_file_image(gwcriu::to_json(sample_file(), test_index()).dump(), "x", test_devices());
	EXPECT_EQ(f.criu_id, 9u);
	EXPECT_EQ(f.device.path, "/dev/dri/card0");
	EXPECT_EQ(f.device.kind, "card");
	EXPECT_EQ(f.device.driver, "vgem");
	EXPECT_EQ(f.device.mode, 020660u);
	EXPECT_EQ(f.device.gid, 44u);
	ASSERT_EQ(f.handles.size(), 2u);
	EXPECT_EQ(f.handles[1].handle, 3u);
	EXPECT_EQ(f.handles[1].object, 2u);
	EXPECT_FALSE(f.handles[1].saved);
	EXPECT_EQ(f.handles[0].params["bpp"], 32);
	ASSERT_EQ(f.holders.size(), 1u);
	EXPECT_EQ(f.holders[0].vpid, 7u);
	EXPECT_EQ(f.holders[0].fds, (std::vector<int>{3, 9}));
	EXPECT_EQ(f.degraded.size(), 1u);
}

TEST(Images, DmabufAndVmasRoundTrip)
{
	DmabufImage d;
	d.criu_id = 10;
	d.object = 2;
	d.size = 32768;
	d.saved = true;
	d.f_flags = 02;
	d.device = vgem_card0();
	d.holders.push_back({100, 100, {4}});
	DmabufImage back = gwcriu::parse_dmabuf_image(gwcriu::to_json(d, test_index()).dump(), "x", test_devices());
	EXPECT_EQ(back.object, 2u);
	EXPECT_EQ(back.size, 32768u);
	EXPECT_EQ(back.holders[0].fds, std::vector<int>{4});

	VmaRec none = sample_vma();
	none.start += 0x10000;
	none.file.reset();
	none.handle.reset();
	none.object = 0;
	none.object_size = 0;
	none.delta = 0;
	none.saved = false;
	auto vmas = gwcriu::parse_vmas_image(
		gwcriu::to_json(std::vector<VmaRec>{sample_vma(), none}, test_index()).dump(), "x", test_devices());
	ASSERT_EQ(vmas.size(), 2u);
	EXPECT_EQ(*vmas[0].file, 9u);
	EXPECT_EQ(*vmas[0].handle, 3u);
	EXPECT_EQ(vmas[0].delta, 4096u);
	EXPECT_FALSE(vmas[1].file);
	EXPECT_FALSE(vmas[1].handle);
	EXPECT_EQ(vmas[1].object, 0u);
}

TEST(Images, NodePaths)
{
	std::string kind;
	EXPECT_TRUE(gw::is_drm_node_path("/dev/dri/card0", &kind));
	EXPECT_EQ(kind, "card");
	EXPECT_TRUE(gw::is_drm_node_path("/dev/dri/renderD128", &kind));
	EXPECT_EQ(kind, "render");
	for (const char *bad :
	     {"/dev/dri/card", "/dev/dri/card0/../../etc/passwd", "/dev/dri/../dri/card0", "/dev/dri/renderD12a",
	      "/dev/dri/card12345", "dev/dri/card0", "/dev/dri/card0 ", "/dev/dri/controlD64", "/etc/shadow", ""})
		EXPECT_FALSE(gw::is_drm_node_path(bad, nullptr)) << bad;
}

TEST(Images, RefusesDamage)
{
	struct Case {
		const char *what;
		std::function<void(json &)> damage;
		const char *message;
	} cases[] = {
		{"schema", [](json &j) { j["schema"] = "other"; }, "field schema is not"},
		{"missing field", [](json &j) { j.erase("handles"); }, "missing field handles"},
		{"wrong type", [](json &j) { j["handles"][0]["object"] = "x"; },
		 "handles[0].object is a string, expected an unsigned integer"},
		{"negative", [](json &j) { j["handles"][0]["size"] = -4096; },
		 "handles[0].size is a negative integer, expected an unsigned integer"},
		{"fraction", [](json &j) { j["f_flags"] = 1.5; },
		 "f_flags is a fractional number, expected an unsigned integer"},
		{"unaligned size", [](json &j) { j["handles"][0]["size"] = 12345; },
		 "not a positive multiple of the page size"},
		{"zero size", [](json &j) { j["handles"][0]["size"] = 0; }, "not a positive multiple"},
		{"huge size", [](json &j) { j["handles"][0]["size"] = uint64_t{1} << 50; }, "more than"},
		{"order", [](json &j) { j["handles"][1]["handle"] = 1; }, "handles must be ascending"},
		{"handle 0", [](json &j) { j["handles"][0]["handle"] = 0; }, "handles must be ascending and non-zero"},
		{"huge handle", [](json &j) { j["handles"][1]["handle"] = 4000000000u; }, "more than 65536"},
		{"object 0", [](json &j) { j["handles"][0]["object"] = 0; }, "handles[0].object is 0"},
		{"device", [](json &j) { j["device"] = 4000; },
		 "device is 4000, which names no entry of gpuwatch-devices.json"},
		{"device object", [](json &j) { j["device"] = json::object(); },
		 "device is an object, expected an unsigned"},
		{"long string", [](json &j) { j["source"] = std::string(300, 'x'); }, "longer than"},
		{"source", [](json &j) { j["source"] = "guess"; }, "source is neither"},
		{"holder pid", [](json &j) { j["holders"][0]["pid"] = 0; }, "holders[0].pid is 0"},
		{"holder fd", [](json &j) { j["holders"][0]["fds"][0] = -1; }, "holders[0].fds[0] is not an fd number"},
		{"params", [](json &j) { j["handles"][0]["params"] = 3; },
		 "handles[0].params is an unsigned integer, expected an object"},
		{"not an object", [](json &j) { j = json::array(); }, "the document is an array, expected an object"},
	};
	for (const Case &c : cases) {
		std::string msg = file_error(damaged(c.damage));
		EXPECT_NE(msg.find(c.message), std::string::npos) << c.what << ": got '" << msg << "'";
		EXPECT_EQ(msg.rfind("gpuwatch-file-9.json: ", 0), 0u) << c.what << ": " << msg;
		EXPECT_EQ(msg.find('\n'), std::string::npos) << c.what;
	}
}

TEST(Images, DevicesImageRoundTripsAndRefusesDamage)
{
	gwcriu::Devices devs{vgem_card0()};
	devs.push_back(vgem_card0());
	devs[1].path = "/dev/dri/renderD128";
	devs[1].kind = "render";
	devs[1].minor = 128;
	json good = gw::devices_image_json(devs);
	gwcriu::Devices back = gwcriu::parse_devices_image(good.dump(), "gpuwatch-devices.json");
	ASSERT_EQ(back.size(), 2u);
	EXPECT_EQ(gw::to_json(back[1]), gw::to_json(devs[1]));
	struct Case {
		std::function<void(json &)> damage;
		const char *message;
	} cases[] = {
		{[](json &j) { j["schema"] = "other"; }, "field schema is not"},
		{[](json &j) { j["devices"][0]["path"] = "/etc/passwd"; }, "devices[0].path is not /dev/dri/cardN"},
		{[](json &j) { j["devices"][1]["path"] = "/dev/dri/../../etc/shadow"; }, "devices[1].path is not"},
		{[](json &j) { j["devices"][0]["kind"] = "render"; }, "devices[0].kind does not match"},
		{[](json &j) { j["devices"][0]["major"] = 1; }, "devices[0].major is not the DRM major"},
		{[](json &j) { j["devices"][0]["driver"] = ""; }, "devices[0].driver is empty"},
		{[](json &j) { j["devices"][0]["driver"] = std::string(300, 'x'); }, "longer than"},
		{[](json &j) { j["devices"][0]["minor"] = 1 << 21; }, "devices[0].minor is 2097152, more than"},
		{[](json &j) {
			 j["devices"] = json::array({j["devices"][0], 5});
		 },
		 "devices[1] is an unsigned integer"},
	};
	for (const Case &c : cases) {
		json j = good;
		c.damage(j);
		std::string msg;
		try {
			gwcriu::parse_devices_image(j.dump(), "gpuwatch-devices.json");
		} catch (const ImageError &e) {
			msg = e.what();
		}
		EXPECT_NE(msg.find(c.message), std::string::npos) << c.message << ": got '" << msg << "'";
		EXPECT_EQ(msg.rfind("gpuwatch-devices.json: ", 0), 0u) << msg;
	}
}

TEST(Images, RefusesTruncatedText)
{
	std::string text = gwcriu::to_json(sample_file(), test_index()).dump();
	for (std::size_t cut : {std::size_t{0}, std::size_t{1}, text.size() / 2, text.size() - 1}) {
		try {
			gwcriu::parse_file_image(text.substr(0, cut), "f.json", test_devices());
			ADD_FAILURE() << "accepted a text cut at " << cut;
		} catch (const ImageError &e) {
			EXPECT_NE(std::string(e.what()).find("not valid JSON"), std::string::npos) << e.what();
		}
	}
}

// Issue 16, finding 1: a 600 KB file image whose handle params nested 300 000 deep crashed root
// `criu restore` with SIGSEGV (a recursive copy of the parsed params); now one line.
TEST(Images, RefusesDeeplyNestedParams)
{
	std::string text = gwcriu::to_json(sample_file(), test_index()).dump();
	const std::string bpp = "\"bpp\":32";
	std::size_t at = text.find(bpp);
	ASSERT_NE(at, std::string::npos) << text;
	std::string deep = "\"bpp\":" + std::string(300000, '[') + std::string(300000, ']');
	text.replace(at, bpp.size(), deep);
	try {
		gwcriu::parse_file_image(text, "gpuwatch-file-9.json", test_devices());
		ADD_FAILURE() << "accepted params nested 300000 deep";
	} catch (const ImageError &e) {
		EXPECT_STREQ(e.what(), "gpuwatch-file-9.json: nests deeper than 64 levels");
	}
}

// Issue 16, finding 4: one handle (VM, context, queue) numbered 65536 made the restore create
// 65535 filler objects as root, per file. The images' fillers together are bounded, before any
// is created.
TEST(Images, FillersAreBoundedForAllFilesTogether)
{
	FileImage f = sample_file(); // handles 1 and 3: one hole
	EXPECT_EQ(gwcriu::fillers_needed(f), 1u);
	f.xe = gwcriu::XeFileState{};
	f.xe->vms.push_back({});
	f.xe->vms.back().id = 4; // VMs 1..3 missing
	f.xe->queues.push_back({});
	f.xe->queues.back().id = 1;
	EXPECT_EQ(gwcriu::fillers_needed(f), 4u);
	FileImage high = sample_file();
	high.handles = {{32769, 4096, "dumb", 7, false, json::object()}};
	EXPECT_EQ(gwcriu::fillers_needed(high), 32768u);
	EXPECT_NO_THROW(gwcriu::check_filler_budget({&high, &f}));
	try {
		gwcriu::check_filler_budget({&high, &high, &f});
		ADD_FAILURE() << "two files of 32768 fillers each were accepted";
	} catch (const ImageError &e) {
		EXPECT_STREQ(e.what(),
			     "the files need 65540 filler objects (holes in their handle, VM, context and queue "
			     "numbers), more than GPUWATCH_MAX_FILLERS (65536)");
	}
}

TEST(Images, RefusesBadMappings)
{
	auto error = [](const std::function<void(VmaRec &)> &damage) -> std::string {
		VmaRec v = sample_vma();
		damage(v);
		try {
			gwcriu::parse_vmas_image(gwcriu::to_json(std::vector<VmaRec>{v, v}, test_index()).dump(),
						 "gpuwatch-vmas.json", test_devices());
		} catch (const ImageError &e) {
			return e.what();
		}
		return "";
	};
	// the same mapping twice
	EXPECT_NE(error([](VmaRec &) {}).find("repeats another mapping"), std::string::npos);
	EXPECT_NE(error([](VmaRec &v) { v.start += 1; }).find("page-aligned"), std::string::npos);
	EXPECT_NE(error([](VmaRec &v) { v.length = 0; }).find("page-aligned"), std::string::npos);
	EXPECT_NE(error([](VmaRec &v) { v.start = ~uint64_t{0} - 4095; }).find("page-aligned"), std::string::npos);
	EXPECT_NE(error([](VmaRec &v) { v.delta = 32768; }).find("outside its object"), std::string::npos);
	EXPECT_NE(error([](VmaRec &v) { v.length = 32768; }).find("outside its object"), std::string::npos);
	EXPECT_NE(error([](VmaRec &v) { v.object_size = 100; }).find("positive multiple"), std::string::npos);
}

TEST(Images, HandleBoundIsAKnob)
{
	json j = damaged([](json &x) { x["handles"][1]["handle"] = 70000; });
	EXPECT_NE(file_error(j).find("more than 65536"), std::string::npos);
	setenv("GPUWATCH_MAX_HANDLE", "100000", 1);
	EXPECT_EQ(file_error(j), "");
	unsetenv("GPUWATCH_MAX_HANDLE");
}

TEST(Images, FlagsText)
{
	EXPECT_EQ(gw::flags_string(02), "O_RDWR");
	EXPECT_EQ(gw::flags_string(0), "O_RDONLY");
	EXPECT_EQ(gw::flags_string(02 | 04000), "O_RDWR|O_NONBLOCK");
}

// The KMS state of a file image: framebuffers on the file's handles and the CRTCs showing
// them; a plane naming no handle of the file, a CRTC naming no framebuffer of it, a mode field
// out of range are refused.
TEST(Images, KmsStateRoundTripAndDamage)
{
	auto with_kms = [] {
		FileImage f = sample_file();
		f.kms.framebuffers.push_back(legacy_framebuffer(40, 1));
		gwcriu::KmsCrtc c;
		c.crtc_id = 33;
		c.fb_id = 40;
		c.connectors = {34};
		c.mode = {{"clock", 25175},   {"hdisplay", 640}, {"hsync_start", 656}, {"hsync_end", 752},
			  {"htotal", 800},    {"hskew", 0},      {"vdisplay", 480},    {"vsync_start", 490},
			  {"vsync_end", 492}, {"vtotal", 525},   {"vscan", 0},         {"vrefresh", 60},
			  {"flags", 10},      {"type", 64},      {"name", "640x480"}};
		f.kms.crtcs.push_back(c);
		f.kms.planes.push_back({31, 33, 40, -8, 16, 64, 64, 0, 0, 64 << 16, 64 << 16});
		f.kms.cursors.push_back({33, 1, 64, 64, 2, 3, std::array<int32_t, 2>{-5, 40}});
		f.kms.blobs.push_back({38, {0x24, 0xa3, 0x01, 0x00}});
		f.kms.blobs.push_back({44, {0xff}});
		f.kms.master = true;
		return gwcriu::to_json(f, test_index());
	};
	FileImage back = gwcriu::parse_file_image(with_kms().dump(), "x", test_devices());
	ASSERT_EQ(back.kms.framebuffers.size(), 1u);
	EXPECT_EQ(back.kms.framebuffers[0].id, 40u);
	EXPECT_TRUE(back.kms.framebuffers[0].legacy);
	ASSERT_EQ(back.kms.crtcs.size(), 1u);
	EXPECT_EQ(back.kms.crtcs[0].connectors, std::vector<uint32_t>{34});
	EXPECT_EQ(back.kms.crtcs[0].mode["name"], "640x480");
	ASSERT_EQ(back.kms.planes.size(), 1u);
	EXPECT_EQ(back.kms.planes[0].plane, 31u);
	EXPECT_EQ(back.kms.planes[0].crtc_x, -8); // the __s32's bits
	EXPECT_EQ(back.kms.planes[0].src_h, 64u << 16);
	ASSERT_EQ(back.kms.cursors.size(), 1u);
	EXPECT_EQ(back.kms.cursors[0].hot_y, 3);
	EXPECT_EQ(back.kms.cursors[0].position, (std::array<int32_t, 2>{-5, 40}));
	ASSERT_EQ(back.kms.blobs.size(), 2u);
	EXPECT_EQ(back.kms.blobs[0].id, 38u);
	EXPECT_EQ(back.kms.blobs[0].data, (std::vector<uint8_t>{0x24, 0xa3, 0x01, 0x00}));
	EXPECT_EQ(back.kms.master, std::optional<bool>(true));
	EXPECT_TRUE(gwcriu::parse_file_image(gwcriu::to_json(sample_file(), test_index()).dump(), "x", test_devices())
			    .kms.empty());

	json j = with_kms();
	j["kms"]["framebuffers"][0]["planes"][0]["handle"] = 2;
	EXPECT_NE(file_error(j).find("kms.framebuffers[0].planes[0].handle names no handle of the file"),
		  std::string::npos)
		<< file_error(j);
	j = with_kms();
	j["kms"]["crtcs"][0]["fb_id"] = 41;
	EXPECT_NE(file_error(j).find("kms.crtcs[0].fb_id names no framebuffer of the file"), std::string::npos)
		<< file_error(j);
	j = with_kms();
	j["kms"]["planes"][0]["fb_id"] = 41;
	EXPECT_NE(file_error(j).find("kms.planes[0].fb_id names no framebuffer of the file"), std::string::npos)
		<< file_error(j);
	j = with_kms();
	j["kms"]["planes"][0].erase("crtc_w");
	EXPECT_NE(file_error(j).find("kms.planes[0].crtc_w"), std::string::npos) << file_error(j);
	j = with_kms();
	j["kms"].erase("planes"); // an image of an earlier version: no planes
	EXPECT_TRUE(gwcriu::parse_file_image(j.dump(), "x", test_devices()).kms.planes.empty());
	j = with_kms();
	j["kms"]["crtcs"][0]["mode"]["hdisplay"] = 70000;
	EXPECT_NE(file_error(j).find("kms.crtcs[0].mode.hdisplay"), std::string::npos) << file_error(j);
	j = with_kms();
	j["kms"]["framebuffers"][0]["planes"] = json::array();
	EXPECT_NE(file_error(j).find("must hold 1 to 4 planes"), std::string::npos) << file_error(j);
	j = with_kms();
	j["kms"]["cursors"][0]["handle"] = 9;
	EXPECT_NE(file_error(j).find("kms.cursors[0].handle names no handle of the file"), std::string::npos)
		<< file_error(j);
	j = with_kms();
	j["kms"]["cursors"][0]["position"] = {1};
	EXPECT_NE(file_error(j).find("kms.cursors[0].position is not a pair of unsigned integers"), std::string::npos)
		<< file_error(j);
	// property blobs: lowercase hex, not empty, ascending ids; master a boolean or null
	j = with_kms();
	j["kms"]["blobs"][1]["data"] = "0G";
	EXPECT_NE(file_error(j).find("kms.blobs[1].data is not lowercase hex"), std::string::npos) << file_error(j);
	j = with_kms();
	j["kms"]["blobs"][1]["data"] = "";
	EXPECT_NE(file_error(j).find("kms.blobs[1].data is empty"), std::string::npos) << file_error(j);
	j = with_kms();
	j["kms"]["blobs"][1]["id"] = 38;
	EXPECT_NE(file_error(j).find("kms.blobs[1].id is not ascending"), std::string::npos) << file_error(j);
	j = with_kms();
	j["kms"]["master"] = 1;
	EXPECT_NE(file_error(j).find("kms.master is"), std::string::npos) << file_error(j);
	j = with_kms();
	j["kms"].erase("blobs"); // an image of an earlier version
	j["kms"].erase("cursors");
	j["kms"].erase("master");
	FileImage old = gwcriu::parse_file_image(j.dump(), "x", test_devices());
	EXPECT_TRUE(old.kms.blobs.empty());
	EXPECT_FALSE(old.kms.master);
}

// Client caps of a file image: kept in capability order; disorder and out-of-range refused;
// an image without them (older) has none.
TEST(Images, ClientCaps)
{
	FileImage f = sample_file();
	f.caps = {{2, 1}, {3, 1}};
	json j = gwcriu::to_json(f, test_index());
	FileImage back = gwcriu::parse_file_image(j.dump(), "x", test_devices());
	EXPECT_EQ(back.caps, (std::vector<std::pair<uint64_t, uint64_t>>{{2, 1}, {3, 1}}));
	json old = j;
	old.erase("caps");
	EXPECT_TRUE(gwcriu::parse_file_image(old.dump(), "x", test_devices()).caps.empty());
	json bad = j;
	bad["caps"] = json::array({json::array({3, 1}), json::array({2, 1})});
	EXPECT_NE(file_error(bad).find("caps[1] is not in ascending capability order"), std::string::npos)
		<< file_error(bad);
	bad["caps"] = json::array({json::array({65, 1})});
	EXPECT_NE(file_error(bad).find("caps[0]"), std::string::npos) << file_error(bad);
}

// A stateless checkpoint's images: a file with its device, flags and holders only, mappings
// with no buffer. Anything more in them is damage.
TEST(Images, StatelessFileAndMappings)
{
	FileImage f = sample_file();
	f.source = "stateless";
	f.handles_known = false;
	f.handles.clear();
	FileImage back = gwcriu::parse_file_image(gwcriu::to_json(f, test_index()).dump(), "x", test_devices());
	EXPECT_EQ(back.source, "stateless");
	EXPECT_TRUE(back.handles.empty());
	EXPECT_EQ(back.holders[0].fds, (std::vector<int>{3, 9}));

	json with_handles = gwcriu::to_json(sample_file(), test_index());
	with_handles["source"] = "stateless";
	with_handles["handles_known"] = false;
	EXPECT_NE(file_error(with_handles).find("source"), std::string::npos) << file_error(with_handles);
	json with_caps = gwcriu::to_json(f, test_index());
	with_caps["caps"] = json::array({json::array({1, 1})});
	EXPECT_NE(file_error(with_caps).find("is \"stateless\""), std::string::npos) << file_error(with_caps);
	json other = gwcriu::to_json(f, test_index());
	other["source"] = "guess";
	EXPECT_NE(file_error(other).find("source"), std::string::npos);

	VmaRec v = sample_vma();
	v.handle.reset();
	v.object = 0;
	v.object_size = 0;
	v.delta = 0;
	v.saved = false;
	v.stateless = true;
	auto vmas = gwcriu::parse_vmas_image(gwcriu::to_json(std::vector<VmaRec>{v}, test_index()).dump(), "x",
					     test_devices());
	ASSERT_EQ(vmas.size(), 1u);
	EXPECT_TRUE(vmas[0].stateless);
	// a converted i915 mapping of a stateless dump: late, no handle or buffer
	VmaRec l = v;
	l.start += 0x100000;
	l.late = gwcriu::LateMap{"gem", 1u, 7, false};
	auto both = gwcriu::parse_vmas_image(gwcriu::to_json(std::vector<VmaRec>{v, l}, test_index()).dump(), "x",
					     test_devices());
	ASSERT_EQ(both.size(), 2u);
	EXPECT_TRUE(both[1].late && both[1].stateless && !both[1].handle);
	// absent (images of full checkpoints before the field): false
	json j = gwcriu::to_json(std::vector<VmaRec>{sample_vma()}, test_index());
	j["vmas"][0].erase("stateless");
	EXPECT_FALSE(gwcriu::parse_vmas_image(j.dump(), "x", test_devices())[0].stateless);
	// a stateless mapping naming a buffer
	VmaRec bad = sample_vma();
	bad.stateless = true;
	try {
		gwcriu::parse_vmas_image(gwcriu::to_json(std::vector<VmaRec>{bad}, test_index()).dump(),
					 "gpuwatch-vmas.json", test_devices());
		ADD_FAILURE() << "a stateless mapping with a buffer was accepted";
	} catch (const ImageError &e) {
		EXPECT_NE(std::string(e.what()).find("stateless"), std::string::npos) << e.what();
	}
}
