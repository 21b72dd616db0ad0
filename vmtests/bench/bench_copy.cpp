// bench_copy: what copying a buffer's bytes costs, in the pieces the CRIU plugin copies them in,
// with glibc's memcpy against the plugin's own copy_bytes (restore/plugin/image_io.cpp). Under
// QEMU's TCG glibc's `rep movsb` range (a few KiB to about 1 MiB) is emulated about a byte at a
// time, which is why the plugin does not use memcpy (docs/benchmarks.md). A diagnostic, not a
// section of the VM bench: run it in the VM by hand,
//   vng --run /boot/vmlinuz-<6.1>-amd64 --disable-kvm --cpus 2 --memory 2G
//       --append no_timer_check --exec "build/vmtests/bench_copy 256"     (one line)
// and on the host as is. Prints one line per piece size: ms to copy MIB MiB (default 256)
// between two populated anonymous mappings, the median of 3 rounds, for memcpy and for
// copy_bytes into a device mapping (streaming stores) and into the I/O buffer (ordinary stores).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include <vector>

#include "image_io.hpp"

namespace
{

template <typename F> double median_ms(F copy)
{
	std::vector<double> ms;
	for (int r = 0; r < 3; ++r) {
		auto t = std::chrono::steady_clock::now();
		copy();
		ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count());
	}
	std::sort(ms.begin(), ms.end());
	return ms[1];
}

} // namespace

int main(int argc, char **argv)
{
	std::size_t mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 256;
	if (mib == 0 || mib > 4096) {
		std::fprintf(stderr, "usage: bench_copy [MIB (1-4096, default 256)]\n");
		return 2;
	}
	std::size_t total = mib << 20;
	auto map = [&] {
		void *p =
			mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (p == MAP_FAILED) {
			std::perror("bench_copy: mmap");
			std::exit(1);
		}
		return static_cast<char *>(p);
	};
	char *src = map(), *dst = map();
	for (std::size_t i = 0; i < total; i += 4096)
		src[i] = static_cast<char>(i >> 12), dst[i] = 1;
	std::printf("MiB %zu: ms to copy, median of 3 rounds\n%10s %10s %18s %18s\n", mib, "piece", "memcpy",
		    "copy_bytes device", "copy_bytes cache");
	for (std::size_t piece : {std::size_t{4} << 10, std::size_t{64} << 10, std::size_t{256} << 10,
				  std::size_t{1} << 20, std::size_t{4} << 20}) {
		auto each = [&](auto copy) {
			return median_ms([&] {
				for (std::size_t at = 0; at + piece <= total; at += piece)
					copy(dst + at, src + at, piece);
			});
		};
		double m = each([](char *d, const char *s, std::size_t n) { std::memcpy(d, s, n); });
		double dev = each([](char *d, const char *s, std::size_t n) {
			gwcriu::copy_bytes(d, s, n, gwcriu::Into::device);
		});
		double cache = each([](char *d, const char *s, std::size_t n) {
			gwcriu::copy_bytes(d, s, n, gwcriu::Into::cache);
		});
		if (std::memcmp(dst, src, total) != 0) {
			std::fprintf(stderr, "bench_copy: the copy differs from its source\n");
			return 1;
		}
		std::printf("%10zu %10.1f %18.1f %18.1f\n", piece, m, dev, cache);
	}
	return 0;
}
