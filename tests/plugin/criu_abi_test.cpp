// Which CRIU plugin ABI gpuwatch recognises: the classification from exported symbols, and the
// real criu binaries of both VM lanes read from disk (Debian 12's 3.17.1 here, Debian 13's 4.1.1
// in the lane root that setup.sh makes).
#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>

#include "criu_abi.hpp"
#include "sysutil.hpp"

using gwaction::classify;
using gwaction::CriuSymbols;

namespace
{

CriuSymbols syms(size_t ctl, bool rpc_query = false, bool dont_freeze = false)
{
	CriuSymbols s;
	s.have_ctl = ctl != 0;
	s.ctl_size = ctl;
	s.rpc_query_external_files = rpc_query;
	s.dont_use_freeze_cgroup = dont_freeze;
	return s;
}

} // namespace

TEST(CriuAbi, Criu317And318DupTheMappingFd)
{
	auto a = classify(syms(176));
	EXPECT_TRUE(a.refusal.empty());
	EXPECT_EQ(a.hooks, 10u);
	EXPECT_EQ(a.versions, "3.17-3.18");
	EXPECT_FALSE(a.owns_vma_fd);
	EXPECT_FALSE(a.checkpoint_devices);
}

TEST(CriuAbi, Criu319OwnsTheMappingFd)
{
	auto a = classify(syms(176, true));
	EXPECT_EQ(a.hooks, 10u);
	EXPECT_EQ(a.versions, "3.19");
	EXPECT_TRUE(a.owns_vma_fd);
	EXPECT_FALSE(a.checkpoint_devices);
}

TEST(CriuAbi, Criu40And41HaveCheckpointDevices)
{
	auto a40 = classify(syms(208, true, true));
	EXPECT_EQ(a40.hooks, 12u);
	EXPECT_EQ(a40.versions, "4.0");
	EXPECT_TRUE(a40.checkpoint_devices);
	EXPECT_TRUE(a40.checkpoint_at_predump);
	auto a41 = classify(syms(208, true));
	EXPECT_EQ(a41.versions, "4.1");
	EXPECT_TRUE(a41.owns_vma_fd);
	EXPECT_TRUE(a41.checkpoint_devices);
	EXPECT_FALSE(a41.checkpoint_at_predump);
}

TEST(CriuAbi, Criu42)
{
	auto a = classify(syms(224, true));
	EXPECT_TRUE(a.refusal.empty());
	EXPECT_EQ(a.hooks, 13u);
	EXPECT_EQ(a.versions, "4.2");
}

TEST(CriuAbi, UnknownAbisAreRefusedWithOneLine)
{
	for (size_t size : {size_t(0), size_t(192), size_t(256), size_t(100), size_t(16)}) {
		auto a = classify(syms(size, true));
		EXPECT_FALSE(a.refusal.empty()) << size;
		EXPECT_EQ(a.refusal.find('\n'), std::string::npos) << a.refusal;
		EXPECT_EQ(a.hooks, 0u) << size;
	}
	EXPECT_NE(classify(syms(256, true)).refusal.find("15 plugin hooks"), std::string::npos);
}

TEST(CriuAbi, DebianTwelvesCriuBinary)
{
	const char *path = "/usr/sbin/criu";
	if (!std::filesystem::exists(path))
		GTEST_SKIP() << path << " is not installed (setup.sh installs Debian's criu)";
	auto a = gwaction::criu_abi_of_binary(path);
	EXPECT_TRUE(a.refusal.empty()) << a.refusal;
	EXPECT_EQ(a.hooks, 10u);
	EXPECT_FALSE(a.owns_vma_fd); // Debian 12 ships 3.17.1
}

TEST(CriuAbi, DebianThirteensCriuBinary)
{
	const char *roots = getenv("GPUWATCH_VM_ROOTS");
	std::string path = std::string(roots ? roots : "/var/lib/gpuwatch/vm-roots") + "/debian13/usr/sbin/criu";
	if (!std::filesystem::exists(path))
		GTEST_SKIP() << path << " does not exist (setup.sh makes the Debian 13 lane's root)";
	auto a = gwaction::criu_abi_of_binary(path);
	EXPECT_TRUE(a.refusal.empty()) << a.refusal;
	EXPECT_EQ(a.hooks, 12u);
	EXPECT_EQ(a.versions, "4.1"); // Debian 13 ships 4.1.1
	EXPECT_TRUE(a.owns_vma_fd);
	EXPECT_TRUE(a.checkpoint_devices);
}

TEST(CriuAbi, NotCriu)
{
	auto a = gwaction::criu_abi_of_binary("/bin/sh");
	EXPECT_FALSE(a.refusal.empty());
	EXPECT_THROW(gwaction::criu_abi_of_binary("/etc/hostname"), gw::Error);
	EXPECT_THROW(gwaction::criu_abi_of_binary("/nonexistent/criu"), gw::Error);
}

TEST(CriuAbi, ThisProcessIsNotCriu)
{
	EXPECT_FALSE(gwaction::criu_abi().refusal.empty());
}
