// gw::ObjectTable: the model's GEM objects in reusable slots, ids carrying the slot's
// generation so that an id never names a second object.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "object_table.hpp"
#include "records.hpp"

namespace
{

struct Value {
	int v = 0;
};

std::vector<std::pair<uint64_t, int>> contents(const gw::ObjectTable<Value> &t)
{
	std::vector<std::pair<uint64_t, int>> out;
	for (const auto &[id, o] : t)
		out.emplace_back(id, o.v);
	return out;
}

TEST(ObjectTable, NumbersFromOneUntilASlotIsFreed)
{
	gw::ObjectTable<Value> t;
	EXPECT_TRUE(t.empty());
	EXPECT_EQ(t.insert({10}), 1u);
	EXPECT_EQ(t.insert({20}), 2u);
	EXPECT_EQ(t.insert({30}), 3u);
	EXPECT_EQ(t.size(), 3u);
	EXPECT_EQ(t.at(2).v, 20);
	EXPECT_EQ(t.find(0), nullptr);
	EXPECT_EQ(t.find(4), nullptr);
	EXPECT_THROW(t.at(4), std::out_of_range);
	EXPECT_EQ(contents(t), (std::vector<std::pair<uint64_t, int>>{{1, 10}, {2, 20}, {3, 30}}));
}

TEST(ObjectTable, AFreedIdNeverComesBack)
{
	gw::ObjectTable<Value> t;
	t.insert({10});
	t.insert({20});
	t.erase(1);
	t.erase(1); // no-op
	EXPECT_EQ(t.size(), 1u);
	EXPECT_EQ(t.count(1), 0u);
	uint64_t again = t.insert({11}); // slot 0 reused, next generation
	EXPECT_EQ(again, (uint64_t{1} << 32) | 1);
	EXPECT_EQ(t.count(1), 0u); // the old id still names nothing
	EXPECT_EQ(t.find(1), nullptr);
	EXPECT_EQ(t.at(again).v, 11);
	// the same slot freed and reused many times: every id distinct
	std::set<uint64_t> seen{1, 2, again};
	uint64_t id = again;
	for (int i = 0; i < 1000; ++i) {
		t.erase(id);
		id = t.insert({i});
		EXPECT_TRUE(seen.insert(id).second) << id;
	}
	EXPECT_EQ(t.size(), 2u);
	// an id with a generation the slot has not reached, or beyond the table, names nothing
	EXPECT_EQ(t.find((uint64_t{5000} << 32) | 1), nullptr);
	EXPECT_EQ(t.find((uint64_t{0x80000000} << 32) | 1), nullptr);
	EXPECT_EQ(t.find(3), nullptr);
}

TEST(ObjectTable, EraseIfAndIterationSkipFreeSlots)
{
	gw::ObjectTable<Value> t;
	for (int i = 1; i <= 6; ++i)
		t.insert({i});
	t.erase_if([](uint64_t, const Value &o) { return o.v % 2 == 0; });
	EXPECT_EQ(contents(t), (std::vector<std::pair<uint64_t, int>>{{1, 1}, {3, 3}, {5, 5}}));
	gw::ObjectTable<Value> copy = t; // the model is copied (GW_MODEL_CHECK_GC)
	EXPECT_EQ(contents(copy), contents(t));
	EXPECT_EQ(t.begin()->second.v, 1);
}

// The model: a framebuffer keeps the object id of a handle closed since; the next buffer,
// made in the freed slot, must not be taken for it.
TEST(ObjectTable, AFramebufferPlaneDoesNotNameTheNextBuffer)
{
	using namespace gwtest;
	World w;
	w.proc(100);
	w.open(100, 3, kCard);
	w.create_dumb(100, kCard, 1, 64, 64);
	ASSERT_EQ(w.apply(addfb_rec(100, 3, kCard, 1, 64, 64, 41)), gw::ApplyStatus::ok);
	uint64_t first = w.f(kCard).handles.at(1).object;
	ASSERT_EQ(w.gem_close(100, kCard, 1), gw::ApplyStatus::ok);
	EXPECT_EQ(w.m.objects().count(first), 0u);
	w.create_dumb(100, kCard, 1, 64, 64); // the kernel reuses handle number 1
	uint64_t second = w.f(kCard).handles.at(1).object;
	EXPECT_NE(second, first);
	auto plane = w.manifest()["files"][0]["framebuffers"][0]["planes"][0];
	EXPECT_TRUE(plane["handle"].is_null()) << plane.dump();
	EXPECT_TRUE(plane["object"].is_null()) << plane.dump();
}

} // namespace
