// gpuwatch-i915-maps.json (restore/remote/i915_maps.hpp): round trip, and every corruption is
// refused with one line naming the field.
#include <functional>
#include <gtest/gtest.h>
#include <sys/mman.h>

#include "i915_maps.hpp"
#include "sysutil.hpp"

using gwremote::MapKind;
using gwremote::MapMode;
using gwremote::MapRecord;
using gwremote::MapsRecord;
using nlohmann::json;

namespace
{

MapsRecord sample()
{
	MapsRecord r;
	r.cgroup = "/sys/fs/cgroup/ctr";
	r.criu_pid = 123;
	r.watcher_pid = 456;
	MapRecord gem;
	gem.pid = 10, gem.vpid = 1, gem.start = 0x7f0000000000, gem.length = 65536, gem.prot = PROT_READ | PROT_WRITE;
	gem.kind = MapKind::Gem, gem.mode = MapMode::Placeholder, gem.offset = 4295229440ULL;
	gem.fd = 7, gem.file = 1, gem.handle = 3, gem.object = 3, gem.mmap_type = "gtt";
	MapRecord shm = gem;
	shm.start = 0x7f0000100000, shm.kind = MapKind::Shmem, shm.offset = 0, shm.mmap_type.reset(), shm.wc = true;
	MapRecord copy = gem;
	copy.start = 0x7f0000200000, copy.mode = MapMode::Copy, copy.prot = PROT_READ, copy.handle.reset(),
	copy.fd.reset(), copy.file.reset(), copy.object.reset(), copy.mmap_type.reset();
	r.maps = {gem, shm, copy};
	return r;
}

// Parses j and returns the error, "" if it was accepted.
std::string error_of(const json &j)
{
	try {
		gwremote::parse_maps_record(j.dump());
		return "";
	} catch (const gw::Error &e) {
		return e.what();
	}
}

} // namespace

TEST(I915MapsRecord, RoundTrip)
{
	MapsRecord r = sample();
	json j = gwremote::to_json(r);
	EXPECT_EQ(j["schema"], "gpuwatch.criu.i915maps/v1");
	EXPECT_EQ(j["maps"][0]["prot"], "rw");
	EXPECT_EQ(j["maps"][0]["kind"], "gem");
	EXPECT_EQ(j["maps"][1]["kind"], "shmem");
	EXPECT_EQ(j["maps"][2]["mode"], "copy");
	EXPECT_TRUE(j["maps"][2]["handle"].is_null());
	MapsRecord back = gwremote::parse_maps_record(j.dump());
	EXPECT_EQ(gwremote::to_json(back), j);
	ASSERT_EQ(back.maps.size(), 3u);
	EXPECT_EQ(back.maps[0].offset, 4295229440ULL);
	EXPECT_EQ(*back.maps[0].mmap_type, "gtt");
	EXPECT_TRUE(back.maps[1].wc);
	EXPECT_EQ(back.maps[2].prot, PROT_READ);
	EXPECT_EQ(*back.watcher_pid, 456u);
}

TEST(I915MapsRecord, WatcherPidMayBeNull)
{
	json j = gwremote::to_json(sample());
	j["watcher_pid"] = nullptr;
	EXPECT_EQ(error_of(j), "");
}

TEST(I915MapsRecord, EveryCorruptionNamesItsField)
{
	struct Case {
		const char *field; // expected in the message
		std::function<void(json &)> corrupt;
	};
	const std::vector<Case> cases = {
		{"schema", [](json &j) { j["schema"] = "gpuwatch.criu.i915maps/v2"; }},
		{"schema", [](json &j) { j.erase("schema"); }},
		{"cgroup", [](json &j) { j["cgroup"] = "relative/path"; }},
		{"cgroup", [](json &j) { j["cgroup"] = 5; }},
		{"criu_pid", [](json &j) { j["criu_pid"] = 0; }},
		{"criu_pid", [](json &j) { j["criu_pid"] = -3; }},
		{"criu_pid", [](json &j) { j["criu_pid"] = "123"; }},
		{"watcher_pid", [](json &j) { j["watcher_pid"] = 1e12; }},
		{"maps", [](json &j) { j["maps"] = json::object(); }},
		{"extra", [](json &j) { j["extra"] = 1; }},
		{"maps[0]", [](json &j) { j["maps"][0] = 7; }},
		{"maps[0].pid", [](json &j) { j["maps"][0].erase("pid"); }},
		{"maps[0].pid", [](json &j) { j["maps"][0]["pid"] = 0; }},
		{"maps[1].vpid", [](json &j) { j["maps"][1]["vpid"] = nullptr; }},
		{"maps[0].start", [](json &j) { j["maps"][0]["start"] = 0x7f0000000001ULL; }},
		{"maps[0].start", [](json &j) { j["maps"][0]["start"] = 0; }},
		{"maps[0].start", [](json &j) { j["maps"][0]["start"] = 1.5; }},
		{"maps[0].length", [](json &j) { j["maps"][0]["length"] = 100; }},
		{"maps[0].length", [](json &j) { j["maps"][0]["length"] = 0; }},
		{"maps[0].length", [](json &j) { j["maps"][0]["length"] = (1ULL << 56); }},
		{"maps[0].prot", [](json &j) { j["maps"][0]["prot"] = "wr"; }},
		{"maps[0].prot", [](json &j) { j["maps"][0]["prot"] = ""; }},
		{"maps[0].kind", [](json &j) { j["maps"][0]["kind"] = "dumb"; }},
		{"maps[0].mode", [](json &j) { j["maps"][0]["mode"] = "move"; }},
		{"maps[0].offset", [](json &j) { j["maps"][0]["offset"] = 4295229441ULL; }},
		{"maps[0].offset", [](json &j) { j["maps"][0]["offset"] = 4096; }}, // gem placeholder below 4 GiB
		{"maps[0].fd", [](json &j) { j["maps"][0]["fd"] = nullptr; }},
		{"maps[0].fd", [](json &j) { j["maps"][0]["fd"] = -1; }},
		{"maps[0].handle", [](json &j) { j["maps"][0]["handle"] = nullptr; }},
		{"maps[0].handle", [](json &j) { j["maps"][0]["handle"] = 0; }},
		{"maps[0].file", [](json &j) { j["maps"][0]["file"] = nullptr; }},
		{"maps[0].file", [](json &j) { j["maps"][0]["file"] = "1"; }},
		{"maps[0].object", [](json &j) { j["maps"][0]["object"] = true; }},
		{"maps[0].mmap_type", [](json &j) { j["maps"][0]["mmap_type"] = "cached"; }},
		{"maps[0].mmap_type", [](json &j) { j["maps"][0].erase("mmap_type"); }},
		{"maps[1].wc", [](json &j) { j["maps"][1]["wc"] = 1; }},
		{"maps[2].nonsense", [](json &j) { j["maps"][2]["nonsense"] = 0; }},
		{"maps[1].start",
		 [](json &j) { j["maps"][1]["start"] = 0x7f0000000000ULL + 4096; }}, // overlaps maps[0]
	};
	for (const Case &c : cases) {
		json j = gwremote::to_json(sample());
		c.corrupt(j);
		std::string err = error_of(j);
		SCOPED_TRACE(j.dump());
		EXPECT_NE(err, "") << "accepted a corruption of " << c.field;
		EXPECT_NE(err.find(c.field), std::string::npos) << "'" << err << "' does not name " << c.field;
		EXPECT_EQ(err.find('\n'), std::string::npos) << err;
		EXPECT_EQ(err.rfind("gpuwatch-i915-maps.json: ", 0), 0u) << err;
	}
}

TEST(I915MapsRecord, NotJson)
{
	for (const char *text : {"", "{", "[]", "null", "{\"schema\": \"gpuwatch.criu.i915maps/v1\""}) {
		try {
			gwremote::parse_maps_record(text);
			ADD_FAILURE() << "accepted '" << text << "'";
		} catch (const gw::Error &e) {
			EXPECT_EQ(std::string(e.what()).rfind("gpuwatch-i915-maps.json: ", 0), 0u) << e.what();
		}
	}
}

TEST(I915MapsRecord, SameStartInTwoProcessesIsFine)
{
	json j = gwremote::to_json(sample());
	json other = j["maps"][0];
	other["pid"] = 11;
	j["maps"].push_back(other);
	EXPECT_EQ(error_of(j), "");
}
