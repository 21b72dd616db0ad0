// The fixed-cost control of the VM bench's section 5 (vmtests/bench/guest.sh, kind "floor"): a
// CRIU plugin that registers and does nothing. Plain CRIU loading it with --libdir, and running
// a copy of /bin/true as its --action-script, pays what any design made of a plugin and an action
// script pays per dump and per restore (dlopen, one exec per action) and nothing of gpuwatch's
// own work. Not part of gpuwatch.
#include <criu-plugin.h>

static int bench_init(int stage)
{
	(void)stage;
	return 0;
}

static void bench_exit(int stage, int ret)
{
	(void)stage;
	(void)ret;
}

CR_PLUGIN_REGISTER("gpuwatch_bench_empty", bench_init, bench_exit)
