// gw::BackgroundJob: the daemon's forked manifest writer.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <signal.h>
#include <string>
#include <unistd.h>

#include "background.hpp"
#include "sysutil.hpp"

namespace
{

std::string temp_path(const char *name)
{
	return ::testing::TempDir() + "/gw-bg-" + std::to_string(getpid()) + name;
}

TEST(BackgroundJob, WritesFromASnapshotOfTheCallersMemory)
{
	std::string path = temp_path("-snap");
	std::string value = "before";
	gw::BackgroundJob job;
	ASSERT_TRUE(job.start([&] {
		usleep(50 * 1000); /* the parent changes `value` meanwhile: the child keeps its copy */
		gw::write_file_atomic(path, value);
	}));
	EXPECT_TRUE(job.running());
	value = "after";
	EXPECT_EQ(job.reap(true), "");
	EXPECT_FALSE(job.running());
	std::ifstream in(path);
	std::string got((std::istreambuf_iterator<char>(in)), {});
	EXPECT_EQ(got, "before");
	::unlink(path.c_str());
}

TEST(BackgroundJob, AFailingJobIsReported)
{
	gw::BackgroundJob job;
	ASSERT_TRUE(job.start([] { gw::write_file_atomic("/nonexistent-dir-gpuwatch/x", "y"); }));
	std::string err = job.reap(true);
	EXPECT_NE(err.find("exit status 1"), std::string::npos) << err;
	EXPECT_EQ(job.reap(true), ""); /* reported once */
}

TEST(BackgroundJob, AKilledJobIsReported)
{
	gw::BackgroundJob job;
	ASSERT_TRUE(job.start([] { ::raise(SIGKILL); }));
	EXPECT_NE(job.reap(true).find("signal 9"), std::string::npos);
}

TEST(BackgroundJob, ReapWithoutBlockingLeavesARunningJob)
{
	gw::BackgroundJob job;
	ASSERT_TRUE(job.start([] { usleep(200 * 1000); }));
	EXPECT_EQ(job.reap(false), "");
	EXPECT_TRUE(job.running());
	EXPECT_EQ(job.reap(true), "");
	EXPECT_FALSE(job.running());
}

TEST(BackgroundJob, StartingTwiceIsRefused)
{
	gw::BackgroundJob job;
	ASSERT_TRUE(job.start([] { usleep(100 * 1000); }));
	EXPECT_THROW(job.start([] {}), gw::Error);
}

} // namespace

// gw::WriteDebounce: when the daemon's loop writes the manifest, and how long it may wait.
constexpr int kBatch = gw::WriteDebounce::kBatchMs;

TEST(WriteDebounce, WritesOnceTheChangeIsDue)
{
	gw::WriteDebounce d(50);
	EXPECT_EQ(d.timeout_ms(false, false, 0), 500); // nothing to write: wait for events
	EXPECT_FALSE(d.update(7, 6, false, 1000));     // a change: due at 1050
	EXPECT_EQ(d.timeout_ms(false, false, 1020), 30);
	EXPECT_EQ(d.timeout_ms(true, false, 1020), kBatch); // records keep coming: drain in batches
	EXPECT_FALSE(d.update(8, 6, false, 1040));          // another: the first one's time counts
	EXPECT_EQ(d.timeout_ms(false, false, 1060), 0);     // due now: the loop turns at once
	EXPECT_TRUE(d.update(8, 6, false, 1060));
	EXPECT_FALSE(d.dirty());
	EXPECT_FALSE(d.update(8, 8, true, 1070)); // the background write writes generation 8
	EXPECT_EQ(d.timeout_ms(false, true, 1070), kBatch);
}

// A change made while the background write runs waits for it: by polling, never spinning,
// however long the write takes.
TEST(WriteDebounce, DueWhileTheWriterRunsWaitsWithoutSpinning)
{
	gw::WriteDebounce d(50);
	EXPECT_FALSE(d.update(2, 1, false, 0));
	EXPECT_TRUE(d.update(2, 1, false, 50));
	EXPECT_FALSE(d.update(3, 2, true, 60)); // changed again during the write
	for (int64_t now = 110; now < 5000; now += 500) {
		EXPECT_EQ(d.timeout_ms(false, true, now), kBatch) << "at " << now;
		EXPECT_FALSE(d.update(3, 2, true, now));
	}
	EXPECT_TRUE(d.update(3, 2, false, 5000)); // the write ended (reaped): generation 2 on disk
}

// A sync writes the manifest inline before the debounced write is due: nothing is left to
// write, and the loop must go back to waiting for events. Before, the change stayed pending
// and, once due, the loop waited 0 ms on every turn until the next change: one CPU spinning
// after every restore whose plugin asked for a sync.
TEST(WriteDebounce, AChangeWrittenBySyncLeavesNothingPending)
{
	gw::WriteDebounce d(50);
	EXPECT_FALSE(d.update(4, 3, false, 0));
	EXPECT_FALSE(d.update(4, 4, false, 20)); // sync() wrote generation 4
	EXPECT_FALSE(d.dirty());
	EXPECT_EQ(d.timeout_ms(false, false, 100), 500);
	EXPECT_EQ(d.timeout_ms(false, false, 100000), 500);
	EXPECT_FALSE(d.update(4, 4, false, 100000));
}
