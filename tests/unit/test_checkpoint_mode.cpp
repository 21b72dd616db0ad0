// The checkpoint mode switch (user/checkpoint_mode.hpp): the environment, the configuration
// file's text, and which files count.
#include <cstdlib>
#include <fcntl.h>
#include <functional>
#include <gtest/gtest.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include "checkpoint_mode.hpp"
#include "sysutil.hpp"

using gw::CheckpointMode;

namespace
{

std::string error_of(const std::function<void()> &f)
{
	try {
		f();
	} catch (const gw::Error &e) {
		return e.what();
	}
	return "";
}

struct ModeEnv : ::testing::Test {
	std::string dir;
	void SetUp() override
	{
		unsetenv(gw::kCheckpointModeEnv);
		char t[] = "/tmp/gwmode.XXXXXX";
		ASSERT_NE(mkdtemp(t), nullptr);
		dir = t;
	}
	void TearDown() override
	{
		unsetenv(gw::kCheckpointModeEnv);
		unlink((dir + "/gpuwatch.conf").c_str());
		unlink((dir + "/link.conf").c_str());
		rmdir(dir.c_str());
	}
	std::string write(const std::string &text, mode_t mode)
	{
		std::string p = dir + "/gpuwatch.conf";
		gw::write_file_atomic(p, text, mode);
		return p;
	}
};

} // namespace

TEST(CheckpointMode, ConfText)
{
	EXPECT_EQ(gw::parse_checkpoint_conf("", "f"), CheckpointMode::full);
	EXPECT_EQ(gw::parse_checkpoint_conf("# c\n\n  mode =stateless  \n", "f"), CheckpointMode::stateless);
	EXPECT_EQ(gw::parse_checkpoint_conf("mode=full", "f"), CheckpointMode::full);
	for (CheckpointMode m : {CheckpointMode::full, CheckpointMode::stateless})
		EXPECT_EQ(gw::parse_checkpoint_conf(gw::checkpoint_conf_text(m), "f"), m);
	EXPECT_NE(error_of([] { gw::parse_checkpoint_conf("mode = lazy\n", "f"); }).find("f line 1"),
		  std::string::npos);
	EXPECT_NE(error_of([] { gw::parse_checkpoint_conf("\nlevel = 3\n", "f"); }).find("f line 2: unknown setting"),
		  std::string::npos);
	EXPECT_NE(error_of([] { gw::parse_checkpoint_conf("mode = full\nmode = full\n", "f"); }).find("twice"),
		  std::string::npos);
	EXPECT_NE(error_of([] { gw::parse_checkpoint_conf("stateless\n", "f"); }).find("expected"), std::string::npos);
}

TEST_F(ModeEnv, EnvironmentWinsAndIsChecked)
{
	std::string from;
	EXPECT_EQ(gw::checkpoint_mode(dir + "/absent.conf", &from), CheckpointMode::full);
	EXPECT_EQ(from, "the default");
	setenv(gw::kCheckpointModeEnv, "stateless", 1);
	EXPECT_EQ(gw::checkpoint_mode(write("mode = full\n", 0644), &from), CheckpointMode::stateless);
	EXPECT_EQ(from, gw::kCheckpointModeEnv);
	setenv(gw::kCheckpointModeEnv, "Stateless", 1);
	EXPECT_EQ(error_of([&] { gw::checkpoint_mode(dir + "/absent.conf"); }),
		  "GPUWATCH_CHECKPOINT_MODE=Stateless is neither full nor stateless");
}

TEST_F(ModeEnv, FileMustBeRootsAlone)
{
	std::string p = write("mode = stateless\n", 0644);
	if (geteuid() != 0) {
		EXPECT_NE(error_of([&] { gw::checkpoint_mode(p); }).find("not trusted"), std::string::npos);
		GTEST_SKIP() << "not root: a file owned by root cannot be made here";
	}
	std::string from;
	EXPECT_EQ(gw::checkpoint_mode(p, &from), CheckpointMode::stateless);
	EXPECT_EQ(from, p);
	ASSERT_EQ(chmod(p.c_str(), 0664), 0);
	EXPECT_NE(error_of([&] { gw::checkpoint_mode(p); }).find("not trusted"), std::string::npos);
	ASSERT_EQ(chmod(p.c_str(), 0644), 0);
	ASSERT_EQ(chown(p.c_str(), 1, 0), 0);
	EXPECT_NE(error_of([&] { gw::checkpoint_mode(p); }).find("not trusted"), std::string::npos);
	ASSERT_EQ(symlink(p.c_str(), (dir + "/link.conf").c_str()), 0);
	EXPECT_NE(error_of([&] { gw::checkpoint_mode(dir + "/link.conf"); }).find("cannot read"), std::string::npos);
	write("mode = stateless\n" + std::string(5000, '#') + "\n", 0644);
	EXPECT_NE(error_of([&] { gw::checkpoint_mode(p); }).find("larger than 4 KiB"), std::string::npos);
}
