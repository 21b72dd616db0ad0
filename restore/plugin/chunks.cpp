#include "chunks.hpp"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <unistd.h>

#include "drm_ops.hpp"
#include "images.hpp"

namespace gwcriu
{

std::string pre_image_base(const ChunkKey &k)
{
	return "gpuwatch-pre-" + std::to_string(k.pid) + "-" + std::to_string(k.fd) + "-" + std::to_string(k.handle);
}

std::string chunk_map_name(const std::string &base)
{
	return base + ".map";
}

namespace
{

constexpr const char *kMagic = "gpuwatch-chunks 1";

std::string hex64(uint64_t v)
{
	char b[24];
	snprintf(b, sizeof b, "%016" PRIx64, v);
	return b;
}

uint64_t chunks_of(uint64_t size, uint64_t chunk)
{
	return (size + chunk - 1) / chunk;
}

// "123" only: no sign, no space, no overflow
bool parse_u64(const std::string &s, uint64_t *v)
{
	if (s.empty() || s.size() > 20 || s.find_first_not_of("0123456789") != std::string::npos)
		return false;
	errno = 0;
	unsigned long long n = strtoull(s.c_str(), nullptr, 10);
	if (errno)
		return false;
	*v = n;
	return true;
}

// The fields of text between separators: "a b" -> {a, b}; "a-" -> {a, ""}; "" -> {""}
std::vector<std::string> fields(const std::string &text, char sep)
{
	std::vector<std::string> out;
	for (std::size_t at = 0;;) {
		std::size_t end = text.find(sep, at);
		out.push_back(text.substr(at, end == std::string::npos ? std::string::npos : end - at));
		if (end == std::string::npos)
			return out;
		at = end + 1;
	}
}

} // namespace

std::string chunk_map_text(const ChunkMap &m)
{
	std::string out = std::string(kMagic) + " " + std::to_string(m.size) + " " + std::to_string(m.chunk) + " " +
			  (m.parent ? std::to_string(m.parent->pid) + "-" + std::to_string(m.parent->fd) + "-" +
					      std::to_string(m.parent->handle)
				    : std::string("-")) +
			  "\n";
	for (const ChunkEntry &e : m.entries)
		out += hex64(e.hash) + " " + (e.parent ? std::string("parent") : std::to_string(e.offset)) + "\n";
	return out;
}

ChunkMap parse_chunk_map(const std::string &text, const std::string &name, uint64_t bin_size)
{
	auto bad = [&](const std::string &why) { return ImageError(name + ": " + why); };
	ChunkMap m;
	std::size_t nl = text.find('\n');
	if (nl == std::string::npos || text.back() != '\n')
		throw bad("not a chunk map (no header line, or a last line without newline)");
	std::vector<std::string> head = fields(text.substr(0, nl), ' ');
	if (head.size() != 5 || head[0] + " " + head[1] != kMagic)
		throw bad("not a chunk map (header is not \"" + std::string(kMagic) + " SIZE CHUNK PARENT\")");
	if (!parse_u64(head[2], &m.size) || !parse_u64(head[3], &m.chunk) || m.chunk != kChunk || !m.size ||
	    m.size > max_object_size())
		throw bad("size " + head[2] + " or chunk size " + head[3] + " is not allowed");
	if (head[4] != "-") {
		std::vector<std::string> k = fields(head[4], '-');
		uint64_t p = 0, f = 0, h = 0;
		if (k.size() != 3 || !parse_u64(k[0], &p) || !parse_u64(k[1], &f) || !parse_u64(k[2], &h) ||
		    p > 0x7fffffff || f > 0x7fffffff || h > UINT32_MAX)
			throw bad("parent key " + head[4] + " is not PID-FD-HANDLE");
		m.parent = ChunkKey{static_cast<uint32_t>(p), static_cast<int>(f), static_cast<uint32_t>(h)};
	}
	uint64_t n = chunks_of(m.size, m.chunk);
	std::size_t at = nl + 1;
	for (uint64_t i = 0; i < n; ++i) {
		std::size_t end = text.find('\n', at);
		if (end == std::string::npos)
			throw bad("has " + std::to_string(i) + " chunk lines, expected " + std::to_string(n) +
				  " (truncated)");
		std::vector<std::string> w = fields(text.substr(at, end - at), ' ');
		at = end + 1;
		ChunkEntry e;
		if (w.size() != 2 || w[0].size() != 16 ||
		    w[0].find_first_not_of("0123456789abcdef") != std::string::npos)
			throw bad("chunk " + std::to_string(i) + " is not \"HASH OFFSET\" or \"HASH parent\"");
		e.hash = strtoull(w[0].c_str(), nullptr, 16);
		uint64_t len = std::min(m.chunk, m.size - i * m.chunk);
		if (w[1] == "parent") {
			if (!m.parent)
				throw bad("chunk " + std::to_string(i) +
					  " is its parent's, but the map names no parent");
			e.parent = true;
		} else if (!parse_u64(w[1], &e.offset) || e.offset > bin_size || len > bin_size - e.offset) {
			throw bad("chunk " + std::to_string(i) + " at " + w[1] + " is outside its " +
				  std::to_string(bin_size) + "-byte .bin (truncated or corrupt)");
		}
		m.entries.push_back(e);
	}
	if (at != text.size())
		throw bad("has more chunk lines than its size needs");
	return m;
}

std::optional<ChunkMap> read_chunk_map(const std::string &dir, const std::string &base)
{
	std::string map = dir + chunk_map_name(base);
	if (!image_exists(map))
		return std::nullopt;
	uint64_t bin_size = image_size(dir + base + ".bin");
	// 17 + 21 bytes per chunk line at most, and the header
	uint64_t max_text = 128 + chunks_of(max_object_size(), kChunk) * 40;
	return parse_chunk_map(read_image(map, static_cast<std::size_t>(max_text)), map, bin_size);
}

ChunkSave save_chunked(const std::string &base, const BufferMap &m, const std::optional<ChunkKey> &parent)
{
	std::optional<ChunkMap> prev;
	if (parent) {
		prev = read_chunk_map("parent/", pre_image_base(*parent));
		if (prev && (prev->size != m.size() || prev->chunk != kChunk))
			prev.reset(); // another buffer by now: every chunk is stored
	}
	ChunkMap map;
	map.size = m.size();
	if (prev)
		map.parent = parent;
	ChunkSave r;
	char *bounce = io_buffer();
	ImageWriter bin(base + ".bin");
	for (uint64_t i = 0, done = 0; done < m.size(); ++i) {
		std::size_t n = static_cast<std::size_t>(std::min<uint64_t>(kChunk, m.size() - done));
		ChunkEntry e;
		// unchanged since the parent's copy: hashed in place, not copied
		if (prev && prev->entries[i].hash == xxh64(m.data() + done, n)) {
			e.hash = prev->entries[i].hash;
			e.parent = true;
			r.reused += n;
		} else {
			copy_bytes(bounce, m.data() + done, n, Into::cache); // the hash is of the bytes stored
			e.hash = xxh64(bounce, n);
			e.offset = bin.written();
			bin.write(bounce, n);
			r.stored += n;
		}
		map.entries.push_back(e);
		done += n;
	}
	bin.commit();
	try {
		write_image(chunk_map_name(base), chunk_map_text(map));
	} catch (...) {
		unlinkat(image_dir(), (base + ".bin").c_str(), 0);
		throw;
	}
	return r;
}

struct ChunkReader::Level {
	std::string dir, base;
	ChunkMap map;
	UniqueFd bin;
};

ChunkReader::ChunkReader(const std::string &base, ChunkMap map) : base_(base), map_(std::move(map))
{
	auto top = std::make_unique<Level>();
	top->base = base_;
	top->map = map_;
	uint64_t ignored = 0;
	top->bin = open_image(base_ + ".bin", &ignored);
	levels_.push_back(std::move(top));
}

ChunkReader::~ChunkReader() = default;

const ChunkReader::Level &ChunkReader::level(std::size_t depth)
{
	while (levels_.size() <= depth) {
		const Level &child = *levels_.back();
		if (levels_.size() > static_cast<std::size_t>(kMaxParentDepth))
			throw ImageError(base_ + ": its chunks go back more than " + std::to_string(kMaxParentDepth) +
					 " pre-dumps");
		auto l = std::make_unique<Level>();
		l->dir = child.dir + "parent/";
		l->base = pre_image_base(*child.map.parent);
		std::optional<ChunkMap> m = read_chunk_map(l->dir, l->base);
		if (!m)
			throw Error(child.dir + child.base + ": its parent image " + l->dir + chunk_map_name(l->base) +
				    " is missing (restore with the pre-dump directories criu dump --prev-images-dir "
				    "named)");
		if (m->size != map_.size)
			throw ImageError(l->dir + chunk_map_name(l->base) + " is of " + std::to_string(m->size) +
					 " bytes, not the " + std::to_string(map_.size) + " of " + base_);
		l->map = std::move(*m);
		uint64_t ignored = 0;
		l->bin = open_image(l->dir + l->base + ".bin", &ignored);
		levels_.push_back(std::move(l));
	}
	return *levels_[depth];
}

const char *ChunkReader::chunk(uint64_t i, std::size_t *len)
{
	if (i >= map_.entries.size())
		throw Error(base_ + ": no chunk " + std::to_string(i));
	std::size_t n = static_cast<std::size_t>(std::min<uint64_t>(map_.chunk, map_.size - i * map_.chunk));
	std::size_t depth = 0;
	while (level(depth).map.entries[i].parent)
		++depth;
	const Level &l = level(depth);
	uint64_t off = l.map.entries[i].offset;
	// mapped where the offset allows (the map's parse checked that the chunk lies inside its
	// .bin), else read into the I/O buffer
	window_ = ImageWindow::map(l.bin.get(), off, n);
	const char *at = window_.data();
	if (!window_) {
		char *out = io_buffer();
		if (lseek(l.bin.get(), static_cast<off_t>(off), SEEK_SET) < 0 || !read_full(l.bin.get(), out, n))
			throw Error("cannot read " + l.dir + l.base +
				    ".bin: " + (errno == ENODATA ? std::string("truncated") : gw::errno_text(errno)));
		at = out;
	}
	if (xxh64(at, n) != map_.entries[i].hash)
		throw Error(base_ + ": chunk " + std::to_string(i) + " (from " + l.dir + l.base +
			    ".bin) does not match its checksum (corrupt, or a pre-dump's image changed)");
	*len = n;
	return at;
}

} // namespace gwcriu
