// user/manifest/json_reader.hpp: the one strict reader behind the manifest, the plugin's images
// and the i915 conversion record. Each error is one line naming the field's path.
#include <gtest/gtest.h>

#include "manifest/json_reader.hpp"

using gw::jsonin::FormatError;
using gw::jsonin::Obj;
using nlohmann::json;

namespace
{

template <typename F> std::string error_of(F &&f)
{
	try {
		f();
	} catch (const FormatError &e) {
		return e.what();
	}
	return "";
}

const json doc = json::parse(R"({"n": 7, "neg": -1, "big": 70000, "s": "abc", "null": null, "b": true,
	"list": [{"x": 1}, {"x": "y"}], "o": {"inner": 1.5}})");

} // namespace

TEST(JsonReader, NamesTheFieldAndWhatWasWrong)
{
	Obj top(doc, "");
	EXPECT_EQ(error_of([&] { top.req_u64("absent"); }), "missing field absent");
	EXPECT_EQ(error_of([&] { top.req_u64("neg"); }),
		  "field neg is a negative integer, expected an unsigned integer");
	EXPECT_EQ(error_of([&] { top.req_u32("big", 65536); }), "field big is 70000, more than 65536");
	EXPECT_EQ(error_of([&] { (void)top.opt_u16("big"); }), "field big is 70000, more than 65535");
	EXPECT_EQ(error_of([&] { top.req_str("s", 2); }), "field s is longer than 2 characters");
	EXPECT_EQ(error_of([&] { top.req_bool("n"); }), "field n is an unsigned integer, expected a boolean");
	EXPECT_EQ(error_of([&] { top.req_object("o").req_u64("inner"); }),
		  "field o.inner is a fractional number, expected an unsigned integer");
	EXPECT_EQ(error_of([&] { top.each(top.req_array("list"), "list", [](const Obj &e) { e.req_u64("x"); }); }),
		  "field list[1].x is a string, expected an unsigned integer");
	EXPECT_EQ(error_of([&] { Obj(doc["list"], "list"); }), "field list is an array, expected an object");
	EXPECT_EQ(error_of([&] { Obj(doc["s"], ""); }), "the document is a string, expected an object");
}

TEST(JsonReader, OptionalAndNull)
{
	Obj top(doc, "");
	EXPECT_EQ(top.opt_u64("absent", 5), 5u);
	EXPECT_EQ(top.opt_u64("n", 5), 7u);
	EXPECT_FALSE(top.u64_or_null("null", true));
	EXPECT_FALSE(top.u64_or_null("absent", false));
	EXPECT_EQ(error_of([&] { top.u64_or_null("absent", true); }), "missing field absent");
	EXPECT_EQ(error_of([&] { top.u64_or_null("s", false); }),
		  "field s is a string, expected an unsigned integer or null");
	EXPECT_EQ(top.maybe("null"), nullptr);
	EXPECT_NE(top.find("null"), nullptr);
	EXPECT_TRUE(top.opt_object("null").empty());
}

TEST(JsonReader, OnlyKnownKeys)
{
	Obj top(doc["list"][0], "list[0]");
	top.only({"x"});
	EXPECT_EQ(error_of([&] { top.only({"y"}); }), "field list[0].x is unknown");
}

TEST(JsonReader, NotJson)
{
	EXPECT_EQ(error_of([] { gw::jsonin::parse("{\"a\": "); }), "not valid JSON at byte 7");
	EXPECT_EQ(error_of([] { gw::jsonin::parse(""); }), "not valid JSON at byte 1");
}

// Issue 16, finding 1: a document nested 300 000 deep crashed root `criu restore` (a recursive
// copy overflowed the stack) and `gpuwatch show`. It is refused as it is parsed.
TEST(JsonReader, RefusesDeepNesting)
{
	auto nested = [](std::size_t depth, const char *open, const char *close) {
		std::string s = "{\"a\": ";
		for (std::size_t i = 0; i < depth; i++)
			s += open;
		for (std::size_t i = 0; i < depth; i++)
			s += close;
		return s + "}";
	};
	const std::string deep = "nests deeper than " + std::to_string(gw::jsonin::kMaxDepth) + " levels";
	EXPECT_EQ(error_of([&] { gw::jsonin::parse(nested(300000, "[", "]")); }), deep);
	EXPECT_EQ(error_of([&] { gw::jsonin::parse(nested(300000, "{\"k\": [", "]}")); }), deep);
	// the limit: the top object is level 0, so 64 arrays inside it parse and 65 do not
	json j = gw::jsonin::parse(nested(gw::jsonin::kMaxDepth, "[", "]"));
	EXPECT_TRUE(j["a"].is_array());
	EXPECT_EQ(error_of([&] { gw::jsonin::parse(nested(gw::jsonin::kMaxDepth + 1, "[", "]")); }), deep);
}

// Issue 16, finding 10: a number beyond a double escaped as nlohmann's out_of_range.
TEST(JsonReader, RefusesNumbersBeyondADouble)
{
	EXPECT_EQ(error_of([] { gw::jsonin::parse(R"({"n": 1e400})"); }), "has a number beyond the range of a double");
	EXPECT_EQ(error_of([] { gw::jsonin::parse(R"({"n": -1e400})"); }), "has a number beyond the range of a double");
	EXPECT_TRUE(gw::jsonin::parse(R"({"n": 18446744073709551615})")["n"].is_number_unsigned());
}
