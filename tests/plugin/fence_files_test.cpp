// restore/plugin/fence_files.cpp: an i915 perf stream is reopened by the plugin as root before
// the task's credentials are back, with properties from the image (issue 16, finding 3): only
// where the driver does not gate perf streams, or the administrator says to trust the image.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <unistd.h>

#include "fence_files.hpp"
#include "image_io.hpp"

namespace
{

std::string sysctl_file(const char *value)
{
	char tmpl[] = "/tmp/gw-paranoid-XXXXXX";
	int fd = mkstemp(tmpl);
	EXPECT_GE(fd, 0);
	close(fd);
	std::ofstream(tmpl) << value;
	return tmpl;
}

} // namespace

TEST(PerfStreams, ReopenedOnlyWhereTheDriverDoesNotGateThemOrTheAdminSaysSo)
{
	unsetenv("GPUWATCH_RESTORE_PERF_STREAMS");
	std::string on = sysctl_file("1\n"), off = sysctl_file("0\n");
	try {
		gwcriu::check_perf_allowed(on);
		ADD_FAILURE() << "a perf stream would be opened as root with perf_stream_paranoid on";
	} catch (const gwcriu::Error &e) {
		EXPECT_NE(std::string(e.what()).find("GPUWATCH_RESTORE_PERF_STREAMS=1"), std::string::npos) << e.what();
	}
	EXPECT_NO_THROW(gwcriu::check_perf_allowed(off));
	EXPECT_NO_THROW(gwcriu::check_perf_allowed("/nonexistent/perf_stream_paranoid")) << "no knob: not gated";
	setenv("GPUWATCH_RESTORE_PERF_STREAMS", "1", 1);
	EXPECT_NO_THROW(gwcriu::check_perf_allowed(on));
	unsetenv("GPUWATCH_RESTORE_PERF_STREAMS");
	unlink(on.c_str());
	unlink(off.c_str());
}
