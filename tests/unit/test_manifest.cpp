// The manifest: its JSON form, the file round trip, reader errors, and the `show` text.
#include <gtest/gtest.h>

#include <cstdio>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <functional>

#include "records.hpp"

namespace
{

using namespace gwtest;
using json = nlohmann::json;
constexpr uint64_t A = 0x7f0000000000;

// A temporary directory removed at the end of the test.
struct TempDir {
	std::filesystem::path dir;
	TempDir()
	{
		char tmpl[] = "/tmp/gw_manifest_XXXXXX";
		dir = mkdtemp(tmpl);
	}
	~TempDir() { std::filesystem::remove_all(dir); }
	std::string write(const std::string &name, const std::string &text) const
	{
		auto p = dir / name;
		std::ofstream(p) << text;
		return p.string();
	}
};

// Two processes sharing a card0 file by fork, a render node importing a buffer, a mapping.
World scenario()
{
	World w;
	w.proc(100, "producer");
	w.proc(200, "encoder");
	auto r = fd_rec(100, 3, kCard, GW_FD_OPEN, true, 0);
	r.f_flags = O_RDWR | O_NONBLOCK | 0100000 /* O_LARGEFILE, as the kernel sets it */;
	w.apply(r);
	w.create_dumb(100, kCard, 1, 64, 64);
	w.map_dumb(100, kCard, 1, kFake);
	w.mmap(100, kCard, A, 16384, kFake);
	w.export_fd(100, kCard, 1, 8, kBuf, false);
	w.open(200, 4, kRender, 128);
	w.import_fd(200, kRender, 5, 1, kBuf, 4);
	w.fork(100, 101);
	return w;
}

TEST(Manifest, Contract)
{
	World w = scenario();
	json m = w.manifest();
	EXPECT_EQ(m["schema"], "gpuwatch.manifest/v1");
	EXPECT_EQ(m["cgroup"], "/sys/fs/cgroup/test");
	EXPECT_EQ(m["complete"], true);
	EXPECT_EQ(m["lost_events"], 0);
	EXPECT_EQ(m["incomplete_reasons"], json::array());
	ASSERT_EQ(m["processes"].size(), 3u);
	EXPECT_EQ(m["processes"][0]["pid"], 100);
	EXPECT_EQ(m["processes"][1]["pid"], 101);
	EXPECT_EQ(m["processes"][2]["pid"], 200);
	const json &p = m["processes"][0];
	EXPECT_EQ(p["comm"], "producer");
	EXPECT_EQ(p["fds"],
		  (json::array(
			  {{{"fd", 3}, {"file", 1}, {"cloexec", true}},
			   {{"fd", 8}, {"dmabuf", {{"file", 1}, {"handle", 1}, {"object", 1}}}, {"cloexec", false}}})));
	EXPECT_EQ(p["mmaps"], (json::array({{{"start", A},
					     {"length", 16384},
					     {"prot", "rw"},
					     {"shared", true},
					     {"file", 1},
					     {"offset", kFake},
					     {"handle", 1},
					     {"object", 1},
					     {"via", "device"}}})));
	EXPECT_EQ(m["processes"][1]["fds"], p["fds"]);
	EXPECT_EQ(m["processes"][2]["fds"],
		  (json::array(
			  {{{"fd", 4}, {"file", 2}, {"cloexec", false}},
			   {{"fd", 5}, {"dmabuf", {{"file", 1}, {"handle", 1}, {"object", 1}}}, {"cloexec", false}}})));
	ASSERT_EQ(m["files"].size(), 2u);
	const json &f = m["files"][0];
	EXPECT_EQ(f["id"], 1);
	EXPECT_EQ(f["path"], "/dev/dri/card0");
	EXPECT_EQ(f["rdev"], "226:0");
	EXPECT_EQ(f["driver"], "vgem");
	EXPECT_EQ(f["flags"], "O_RDWR|O_NONBLOCK");
	EXPECT_EQ(f["handles_known"], true);
	EXPECT_EQ(f["handles"],
		  (json::array({{{"handle", 1},
				 {"size", 16384},
				 {"origin", "dumb"},
				 {"object", 1},
				 {"params", {{"width", 64}, {"height", 64}, {"bpp", 32}, {"flags", 0}, {"pitch", 256}}},
				 {"imports", 0},
				 {"flink_name", nullptr},
				 {"mmap_offsets", {kFake}}}})));
	EXPECT_EQ(m["files"][1]["path"], "/dev/dri/renderD128");
	EXPECT_EQ(m["files"][1]["handles"][0]["origin"], "prime");
	EXPECT_EQ(m["files"][1]["handles"][0]["object"], 1);
	EXPECT_EQ(m["objects"], (json::array({{{"id", 1}, {"size", 16384}, {"flink_name", nullptr}}})));
	EXPECT_NO_THROW(gw::manifest::validate(m));
}

TEST(Manifest, FlagsText)
{
	World w;
	w.proc(100);
	auto r = fd_rec(100, 3, kCard);
	r.f_flags = O_RDONLY | O_SYNC | O_APPEND;
	w.apply(r);
	EXPECT_EQ(w.manifest()["files"][0]["flags"], "O_RDONLY|O_APPEND|O_SYNC");
	r = fd_rec(100, 4, kCard2);
	r.f_flags = O_WRONLY | O_DSYNC;
	w.apply(r);
	EXPECT_EQ(w.manifest()["files"][1]["flags"], "O_WRONLY|O_DSYNC");
}

TEST(Manifest, Uint64StaysExact)
{
	World w;
	w.proc(100);
	w.open(100, 3, kCard);
	w.mmap(100, kCard, A, 4096, 0xfffffffffffff000);
	TempDir t;
	auto path = t.write("m.json", w.manifest().dump());
	EXPECT_EQ(gw::manifest::to_json(gw::manifest::read_file(path))["processes"][0]["mmaps"][0]["offset"]
			  .get<uint64_t>(),
		  0xfffffffffffff000u);
}

TEST(Manifest, RoundTripThroughAFile)
{
	World w = scenario();
	w.m.mark_incomplete("a reason");
	json m = w.manifest();
	TempDir t;
	auto path = t.write("manifest.json", m.dump(2));
	json back = gw::manifest::to_json(gw::manifest::read_file(path));
	EXPECT_NO_THROW(gw::manifest::validate(back));
	EXPECT_EQ(back, m);
	EXPECT_EQ(back.dump(), m.dump());
}

std::string error_of(const std::string &path)
{
	try {
		gw::manifest::read_file(path);
	} catch (const gw::ManifestError &e) {
		return e.what();
	}
	return "no error";
}

TEST(Manifest, ReaderErrorsAreOneLineNamingTheFile)
{
	TempDir t;
	std::string missing = (t.dir / "nope.json").string();
	EXPECT_EQ(error_of(missing), "cannot read " + missing + ": No such file or directory");
	EXPECT_EQ(error_of(t.dir.string()), "cannot read " + t.dir.string() + ": Is a directory");
	auto p = t.write("bad.json", "{\"schema\": \"gpuwatch.manifest/v1\",,}");
	EXPECT_EQ(error_of(p), p + ": not valid JSON at byte 35");
	p = t.write("empty.json", "");
	EXPECT_EQ(error_of(p), p + ": not valid JSON at byte 1");
	p = t.write("schema.json", R"({"schema": "foo"})");
	EXPECT_EQ(error_of(p), p + ": schema is 'foo', expected gpuwatch.manifest/v1");
	p = t.write("array.json", "[1]");
	EXPECT_EQ(error_of(p), p + ": the manifest is an array, expected an object");
	// issue 16, finding 7: `show` blocked on a FIFO and read /dev/zero until out of memory
	std::string fifo = (t.dir / "fifo.json").string();
	ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
	EXPECT_EQ(error_of(fifo), "cannot read " + fifo + ": not a regular file");
	EXPECT_EQ(error_of("/dev/zero"), "cannot read /dev/zero: not a regular file");
	// issue 16, finding 1: `gpuwatch show` of this crashed (stack overflow)
	p = t.write("deep.json", R"({"schema": "gpuwatch.manifest/v1", "x": )" + std::string(300000, '[') +
					 std::string(300000, ']') + "}");
	EXPECT_EQ(error_of(p), p + ": nests deeper than 64 levels");
	p = t.write("huge-number.json", R"({"schema": "gpuwatch.manifest/v1", "complete": 1e400})");
	EXPECT_EQ(error_of(p), p + ": has a number beyond the range of a double");
}

// The scenario's manifest with one edit, as the reader reports it.
std::string error_after(const std::function<void(json &)> &edit)
{
	json m = scenario().manifest();
	edit(m);
	TempDir t;
	return error_of(t.write("m.json", m.dump()));
}

std::string tail(const std::string &s)
{
	return s.substr(s.find(": ") + 2);
}

TEST(Manifest, MissingFields)
{
	EXPECT_EQ(tail(error_after([](json &m) { m.erase("schema"); })), "missing field schema");
	EXPECT_EQ(tail(error_after([](json &m) { m.erase("processes"); })), "missing field processes");
	EXPECT_EQ(tail(error_after([](json &m) { m["processes"][2].erase("pid"); })), "missing field processes[2].pid");
	EXPECT_EQ(tail(error_after([](json &m) { m["processes"][0]["mmaps"][0].erase("offset"); })),
		  "missing field processes[0].mmaps[0].offset");
	EXPECT_EQ(tail(error_after([](json &m) { m["processes"][0]["fds"][0].erase("file"); })),
		  "missing field processes[0].fds[0].file");
	EXPECT_EQ(tail(error_after([](json &m) { m["files"][1]["handles"][0].erase("origin"); })),
		  "missing field files[1].handles[0].origin");
	EXPECT_EQ(tail(error_after([](json &m) { m["processes"][0]["fds"][1]["dmabuf"].erase("handle"); })),
		  "missing field processes[0].fds[1].dmabuf.handle");
}

TEST(Manifest, WrongTypes)
{
	EXPECT_EQ(tail(error_after([](json &m) { m["processes"][1]["pid"] = "101"; })),
		  "field processes[1].pid is a string, expected an unsigned integer");
	EXPECT_EQ(tail(error_after([](json &m) { m["complete"] = 1; })),
		  "field complete is an unsigned integer, expected a boolean");
	EXPECT_EQ(tail(error_after([](json &m) { m["processes"][0]["fds"][0]["fd"] = -1; })),
		  "field processes[0].fds[0].fd is a negative integer, expected an unsigned integer");
	EXPECT_EQ(tail(error_after([](json &m) { m["files"] = json::object(); })),
		  "field files is an object, expected an array");
	EXPECT_EQ(tail(error_after([](json &m) { m["processes"][0]["mmaps"][0]["handle"] = 1.5; })),
		  "field processes[0].mmaps[0].handle is a fractional number, expected an unsigned integer or null");
	EXPECT_EQ(tail(error_after([](json &m) { m["processes"][0] = 3; })),
		  "field processes[0] is an unsigned integer, expected an object");
}

TEST(Manifest, DanglingReferences)
{
	EXPECT_EQ(tail(error_after([](json &m) { m["processes"][0]["mmaps"][0]["file"] = 9; })),
		  "field processes[0].mmaps[0].file is 9, which names no entry of files");
	EXPECT_EQ(tail(error_after([](json &m) { m["files"][1]["id"] = 1; })),
		  "field files[1].id is 1, already used by another file");
}

TEST(Manifest, SummaryMentionsEveryProcessAndFile)
{
	World w = scenario();
	std::string s = gw::manifest::format_summary(w.m.manifest());
	for (const char *want :
	     {"cgroup /sys/fs/cgroup/test: 3 processes, 2 files, complete", "process 100 (producer): 2 fds, 1 mapping",
	      "process 101 (producer): 2 fds, 1 mapping", "process 200 (encoder): 2 fds, 0 mappings",
	      "fd 3: file 1 /dev/dri/card0 cloexec", "fd 8: dma-buf of file 1 /dev/dri/card0 handle 1",
	      "map 0x7f0000000000-0x7f0000004000 rw shared file 1 /dev/dri/card0 offset 0x100000000 handle 1",
	      "file 1: /dev/dri/card0 (226:0) driver vgem O_RDWR|O_NONBLOCK: 1 handle, 16384 bytes",
	      "file 2: /dev/dri/renderD128 (226:128) driver vgem O_RDWR: 1 handle, 16384 bytes",
	      "handle 1: 16384 bytes, dumb, object 1", "handle 1: 16384 bytes, prime, object 1"})
		EXPECT_NE(s.find(want), std::string::npos) << "missing: " << want << "\nin:\n" << s;
}

TEST(Manifest, SummaryOfAnIncompleteManifest)
{
	World w;
	w.proc(100);
	w.apply(fd_rec(100, 3, kCard, GW_FD_SNAPSHOT));
	w.m.set_kernel_counters(2, 0);
	std::string s = gw::manifest::format_summary(w.m.manifest());
	EXPECT_NE(s.find("INCOMPLETE"), std::string::npos) << s;
	EXPECT_NE(s.find("incomplete: 2 events lost (ring buffer full)"), std::string::npos) << s;
	EXPECT_NE(s.find("(handles before tracing unknown)"), std::string::npos) << s;
}

// show names a file's framebuffers, its display configuration and the ioctls it did not decode
TEST(Manifest, SummaryShowsFramebuffersAndUndecodedIoctls)
{
	World w;
	w.proc(100);
	w.open(100, 3, kCard);
	w.create_dumb(100, kCard, 1, 64, 64);
	w.apply(addfb_rec(100, 3, kCard, 1, 64, 64, 41));
	w.apply(undecoded_rec(100, 3, kCard, DRM_IOCTL_MODE_SETGAMMA));
	w.apply(setcrtc_rec(100, 3, kCard, 35, 41, 64, 64));
	std::string s = gw::manifest::format_summary(w.m.manifest());
	EXPECT_NE(s.find("  framebuffer 41: 64x64 bpp 32 depth 24 on handle 1\n"), std::string::npos) << s;
	EXPECT_NE(s.find("  CRTC 35: shows framebuffer 41, 64x64@60 at 0,0 on 1 connector(s)\n"), std::string::npos)
		<< s;
	EXPECT_NE(s.find("  not decoded (what they made is unknown): MODE_SETGAMMA\n"), std::string::npos) << s;
}

} // namespace

// A traced process controls its comm (prctl PR_SET_NAME): bytes that are not UTF-8 must not
// stop the daemon from writing its manifest.
TEST(Manifest, InvalidUtf8CommIsWrittenWithReplacement)
{
	World w;
	w.proc(300, "bad\xff\xfe");
	ASSERT_EQ(w.open(300, 3, kCard), ApplyStatus::ok);
	std::string text;
	ASSERT_NO_THROW(text = gw::manifest::serialize(w.m.manifest()));
	json back = json::parse(text);
	EXPECT_EQ(back["processes"][0]["comm"], "bad\xEF\xBF\xBD\xEF\xBF\xBD");
}

// Issue 16, finding 7: a container sets its comm (and names its cgroup and device nodes):
// `gpuwatch show` prints escape sequences and newlines in them as text, not to the terminal.
TEST(Manifest, SummaryEscapesControlCharacters)
{
	World w;
	w.proc(300, "\x1b]0;x\x07"
		    "a\nb\xc2\x9b"
		    "2J");
	ASSERT_EQ(w.open(300, 3, kCard), ApplyStatus::ok);
	std::string s = gw::manifest::format_summary(w.m.manifest());
	EXPECT_NE(s.find("\nprocess 300 (\\x1b]0;x\\x07a\\x0ab\\u009b2J): 1 fd"), std::string::npos) << s;
	EXPECT_EQ(s.find('\x1b'), std::string::npos) << s;
	EXPECT_EQ(s.find('\x07'), std::string::npos) << s;
	EXPECT_EQ(s.find("\xc2\x9b"), std::string::npos) << s;
}
