// Small system helpers of the plugin: fds, files, the CRIU image directory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sysutil.hpp" // gw::Error (one-line message), gw::UniqueFd

namespace gwcriu
{

using gw::Error;
using gw::UniqueFd;

// Plugin-owned fds that outlive a hook sit at or above this number (F_DUPFD_CLOEXEC), far
// from the numbers CRIU restores: otherwise CRIU later fails with "fd N already in use".
constexpr int kHighFd = 1000;
// The name of the memfds a stateless checkpoint's mappings come back on (/memfd:NAME in /proc/PID/maps).
constexpr const char *kStatelessMemfd = "gpuwatch-stateless";
UniqueFd dup_high(int fd);

// kcmp(KCMP_FILE): true when fd1 of pid1 and fd2 of pid2 are the same open file.
bool same_file(int pid1, int fd1, int pid2, int fd2);
// A copy of fd `fd` of process pid in this process (pidfd_getfd); -1 with errno on failure.
int pidfd_getfd_of(int pid, int fd);

std::size_t page_size();
inline std::string num(uint64_t v) // ids and counts in messages
{
	return std::to_string(v);
}
std::string env_or(const char *name, const std::string &fallback);
uint64_t env_u64(const char *name, uint64_t fallback); // unparsable values fall back

using gw::read_text; // whole small files (/proc, /sys): nullopt when absent or unreadable
std::optional<std::string> read_link(const std::string &path);
// A field of /proc/self/fdinfo/<fd> ("exp_name", ...), "" when absent.
std::string fdinfo_field(int fd, const char *key);
bool read_full(int fd, void *buf, std::size_t len); // false on EOF or error (errno)
bool write_full(int fd, const void *buf, std::size_t len);

// --- the image directory (criu_get_image_dir()) --------------------------------------------
// Names are the plugin's own (gpuwatch-*), never taken from image contents.
int image_dir(); // throws Error outside CRIU
bool image_exists(const std::string &name);
// At restore, where nothing writes the image directory: one listing of its gpuwatch-* names,
// which image_exists answers from from then on (in this process and the tasks it forks) for
// names without a '/'. A path lookup costs about 50 us under TCG, and a restore made several
// per buffer. Throws Error when the directory cannot be listed.
void snapshot_image_names();
void forget_image_names(); // image_exists asks the file system again
std::vector<std::string> list_images(const std::string &prefix, const std::string &suffix);
// Writes name atomically (temp file + rename). Throws Error naming the file.
void write_image(const std::string &name, const std::string &content);
// Reads a regular file of at most max bytes. Throws Error naming the file.
std::string read_image(const std::string &name, std::size_t max);
// The process's one I/O buffer (kIoBuffer bytes, allocated on first use, never freed) for
// streaming buffer contents and images: a buffer per call cost an mmap, page faults and a
// munmap per GEM buffer, which at 1000 small buffers was most of the plugin's time.
constexpr std::size_t kIoBuffer = 1 << 20;
char *io_buffer();
// Copies a buffer's bytes with vector moves (AVX2 where the CPU has it, else SSE2), never the
// string instruction (rep movsb) that glibc's memcpy uses for copies between a few KiB and about
// 1 MiB: under QEMU's TCG that copied 256 MiB in 256 KiB pieces in 13-20 s, the vector loop in
// 0.2-0.4 s (vmtests/bench/bench_copy, docs/benchmarks.md), and every 256 KiB buffer fell in
// that range. Into::device: streaming stores, for a destination that is a buffer's mapping
// (often write-combined) and is not read back; Into::cache: ordinary stores, for the I/O buffer
// that is hashed and spliced next.
enum class Into {
	device,
	cache
};
void copy_bytes(void *dst, const void *src, std::size_t n, Into into);
// The SSE2 loop alone, which copy_bytes takes on a CPU without AVX2 (for its test).
void copy_bytes_sse2(void *dst, const void *src, std::size_t n, Into into);
// The checksum of a buffer's saved contents: XXH64 (gpuwatch-object-N.xxh64; under TCG a
// tenth of the time of zlib's CRC-32, on the host a third) or, in images of earlier versions,
// the zlib CRC-32 (gpuwatch-object-N.crc32), still read.
enum class SumKind {
	xxh64,
	crc32
};
struct ContentSum {
	SumKind kind = SumKind::xxh64;
	uint64_t value = 0;
};
class SumStream
{
public:
	explicit SumStream(SumKind kind = SumKind::xxh64);
	void update(const void *buf, std::size_t len);
	uint64_t value() const;

private:
	SumKind kind_;
	uint64_t crc_ = 0;
	alignas(8) unsigned char xxh_[96]; // XXH64_state_t (image_io.cpp checks the size)
};
// One-shot XXH64 (seed 0) of len bytes.
uint64_t xxh64(const void *buf, std::size_t len);
// The checksum of the first `len` bytes of the open image `fd` (named `name` in errors), read
// in chunks with pread: fd's position is left where it was. Throws Error on a read failure or
// when the file is shorter.
uint64_t image_sum(int fd, const std::string &name, SumKind kind, uint64_t len);
// A regular image file opened for reading, with its size. Throws Error naming the file.
UniqueFd open_image(const std::string &name, uint64_t *size);
// The size of a regular image file, without opening it. Throws Error naming the file.
uint64_t image_size(const std::string &name);

// A read-only mapping of [offset, offset + len) of an image file, its pages read in at once
// (MAP_POPULATE): the bytes straight from the page cache, where read() copies them once more.
// Empty (false) where the kernel refuses or offset is not page-aligned: read the range then.
// The caller checks that the range lies inside the file (else a touch faults with SIGBUS).
class ImageWindow
{
public:
	ImageWindow() = default;
	static ImageWindow map(int fd, uint64_t offset, std::size_t len);
	ImageWindow(ImageWindow &&o) noexcept;
	ImageWindow &operator=(ImageWindow &&o) noexcept;
	ImageWindow(const ImageWindow &) = delete;
	~ImageWindow();
	explicit operator bool() const { return addr_ != nullptr; }
	const char *data() const { return static_cast<const char *>(addr_); }

private:
	void *addr_ = nullptr;
	std::size_t len_ = 0;
};

// Moves len bytes at buf into fd at its position through the pipe p, as CRIU writes its page
// images: vmsplice lends the caller's pages to the pipe and splice copies them into the file,
// one copy by the kernel's memcpy where write() copies from user memory (under TCG five times
// slower: docs/benchmarks.md). The pipe is made on first use and drained before this returns,
// so buf may be reused at once. Returns the bytes it moved; fewer than len when the file or
// the pipe refuses (p.failed is set then, and later calls move nothing: write() the rest).
struct SplicePipe {
	UniqueFd r, w;
	std::size_t cap = 0;
	bool failed = false;
};
std::size_t splice_into(int fd, const char *buf, std::size_t len, SplicePipe &p);

// Streams a raw image: opened as name.tmp, renamed to name by commit(), removed otherwise.
// Writes of kSpliceMin bytes or more go through splice_into, on one pipe for all the writers of
// the process (kept open at or above kHighFd), the rest (and what a file refusing splice gets)
// through write(). With Hashed::yes it keeps the XXH64 of every byte
// written (sum()); the writers that do not need it (JSON images, chunked images, whose chunks
// are hashed on their own) do not pay a second pass over the bytes.
class ImageWriter
{
public:
	static constexpr std::size_t kSpliceMin = 64 * 1024;
	enum class Hashed {
		no,
		yes
	};
	explicit ImageWriter(std::string name, Hashed hashed = Hashed::no);
	~ImageWriter();
	ImageWriter(const ImageWriter &) = delete;
	ImageWriter &operator=(const ImageWriter &) = delete;
	int fd() const { return fd_.get(); }
	// buf may be reused once this returns (the pipe is drained first). Throws Error.
	void write(const void *buf, std::size_t len);
	// Writes len bytes at buf not counted in sum() (a trailer holding it). Throws Error.
	void append(const void *buf, std::size_t len);
	void commit();        // throws Error
	uint64_t sum() const; // XXH64 of all bytes written; throws Error unless made Hashed::yes
	uint64_t written() const { return written_; }
	uint64_t spliced() const { return spliced_; } // of written(), the bytes splice moved

private:
	std::string name_, tmp_;
	UniqueFd fd_;
	bool done_ = false;
	std::optional<SumStream> sum_;
	uint64_t written_ = 0, spliced_ = 0;
	bool splice_refused_ = false;
};

} // namespace gwcriu
