// gpuwatch's CRIU settings (user/criu_settings.hpp): the environment, the file's text, and
// which files count.
#include <cstdlib>
#include <csignal>
#include <fcntl.h>
#include <functional>
#include <gtest/gtest.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include "criu_settings.hpp"
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

gw::CriuSettings parse(const std::string &text)
{
	return gw::parse_criu_settings(text, "f");
}

struct SettingsEnv : ::testing::Test {
	std::string dir;
	void SetUp() override
	{
		unsetenv(gw::kCheckpointModeEnv);
		unsetenv(gw::kRestoreSignalEnv);
		char t[] = "/tmp/gwsettings.XXXXXX";
		ASSERT_NE(mkdtemp(t), nullptr);
		dir = t;
	}
	void TearDown() override
	{
		unsetenv(gw::kCheckpointModeEnv);
		unsetenv(gw::kRestoreSignalEnv);
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

TEST(CriuSettings, Text)
{
	EXPECT_EQ(parse("").mode, CheckpointMode::full);
	EXPECT_EQ(parse("").restore_signal, "");
	gw::CriuSettings s = parse("# c\n\n  mode =stateless  \nrestore_signal=USR2\n");
	EXPECT_EQ(s.mode, CheckpointMode::stateless);
	EXPECT_EQ(s.mode_from, "f");
	EXPECT_EQ(s.restore_signal, "USR2");
	EXPECT_EQ(s.signal_from, "f");
	for (CheckpointMode m : {CheckpointMode::full, CheckpointMode::stateless})
		for (std::string sig : {"", "SIGUSR2", "10"}) {
			gw::CriuSettings w;
			w.mode = m;
			w.restore_signal = sig;
			gw::CriuSettings back = parse(gw::criu_settings_text(w));
			EXPECT_EQ(back.mode, m);
			EXPECT_EQ(back.restore_signal, sig);
		}
	EXPECT_NE(error_of([] { parse("mode = lazy\n"); }).find("f line 1"), std::string::npos);
	EXPECT_NE(error_of([] { parse("\nlevel = 3\n"); }).find("f line 2: unknown setting"), std::string::npos);
	EXPECT_NE(error_of([] { parse("mode = full\nmode = full\n"); }).find("twice"), std::string::npos);
	EXPECT_NE(error_of([] { parse("restore_signal = 1\nrestore_signal = 2\n"); }).find("twice"), std::string::npos);
	EXPECT_NE(error_of([] { parse("stateless\n"); }).find("expected"), std::string::npos);
	EXPECT_EQ(error_of([] { parse("restore_signal = SIGKILLME\n"); }),
		  "f line 1: \"SIGKILLME\" is not a signal name (SIGUSR2) or number");
	EXPECT_NE(error_of([] { parse("restore_signal = 0\n"); }).find("not a signal"), std::string::npos);
	EXPECT_NE(error_of([] { parse("restore_signal =\n"); }).find("not a signal"), std::string::npos);
	EXPECT_EQ(gw::parse_signal("SIGHUP", "x"), SIGHUP);
	EXPECT_EQ(gw::parse_signal("CONT", "x"), SIGCONT);
	EXPECT_EQ(gw::parse_signal("34", "x"), 34);
	EXPECT_NE(error_of([] { gw::parse_signal("99999999999999999999", "x"); }).find("not a signal"),
		  std::string::npos);
}

TEST_F(SettingsEnv, EnvironmentWinsPerSettingAndIsChecked)
{
	gw::CriuSettings s = gw::criu_settings(dir + "/absent.conf");
	EXPECT_EQ(s.mode, CheckpointMode::full);
	EXPECT_EQ(s.mode_from, "the default");
	EXPECT_EQ(s.restore_signal, "");
	setenv(gw::kCheckpointModeEnv, "stateless", 1);
	if (geteuid() == 0) {
		s = gw::criu_settings(write("mode = full\nrestore_signal = SIGHUP\n", 0644));
		EXPECT_EQ(s.mode, CheckpointMode::stateless);
		EXPECT_EQ(s.mode_from, gw::kCheckpointModeEnv);
		EXPECT_EQ(s.restore_signal, "SIGHUP"); // the file's, the environment sets none
		EXPECT_EQ(s.signal_from, dir + "/gpuwatch.conf");
	}
	setenv(gw::kRestoreSignalEnv, "USR1", 1);
	s = gw::criu_settings(dir + "/absent.conf");
	EXPECT_EQ(s.restore_signal, "USR1");
	EXPECT_EQ(s.signal_from, gw::kRestoreSignalEnv);
	setenv(gw::kCheckpointModeEnv, "Stateless", 1);
	EXPECT_EQ(error_of([&] { gw::criu_settings(dir + "/absent.conf"); }),
		  "GPUWATCH_CHECKPOINT_MODE=Stateless is neither full nor stateless");
	setenv(gw::kCheckpointModeEnv, "full", 1);
	setenv(gw::kRestoreSignalEnv, "KILL", 1);
	EXPECT_NE(error_of([&] { gw::criu_settings(dir + "/absent.conf"); }).find("GPUWATCH_RESTORE_SIGNAL: "),
		  std::string::npos);
}

TEST_F(SettingsEnv, FileMustBeRootsAlone)
{
	std::string p = write("mode = stateless\n", 0644);
	if (geteuid() != 0) {
		EXPECT_NE(error_of([&] { gw::criu_settings(p); }).find("not trusted"), std::string::npos);
		GTEST_SKIP() << "not root: a file owned by root cannot be made here";
	}
	gw::CriuSettings s = gw::criu_settings(p);
	EXPECT_EQ(s.mode, CheckpointMode::stateless);
	EXPECT_EQ(s.mode_from, p);
	ASSERT_EQ(chmod(p.c_str(), 0664), 0);
	EXPECT_NE(error_of([&] { gw::criu_settings(p); }).find("not trusted"), std::string::npos);
	ASSERT_EQ(chmod(p.c_str(), 0644), 0);
	ASSERT_EQ(chown(p.c_str(), 1, 0), 0);
	EXPECT_NE(error_of([&] { gw::criu_settings(p); }).find("not trusted"), std::string::npos);
	ASSERT_EQ(symlink(p.c_str(), (dir + "/link.conf").c_str()), 0);
	EXPECT_NE(error_of([&] { gw::criu_settings(dir + "/link.conf"); }).find("cannot read"), std::string::npos);
	write("mode = stateless\n" + std::string(5000, '#') + "\n", 0644);
	EXPECT_NE(error_of([&] { gw::criu_settings(p); }).find("larger than 4 KiB"), std::string::npos);
	// a damaged file fails even where the environment sets everything: it is not half-read
	write("mode = stateless\nbogus = 1\n", 0644);
	setenv(gw::kCheckpointModeEnv, "full", 1);
	EXPECT_NE(error_of([&] { gw::criu_settings(p); }).find("unknown setting"), std::string::npos);
}
