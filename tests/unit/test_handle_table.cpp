// gw::HandleTable: a GEM handle table stored as a vector indexed by number, with an ordered
// map for numbers far beyond the live count.
#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "handle_table.hpp"

namespace
{

struct Value {
	int v = 0;
};

std::vector<std::pair<uint32_t, int>> contents(const gw::HandleTable<Value> &t)
{
	std::vector<std::pair<uint32_t, int>> out;
	for (const auto &[n, h] : t)
		out.emplace_back(n, h.v);
	return out;
}

TEST(HandleTable, BehavesAsAnOrderedMapWithHoles)
{
	gw::HandleTable<Value> t;
	EXPECT_TRUE(t.empty());
	for (uint32_t n : {3u, 1u, 2u, 5u})
		t[n].v = static_cast<int>(n) * 10;
	EXPECT_EQ(t.size(), 4u);
	EXPECT_EQ(t.erase(2u), 1u);
	EXPECT_EQ(t.erase(2u), 0u);
	EXPECT_EQ(t.count(2), 0u);
	EXPECT_EQ(t.count(4), 0u); // a slot inside the dense range that was never used
	EXPECT_EQ(t.count(5), 1u);
	EXPECT_EQ(contents(t), (std::vector<std::pair<uint32_t, int>>{{1, 10}, {3, 30}, {5, 50}}));
	EXPECT_EQ(t.find(3)->second.v, 30);
	EXPECT_EQ(t.find(3)->first, 3u);
	EXPECT_EQ(t.find(7), t.end());
	EXPECT_THROW(t.at(2), std::out_of_range);
	t.erase(t.find(1));
	t[2].v = 2; // the lowest free number again, as the kernel's IDR gives it
	EXPECT_EQ(contents(t), (std::vector<std::pair<uint32_t, int>>{{2, 2}, {3, 30}, {5, 50}}));
	EXPECT_EQ(t.at(2).v, 2); // a reused slot starts from a default value, not the erased one
}

TEST(HandleTable, FarNumbersGoToTheMapAndIterationStaysOrdered)
{
	gw::HandleTable<Value> t;
	t[4000000000u].v = 4; // a number no IDR would give a file this small
	t[1].v = 1;
	t[100000].v = 3;
	EXPECT_EQ(t.size(), 3u);
	EXPECT_EQ(contents(t), (std::vector<std::pair<uint32_t, int>>{{1, 1}, {100000, 3}, {4000000000u, 4}}));
	// filling the low numbers grows the dense part up to 100000; the next number grows it past
	// 100000, and that entry moves from the map into it
	for (uint32_t n = 2; n < 100000; ++n)
		t[n].v = 0;
	t[100001].v = 5;
	EXPECT_EQ(t.size(), 100002u);
	EXPECT_EQ(t.at(100000).v, 3);
	EXPECT_EQ(t.at(100001).v, 5);
	EXPECT_EQ(t.at(4000000000u).v, 4);
	uint32_t last = 0, seen = 0;
	for (const auto &[n, h] : t) {
		EXPECT_TRUE(seen == 0 || n > last) << n << " after " << last;
		last = n;
		++seen;
	}
	EXPECT_EQ(seen, 100002u);
	EXPECT_EQ(last, 4000000000u);
	EXPECT_EQ(t.erase(4000000000u), 1u);
	EXPECT_EQ(t.erase(100000u), 1u);
	EXPECT_EQ(t.size(), 100000u);
}

TEST(HandleTable, CopiesAreIndependent)
{
	gw::HandleTable<Value> a;
	a[1].v = 1;
	a[900000].v = 9;
	gw::HandleTable<Value> b = a;
	b[1].v = 2;
	b.erase(900000u);
	EXPECT_EQ(a.at(1).v, 1);
	EXPECT_EQ(a.at(900000).v, 9);
	EXPECT_EQ(contents(b), (std::vector<std::pair<uint32_t, int>>{{1, 2}}));
}

} // namespace
