#include "drm_ops.hpp"
#include "xe_ops.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <drm.h>
#include <fcntl.h>
#include <drm_mode.h>
#include <linux/dma-buf.h>
#include <memory>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace gwcriu
{
namespace
{

void dmabuf_sync(int dmabuf, uint64_t flags)
{
	struct dma_buf_sync s = {};
	s.flags = flags;
	xioctl(dmabuf, DMA_BUF_IOCTL_SYNC, &s); // best effort: not every exporter needs it
}

} // namespace

int xioctl(int fd, unsigned long req, void *arg)
{
	int r;
	do
		r = ioctl(fd, req, arg);
	while (r < 0 && (errno == EINTR || errno == EAGAIN));
	return r < 0 ? -errno : 0;
}

// One row of 32-bit pixels per page. Measured on Debian's 6.1 kernel under QEMU: virtio_gpu and
// qxl refuse the 8-bit, page-wide shape used before (EINVAL) and take this one; cirrus,
// bochs-drm and vgem take both. i915's dumb create takes 8, 16 and 32 bpp by its code.
DumbParams generic_dumb_params(uint64_t size)
{
	DumbParams p;
	p.bpp = 32;
	p.width = static_cast<uint32_t>(page_size() / 4);
	p.height = static_cast<uint32_t>(size / page_size());
	return p;
}

int create_dumb(int fd, const DumbParams &p, uint32_t *handle, uint64_t *size)
{
	struct drm_mode_create_dumb c = {};
	c.width = p.width;
	c.height = p.height;
	c.bpp = p.bpp;
	c.flags = p.flags;
	int r = xioctl(fd, DRM_IOCTL_MODE_CREATE_DUMB, &c);
	if (r == 0) {
		*handle = c.handle;
		*size = c.size;
	}
	return r;
}

int gem_close(int fd, uint32_t handle)
{
	struct drm_gem_close c = {};
	c.handle = handle;
	return xioctl(fd, DRM_IOCTL_GEM_CLOSE, &c);
}

int gem_flink(int fd, uint32_t handle, uint32_t *name)
{
	struct drm_gem_flink f = {};
	f.handle = handle;
	int r = xioctl(fd, DRM_IOCTL_GEM_FLINK, &f);
	if (r == 0)
		*name = f.name;
	return r;
}

int gem_open(int fd, uint32_t name, uint32_t *handle)
{
	struct drm_gem_open o = {};
	o.name = name;
	int r = xioctl(fd, DRM_IOCTL_GEM_OPEN, &o);
	if (r == 0)
		*handle = o.handle;
	return r;
}

int map_offset(int fd, uint32_t handle, uint64_t *offset)
{
	struct drm_mode_map_dumb m = {};
	m.handle = handle;
	int r = xioctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &m);
	if (r == 0)
		*offset = m.offset;
	// xe render nodes refuse dumb ioctls; xe's own GEM_MMAP_OFFSET gives the same (only) offset
	// of the buffer, made at its creation: no side effect either.
	if (r == -EACCES && xe::is_xe(fd))
		return xe::mmap_offset(fd, handle, offset);
	return r;
}

int prime_export(int fd, uint32_t handle, bool rdwr, UniqueFd *out)
{
	struct drm_prime_handle p = {};
	p.handle = handle;
	p.flags = DRM_CLOEXEC | (rdwr ? DRM_RDWR : 0);
	int r = xioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p);
	if (r == -EINVAL && rdwr) { // kernels before DRM_RDWR support: read-only export
		p.flags = DRM_CLOEXEC;
		r = xioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p);
	}
	if (r != 0)
		return r;
	*out = UniqueFd(p.fd);
	// Keep plugin fds away from the numbers CRIU restores (see kHighFd).
	if (int high = fcntl(p.fd, F_DUPFD_CLOEXEC, kHighFd); high >= 0)
		*out = UniqueFd(high);
	return 0;
}

int prime_import(int fd, int dmabuf, uint32_t *handle)
{
	struct drm_prime_handle p = {};
	p.fd = dmabuf;
	int r = xioctl(fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &p);
	if (r == 0)
		*handle = p.handle;
	return r;
}

bool is_dmabuf(int fd)
{
	auto l = read_link("/proc/self/fd/" + std::to_string(fd));
	return l && (l->rfind("/dmabuf:", 0) == 0 || l->rfind("anon_inode:dmabuf", 0) == 0);
}

int64_t dmabuf_size(int dmabuf)
{
	// The position is shared with the task's own fd (the same open file): put it back.
	off_t pos = lseek(dmabuf, 0, SEEK_CUR);
	off_t end = lseek(dmabuf, 0, SEEK_END);
	if (end < 0)
		return -errno;
	lseek(dmabuf, pos < 0 ? 0 : pos, SEEK_SET);
	return end;
}

// --- CPU mappings ------------------------------------------------------------------------------
BufferMap BufferMap::of_handle(int fd, uint32_t handle, uint64_t size, bool write)
{
	int prot = PROT_READ | (write ? PROT_WRITE : 0);
	uint64_t off = 0;
	int r = map_offset(fd, handle, &off);
	if (r == 0) {
		void *p = mmap(nullptr, size, prot, MAP_SHARED, fd, static_cast<off_t>(off));
		if (p != MAP_FAILED) {
			BufferMap m;
			m.addr_ = p;
			m.len_ = size;
			return m;
		}
		r = -errno;
	}
	UniqueFd d;
	int e = prime_export(fd, handle, write, &d);
	if (e != 0)
		throw Error("cannot map handle " + std::to_string(handle) + " (MODE_MAP_DUMB/mmap: " +
			    gw::errno_text(-r) + ", PRIME export: " + gw::errno_text(-e) + ")");
	return of_dmabuf(d.get(), size, write);
}

BufferMap BufferMap::of_dmabuf(int dmabuf, uint64_t size, bool write)
{
	int prot = PROT_READ | (write ? PROT_WRITE : 0);
	UniqueFd own(fcntl(dmabuf, F_DUPFD_CLOEXEC, kHighFd));
	if (!own)
		throw Error("cannot duplicate a dma-buf fd: " + gw::errno_text(errno));
	void *p = mmap(nullptr, size, prot, MAP_SHARED, own.get(), 0);
	if (p == MAP_FAILED)
		throw Error("cannot mmap a dma-buf of " + std::to_string(size) + " bytes: " + gw::errno_text(errno));
	BufferMap m;
	m.addr_ = p;
	m.len_ = size;
	m.write_ = write;
	m.dmabuf_ = std::move(own);
	dmabuf_sync(m.dmabuf_.get(), DMA_BUF_SYNC_START | (write ? DMA_BUF_SYNC_RW : DMA_BUF_SYNC_READ));
	return m;
}

BufferMap BufferMap::of_range(int fd, uint64_t offset, uint64_t size)
{
	void *p = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(offset));
	if (p == MAP_FAILED)
		throw Error("cannot mmap " + std::to_string(size) + " bytes at offset " + std::to_string(offset) +
			    ": " + gw::errno_text(errno));
	BufferMap m;
	m.addr_ = p;
	m.len_ = size;
	return m;
}

BufferMap::BufferMap(BufferMap &&o) noexcept
    : addr_(std::exchange(o.addr_, nullptr)), len_(std::exchange(o.len_, 0)), dmabuf_(std::move(o.dmabuf_)),
      write_(o.write_)
{
}

BufferMap::~BufferMap()
{
	if (dmabuf_)
		dmabuf_sync(dmabuf_.get(), DMA_BUF_SYNC_END | (write_ ? DMA_BUF_SYNC_RW : DMA_BUF_SYNC_READ));
	if (addr_)
		munmap(addr_, len_);
}

void save_buffer(const BufferMap &m, ImageWriter &out)
{
	char *bounce = io_buffer();
	for (uint64_t done = 0; done < m.size();) {
		std::size_t n = static_cast<std::size_t>(std::min<uint64_t>(kIoBuffer, m.size() - done));
		copy_bytes(bounce, m.data() + done, n, Into::cache);
		out.write(bounce, n);
		done += n;
	}
}

namespace
{
// Copies [pos, pos + m.size()) of the image in_fd into m from the image's page cache, in
// ImageWindows of kMapWindow bytes, hashing each piece before it is copied; returns the bytes
// done (fewer when a window cannot be mapped: the caller reads the rest). The range is checked
// to lie inside the file first; nothing else writes the image directory during a restore.
constexpr uint64_t kMapWindow = 16 << 20;
uint64_t load_mapped(int in_fd, uint64_t pos, BufferMap &m, SumStream &sum)
{
	struct stat st;
	if (fstat(in_fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_size) < pos + m.size())
		return 0;
	uint64_t done = 0;
	while (done < m.size()) {
		std::size_t w = static_cast<std::size_t>(std::min<uint64_t>(kMapWindow, m.size() - done));
		ImageWindow win = ImageWindow::map(in_fd, pos + done, w);
		if (!win)
			break;
		for (std::size_t at = 0; at < w; at += kIoBuffer) {
			std::size_t n = std::min(kIoBuffer, w - at);
			sum.update(win.data() + at, n);
			copy_bytes(m.data() + done + at, win.data() + at, n, Into::device);
		}
		done += w;
	}
	return done;
}
} // namespace

uint64_t load_buffer(int in_fd, const std::string &what, BufferMap &m, SumKind kind)
{
	char *bounce = io_buffer();
	SumStream sum(kind);
	off_t pos = lseek(in_fd, 0, SEEK_CUR);
	uint64_t first = pos < 0 ? 0 : load_mapped(in_fd, static_cast<uint64_t>(pos), m, sum);
	if (first && lseek(in_fd, pos + static_cast<off_t>(first), SEEK_SET) < 0)
		throw Error("cannot seek in " + what + ": " + gw::errno_text(errno));
	for (uint64_t done = first; done < m.size();) {
		std::size_t n = static_cast<std::size_t>(std::min<uint64_t>(kIoBuffer, m.size() - done));
		if (!read_full(in_fd, bounce, n))
			throw Error("cannot read " + what + " at byte " + std::to_string(done) + ": " +
				    (errno == ENODATA ? std::string("truncated") : gw::errno_text(errno)));
		sum.update(bounce, n);
		copy_bytes(m.data() + done, bounce, n, Into::device);
		done += n;
	}
	return sum.value();
}

} // namespace gwcriu
