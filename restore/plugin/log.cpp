#include "log.hpp"

#include <compel/loglevels.h>
#include <cstdarg>
#include <cstdio>

// Exported by the criu binary; weak so that unit tests can run without it.
extern "C" void print_on_level(unsigned int loglevel, const char *fmt, ...) __attribute__((weak, format(printf, 2, 3)));

namespace gwcriu
{
namespace
{

void vlog(unsigned level, const char *fmt, va_list ap)
{
	char line[1024];
	vsnprintf(line, sizeof line, fmt, ap);
	if (print_on_level)
		print_on_level(level, "gpuwatch: %s\n", line);
	else
		fprintf(stderr, "gpuwatch: %s\n", line);
}

} // namespace

#define GW_LOG_FN(name, level)                                                                                         \
	void name(const char *fmt, ...)                                                                                \
	{                                                                                                              \
		va_list ap;                                                                                            \
		va_start(ap, fmt);                                                                                     \
		vlog(level, fmt, ap);                                                                                  \
		va_end(ap);                                                                                            \
	}

GW_LOG_FN(log_error, COMPEL_LOG_ERROR)
GW_LOG_FN(log_warn, COMPEL_LOG_WARN)
GW_LOG_FN(log_info, COMPEL_LOG_INFO)
GW_LOG_FN(log_debug, COMPEL_LOG_DEBUG)

} // namespace gwcriu
