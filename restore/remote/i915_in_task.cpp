// In-task operations on i915 mappings: convert (placeholder / copy), revert, map back.
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <vector>

#include <i915_drm.h> /* libdrm's copy of the uapi header */

#include "i915_maps.hpp"
#include "sysutil.hpp"

namespace gwremote
{

using gw::Error;

namespace
{

std::string hex(uint64_t v)
{
	char b[24];
	snprintf(b, sizeof b, "0x%llx", (unsigned long long)v);
	return b;
}

std::string where(const RemoteTask &t, uint64_t start, uint64_t len)
{
	return "process " + std::to_string(t.pid()) + " " + hex(start) + "-" + hex(start + len);
}

constexpr std::size_t kPipeChunk = 64 << 10; // a pipe's default capacity

} // namespace

void copy_through_pipe(RemoteTask &t, uint64_t src, uint64_t dst, uint64_t len)
{
	uint64_t fds_at = t.scratch(4096);
	t.checked("pipe2", __NR_pipe2, fds_at, O_CLOEXEC);
	int fds[2];
	t.read(fds_at, fds, sizeof fds);
	std::string err;
	try {
		for (uint64_t off = 0; off < len;) {
			uint64_t chunk = std::min<uint64_t>(kPipeChunk, len - off);
			long w = t.checked("write to a pipe from the mapping", __NR_write, fds[1], src + off, chunk);
			if (w == 0)
				throw Error("write to a pipe from the mapping in process " + std::to_string(t.pid()) +
					    ": wrote nothing");
			for (long done = 0; done < w;) {
				long r = t.checked("read from a pipe", __NR_read, fds[0], dst + off + done, w - done);
				if (r == 0)
					throw Error("read from a pipe in process " + std::to_string(t.pid()) +
						    ": end of file");
				done += r;
			}
			off += w;
		}
	} catch (const std::exception &e) {
		err = e.what();
	}
	t.syscall(__NR_close, fds[0]);
	t.syscall(__NR_close, fds[1]);
	if (!err.empty())
		throw Error(err);
}

namespace
{

void copy_map(RemoteTask &t, const MapRecord &m)
{
	long a = t.checked("mmap of the copy", __NR_mmap, 0, m.length, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, (unsigned long)-1, 0);
	uint64_t copy = (uint64_t)a;
	try {
		/* process_vm_readv works on shmem (legacy) mappings, not on GEM (PFN) ones */
		bool done = false;
		if (m.prot & PROT_READ) {
			try {
				std::vector<char> buf(m.length);
				t.read(m.start, buf.data(), buf.size());
				t.write(copy, buf.data(), buf.size());
				done = true;
			} catch (const std::exception &) {
			}
		}
		if (!done) {
			if (!(m.prot & PROT_READ))
				t.checked("mprotect (to read a write-only mapping)", __NR_mprotect, m.start, m.length,
					  PROT_READ);
			copy_through_pipe(t, m.start, copy, m.length);
		}
		if (m.prot != (PROT_READ | PROT_WRITE))
			t.checked("mprotect of the copy", __NR_mprotect, copy, m.length, m.prot);
		long r = t.checked("mremap of the copy", __NR_mremap, copy, m.length, m.length,
				   MREMAP_MAYMOVE | MREMAP_FIXED, m.start);
		if ((uint64_t)r != m.start)
			throw Error("mremap of the copy in process " + std::to_string(t.pid()) + " landed at " +
				    hex(r));
	} catch (...) {
		t.syscall(__NR_munmap, copy, m.length);
		throw;
	}
}

} // namespace

void convert_map(RemoteTask &t, const MapRecord &m)
{
	try {
		if (m.mode == MapMode::Copy) {
			copy_map(t, m);
			return;
		}
		long r = t.checked("mmap of the placeholder", __NR_mmap, m.start, m.length, PROT_NONE,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, (unsigned long)-1, 0);
		if ((uint64_t)r != m.start)
			throw Error("the placeholder landed at " + hex(r));
	} catch (const std::exception &e) {
		throw Error(std::string(kind_name(m.kind)) + " mapping " + where(t, m.start, m.length) + " (" +
			    mode_name(m.mode) + "): " + e.what());
	}
}

bool placeholder_present(uint32_t pid, uint64_t start, uint64_t length)
{
	std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
	std::string line;
	while (std::getline(in, line)) {
		std::istringstream f(line);
		std::string range, perms, off, dev, name;
		unsigned long ino = 0;
		if (!(f >> range >> perms >> off >> dev >> ino))
			continue;
		f >> name;
		unsigned long long s = 0, e = 0;
		if (sscanf(range.c_str(), "%llx-%llx", &s, &e) != 2)
			continue;
		if (s <= start && start < e)
			return ino == 0 && name.empty() && perms == "---p" && start + length <= e;
	}
	return false;
}

void map_gem(RemoteTask &t, uint64_t addr, uint64_t len, int prot, int fd, uint64_t fake_offset)
{
	long r = t.checked("mmap of the DRM fd", __NR_mmap, addr, len, prot, MAP_SHARED | MAP_FIXED, fd, fake_offset);
	if ((uint64_t)r != addr)
		throw Error("mmap of the DRM fd in process " + std::to_string(t.pid()) + " landed at " + hex(r));
}

void map_legacy(RemoteTask &t, uint64_t addr, uint64_t len, int prot, int fd, uint32_t handle, uint64_t offset, bool wc)
{
	drm_i915_gem_mmap arg{};
	arg.handle = handle;
	arg.offset = offset;
	arg.size = len;
	arg.flags = wc ? I915_MMAP_WC : 0;
	uint64_t at = t.scratch(sizeof arg);
	t.write(at, &arg, sizeof arg);
	t.checked("DRM_IOCTL_I915_GEM_MMAP", __NR_ioctl, fd, DRM_IOCTL_I915_GEM_MMAP, at);
	t.read(at, &arg, sizeof arg);
	uint64_t got = arg.addr_ptr;
	try {
		if (prot != (PROT_READ | PROT_WRITE))
			t.checked("mprotect", __NR_mprotect, got, len, prot);
		long r = t.checked("mremap of the GEM_MMAP mapping", __NR_mremap, got, len, len,
				   MREMAP_MAYMOVE | MREMAP_FIXED, addr);
		if ((uint64_t)r != addr)
			throw Error("mremap in process " + std::to_string(t.pid()) + " landed at " + hex(r));
	} catch (...) {
		t.syscall(__NR_munmap, got, len);
		throw;
	}
}

RevertResult revert_maps(RemoteTask &t, const std::vector<MapRecord> &maps)
{
	RevertResult res;
	for (const MapRecord &m : maps) {
		std::string what = std::string(kind_name(m.kind)) + " mapping " + where(t, m.start, m.length);
		if (m.mode != MapMode::Placeholder) {
			res.skipped++;
			res.notes.push_back(what + ": a copy, not reverted (no longer shared with its buffer)");
			continue;
		}
		if (!placeholder_present(t.pid(), m.start, m.length)) {
			res.skipped++;
			res.notes.push_back(what +
					    ": its placeholder is gone (reverted already, or the task changed it)");
			continue;
		}
		try {
			if (m.kind == MapKind::Gem)
				map_gem(t, m.start, m.length, m.prot, *m.fd, m.offset);
			else
				map_legacy(t, m.start, m.length, m.prot, *m.fd, *m.handle, m.offset, m.wc);
			res.reverted++;
		} catch (const std::exception &e) {
			res.errors.push_back(what + ": " + e.what());
		}
	}
	return res;
}

} // namespace gwremote
