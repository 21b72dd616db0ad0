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
