// The dump's end (finish_dump, the plugin's exit hook): CRIU takes no failure from it, so when
// the last images cannot be written the plugin leaves gpuwatch-dump-failed.txt, on which the
// action script's post-dump fails the dump (tests/host/action_predump_test.cpp).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <sys/stat.h>

#include "dump.hpp"
#include "dump_marker.hpp"
#include "image_dir_fixture.hpp"
#include "images.hpp"

namespace
{

class FinishDump : public ImageDir
{
protected:
	void SetUp() override
	{
		ImageDir::SetUp();
		// no daemon and no manifest: a session of this process, which traces no task
		char tmpl[] = "/tmp/gw-run-XXXXXX";
		ASSERT_NE(::mkdtemp(tmpl), nullptr);
		run_ = tmpl;
		::setenv("GPUWATCH_RUN_DIR", tmpl, 1);
		::unsetenv("GPUWATCH_MANIFEST");
		::setenv("GPUWATCH_CHECKPOINT_MODE", "full", 1);
	}
	void TearDown() override
	{
		::unsetenv("GPUWATCH_RUN_DIR");
		::unsetenv("GPUWATCH_CHECKPOINT_MODE");
		std::filesystem::remove_all(run_);
		ImageDir::TearDown();
	}
	bool exists(const char *name) const { return std::filesystem::exists(path(name)); }
	std::string run_;
};

TEST_F(FinishDump, LastImageRefusedMarksTheDumpFailed)
{
	gwcriu::dump_session();
	// the mappings image cannot take its name: a directory is there
	ASSERT_EQ(::mkdir(path(gwcriu::kVmasImage).c_str(), 0700), 0);
	gwcriu::finish_dump(0);
	ASSERT_TRUE(exists(gwaction::kDumpFailed));
	std::string why = gwcriu::read_image(gwaction::kDumpFailed, 4096);
	EXPECT_NE(why.find(std::string("cannot write ") + gwcriu::kVmasImage), std::string::npos) << why;
}

TEST_F(FinishDump, WrittenImagesLeaveNoMark)
{
	gwcriu::dump_session();
	gwcriu::finish_dump(0);
	EXPECT_TRUE(exists(gwcriu::kVmasImage));
	EXPECT_FALSE(exists(gwaction::kDumpFailed));
}

} // namespace
