// A whole buffer's image, gpuwatch-object-<N>.bin (images.hpp): its contents, then a trailer
// of kObjectTrailer bytes: "GWOBJ\0\0\1", the contents' size and their XXH64, each 8 bytes
// little-endian. One file per buffer where there were two (the checksum in its own .xxh64): a
// file made and renamed costs three path lookups, about 150 us under TCG. Images of earlier
// versions (the raw contents, their checksum in gpuwatch-object-<N>.xxh64 or .crc32) are
// still read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "drm_ops.hpp"

namespace gwcriu
{

constexpr std::size_t kObjectTrailer = 24;
std::string object_trailer(uint64_t size, uint64_t xxh64);
// The XXH64 a trailer holds; throws Error naming `name` unless it is a trailer for contents
// of `size` bytes.
uint64_t parse_object_trailer(const char (&t)[kObjectTrailer], uint64_t size, const std::string &name);

// Writes m's contents and their trailer as image `name`. Throws Error.
void save_object_image(const std::string &name, const BufferMap &m);

// How the contents of image `name` are checked as they are read: by the trailer at its end
// (this version's images), by `beside` (the checksum file of an earlier version's image,
// without a trailer), or not at all (an earlier version's image whose checksum nobody read).
struct ObjectSum {
	bool trailer = true;
	std::optional<ContentSum> beside;
};
// Copies bytes [skip, skip + dst.size()) of the contents of image `name` into dst, checked
// against their checksum: while they are read when dst takes them whole, else before. Throws
// Error naming the image.
void load_object_image(const std::string &name, const ObjectSum &sum, uint64_t skip, BufferMap &dst);

} // namespace gwcriu
