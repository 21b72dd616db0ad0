// Mappings of DRM files: join to handles by fake offset, munmap splits, MAP_FIXED, mremap.
#include <gtest/gtest.h>

#include <array>
#include <sys/mman.h>

#include "records.hpp"

namespace
{

using namespace gwtest;
constexpr uint64_t A = 0x7f0000000000, B = 0x7f1000000000, K4 = 4096, K16 = 16384;

// process 100 has fd 3 on card0, dumb handle 1 (16 KiB) granted at kFake
struct Mm : ::testing::Test {
	World w;
	void SetUp() override
	{
		w.proc(100);
		w.open(100, 3, kCard);
		w.create_dumb(100, kCard, 1, 64, 64);
		w.map_dumb(100, kCard, 1, kFake);
	}
	const auto &maps() const { return w.p(100).mmaps; }
	uint64_t obj1() const { return w.f(kCard).handles.at(1).object; }
	// (start, length, offset) of every mapping, in order
	std::vector<std::array<uint64_t, 3>> layout() const
	{
		std::vector<std::array<uint64_t, 3>> v;
		for (const auto &[s, m] : maps())
			v.push_back({m.start, m.length, m.offset});
		return v;
	}
	using L = std::vector<std::array<uint64_t, 3>>;
};

TEST_F(Mm, MmapJoinsTheHandleByFakeOffset)
{
	ASSERT_EQ(w.mmap(100, kCard, A, K16, kFake), ApplyStatus::ok);
	ASSERT_EQ(maps().size(), 1u);
	EXPECT_EQ(maps().at(A).object, obj1());
	auto mm = w.manifest()["processes"][0]["mmaps"][0];
	EXPECT_EQ(mm, (nlohmann::json{{"start", A},
				      {"length", K16},
				      {"prot", "rw"},
				      {"shared", true},
				      {"file", 1},
				      {"offset", kFake},
				      {"handle", 1},
				      {"object", obj1()},
				      {"via", "device"}}));
}

TEST_F(Mm, MmapInsideTheObjectJoinsToo)
{
	w.mmap(100, kCard, A, K4, kFake + K4);
	EXPECT_EQ(maps().at(A).object, obj1());
	w.mmap(100, kCard, B, K4, kFake + K16); // past the object's end
	EXPECT_FALSE(maps().at(B).object);
}

TEST_F(Mm, MmapWithoutGrantHasNoObject)
{
	w.mmap(100, kCard, A, K4, 0);
	EXPECT_FALSE(maps().at(A).object);
	auto mm = w.manifest()["processes"][0]["mmaps"][0];
	EXPECT_EQ(mm["handle"], nullptr);
	EXPECT_EQ(mm["object"], nullptr);
}

TEST_F(Mm, MappingKeepsObjectAfterGemClose)
{
	w.mmap(100, kCard, A, K16, kFake);
	uint64_t obj = obj1();
	w.gem_close(100, kCard, 1);
	ASSERT_EQ(w.m.objects().count(obj), 1u);
	EXPECT_EQ(w.m.objects().at(obj).size, K16);
	auto mm = w.manifest()["processes"][0]["mmaps"][0];
	EXPECT_EQ(mm["handle"], nullptr);
	EXPECT_EQ(mm["object"], obj);
	w.munmap(100, A, K16);
	EXPECT_TRUE(w.m.objects().empty());
}

TEST_F(Mm, MunmapHead)
{
	w.mmap(100, kCard, A, K16, kFake);
	ASSERT_EQ(w.munmap(100, A, K4), ApplyStatus::ok);
	EXPECT_EQ(layout(), (L{{A + K4, 3 * K4, kFake + K4}}));
	EXPECT_EQ(maps().at(A + K4).object, obj1());
}

TEST_F(Mm, MunmapTail)
{
	w.mmap(100, kCard, A, K16, kFake);
	w.munmap(100, A + 3 * K4, K4);
	EXPECT_EQ(layout(), (L{{A, 3 * K4, kFake}}));
}

TEST_F(Mm, MunmapMiddleSplits)
{
	w.mmap(100, kCard, A, K16, kFake);
	w.munmap(100, A + K4, K4);
	EXPECT_EQ(layout(), (L{{A, K4, kFake}, {A + 2 * K4, 2 * K4, kFake + 2 * K4}}));
	auto mm = w.manifest()["processes"][0]["mmaps"];
	EXPECT_EQ(mm[1]["handle"], 1); // the right piece still joins to the handle
}

TEST_F(Mm, MunmapAcrossSeveralMappingsAndUnalignedLength)
{
	w.mmap(100, kCard, A, K4, kFake);
	w.mmap(100, kCard, A + K4, K4, kFake + K4);
	w.mmap(100, kCard, A + 3 * K4, K4, kFake + 3 * K4);
	w.munmap(100, A + K4 - K4, 2 * K4 + 1); // rounds up to 3 pages
	EXPECT_EQ(layout(), (L{{A + 3 * K4, K4, kFake + 3 * K4}}));
}

TEST_F(Mm, MapFixedReplacesTheRange)
{
	w.open(100, 4, kCard2);
	w.mmap(100, kCard, A, K16, kFake);
	// the tracer reports a MAP_FIXED mapping as a munmap of the range, then the mmap
	w.munmap(100, A + K4, K4);
	w.mmap(100, kCard2, A + K4, K4, 0);
	EXPECT_EQ(layout(), (L{{A, K4, kFake}, {A + K4, K4, 0}, {A + 2 * K4, 2 * K4, kFake + 2 * K4}}));
	EXPECT_EQ(maps().at(A + K4).kfile, kCard2);
	// and an mmap alone over an existing mapping also replaces it
	w.mmap(100, kCard2, A, K16, 0);
	EXPECT_EQ(layout(), (L{{A, K16, 0}}));
	w.close(100, 3, kCard);
	EXPECT_FALSE(w.has_file(kCard));
}

TEST_F(Mm, MremapMoves)
{
	w.mmap(100, kCard, A, K16, kFake);
	ASSERT_EQ(w.mremap(100, A, K16, B, K16, MREMAP_MAYMOVE), ApplyStatus::ok);
	EXPECT_EQ(layout(), (L{{B, K16, kFake}}));
	EXPECT_EQ(maps().at(B).object, obj1());
}

TEST_F(Mm, MremapGrowsAndShrinksInPlace)
{
	w.mmap(100, kCard, A, K4, kFake);
	w.mremap(100, A, K4, A, K16, 0);
	EXPECT_EQ(layout(), (L{{A, K16, kFake}}));
	w.mremap(100, A, K16, A, 2 * K4, 0);
	EXPECT_EQ(layout(), (L{{A, 2 * K4, kFake}}));
}

TEST_F(Mm, MremapOfAPieceKeepsItsOffset)
{
	w.mmap(100, kCard, A, K16, kFake);
	w.mremap(100, A + 2 * K4, 2 * K4, B, 2 * K4, MREMAP_MAYMOVE);
	EXPECT_EQ(layout(), (L{{A, 2 * K4, kFake}, {B, 2 * K4, kFake + 2 * K4}}));
}

TEST_F(Mm, MremapOldSizeZeroDuplicates)
{
	w.mmap(100, kCard, A, K16, kFake);
	w.mremap(100, A, 0, B, K16, MREMAP_MAYMOVE);
	EXPECT_EQ(layout(), (L{{A, K16, kFake}, {B, K16, kFake}}));
}

TEST_F(Mm, MremapDontUnmapKeepsTheOldRange)
{
	w.mmap(100, kCard, A, K16, kFake);
	w.mremap(100, A, K16, B, K16, MREMAP_MAYMOVE | MREMAP_DONTUNMAP);
	EXPECT_EQ(layout(), (L{{A, K16, kFake}, {B, K16, kFake}}));
}

TEST_F(Mm, MremapOfOtherMemoryOntoAMappingUnmapsIt)
{
	w.mmap(100, kCard, A, K16, kFake);
	w.mremap(100, B, K4, A, K4, MREMAP_MAYMOVE | MREMAP_FIXED); // anonymous memory moved over it
	EXPECT_EQ(layout(), (L{{A + K4, 3 * K4, kFake + K4}}));
}

TEST_F(Mm, ForkCopiesMappings)
{
	w.mmap(100, kCard, A, K16, kFake);
	w.fork(100, 101);
	EXPECT_EQ(w.p(101).mmaps.size(), 1u);
	w.munmap(101, A, K16);
	EXPECT_EQ(maps().size(), 1u);
}

} // namespace
