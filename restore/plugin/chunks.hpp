// Chunked buffer images, for iterative migration: `criu pre-dump` copies the buffers ahead,
// and a later pre-dump or the final `criu dump --prev-images-dir` stores only the chunks that
// changed since. A chunk is kChunk bytes (the last one may be shorter); it is stored in this
// image directory or it is the same chunk of the parent directory's image of the same
// buffer (CRIU's `parent` link, made from --prev-images-dir), known by its XXH64 hash.
//
//   <base>.bin   the chunks stored here, back to back
//   <base>.map   "gpuwatch-chunks 1 <size> <chunk size> <parent key or ->\n", then per chunk
//                "<xxh64, 16 hex digits> <byte offset in .bin>" or "<xxh64> parent"
//
// A pre-dump's image of a buffer is gpuwatch-pre-<pid>-<fd>-<handle> (its first holder's pid
// and fd, and the handle there: what names the buffer again at the next dump); a final dump's
// object n is gpuwatch-object-<n>, whose map's hashes are those of the contents at the final
// dump: the restore checks every chunk it reads against them, wherever the chunk is stored, so a
// pre-dump image that changed since fails the restore. Names are built here from numbers, never
// read from an image.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "image_io.hpp"

namespace gwcriu
{

class BufferMap;

constexpr uint64_t kChunk = kIoBuffer;
constexpr int kMaxParentDepth = 64; // pre-dump rounds a restore follows back

struct ChunkKey {
	uint32_t pid = 0;
	int fd = -1;
	uint32_t handle = 0;
};
std::string pre_image_base(const ChunkKey &k); // "gpuwatch-pre-<pid>-<fd>-<handle>"
std::string chunk_map_name(const std::string &base);

struct ChunkEntry {
	uint64_t hash = 0;   // XXH64 of the chunk
	bool parent = false; // else stored here at `offset` of <base>.bin
	uint64_t offset = 0;
};
struct ChunkMap {
	uint64_t size = 0, chunk = kChunk;
	std::optional<ChunkKey> parent; // whose image in parent/ the "parent" chunks are
	std::vector<ChunkEntry> entries;
};
std::string chunk_map_text(const ChunkMap &m);
// Throws ImageError naming `name` for anything but the format above, with offsets inside
// bin_size and "parent" chunks only where a parent key is given.
ChunkMap parse_chunk_map(const std::string &text, const std::string &name, uint64_t bin_size);

// The map of `base` in the directory `dir` ("" or "parent/", "parent/parent/", ...) of the
// image directory; nullopt when it has none. Throws ImageError when it is malformed.
std::optional<ChunkMap> read_chunk_map(const std::string &dir, const std::string &base);

struct ChunkSave {
	uint32_t crc32 = 0;  // of all the buffer's bytes (zlib)
	uint64_t stored = 0; // bytes written to <base>.bin
	uint64_t reused = 0; // bytes left to the parent
};
// Writes <base>.bin and <base>.map from the buffer; chunks equal to those of the parent's
// image of `parent` (parent/<pre_image_base(parent)>.map, when it exists and is of the same
// size) are not stored again. Throws Error; leaves no partial file.
ChunkSave save_chunked(const std::string &base, const BufferMap &m, const std::optional<ChunkKey> &parent);

// Reads a chunked image back, following "parent" chunks through the pre-dump directories.
class ChunkReader
{
public:
	ChunkReader(const std::string &base, ChunkMap map); // throws Error/ImageError
	~ChunkReader();
	uint64_t size() const { return map_.size; }
	uint64_t chunks() const { return map_.entries.size(); }
	// Chunk i whole, checked against its hash, and its length in *len: mapped from its .bin's
	// page cache, or read into the process's I/O buffer (io_buffer()) where it cannot be
	// mapped. Valid until the next call or the reader's end. Throws Error.
	const char *chunk(uint64_t i, std::size_t *len);

private:
	struct Level;
	const Level &level(std::size_t depth); // opened on first use
	std::string base_;
	ChunkMap map_;
	std::vector<std::unique_ptr<Level>> levels_;
	ImageWindow window_; // the last chunk, when mapped
};

} // namespace gwcriu
