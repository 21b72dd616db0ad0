// DRM and dma-buf operations the plugin needs: dumb buffers, GEM close/flink/open, PRIME,
// fake offsets, and CPU access to a buffer's contents (streamed through a bounce buffer).
// Functions return 0 or -errno unless they say otherwise; none of them logs.
#pragma once

#include "drm_devices.hpp" // gw::kDrmMajor, gw::drm_driver_name

#include <cstdint>
#include <string>

#include "image_io.hpp"

namespace gwcriu
{

// ioctl(2) retried on EINTR/EAGAIN (as libdrm's drmIoctl): 0 or -errno.
int xioctl(int fd, unsigned long req, void *arg);

struct DumbParams {
	uint32_t width = 0, height = 0, bpp = 0, flags = 0;
};
// Params that give a dumb buffer of exactly `size` bytes (a page multiple) on drivers that
// compute size = pitch * height: 32 bpp, one page per row (drm_ops.cpp).
DumbParams generic_dumb_params(uint64_t size);
int create_dumb(int fd, const DumbParams &p, uint32_t *handle, uint64_t *size);
int gem_close(int fd, uint32_t handle);
int gem_flink(int fd, uint32_t handle, uint32_t *name);
int gem_open(int fd, uint32_t name, uint32_t *handle);
int map_offset(int fd, uint32_t handle, uint64_t *offset); // MODE_MAP_DUMB (xe render nodes: GEM_MMAP_OFFSET)
int prime_export(int fd, uint32_t handle, bool rdwr, UniqueFd *out);
int prime_import(int fd, int dmabuf, uint32_t *handle);

bool is_dmabuf(int fd);          // by its /proc/self/fd link
int64_t dmabuf_size(int dmabuf); // lseek(SEEK_END), position kept; -errno

// A CPU mapping of a whole buffer: through the DRM file (MODE_MAP_DUMB + mmap) where the
// driver allows it, else through a PRIME export (dma-buf mmap, bracketed by DMA_BUF_IOCTL_SYNC).
class BufferMap
{
public:
	static BufferMap of_handle(int fd, uint32_t handle, uint64_t size, bool write); // throws Error
	static BufferMap of_dmabuf(int dmabuf, uint64_t size, bool write);              // throws Error
	static BufferMap of_range(int fd, uint64_t offset, uint64_t size);              // read-only; throws
	BufferMap(BufferMap &&o) noexcept;
	BufferMap &operator=(BufferMap &&) = delete;
	BufferMap(const BufferMap &) = delete;
	~BufferMap();
	char *data() const { return static_cast<char *>(addr_); }
	uint64_t size() const { return len_; }

private:
	BufferMap() = default;
	void *addr_ = nullptr;
	uint64_t len_ = 0;
	UniqueFd dmabuf_; // set when mapped through a dma-buf (for the sync ioctls)
	bool write_ = false;
};

// Streams the buffer to an image, 1 MiB at a time through a bounce buffer (writing straight
// from a device mapping fails with EFAULT on 9p; reading it once suits write-combined
// mappings), which ImageWriter splices into the file. load_buffer copies an image, from the
// fd's position on, into the buffer: from the image mapped where it can (load_mapped), else
// read through the bounce buffer; it returns the checksum (of that kind) of the bytes. Throw
// Error.
void save_buffer(const BufferMap &m, ImageWriter &out);
uint64_t load_buffer(int in_fd, const std::string &what, BufferMap &m, SumKind kind);

} // namespace gwcriu
