// The tests' image directory: a scratch directory per test, which criu_get_image_dir (defined
// in image_io_test.cpp, weak in the plugin) returns through g_image_dir.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <string>
#include <unistd.h>

#include "image_io.hpp"

extern int g_image_dir;

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
		gwcriu::forget_image_names();
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
