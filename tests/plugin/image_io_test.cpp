// restore/plugin/image_io.cpp: the image directory is attacker input (a checkpoint from
// elsewhere). Names the plugin reads never block on a FIFO or follow a symlink (issue 16,
// finding 2: a FIFO named gpuwatch-file-1.json hung root `criu restore` for ever).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <functional>
#include <set>
#include <vector>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

#include "chunks.hpp"
#include "image_dir_fixture.hpp"
#include "drm_ops.hpp"
#include "image_io.hpp"
#include "images.hpp"
#include "object_image.hpp"
#include <sys/mman.h>

int g_image_dir = -1;

// CRIU's criu_get_image_dir (weak in the plugin): here a scratch directory of the test's own
extern "C" int criu_get_image_dir(void)
{
	return g_image_dir;
}

TEST_F(ImageDir, ReadsARegularFile)
{
	std::ofstream(path("gpuwatch-file-1.json")) << "{}";
	EXPECT_EQ(gwcriu::read_image("gpuwatch-file-1.json", 16), "{}");
	EXPECT_EQ(error_reading("gpuwatch-file-1.json", 1),
		  "image gpuwatch-file-1.json is 2 bytes, more than the 1 allowed");
}

// At restore image_exists answers gpuwatch-* names from one listing: what was there when it
// was taken, whatever happens to the directory since; other names, and paths into parent/,
// are still looked up
TEST_F(ImageDir, ExistenceFromOneListing)
{
	std::ofstream(path("gpuwatch-object-1.bin")) << "x";
	std::ofstream(path("gpuwatch-object-1.xxh64")) << "x";
	ASSERT_EQ(::mkdir(path("parent").c_str(), 0700), 0);
	gwcriu::snapshot_image_names();
	ASSERT_EQ(::unlink(path("gpuwatch-object-1.xxh64").c_str()), 0);
	std::ofstream(path("gpuwatch-object-2.bin")) << "x";
	std::ofstream(path("parent/gpuwatch-pre-1-3-1.map")) << "x";
	EXPECT_TRUE(gwcriu::image_exists("gpuwatch-object-1.bin"));
	EXPECT_TRUE(gwcriu::image_exists("gpuwatch-object-1.xxh64")) << "not from the listing";
	EXPECT_FALSE(gwcriu::image_exists("gpuwatch-object-2.bin")) << "not from the listing";
	EXPECT_FALSE(gwcriu::image_exists("gpuwatch-object-3.bin"));
	EXPECT_TRUE(gwcriu::image_exists("parent"));
	EXPECT_TRUE(gwcriu::image_exists("parent/gpuwatch-pre-1-3-1.map"));
	gwcriu::forget_image_names();
	EXPECT_FALSE(gwcriu::image_exists("gpuwatch-object-1.xxh64"));
	EXPECT_TRUE(gwcriu::image_exists("gpuwatch-object-2.bin"));
}

TEST_F(ImageDir, RefusesAFifoAtOnce)
{
	ASSERT_EQ(::mkfifo(path("gpuwatch-file-1.json").c_str(), 0600), 0);
	// before the fix the open itself blocked (no writer ever comes): SIGALRM then ends the
	// test binary, a failure, rather than a hang
	::alarm(20);
	auto t0 = std::chrono::steady_clock::now();
	EXPECT_EQ(error_reading("gpuwatch-file-1.json"), "image gpuwatch-file-1.json is not a regular file");
	EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
	::alarm(0);
}

TEST_F(ImageDir, RefusesASymlink)
{
	std::ofstream(path("elsewhere")) << "{}";
	ASSERT_EQ(::symlink(path("elsewhere").c_str(), path("gpuwatch-file-1.json").c_str()), 0);
	EXPECT_EQ(error_reading("gpuwatch-file-1.json"),
		  "cannot open image gpuwatch-file-1.json: " + std::string(std::strerror(ELOOP)));
}

// --- chunked images (chunks.hpp): criu pre-dump rounds, then the final dump -----------------
namespace
{

// A buffer stand-in: a memfd of `size` bytes, each byte from its offset and a seed
class Buffer
{
public:
	explicit Buffer(std::size_t size) : size_(size), fd_(::memfd_create("gw-chunks-test", MFD_CLOEXEC))
	{
		EXPECT_EQ(::ftruncate(fd_, static_cast<off_t>(size)), 0);
		p_ = static_cast<char *>(::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0));
		for (std::size_t i = 0; i < size; ++i)
			p_[i] = static_cast<char>(i * 7 + i / 4096);
	}
	~Buffer()
	{
		::munmap(p_, size_);
		::close(fd_);
	}
	char *data() { return p_; }
	gwcriu::BufferMap map() const { return gwcriu::BufferMap::of_range(fd_, 0, size_); }
	gwcriu::BufferMap writable_map() const { return gwcriu::BufferMap::of_dmabuf(fd_, size_, true); }
	std::string bytes() const { return std::string(p_, size_); }

private:
	std::size_t size_;
	int fd_;
	char *p_;
};

class Chunks : public ImageDir
{
protected:
	// image directory `name` under the test's own, with a parent link to `parent` (CRIU's)
	void use(const std::string &name, const std::string &parent = "")
	{
		std::filesystem::create_directory(dir_ + "/" + name);
		if (!parent.empty())
			std::filesystem::create_directory_symlink("../" + parent, dir_ + "/" + name + "/parent");
		::close(g_image_dir);
		g_image_dir = ::open((dir_ + "/" + name).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		ASSERT_GE(g_image_dir, 0);
	}
	std::string read_back(const std::string &base)
	{
		std::optional<gwcriu::ChunkMap> m = gwcriu::read_chunk_map("", base);
		if (!m)
			return "no map";
		gwcriu::ChunkReader rd(base, *m);
		std::string out;
		for (uint64_t i = 0; i < rd.chunks(); ++i) {
			std::size_t len = 0;
			const char *bytes = rd.chunk(i, &len);
			out.append(bytes, len);
		}
		return out;
	}
	const gwcriu::ChunkKey key{100, 3, 7};
};

} // namespace

TEST_F(Chunks, FinalDumpStoresOnlyWhatChangedSinceThePreDump)
{
	constexpr std::size_t kSize = 3 * gwcriu::kChunk + gwcriu::kChunk / 2;
	Buffer b(kSize);
	use("pre");
	gwcriu::ChunkSave pre = gwcriu::save_chunked(gwcriu::pre_image_base(key), b.map(), key);
	EXPECT_EQ(pre.stored, kSize); // no parent: everything
	EXPECT_EQ(pre.reused, 0u);
	b.data()[gwcriu::kChunk + 5] ^= 1; // one byte of chunk 1, and the short last chunk
	b.data()[kSize - 1] ^= 1;
	use("final", "pre");
	gwcriu::ChunkSave fin = gwcriu::save_chunked("gpuwatch-object-1", b.map(), key);
	EXPECT_EQ(fin.stored, gwcriu::kChunk + gwcriu::kChunk / 2);
	EXPECT_EQ(fin.reused, 2 * gwcriu::kChunk);
	EXPECT_EQ(std::filesystem::file_size(dir_ + "/final/gpuwatch-object-1.bin"), fin.stored);
	EXPECT_TRUE(read_back("gpuwatch-object-1") == b.bytes());
}

TEST_F(Chunks, ARestoreFollowsSeveralPreDumps)
{
	constexpr std::size_t kSize = 4 * gwcriu::kChunk;
	Buffer b(kSize);
	use("pre1");
	gwcriu::save_chunked(gwcriu::pre_image_base(key), b.map(), key);
	b.data()[2 * gwcriu::kChunk] ^= 0x55; // chunk 2 changes in round 2
	use("pre2", "pre1");
	EXPECT_EQ(gwcriu::save_chunked(gwcriu::pre_image_base(key), b.map(), key).stored, gwcriu::kChunk);
	b.data()[0] ^= 0x55; // chunk 0 before the final dump
	use("final", "pre2");
	EXPECT_EQ(gwcriu::save_chunked("gpuwatch-object-1", b.map(), key).stored, gwcriu::kChunk);
	EXPECT_TRUE(read_back("gpuwatch-object-1") == b.bytes()); // chunks 1, 3 from pre1, 2 from pre2
}

// Chunks are mapped where their offset is page-aligned (what save_chunked writes) and read
// where it is not (a map made elsewhere): both give the chunk's bytes
TEST_F(Chunks, AChunkAtAnUnalignedOffsetIsRead)
{
	constexpr std::size_t kSize = gwcriu::kChunk + 8192;
	Buffer b(kSize);
	use("final");
	{
		std::ofstream bin(dir_ + "/final/gpuwatch-object-1.bin", std::ios::binary);
		bin.write(std::string(100, 'j').data(), 100);
		bin.write(b.data(), static_cast<std::streamsize>(kSize));
		char hash[2][17];
		snprintf(hash[0], sizeof hash[0], "%016llx",
			 static_cast<unsigned long long>(gwcriu::xxh64(b.data(), gwcriu::kChunk)));
		snprintf(hash[1], sizeof hash[1], "%016llx",
			 static_cast<unsigned long long>(gwcriu::xxh64(b.data() + gwcriu::kChunk, 8192)));
		std::ofstream map(dir_ + "/final/gpuwatch-object-1.map", std::ios::binary);
		map << "gpuwatch-chunks 1 " << kSize << " " << gwcriu::kChunk << " -\n"
		    << hash[0] << " 100\n"
		    << hash[1] << " " << 100 + gwcriu::kChunk << "\n";
	}
	EXPECT_TRUE(read_back("gpuwatch-object-1") == b.bytes());
}

TEST_F(Chunks, ABufferOfAnotherSizeIsStoredWhole)
{
	Buffer small(2 * gwcriu::kChunk), big(3 * gwcriu::kChunk);
	use("pre");
	gwcriu::save_chunked(gwcriu::pre_image_base(key), small.map(), key);
	use("final", "pre");
	gwcriu::ChunkSave fin = gwcriu::save_chunked("gpuwatch-object-1", big.map(), key);
	EXPECT_EQ(fin.stored, 3 * gwcriu::kChunk);
	EXPECT_FALSE(gwcriu::read_chunk_map("", "gpuwatch-object-1")->parent.has_value());
}

TEST_F(Chunks, RefusesMalformedMaps)
{
	auto error = [](const std::string &text, uint64_t bin) {
		try {
			gwcriu::parse_chunk_map(text, "m", bin);
		} catch (const gwcriu::ImageError &e) {
			return std::string(e.what());
		}
		return std::string("accepted");
	};
	const std::string h(16, 'a');
	std::string head = "gpuwatch-chunks 1 1048576 1048576 ";
	EXPECT_EQ(error(head + "-\n" + h + " 0\n", 1 << 20), "accepted");
	EXPECT_EQ(error(head + "-\n" + h + " 1\n", 1 << 20),
		  "m: chunk 0 at 1 is outside its 1048576-byte .bin (truncated or corrupt)");
	EXPECT_EQ(error(head + "-\n" + h + " parent\n", 0), "m: chunk 0 is its parent's, but the map names no parent");
	EXPECT_EQ(error(head + "1-2\n" + h + " parent\n", 0), "m: parent key 1-2 is not PID-FD-HANDLE");
	EXPECT_EQ(error(head + "1-2-3\n", 0), "m: has 0 chunk lines, expected 1 (truncated)");
	EXPECT_EQ(error(head + "1-2-3\n" + h + " parent\n" + h + " parent\n", 0),
		  "m: has more chunk lines than its size needs");
	EXPECT_EQ(error("gpuwatch-chunks 1 1048576 4096 -\n" + h + " 0\n", 1 << 20),
		  "m: size 1048576 or chunk size 4096 is not allowed");
}

TEST_F(Chunks, AMissingPreDumpImageIsOneLine)
{
	Buffer b(gwcriu::kChunk);
	use("pre");
	gwcriu::save_chunked(gwcriu::pre_image_base(key), b.map(), key);
	use("final", "pre");
	gwcriu::save_chunked("gpuwatch-object-1", b.map(), key);
	std::filesystem::remove(dir_ + "/pre/" + gwcriu::pre_image_base(key) + ".map");
	try {
		read_back("gpuwatch-object-1");
		ADD_FAILURE() << "read without its pre-dump image";
	} catch (const gwcriu::Error &e) {
		EXPECT_NE(std::string(e.what()).find("parent/gpuwatch-pre-100-3-7.map is missing"), std::string::npos)
			<< e.what();
	}
}

TEST_F(Chunks, APreDumpImageChangedSinceFailsItsChunk)
{
	Buffer b(2 * gwcriu::kChunk);
	use("pre");
	gwcriu::save_chunked(gwcriu::pre_image_base(key), b.map(), key);
	b.data()[gwcriu::kChunk] ^= 1; // chunk 1 changes: stored by the final dump; chunk 0 is the pre-dump's
	use("final", "pre");
	gwcriu::save_chunked("gpuwatch-object-1", b.map(), key);
	{
		std::fstream f(dir_ + "/pre/" + gwcriu::pre_image_base(key) + ".bin",
			       std::ios::in | std::ios::out | std::ios::binary);
		f.seekp(10);
		f.put('!');
	}
	try {
		read_back("gpuwatch-object-1");
		ADD_FAILURE() << "read a changed pre-dump image";
	} catch (const gwcriu::Error &e) {
		EXPECT_EQ(std::string(e.what()),
			  "gpuwatch-object-1: chunk 0 (from parent/gpuwatch-pre-100-3-7.bin) does not "
			  "match its checksum (corrupt, or a pre-dump's image changed)");
	}
}

// save_buffer streams through one bounce buffer, which splice_into lends to a pipe: the image
// holds the buffer exactly only when each piece reached the file before the next overwrote it
TEST_F(ImageDir, ABufferIsSplicedIntoItsImage)
{
	constexpr std::size_t kSize = 3 * gwcriu::kIoBuffer + 5 * 4096;
	Buffer b(kSize);
	{
		gwcriu::ImageWriter w("gpuwatch-object-1", gwcriu::ImageWriter::Hashed::yes);
		gwcriu::save_buffer(b.map(), w);
		EXPECT_EQ(w.written(), kSize);
		// the last 20 KiB, under kSpliceMin, are written
		EXPECT_EQ(w.spliced(), 3 * gwcriu::kIoBuffer) << "splice did not run on " << dir_;
		EXPECT_EQ(w.sum(), gwcriu::xxh64(b.data(), kSize));
		w.commit();
	}
	std::ifstream in(path("gpuwatch-object-1"), std::ios::binary);
	std::string img((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
	EXPECT_EQ(img.size(), kSize);
	EXPECT_TRUE(img == b.bytes()) << "the image differs from the buffer";
}

// Every writer splices through one pipe of the process, made once and kept among the
// plugin's own fds: not a pipe made, grown and closed per buffer image
TEST_F(ImageDir, WritersShareOnePipe)
{
	auto pipes = [] {
		std::set<std::string> out;
		for (const auto &e : std::filesystem::directory_iterator("/proc/self/fd")) {
			std::error_code ec;
			std::string target = std::filesystem::read_symlink(e.path(), ec).string();
			if (!ec && target.rfind("pipe:", 0) == 0 &&
			    std::stoi(e.path().filename().string()) >= gwcriu::kHighFd)
				out.insert(e.path().filename().string() + " " + target);
		}
		return out;
	};
	Buffer b(gwcriu::ImageWriter::kSpliceMin);
	std::set<std::string> first;
	for (const char *name : {"gpuwatch-object-7.bin", "gpuwatch-object-8.bin", "gpuwatch-object-9.bin"}) {
		gwcriu::ImageWriter w(name);
		w.write(b.data(), gwcriu::ImageWriter::kSpliceMin);
		EXPECT_EQ(w.spliced(), gwcriu::ImageWriter::kSpliceMin) << name;
		w.commit();
		if (first.empty())
			first = pipes();
		EXPECT_EQ(pipes(), first) << name;
	}
	EXPECT_EQ(first.size(), 2u) << "the pipe's two ends";
	// a pipe of one I/O buffer: one vmsplice and one splice per MiB
	gwcriu::SplicePipe p;
	int fd = ::open(path("spliced").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(gwcriu::splice_into(fd, b.data(), gwcriu::ImageWriter::kSpliceMin, p),
		  gwcriu::ImageWriter::kSpliceMin);
	::close(fd);
	EXPECT_EQ(p.cap, gwcriu::kIoBuffer);
	EXPECT_GE(p.r.get(), gwcriu::kHighFd);
	EXPECT_GE(p.w.get(), gwcriu::kHighFd);
}

// A writer made without Hashed::yes keeps no checksum (no second pass over the bytes of a
// chunked image or a JSON one), and says so rather than return one
TEST_F(ImageDir, AnUnhashedWriterHasNoSum)
{
	gwcriu::ImageWriter w("gpuwatch-object-2.map");
	w.write("abc", 3);
	EXPECT_THROW((void)w.sum(), gw::Error);
	w.commit();
	EXPECT_EQ(w.written(), 3u);
}

// splice refuses a file opened O_APPEND: nothing is moved, and the writer falls back for good
TEST_F(ImageDir, AFileThatRefusesSpliceIsLeftToWrite)
{
	int fd = ::open(path("appended").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	ASSERT_GE(fd, 0);
	std::string data(256 << 10, 'a');
	gwcriu::SplicePipe p;
	EXPECT_EQ(gwcriu::splice_into(fd, data.data(), data.size(), p), 0u);
	EXPECT_TRUE(p.failed);
	EXPECT_FALSE(p.r) << "the pipe, and what it held, are kept";
	EXPECT_EQ(gwcriu::splice_into(fd, data.data(), data.size(), p), 0u);
	struct stat st;
	ASSERT_EQ(::fstat(fd, &st), 0);
	EXPECT_EQ(st.st_size, 0);
	::close(fd);
}

// load_buffer maps the image in 16 MiB windows where the position is page-aligned, reads it
// otherwise; both give the bytes from the position on, their checksum, and leave the position
// after them. A short image is one line.
TEST_F(ImageDir, AnImageIsLoadedFromItsPosition)
{
	constexpr std::size_t kSize = (17 << 20) + 3 * 4096;
	Buffer src(kSize + 8192);
	{
		std::ofstream out(path("gpuwatch-object-2"), std::ios::binary);
		out.write(src.data(), static_cast<std::streamsize>(kSize + 8192));
	}
	for (uint64_t skip : {uint64_t(0), uint64_t(4096), uint64_t(100)}) {
		Buffer dst(kSize);
		std::memset(dst.data(), 0, kSize);
		uint64_t size = 0;
		gwcriu::UniqueFd in = gwcriu::open_image("gpuwatch-object-2", &size);
		ASSERT_EQ(::lseek(in.get(), static_cast<off_t>(skip), SEEK_SET), static_cast<off_t>(skip));
		{
			gwcriu::BufferMap m = dst.writable_map();
			EXPECT_EQ(gwcriu::load_buffer(in.get(), "gpuwatch-object-2", m, gwcriu::SumKind::xxh64),
				  gwcriu::xxh64(src.data() + skip, kSize))
				<< "at " << skip;
		}
		EXPECT_EQ(std::memcmp(dst.data(), src.data() + skip, kSize), 0) << "at " << skip;
		EXPECT_EQ(::lseek(in.get(), 0, SEEK_CUR), static_cast<off_t>(skip + kSize)) << "at " << skip;
	}
	Buffer big(kSize + 3 * 4096);
	uint64_t size = 0;
	gwcriu::UniqueFd in = gwcriu::open_image("gpuwatch-object-2", &size);
	gwcriu::BufferMap m = big.writable_map();
	try {
		gwcriu::load_buffer(in.get(), "gpuwatch-object-2", m, gwcriu::SumKind::xxh64);
		ADD_FAILURE() << "loaded more bytes than the image holds";
	} catch (const gwcriu::Error &e) {
		// the 1 MiB piece the image ends in
		EXPECT_EQ(std::string(e.what()),
			  "cannot read gpuwatch-object-2 at byte " + std::to_string(17 << 20) + ": truncated");
	}
}

// copy_bytes (AVX2 here, or SSE2) and its SSE2 loop: every byte lands where memcpy would put it, at any alignment of either side and
// any length (the head before the destination's 16-byte boundary, the 64-byte blocks, the tail),
// and nothing outside [dst, dst + n) is written.
TEST(CopyBytes, EveryByteAtAnyAlignmentAndLength)
{
	std::vector<char> src(300 << 10);
	for (std::size_t i = 0; i < src.size(); ++i)
		src[i] = static_cast<char>(i * 131 + (i >> 9));
	std::vector<char> dst(src.size() + 64);
	for (auto copy : {gwcriu::copy_bytes, gwcriu::copy_bytes_sse2})
		for (gwcriu::Into into : {gwcriu::Into::device, gwcriu::Into::cache})
			for (std::size_t soff : {0, 1, 7, 16, 33})
				for (std::size_t doff : {0, 3, 15, 16, 48})
					for (std::size_t n :
					     {std::size_t{0}, std::size_t{1}, std::size_t{15}, std::size_t{63},
					      std::size_t{64}, std::size_t{65}, std::size_t{4095},
					      std::size_t{256 << 10}, src.size() - 40}) {
						std::fill(dst.begin(), dst.end(), '\x5a');
						copy(dst.data() + doff, src.data() + soff, n, into);
						ASSERT_EQ(std::memcmp(dst.data() + doff, src.data() + soff, n), 0)
							<< "n " << n << " soff " << soff << " doff " << doff;
						for (std::size_t i = 0; i < doff; ++i)
							ASSERT_EQ(dst[i], '\x5a') << "byte " << i << " before the copy";
						for (std::size_t i = doff + n; i < dst.size(); ++i)
							ASSERT_EQ(dst[i], '\x5a')
								<< "byte " << i << " after the copy, n " << n;
					}
}

TEST(ContentSum, Xxh64StreamIsTheOneShotHash)
{
	std::string data(3 << 20, 'x');
	for (std::size_t i = 0; i < data.size(); ++i)
		data[i] = static_cast<char>(i * 31 + (i >> 12));
	gwcriu::SumStream s;
	s.update(data.data(), 1000);
	s.update(data.data() + 1000, data.size() - 1000);
	EXPECT_EQ(s.value(), gwcriu::xxh64(data.data(), data.size()));
	EXPECT_EQ(gwcriu::xxh64("", 0), 0xef46db3751d8e999ull); // XXH64 of nothing, seed 0 (xxHash's test vector)
	gwcriu::SumStream crc(gwcriu::SumKind::crc32);
	crc.update("123456789", 9);
	EXPECT_EQ(crc.value(), 0xcbf43926u); // the CRC-32 check value
}

// --- whole buffers' images (object_image.hpp): the contents, then their trailer -------------
namespace
{
std::string error_of(const std::function<void()> &f)
{
	try {
		f();
	} catch (const gwcriu::Error &e) {
		return e.what();
	}
	return "";
}
void patch(const std::string &path, off_t at, int x)
{
	int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
	ASSERT_GE(fd, 0);
	unsigned char c = 0;
	ASSERT_EQ(::pread(fd, &c, 1, at), 1);
	c = static_cast<unsigned char>(c ^ x);
	ASSERT_EQ(::pwrite(fd, &c, 1, at), 1);
	::close(fd);
}
} // namespace

TEST_F(ImageDir, ABufferImageIsItsContentsAndTheirTrailer)
{
	constexpr std::size_t kSize = gwcriu::kIoBuffer + 3 * 4096;
	Buffer b(kSize);
	gwcriu::save_object_image("gpuwatch-object-3.bin", b.map());
	ASSERT_EQ(gwcriu::image_size("gpuwatch-object-3.bin"), kSize + gwcriu::kObjectTrailer);
	EXPECT_FALSE(std::filesystem::exists(path("gpuwatch-object-3.bin.tmp")));
	{
		uint64_t size = 0;
		gwcriu::UniqueFd in = gwcriu::open_image("gpuwatch-object-3.bin", &size);
		EXPECT_EQ(gwcriu::image_sum(in.get(), "gpuwatch-object-3.bin", gwcriu::SumKind::xxh64, kSize),
			  gwcriu::xxh64(b.data(), kSize));
		EXPECT_EQ(::lseek(in.get(), 0, SEEK_CUR), 0) << "the position is left as it was";
		EXPECT_THROW(gwcriu::image_sum(in.get(), "gpuwatch-object-3.bin", gwcriu::SumKind::xxh64, size + 1),
			     gwcriu::Error);
	}
	std::ifstream in(path("gpuwatch-object-3.bin"), std::ios::binary);
	std::string img((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
	EXPECT_EQ(img.substr(kSize), gwcriu::object_trailer(kSize, gwcriu::xxh64(b.data(), kSize)));
	EXPECT_EQ(img.substr(kSize, 8), std::string("GWOBJ\0\0\1", 8));
	EXPECT_EQ(img.substr(kSize + 8, 8), std::string("\x00\x30\x10\x00\x00\x00\x00\x00", 8))
		<< "the size, little-endian";

	// whole, and a window of it (a mapping of part of the buffer), checked against the trailer
	// (skip, length): whole; a window inside; a window from the start, hashed whole first
	for (auto [skip, len] : {std::pair<uint64_t, std::size_t>{0, kSize}, {4096, kSize - 8192}, {0, kSize - 4096}}) {
		Buffer dst(len);
		std::memset(dst.data(), 0, len);
		gwcriu::BufferMap m = dst.writable_map();
		gwcriu::load_object_image("gpuwatch-object-3.bin", gwcriu::ObjectSum{}, skip, m);
		EXPECT_EQ(std::memcmp(dst.data(), b.data() + skip, len), 0) << "at " << skip;
	}
}

TEST_F(ImageDir, ADamagedBufferImageIsRefused)
{
	constexpr std::size_t kSize = 5 * 4096;
	Buffer b(kSize);
	const std::string img = path("gpuwatch-object-4.bin");
	auto load = [&](uint64_t skip, std::size_t len) {
		return error_of([&] {
			Buffer dst(len);
			gwcriu::BufferMap m = dst.writable_map();
			gwcriu::load_object_image("gpuwatch-object-4.bin", gwcriu::ObjectSum{}, skip, m);
		});
	};
	gwcriu::save_object_image("gpuwatch-object-4.bin", b.map());
	EXPECT_EQ(load(0, kSize), "");
	EXPECT_EQ(load(0, kSize + 4096),
		  "gpuwatch-object-4.bin holds 20480 bytes: too few for 24576 bytes at 0 (truncated)")
		<< "the trailer is not contents";
	patch(img, 100, 0xff);
	EXPECT_EQ(load(0, kSize), "gpuwatch-object-4.bin: contents do not match their checksum (corrupt)");
	EXPECT_EQ(load(4096, 4096), "gpuwatch-object-4.bin: contents do not match their checksum (corrupt)")
		<< "a window is checked against the whole contents";
	patch(img, 100, 0xff);
	patch(img, kSize + 2, 0x01);
	EXPECT_EQ(load(0, kSize),
		  "gpuwatch-object-4.bin: its last 24 bytes are not a gpuwatch buffer trailer (truncated or corrupt)");
	patch(img, kSize + 2, 0x01);
	patch(img, kSize + 8, 0x01);
	EXPECT_EQ(load(0, kSize), "gpuwatch-object-4.bin: its trailer gives 20481 bytes of contents, the file holds "
				  "20480 (truncated or corrupt)");
	patch(img, kSize + 8, 0x01);
	ASSERT_EQ(::truncate(img.c_str(), kSize + 10), 0);
	EXPECT_EQ(load(0, kSize),
		  "gpuwatch-object-4.bin: its last 24 bytes are not a gpuwatch buffer trailer (truncated or corrupt)");
	ASSERT_EQ(::truncate(img.c_str(), 10), 0);
	EXPECT_EQ(load(0, kSize), "gpuwatch-object-4.bin is 10 bytes, too short for its trailer (truncated)");
}

// An earlier version's image: the raw contents, checked against the checksum beside them
TEST_F(ImageDir, AnEarlierVersionsBufferImageIsRead)
{
	constexpr std::size_t kSize = 3 * 4096;
	Buffer b(kSize);
	{
		gwcriu::ImageWriter w("gpuwatch-object-5.bin");
		gwcriu::save_buffer(b.map(), w);
		w.commit();
	}
	gwcriu::ObjectSum sum{false, gwcriu::ContentSum{gwcriu::SumKind::xxh64, gwcriu::xxh64(b.data(), kSize)}};
	Buffer dst(kSize);
	{
		gwcriu::BufferMap m = dst.writable_map();
		gwcriu::load_object_image("gpuwatch-object-5.bin", sum, 0, m);
	}
	EXPECT_EQ(std::memcmp(dst.data(), b.data(), kSize), 0);
	sum.beside->value ^= 1;
	EXPECT_EQ(error_of([&] {
			  gwcriu::BufferMap m = dst.writable_map();
			  gwcriu::load_object_image("gpuwatch-object-5.bin", sum, 0, m);
		  }),
		  "gpuwatch-object-5.bin: contents do not match their checksum (corrupt)");
}
