#include "object_image.hpp"

#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace gwcriu
{

namespace
{
constexpr char kTrailerMagic[8] = {'G', 'W', 'O', 'B', 'J', 0, 0, 1};

void put_le64(char *at, uint64_t v)
{
	for (int i = 0; i < 8; ++i)
		at[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

uint64_t get_le64(const char *at)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; --i)
		v = (v << 8) | static_cast<unsigned char>(at[i]);
	return v;
}

// The XXH64 in the trailer of image `in` (of *size bytes, which becomes the size of the
// contents before the trailer).
uint64_t read_trailer(int in, const std::string &name, uint64_t *size)
{
	if (*size < kObjectTrailer)
		throw Error(name + " is " + std::to_string(*size) + " bytes, too short for its trailer (truncated)");
	*size -= kObjectTrailer;
	char t[kObjectTrailer];
	ssize_t got = pread(in, t, sizeof(t), static_cast<off_t>(*size));
	if (got != static_cast<ssize_t>(sizeof(t)))
		throw Error("cannot read the trailer of " + name + ": " +
			    (got < 0 ? gw::errno_text(errno) : std::string("truncated")));
	return parse_object_trailer(t, *size, name);
}
} // namespace

std::string object_trailer(uint64_t size, uint64_t xxh64)
{
	std::string t(kObjectTrailer, '\0');
	std::memcpy(t.data(), kTrailerMagic, sizeof(kTrailerMagic));
	put_le64(t.data() + 8, size);
	put_le64(t.data() + 16, xxh64);
	return t;
}

uint64_t parse_object_trailer(const char (&t)[kObjectTrailer], uint64_t size, const std::string &name)
{
	if (std::memcmp(t, kTrailerMagic, sizeof(kTrailerMagic)) != 0)
		throw Error(name + ": its last " + std::to_string(kObjectTrailer) +
			    " bytes are not a gpuwatch buffer trailer (truncated or corrupt)");
	if (get_le64(t + 8) != size)
		throw Error(name + ": its trailer gives " + std::to_string(get_le64(t + 8)) +
			    " bytes of contents, the file holds " + std::to_string(size) + " (truncated or corrupt)");
	return get_le64(t + 16);
}

void save_object_image(const std::string &name, const BufferMap &m)
{
	ImageWriter w(name, ImageWriter::Hashed::yes);
	save_buffer(m, w);
	const std::string trailer = object_trailer(m.size(), w.sum());
	w.append(trailer.data(), trailer.size());
	w.commit();
}

void load_object_image(const std::string &name, const ObjectSum &sum, uint64_t skip, BufferMap &dst)
{
	uint64_t size = 0;
	UniqueFd in = open_image(name, &size);
	std::optional<ContentSum> want = sum.beside;
	if (sum.trailer)
		want = ContentSum{SumKind::xxh64, read_trailer(in.get(), name, &size)};
	if (skip > size || dst.size() > size - skip)
		throw Error(name + " holds " + std::to_string(size) + " bytes: too few for " +
			    std::to_string(dst.size()) + " bytes at " + std::to_string(skip) + " (truncated)");
	const SumKind kind = want ? want->kind : SumKind::xxh64;
	const bool whole = !skip && dst.size() == size;
	if (want && !whole && image_sum(in.get(), name, kind, size) != want->value)
		throw Error(name + ": contents do not match their checksum (corrupt)");
	if (skip && lseek(in.get(), static_cast<off_t>(skip), SEEK_SET) < 0)
		throw Error("cannot seek in " + name + ": " + gw::errno_text(errno));
	const uint64_t got = load_buffer(in.get(), name, dst, kind);
	if (want && whole && got != want->value)
		throw Error(name + ": contents do not match their checksum (corrupt)");
}

} // namespace gwcriu
