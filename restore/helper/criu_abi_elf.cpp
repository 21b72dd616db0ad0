// See criu_abi.hpp. Apart from criu_abi.cpp: only the action script reads criu's ELF, and the
// plugin, which CRIU loads at every dump and restore, should not bring libelf with it.
#include "criu_abi.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include "sysutil.hpp"

namespace gwaction
{

CriuAbi criu_abi_of_binary(const std::string &path)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		throw gw::Error("libelf: " + std::string(elf_errmsg(-1)));
	gw::UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
	if (!fd)
		throw gw::Error("cannot open " + path + ": " + gw::errno_text(errno));
	Elf *elf = elf_begin(fd.get(), ELF_C_READ, nullptr);
	if (!elf)
		throw gw::Error(path + " is not an ELF file: " + elf_errmsg(-1));
	if (elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		throw gw::Error(path + " is not an ELF file");
	}
	CriuSymbols s;
	Elf_Scn *scn = nullptr;
	while ((scn = elf_nextscn(elf, scn)) != nullptr) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || sh.sh_entsize == 0)
			continue;
		Elf_Data *data = elf_getdata(scn, nullptr);
		for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; ++i) {
			GElf_Sym sym;
			if (!gelf_getsym(data, static_cast<int>(i), &sym) || sym.st_shndx == SHN_UNDEF)
				continue;
			const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name)
				continue;
			if (!strcmp(name, "cr_plugin_ctl")) {
				s.have_ctl = true;
				s.ctl_size = sym.st_size;
			} else if (!strcmp(name, "rpc_query_external_files")) {
				s.rpc_query_external_files = true;
			} else if (!strcmp(name, "dont_use_freeze_cgroup")) {
				s.dont_use_freeze_cgroup = true;
			}
		}
	}
	elf_end(elf);
	return classify(s);
}

} // namespace gwaction
