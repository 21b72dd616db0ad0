// See criu_abi.hpp.
#include "criu_abi.hpp"

#include <cerrno>
#include <climits>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <unistd.h>

#include "sysutil.hpp"

namespace gwaction
{

CriuAbi classify(const CriuSymbols &s)
{
	CriuAbi a;
	if (!s.have_ctl || s.ctl_size == 0) {
		a.refusal = "the program that loaded gpuwatch_criu.so exports no cr_plugin_ctl: it is not a CRIU "
			    "this plugin can identify (CRIU 3.17 to 4.2 export it)";
		return a;
	}
	a.is_criu = true;
	const size_t list_head = 2 * sizeof(void *);
	if (s.ctl_size % list_head != 0 || s.ctl_size / list_head < 2) {
		a.refusal = "CRIU's cr_plugin_ctl has an unexpected size (" + std::to_string(s.ctl_size) +
			    " bytes): not a plugin ABI of CRIU 3.17 to 4.2";
		return a;
	}
	unsigned hooks = static_cast<unsigned>(s.ctl_size / list_head - 1);
	switch (hooks) {
	case 10:
		a.versions = s.rpc_query_external_files ? "3.19" : "3.17-3.18";
		a.owns_vma_fd = s.rpc_query_external_files;
		break;
	case 12:
		a.versions = s.dont_use_freeze_cgroup ? "4.0" : "4.1";
		a.owns_vma_fd = true;
		a.checkpoint_devices = true;
		a.checkpoint_at_predump = s.dont_use_freeze_cgroup;
		break;
	case 13:
		a.versions = "4.2";
		a.owns_vma_fd = true;
		a.checkpoint_devices = true;
		break;
	default:
		a.refusal =
			"this CRIU has " + std::to_string(hooks) +
			" plugin hooks; gpuwatch knows the plugin ABIs of CRIU 3.17 to 4.2 (10, 12 or 13 hooks) and "
			"refuses others (CRIU's development branch changed RESTORE_EXT_FILE): use a CRIU release "
			"from 3.17 to 4.2, or a gpuwatch that supports this one";
		return a;
	}
	a.hooks = hooks;
	return a;
}

namespace
{

CriuAbi detect()
{
	CriuSymbols s;
	if (void *ctl = dlsym(RTLD_DEFAULT, "cr_plugin_ctl")) {
		Dl_info info;
		void *extra = nullptr; // dladdr1 stores a const ElfW(Sym) * here
		const auto *sym = static_cast<const ElfW(Sym) *>(extra);
		if (dladdr1(ctl, &info, &extra, RTLD_DL_SYMENT) != 0 && (sym = static_cast<const ElfW(Sym) *>(extra))) {
			s.have_ctl = true;
			s.ctl_size = sym->st_size;
		}
	}
	s.rpc_query_external_files = dlsym(RTLD_DEFAULT, "rpc_query_external_files") != nullptr;
	s.dont_use_freeze_cgroup = dlsym(RTLD_DEFAULT, "dont_use_freeze_cgroup") != nullptr;
	return classify(s);
}

} // namespace

const CriuAbi &criu_abi()
{
	static const CriuAbi abi = detect();
	return abi;
}

std::string libdir_of_cmdline(const std::vector<std::string> &argv, const std::string &cwd)
{
	std::string dir;
	for (std::size_t i = 1; i < argv.size(); ++i) {
		const std::string &a = argv[i];
		if ((a == "--libdir" || a == "-L") && i + 1 < argv.size())
			dir = argv[++i];
		else if (a.rfind("--libdir=", 0) == 0)
			dir = a.substr(9);
		else if (a.size() > 2 && a.rfind("-L", 0) == 0)
			dir = a.substr(2);
	}
	if (!dir.empty() && dir[0] != '/')
		dir = cwd + "/" + dir;
	return dir;
}

std::string plugin_missing_from_libdir(pid_t criu)
{
	std::string proc = "/proc/" + std::to_string(criu);
	auto argv = gw::proc_cmdline(std::to_string(criu));
	if (!argv)
		return "";
	char cwd[PATH_MAX];
	ssize_t n = ::readlink((proc + "/cwd").c_str(), cwd, sizeof(cwd) - 1);
	std::string dir = libdir_of_cmdline(*argv, n > 0 ? std::string(cwd, static_cast<std::size_t>(n)) : "/");
	if (dir.empty() || ::access((dir + "/gpuwatch_criu.so").c_str(), F_OK) == 0)
		return "";
	return "criu was given --libdir " + dir + ", which holds no gpuwatch_criu.so: CRIU takes one plugin " +
	       "directory (the last --libdir), so gpuwatch's plugin is not loaded; give gpuwatch's options " +
	       "last, or link gpuwatch_criu.so into " + dir;
}

} // namespace gwaction
