#include "image_io.hpp"

#include <optional>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>
#include <zlib.h>

#define XXH_INLINE_ALL // header-only: the plugin loads in any CRIU root, libxxhash0 or not
#include <xxhash.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

// Exported by the criu binary (criu-plugin.h); weak so that unit tests link without it.
extern "C" int criu_get_image_dir(void) __attribute__((weak));

namespace gwcriu
{

int pidfd_getfd_of(int pid, int fd)
{
	int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
	if (pidfd < 0)
		return -1;
	int got = static_cast<int>(syscall(SYS_pidfd_getfd, pidfd, fd, 0));
	close(pidfd);
	return got;
}

UniqueFd dup_high(int fd)
{
	int n = fcntl(fd, F_DUPFD_CLOEXEC, kHighFd);
	if (n < 0)
		throw Error("cannot duplicate fd " + std::to_string(fd) + ": " + gw::errno_text(errno));
	return UniqueFd(n);
}

bool same_file(int pid1, int fd1, int pid2, int fd2)
{
	return syscall(SYS_kcmp, pid1, pid2, KCMP_FILE, fd1, fd2) == 0;
}

std::size_t page_size()
{
	static const std::size_t ps = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
	return ps;
}

std::string env_or(const char *name, const std::string &fallback)
{
	const char *v = getenv(name);
	return v && *v ? std::string(v) : fallback;
}

uint64_t env_u64(const char *name, uint64_t fallback)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return fallback;
	char *end = nullptr;
	errno = 0;
	unsigned long long n = strtoull(v, &end, 0);
	return errno || *end ? fallback : n;
}

std::optional<std::string> read_link(const std::string &path)
{
	char buf[4096];
	ssize_t n = readlink(path.c_str(), buf, sizeof buf - 1);
	if (n < 0)
		return std::nullopt;
	return std::string(buf, static_cast<std::size_t>(n));
}

std::string fdinfo_field(int fd, const char *key)
{
	auto text = read_text("/proc/self/fdinfo/" + std::to_string(fd), 1 << 16);
	if (!text)
		return {};
	std::string k = std::string(key) + ":";
	for (std::size_t at = 0; at < text->size();) {
		std::size_t end = text->find('\n', at);
		if (end == std::string::npos)
			end = text->size();
		if (text->compare(at, k.size(), k) == 0) {
			std::size_t v = text->find_first_not_of(" \t", at + k.size());
			return v == std::string::npos || v >= end ? std::string() : text->substr(v, end - v);
		}
		at = end + 1;
	}
	return {};
}

bool read_full(int fd, void *buf, std::size_t len)
{
	auto *p = static_cast<char *>(buf);
	while (len) {
		ssize_t n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = ENODATA;
			return false;
		}
		p += n;
		len -= static_cast<std::size_t>(n);
	}
	return true;
}

bool write_full(int fd, const void *buf, std::size_t len)
{
	auto *p = static_cast<const char *>(buf);
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			return false;
		}
		p += n;
		len -= static_cast<std::size_t>(n);
	}
	return true;
}

// --- image directory ------------------------------------------------------------------------
int image_dir()
{
	int fd = criu_get_image_dir ? criu_get_image_dir() : -1;
	if (fd < 0)
		throw Error("no CRIU image directory (criu_get_image_dir failed)");
	return fd;
}

namespace
{
std::optional<std::unordered_set<std::string>> g_image_names; // snapshot_image_names()
constexpr std::string_view kOwnPrefix = "gpuwatch-";
} // namespace

void snapshot_image_names()
{
	std::vector<std::string> names =
		gw::names_in_dir(image_dir(), std::string(kOwnPrefix), "", "the image directory");
	g_image_names.emplace(names.begin(), names.end());
}

void forget_image_names()
{
	g_image_names.reset();
}

bool image_exists(const std::string &name)
{
	if (g_image_names && name.find('/') == std::string::npos && name.rfind(kOwnPrefix, 0) == 0)
		return g_image_names->count(name) != 0;
	struct stat st;
	return fstatat(image_dir(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
}

std::vector<std::string> list_images(const std::string &prefix, const std::string &suffix)
{
	return gw::names_in_dir(image_dir(), prefix, suffix, "the image directory");
}

void write_image(const std::string &name, const std::string &content)
{
	ImageWriter w(name);
	w.write(content.data(), content.size());
	w.commit();
}

UniqueFd open_image(const std::string &name, uint64_t *size)
{
	// not through a symlink, and never blocking on a FIFO named like an image
	UniqueFd fd(openat(image_dir(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
	if (!fd)
		throw Error("cannot open image " + name + ": " + gw::errno_text(errno));
	struct stat st;
	if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
		throw Error("image " + name + " is not a regular file");
	*size = static_cast<uint64_t>(st.st_size);
	return fd;
}

uint64_t image_size(const std::string &name)
{
	struct stat st;
	if (fstatat(image_dir(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
		throw Error("cannot stat image " + name + ": " + gw::errno_text(errno));
	if (!S_ISREG(st.st_mode))
		throw Error("image " + name + " is not a regular file");
	return static_cast<uint64_t>(st.st_size);
}

std::string read_image(const std::string &name, std::size_t max)
{
	uint64_t size = 0;
	UniqueFd fd = open_image(name, &size);
	if (size > max)
		throw Error("image " + name + " is " + std::to_string(size) + " bytes, more than the " +
			    std::to_string(max) + " allowed");
	std::string text(static_cast<std::size_t>(size), '\0');
	if (size && !read_full(fd.get(), text.data(), text.size()))
		throw Error("cannot read image " + name + ": " + gw::errno_text(errno));
	return text;
}

ImageWriter::ImageWriter(std::string name, Hashed hashed) : name_(std::move(name)), tmp_(name_ + ".tmp")
{
	if (hashed == Hashed::yes)
		sum_.emplace(SumKind::xxh64);
	fd_ = UniqueFd(openat(image_dir(), tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
	if (!fd_)
		throw Error("cannot create image " + tmp_ + ": " + gw::errno_text(errno));
}

ImageWriter::~ImageWriter()
{
	if (!done_) {
		fd_ = UniqueFd();
		unlinkat(image_dir(), tmp_.c_str(), 0);
	}
}

ImageWindow ImageWindow::map(int fd, uint64_t offset, std::size_t len)
{
	ImageWindow w;
	if (offset % page_size() || !len)
		return w;
	void *p = mmap(nullptr, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, static_cast<off_t>(offset));
	if (p != MAP_FAILED) {
		w.addr_ = p;
		w.len_ = len;
	}
	return w;
}

ImageWindow::ImageWindow(ImageWindow &&o) noexcept
    : addr_(std::exchange(o.addr_, nullptr)), len_(std::exchange(o.len_, 0))
{
}

ImageWindow &ImageWindow::operator=(ImageWindow &&o) noexcept
{
	if (this != &o) {
		if (addr_)
			munmap(addr_, len_);
		addr_ = std::exchange(o.addr_, nullptr);
		len_ = std::exchange(o.len_, 0);
	}
	return *this;
}

ImageWindow::~ImageWindow()
{
	if (addr_)
		munmap(addr_, len_);
}

std::size_t splice_into(int fd, const char *buf, std::size_t len, SplicePipe &p)
{
	if (p.failed)
		return 0;
	if (!p.r) {
		int fds[2];
		if (pipe2(fds, O_CLOEXEC) != 0) {
			p.failed = true;
			return 0;
		}
		p.r = UniqueFd(fds[0]);
		p.w = UniqueFd(fds[1]);
		// it outlives the hook (ImageWriter's process pipe): among the plugin's own fds
		for (UniqueFd *end : {&p.r, &p.w})
			if (int high = fcntl(end->get(), F_DUPFD_CLOEXEC, kHighFd); high >= 0)
				*end = UniqueFd(high);
		int cap = fcntl(p.w.get(), F_SETPIPE_SZ, static_cast<int>(kIoBuffer));
		p.cap = cap > 0 ? static_cast<std::size_t>(cap) : 65536;
	}
	std::size_t done = 0;
	while (done < len) {
		iovec iov{const_cast<char *>(buf + done), std::min(len - done, p.cap)};
		ssize_t in = vmsplice(p.w.get(), &iov, 1, 0);
		if (in < 0 && errno == EINTR)
			continue;
		if (in <= 0)
			break;
		// drained before the next vmsplice and before returning: the pipe refers to the
		// caller's pages, which the caller may overwrite once this returns
		for (ssize_t left = in; left > 0;) {
			ssize_t out =
				splice(p.r.get(), nullptr, fd, nullptr, static_cast<std::size_t>(left), SPLICE_F_MOVE);
			if (out < 0 && errno == EINTR)
				continue;
			if (out <= 0) { // what is still in the pipe is the caller's to write: drop it
				p.r = UniqueFd();
				p.w = UniqueFd();
				p.failed = true;
				return done;
			}
			left -= out;
			done += static_cast<std::size_t>(out);
		}
	}
	if (done < len)
		p.failed = true; // vmsplice refused
	return done;
}

void ImageWriter::write(const void *buf, std::size_t len)
{
	if (sum_)
		sum_->update(buf, len);
	append(buf, len);
}

void ImageWriter::append(const void *buf, std::size_t len)
{
	auto *p = static_cast<const char *>(buf);
	std::size_t moved = 0;
	if (len >= kSpliceMin && !splice_refused_) {
		// one pipe for every writer of the process: a pipe made and grown to 1 MiB per image
		// was a pipe2, an F_SETPIPE_SZ and two closes per buffer
		static SplicePipe pipe;
		moved = splice_into(fd_.get(), p, len, pipe);
		if (pipe.failed) { // this file refuses: it is written; the next writer makes a new pipe
			splice_refused_ = true;
			pipe = SplicePipe();
		}
	}
	spliced_ += moved;
	if (!write_full(fd_.get(), p + moved, len - moved))
		throw Error("cannot write image " + tmp_ + ": " + gw::errno_text(errno));
	written_ += len;
}

uint64_t ImageWriter::sum() const
{
	if (!sum_)
		throw Error("image " + name_ + ": no checksum was kept while writing it");
	return sum_->value();
}

char *io_buffer()
{
	static char *buf = new char[kIoBuffer];
	return buf;
}

namespace
{
#if defined(__x86_64__)
// One copy loop for a vector width: V the register type, W its bytes; L, S, T its unaligned
// load, aligned store and streaming store. Copies up to the destination's first W-byte boundary
// (the stores need it), then blocks of four registers, then the rest with memcpy (fewer than
// 4 W bytes: no string instruction).
#define GW_COPY_LOOP(V, W, L, S, T)                                                                                    \
	std::size_t head = std::min(n, (W - (reinterpret_cast<uintptr_t>(d) & (W - 1))) & (W - 1));                    \
	std::memcpy(d, s, head);                                                                                       \
	std::size_t i = head;                                                                                          \
	for (; i + 4 * W <= n; i += 4 * W) {                                                                           \
		V a = L(reinterpret_cast<const V *>(s + i)), b = L(reinterpret_cast<const V *>(s + i + W));            \
		V c = L(reinterpret_cast<const V *>(s + i + 2 * W)),                                                   \
		  e = L(reinterpret_cast<const V *>(s + i + 3 * W));                                                   \
		V *o = reinterpret_cast<V *>(d + i);                                                                   \
		if (into == Into::device) {                                                                            \
			T(o, a), T(o + 1, b), T(o + 2, c), T(o + 3, e);                                                \
		} else {                                                                                               \
			S(o, a), S(o + 1, b), S(o + 2, c), S(o + 3, e);                                                \
		}                                                                                                      \
	}                                                                                                              \
	if (into == Into::device)                                                                                      \
		_mm_sfence(); /* the streamed bytes are globally visible before anything after */                      \
	std::memcpy(d + i, s + i, n - i);

void copy_sse2(char *d, const char *s, std::size_t n, Into into)
{
	GW_COPY_LOOP(__m128i, 16, _mm_loadu_si128, _mm_store_si128, _mm_stream_si128)
}

__attribute__((target("avx2"))) void copy_avx2(char *d, const char *s, std::size_t n, Into into)
{
	GW_COPY_LOOP(__m256i, 32, _mm256_loadu_si256, _mm256_store_si256, _mm256_stream_si256)
}

#undef GW_COPY_LOOP

bool have_avx2()
{
	static const bool yes = [] {
		__builtin_cpu_init();
		return __builtin_cpu_supports("avx2") != 0;
	}();
	return yes;
}
#endif
} // namespace

void copy_bytes_sse2(void *dst, const void *src, std::size_t n, Into into)
{
#if defined(__x86_64__)
	copy_sse2(static_cast<char *>(dst), static_cast<const char *>(src), n, into);
#else
	(void)into;
	std::memcpy(dst, src, n);
#endif
}

void copy_bytes(void *dst, const void *src, std::size_t n, Into into)
{
#if defined(__x86_64__)
	// under TCG the 32-byte loop copies 1 MiB pieces as fast as memcpy, the 16-byte one at
	// two thirds of its speed (docs/benchmarks.md)
	if (have_avx2()) {
		copy_avx2(static_cast<char *>(dst), static_cast<const char *>(src), n, into);
		return;
	}
#endif
	copy_bytes_sse2(dst, src, n, into);
}

static_assert(sizeof(XXH64_state_t) <= 96 && alignof(XXH64_state_t) <= 8);

SumStream::SumStream(SumKind kind) : kind_(kind)
{
	if (kind_ == SumKind::xxh64)
		XXH64_reset(reinterpret_cast<XXH64_state_t *>(xxh_), 0);
	else
		crc_ = ::crc32_z(0, Z_NULL, 0);
}

void SumStream::update(const void *buf, std::size_t len)
{
	if (kind_ == SumKind::xxh64)
		XXH64_update(reinterpret_cast<XXH64_state_t *>(xxh_), buf, len);
	else
		crc_ = ::crc32_z(static_cast<uLong>(crc_), static_cast<const Bytef *>(buf), len);
}

uint64_t SumStream::value() const
{
	return kind_ == SumKind::xxh64 ? XXH64_digest(reinterpret_cast<const XXH64_state_t *>(xxh_)) : crc_;
}

uint64_t xxh64(const void *buf, std::size_t len)
{
	return XXH64(buf, len, 0);
}

uint64_t image_sum(int fd, const std::string &name, SumKind kind, uint64_t len)
{
	char *buf = io_buffer();
	SumStream sum(kind);
	for (uint64_t done = 0; done < len;) {
		std::size_t n = static_cast<std::size_t>(std::min<uint64_t>(kIoBuffer, len - done));
		ssize_t got = pread(fd, buf, n, static_cast<off_t>(done));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			throw Error("cannot read image " + name + ": " +
				    (got == 0 ? std::string("truncated") : gw::errno_text(errno)));
		sum.update(buf, static_cast<std::size_t>(got));
		done += static_cast<uint64_t>(got);
	}
	return sum.value();
}

void ImageWriter::commit()
{
	// No fsync: CRIU does not sync its own images either; rename gives atomicity.
	fd_ = UniqueFd();
	if (renameat(image_dir(), tmp_.c_str(), image_dir(), name_.c_str()) != 0)
		throw Error("cannot rename image " + tmp_ + " to " + name_ + ": " + gw::errno_text(errno));
	done_ = true;
}

} // namespace gwcriu
