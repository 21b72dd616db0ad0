// gw::BTreeMap against std::map: the same operations on both, in random and in ordered
// patterns, must leave the same contents, and the tree's invariants (ordering, separators,
// parents, leaf chain, occupancy) must hold after every one. Small nodes (3 and 4 entries)
// make the trees deep, so splits and merges reach the root within a few hundred keys.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "btree_map.hpp"

namespace
{

template <class B, class V> std::vector<std::pair<uint64_t, V>> forward(const B &b)
{
	std::vector<std::pair<uint64_t, V>> out;
	for (const auto &[k, v] : b)
		out.emplace_back(k, v);
	return out;
}

template <class B, class V> std::vector<std::pair<uint64_t, V>> backward(const B &b)
{
	std::vector<std::pair<uint64_t, V>> out;
	for (auto it = b.end(); it != b.begin();) {
		--it;
		out.emplace_back(it->first, it->second);
	}
	return {out.rbegin(), out.rend()};
}

template <class B, class V> void expect_same(const B &b, const std::map<uint64_t, V> &m)
{
	ASSERT_TRUE(b.check());
	ASSERT_EQ(b.size(), m.size());
	std::vector<std::pair<uint64_t, V>> want(m.begin(), m.end());
	ASSERT_EQ((forward<B, V>(b)), want);
	ASSERT_EQ((backward<B, V>(b)), want);
}

// What the model's unmap_range does: erase every key in [lo, hi) through erase()'s result.
template <class B> std::size_t erase_range(B &b, uint64_t lo, uint64_t hi)
{
	std::size_t gone = 0;
	for (auto it = b.lower_bound(lo); it != b.end() && it->first < hi; ++gone)
		it = b.erase(it);
	return gone;
}

template <class B> void differential(uint32_t seed, uint64_t key_space, int ops)
{
	std::mt19937_64 rng(seed);
	B b;
	std::map<uint64_t, std::string> m;
	auto key = [&] { return rng() % key_space; };
	for (int op = 0; op < ops; ++op) {
		uint64_t k = key();
		switch (rng() % 10) {
		case 0:
		case 1:
		case 2:
		case 3: { // insert
			std::string v = std::to_string(rng());
			auto [it, fresh] = b.try_emplace(k, v);
			auto [mit, mfresh] = m.try_emplace(k, v);
			ASSERT_EQ(fresh, mfresh);
			ASSERT_EQ(it->first, k);
			ASSERT_EQ(it->second, mit->second);
			break;
		}
		case 4: // erase by key
			ASSERT_EQ(b.erase(k), m.erase(k));
			break;
		case 5: { // erase a range, as unmap_range does
			uint64_t hi = k + rng() % (key_space / 8 + 1);
			std::size_t mgone = 0;
			for (auto it = m.lower_bound(k); it != m.end() && it->first < hi; ++mgone)
				it = m.erase(it);
			ASSERT_EQ(erase_range(b, k, hi), mgone);
			break;
		}
		case 6: { // bounds and finds, and the entry before (std::prev of either)
			auto lb = b.lower_bound(k);
			auto mlb = m.lower_bound(k);
			ASSERT_EQ(lb == b.end(), mlb == m.end());
			if (mlb != m.end()) {
				ASSERT_EQ(lb->first, mlb->first);
			}
			auto ub = b.upper_bound(k);
			auto mub = m.upper_bound(k);
			ASSERT_EQ(ub == b.begin(), mub == m.begin());
			if (mub != m.begin()) {
				ASSERT_EQ(std::prev(ub)->first, std::prev(mub)->first);
			}
			ASSERT_EQ(b.count(k), m.count(k));
			if (m.count(k)) {
				ASSERT_EQ(b.at(k), m.at(k));
			}
			break;
		}
		case 7: { // erase_if over a residue class
			uint64_t r = rng() % 7;
			std::size_t mgone = std::erase_if(m, [&](const auto &kv) { return kv.first % 7 == r; });
			ASSERT_EQ(gw::erase_if(b, [&](const auto &kv) { return kv.first % 7 == r; }), mgone);
			break;
		}
		case 8: { // copy, then change the copy only
			B c(b);
			expect_same(c, m);
			c.try_emplace(key_space + 1, "x");
			erase_range(c, 0, key_space / 2);
			ASSERT_TRUE(c.check());
			break;
		}
		case 9: { // move out and back
			B moved(std::move(b));
			b = std::move(moved);
			ASSERT_TRUE(moved.empty());
			break;
		}
		}
		if (op % 16 == 0 || m.size() < 64)
			expect_same(b, m);
	}
	expect_same(b, m);
}

TEST(BTreeMap, EmptyMapHasNoNodes)
{
	gw::BTreeMap<uint64_t, int> b;
	EXPECT_TRUE(b.empty());
	EXPECT_TRUE(b.begin() == b.end());
	EXPECT_TRUE(b.find(1) == b.end());
	EXPECT_TRUE(b.lower_bound(1) == b.end());
	EXPECT_TRUE(b.upper_bound(1) == b.begin());
	EXPECT_THROW(b.at(1), std::out_of_range);
	EXPECT_EQ(b.erase(1), 0u);
	EXPECT_TRUE(b.check());
	b[5] = 50;
	auto next = b.erase(b.find(5));
	EXPECT_TRUE(next == b.end());
	EXPECT_TRUE(b.empty());
	EXPECT_TRUE(b.check());
}

TEST(BTreeMap, MatchesStdMapUnderRandomOperationsWithTinyNodes)
{
	for (uint32_t seed = 1; seed <= 40; ++seed)
		differential<gw::BTreeMap<uint64_t, std::string, 3, 3>>(seed, 400, 4000);
}

TEST(BTreeMap, MatchesStdMapUnderRandomOperationsWithEvenNodes)
{
	for (uint32_t seed = 1; seed <= 20; ++seed)
		differential<gw::BTreeMap<uint64_t, std::string, 4, 4>>(seed, 2000, 6000);
}

TEST(BTreeMap, MatchesStdMapUnderRandomOperationsWithDefaultNodes)
{
	for (uint32_t seed = 1; seed <= 5; ++seed)
		differential<gw::BTreeMap<uint64_t, std::string>>(seed, 20000, 40000);
}

// Keys that arrive in order (mmap addresses handed out top down, fake offsets bottom up) fill
// their leaves instead of leaving each half empty; erasing most of them leaves no leaf under
// half full except at the two ends.
TEST(BTreeMap, InOrderInsertionsFillLeavesAndErasuresKeepThemHalfFull)
{
	for (bool up : {true, false}) {
		gw::BTreeMap<uint64_t, uint64_t, 8, 4> b;
		std::map<uint64_t, uint64_t> m;
		for (uint64_t i = 0; i < 4096; ++i) {
			uint64_t k = up ? i : 4096 - i;
			b.try_emplace(k, i);
			m.try_emplace(k, i);
		}
		expect_same(b, m);
		EXPECT_EQ(b.leaves(), 4096u / 8) << (up ? "ascending" : "descending");
		for (uint64_t i = 0; i < 4096; i += 3) {
			b.erase(up ? i : 4096 - i);
			m.erase(up ? i : 4096 - i);
		}
		expect_same(b, m); // check() holds interior leaves to half full
		EXPECT_LE(b.leaves(), b.size() / 4 + 2);
	}
}

TEST(BTreeMap, ErasureReturnsTheNextEntryAcrossLeaves)
{
	gw::BTreeMap<uint64_t, int, 3, 3> b;
	for (int i = 0; i < 100; ++i)
		b.try_emplace(uint64_t(i) * 10, i);
	auto it = b.find(500);
	it = b.erase(it);
	ASSERT_NE(it, b.end());
	EXPECT_EQ(it->first, 510u);
	it = b.erase(b.find(990));
	EXPECT_EQ(it, b.end());
	EXPECT_TRUE(b.check());
	EXPECT_EQ(b.size(), 98u);
}

// An erased or moved-out value is released at once, not kept alive in a vacated slot.
TEST(BTreeMap, ErasedValuesAreReleased)
{
	auto held = std::make_shared<int>(7);
	gw::BTreeMap<uint64_t, std::shared_ptr<int>, 4, 4> b;
	for (uint64_t i = 0; i < 200; ++i)
		b.try_emplace(i, held);
	EXPECT_EQ(held.use_count(), 201);
	for (uint64_t i = 1; i < 200; i += 2) // odd keys: often a leaf's last entry, which no move empties
		b.erase(i);
	EXPECT_EQ(held.use_count(), 101);
	gw::erase_if(b, [](const auto &kv) { return kv.first % 3 == 0; });
	EXPECT_EQ(held.use_count(), 1 + static_cast<long>(b.size()));
	b.clear();
	EXPECT_EQ(held.use_count(), 1);
}

} // namespace
