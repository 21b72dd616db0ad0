// restore/plugin/image_io.cpp: the image directory is attacker input (a checkpoint from
// elsewhere). Names the plugin reads never block on a FIFO or follow a symlink (issue 16,
// finding 2: a FIFO named gpuwatch-file-1.json hung root `criu restore` for ever).
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

#include "image_io.hpp"

namespace
{
int g_image_dir = -1;
} // namespace

// CRIU's criu_get_image_dir (weak in the plugin): here a scratch directory of the test's own
extern "C" int criu_get_image_dir(void)
{
	return g_image_dir;
}

namespace
{

class ImageDir : public ::testing::Test
{
protected:
	void SetUp() override
	{
		char tmpl[] = "/tmp/gw-image-io-XXXXXX";
		ASSERT_NE(::mkdtemp(tmpl), nullptr);
		dir_ = tmpl;
		g_image_dir = ::open(tmpl, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		ASSERT_GE(g_image_dir, 0);
	}
	void TearDown() override
	{
		::close(g_image_dir);
		g_image_dir = -1;
		std::filesystem::remove_all(dir_);
	}
	std::string path(const char *name) const { return dir_ + "/" + name; }
	std::string error_reading(const char *name, std::size_t max = 1 << 20) const
	{
		try {
			gwcriu::read_image(name, max);
		} catch (const gwcriu::Error &e) {
			return e.what();
		}
		return "";
	}
	std::string dir_;
};

} // namespace

TEST_F(ImageDir, ReadsARegularFile)
{
	std::ofstream(path("gpuwatch-file-1.json")) << "{}";
	EXPECT_EQ(gwcriu::read_image("gpuwatch-file-1.json", 16), "{}");
	EXPECT_EQ(error_reading("gpuwatch-file-1.json", 1),
		  "image gpuwatch-file-1.json is 2 bytes, more than the 1 allowed");
}

TEST_F(ImageDir, RefusesAFifoAtOnce)
{
	ASSERT_EQ(::mkfifo(path("gpuwatch-file-1.json").c_str(), 0600), 0);
	// before the fix the open itself blocked (no writer ever comes): SIGALRM then ends the
	// test binary, a failure, rather than a hang
	::alarm(20);
	auto t0 = std::chrono::steady_clock::now();
	EXPECT_EQ(error_reading("gpuwatch-file-1.json"), "image gpuwatch-file-1.json is not a regular file");
	EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
	::alarm(0);
}

TEST_F(ImageDir, RefusesASymlink)
{
	std::ofstream(path("elsewhere")) << "{}";
	ASSERT_EQ(::symlink(path("elsewhere").c_str(), path("gpuwatch-file-1.json").c_str()), 0);
	EXPECT_EQ(error_reading("gpuwatch-file-1.json"),
		  "cannot open image gpuwatch-file-1.json: " + std::string(std::strerror(ELOOP)));
}
