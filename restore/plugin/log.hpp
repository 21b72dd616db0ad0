// Logging into CRIU's log (criu dump/restore -o FILE -v4), every line prefixed "gpuwatch: ".
//
// CRIU exports print_on_level() to plugins; levels are compel's (loglevels.h): 1 error,
// 2 warn, 3 info, 4 debug. Outside CRIU (unit tests) the symbol is absent and lines go to
// stderr instead.
#pragma once

namespace gwcriu
{

void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

} // namespace gwcriu
