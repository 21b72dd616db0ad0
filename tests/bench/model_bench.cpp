// gw_bench_model: what the daemon's userspace half costs, without root or a device.
//
// Generates record streams as the tracer writes them (tests/common/record_builders.hpp) and
// applies them through gw::Model::apply on the raw record bytes, the path the daemon's ring
// buffer callback takes (decoder and model). Prints a table and, with --json FILE, writes the
// figures as JSON. It measures:
//   - replay throughput (events/s) of a stream that builds a handle table (fork, open, then per
//     buffer: create, offset grant, mmap), and of a steady churn (create, grant, mmap, munmap,
//     close) at 10^3, 10^4, 10^5 and 3*10^5 live handles, 1000 per process, with the heap the
//     built model holds beside it (where it outgrows the last-level cache, the churn slows);
//     and of munmaps of 10^4 mappings whose DRM fds were closed (the mappings alone hold the
//     files); each stream is replayed REPS times, the streams interleaved, median and spread
//     reported;
//   - heap bytes per handle, per offset grant and per mapping at 10^3, 10^5 and 10^6 handles
//     (malloc's in-use bytes, mallinfo2, of a model with N of them minus the same model before;
//     RSS deltas from /proc/self/statm are printed beside them);
//   - the manifest write at 10^5 handles (Model::manifest, manifest::serialize,
//     write_file_atomic) done inline, and as the daemon does it (gw::BackgroundJob: forked,
//     the loop pausing only for the fork), against the daemon's 50 ms debounce.
// Benchmarks print numbers: nothing here fails on speed.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <malloc.h>
#include <string>
#include <unistd.h>
#include <vector>

#include <i915_drm.h>

#include "background.hpp"
#include "model.hpp"
#include "sysutil.hpp"

#include "../common/record_builders.hpp"

namespace
{

using Clock = std::chrono::steady_clock;
using namespace gwtest;

constexpr uint32_t kHandlesPerFile = 1000; // one process per DRM file, this many buffers each
constexpr uint32_t kRootPid = 999;         // the followed process every worker is forked from
constexpr uint64_t kMapBase = 0x7f0000000000;
constexpr uint64_t kBufBytes = 16384; // 64x64x4 dumb buffers; i915 buffers of the same size

// A record stream: the records' bytes back to back (each starts with its gw_hdr).
struct Stream {
	std::vector<std::byte> bytes;
	std::size_t events = 0;
	template <class T> void add(const T &rec)
	{
		auto b = gw::abi::record_bytes(rec);
		bytes.insert(bytes.end(), b.begin(), b.end());
		++events;
	}
};

// Applies records as they are generated (no stream kept: 10^6 handles are 3*10^6 records).
struct ApplySink {
	gw::Model &m;
	std::size_t bad = 0;
	template <class T> void add(const T &rec)
	{
		if (m.apply(gw::abi::record_bytes(rec)) != gw::ApplyStatus::ok)
			++bad;
	}
};

// Applies every record of `s`; returns how many were not applied as ok (must be 0).
std::size_t replay(gw::Model &m, const Stream &s)
{
	std::size_t bad = 0;
	for (std::size_t off = 0; off < s.bytes.size();) {
		gw_hdr h;
		std::memcpy(&h, s.bytes.data() + off, sizeof h);
		if (m.apply(std::span<const std::byte>(s.bytes.data() + off, h.size)) != gw::ApplyStatus::ok)
			++bad;
		off += h.size;
	}
	return bad;
}

// File i of the generated workload: even files are vgem card nodes (dumb buffers), odd files
// i915 render nodes (GEM_CREATE, MMAP_OFFSET); each in its own process, forked from the root.
struct FileGen {
	uint32_t i;
	uint32_t pid() const { return 1000 + i; }
	uint64_t kfile() const { return 0xffff888100000000ull + uint64_t{i} * 0x1000; }
	bool i915() const { return i % 2; }
	uint64_t fake(uint32_t h) const { return kFake + uint64_t{h} * kBufBytes; }
	uint64_t addr(uint32_t h) const { return kMapBase + uint64_t{h} * kBufBytes; }

	template <class Sink> void start(Sink &s) const
	{
		auto fork = gw::abi::make_record<gw_ev_fork>(kRootPid);
		fork.child_tgid = pid();
		s.add(fork);
		auto fd = fd_rec(pid(), 3, kfile(), GW_FD_OPEN, true, i915() ? 128 : 0, GW_FILE_DRM,
				 i915() ? "i915" : "vgem");
		fd.dev = 0xffff888200000000ull + (i915() ? 0x1000 : 0x2000);
		s.add(fd);
	}
	template <class Sink> void create(Sink &s, uint32_t h) const
	{
		if (!i915()) {
			s.add(create_dumb_rec(pid(), 3, kfile(), h));
			return;
		}
		drm_i915_gem_create in{}, out{};
		in.size = kBufBytes;
		out = in;
		out.handle = h;
		s.add(ioctl_head_rec(pid(), 3, kfile(), DRM_IOCTL_I915_GEM_CREATE, in, out, GW_DRV_I915));
	}
	template <class Sink> void grant(Sink &s, uint32_t h) const
	{
		if (!i915()) {
			s.add(map_dumb_rec(pid(), 3, kfile(), h, fake(h)));
			return;
		}
		drm_i915_gem_mmap_offset in{}, out{};
		in.handle = h;
		in.flags = I915_MMAP_OFFSET_WB;
		out = in;
		out.offset = fake(h);
		s.add(ioctl_head_rec(pid(), 3, kfile(), DRM_IOCTL_I915_GEM_MMAP_OFFSET, in, out, GW_DRV_I915));
	}
	template <class Sink> void mmap(Sink &s, uint32_t h) const
	{
		s.add(mmap_rec(pid(), kfile(), addr(h), kBufBytes, fake(h)));
	}
	template <class Sink> void munmap(Sink &s, uint32_t h) const { s.add(munmap_rec(pid(), addr(h), kBufBytes)); }
	template <class Sink> void close(Sink &s, uint32_t h) const { s.add(gem_close_rec(pid(), 3, kfile(), h)); }
	// PRIME_HANDLE_TO_FD of handle h: a dma-buf of its own, at fd 3 + h
	template <class Sink> void export_buf(Sink &s, uint32_t h) const
	{
		drm_prime_handle in{h, DRM_CLOEXEC | DRM_RDWR, -1}, out = in;
		out.fd = static_cast<int>(3 + h);
		s.add(ioctl_rec(pid(), 3, kfile(), DRM_IOCTL_PRIME_HANDLE_TO_FD, in, out,
				0xffff888300000000ull + uint64_t{i} * 0x100000 + uint64_t{h} * 0x100));
	}
};

uint32_t files_for(uint64_t n)
{
	return static_cast<uint32_t>(std::max<uint64_t>(1, (n + kHandlesPerFile - 1) / kHandlesPerFile));
}
uint32_t handles_in(uint64_t n, uint32_t file)
{
	uint64_t left = n - uint64_t{file} * kHandlesPerFile;
	return static_cast<uint32_t>(std::min<uint64_t>(left, kHandlesPerFile));
}

// Phases of building a table of n handles; each phase is its own stream so that memory can
// be measured between them. Handles are numbered from 1, as the kernel's IDR does.
enum class Phase {
	open,
	create,
	grant,
	mmap
};
template <class Sink> void generate(uint64_t n, Phase phase, Sink &s)
{
	for (uint32_t f = 0; f < files_for(n); ++f) {
		FileGen g{f};
		if (phase == Phase::open)
			g.start(s);
		for (uint32_t h = 1; phase != Phase::open && h <= handles_in(n, f); ++h) {
			if (phase == Phase::create)
				g.create(s, h);
			else if (phase == Phase::grant)
				g.grant(s, h);
			else
				g.mmap(s, h);
		}
	}
}
struct Build {
	Stream open, create, grant, mmap;
};
Build build_stream(uint64_t n)
{
	Build b;
	generate(n, Phase::open, b.open);
	generate(n, Phase::create, b.create);
	generate(n, Phase::grant, b.grant);
	generate(n, Phase::mmap, b.mmap);
	return b;
}
// Builds the table straight into `m`.
void apply_phases(gw::Model &m, uint64_t n)
{
	ApplySink sink{m};
	for (Phase p : {Phase::open, Phase::create, Phase::grant, Phase::mmap})
		generate(n, p, sink);
	if (sink.bad) {
		std::fprintf(stderr, "gw_bench_model: %zu records were not applied as ok\n", sink.bad);
		std::exit(1);
	}
}

// Every mapping of a built table unmapped, one file after another (run after each process
// closed its DRM fd: the mappings alone hold the files, as when an application keeps a
// buffer's mapping and closes the device).
Stream orphan_munmap_stream(uint64_t n)
{
	Stream s;
	for (uint32_t f = 0; f < files_for(n); ++f)
		for (uint32_t h = 1; h <= handles_in(n, f); ++h)
			FileGen{f}.munmap(s, h);
	return s;
}

// Steady churn on top of a built table: `rounds` times, in one file after another, a new
// buffer is created, granted, mapped, unmapped and closed (5 events).
Stream churn_stream(uint64_t n, uint32_t rounds)
{
	Stream s;
	uint32_t files = files_for(n);
	for (uint32_t r = 0; r < rounds; ++r) {
		FileGen g{r % files};
		uint32_t h = handles_in(n, g.i) + 1;
		g.create(s, h);
		g.grant(s, h);
		g.mmap(s, h);
		g.munmap(s, h);
		g.close(s, h);
	}
	return s;
}

gw::Model fresh_model()
{
	gw::Model m("/sys/fs/cgroup/bench");
	m.add_process(kRootPid, "bench");
	return m;
}

void apply_build(gw::Model &m, const Build &b)
{
	std::size_t bad = replay(m, b.open) + replay(m, b.create) + replay(m, b.grant) + replay(m, b.mmap);
	if (bad) {
		std::fprintf(stderr, "gw_bench_model: %zu records were not applied as ok\n", bad);
		std::exit(1);
	}
}

// --- measuring --------------------------------------------------------------------------------
std::size_t heap_in_use()
{
	struct mallinfo2 mi = mallinfo2();
	return mi.uordblks + mi.hblkhd;
}
std::size_t rss_bytes()
{
	std::ifstream in("/proc/self/statm");
	std::size_t size = 0, resident = 0;
	in >> size >> resident;
	return resident * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

struct Spread {
	double median = 0, min = 0, max = 0;
};
Spread spread(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	std::size_t n = v.size();
	double med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	return {med, v.front(), v.back()};
}
double seconds_since(Clock::time_point t0)
{
	return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Throughput {
	std::string name;
	uint64_t live = 0;           // handles in the model before the timed stream
	std::size_t events = 0;      // per repetition
	std::vector<double> eps;     // events/s per repetition
	std::size_t model_bytes = 0; // heap the built model holds (what the churn rotates through)
};

// The last-level cache of CPU 0 in bytes (sysfs), 0 when not known.
std::size_t llc_bytes()
{
	std::size_t best = 0;
	for (int i = 0; i < 8; ++i) {
		std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/size");
		std::string v;
		if (!(in >> v) || v.empty())
			continue;
		std::size_t n = std::strtoull(v.c_str(), nullptr, 10);
		char unit = v.back();
		n *= unit == 'K' ? 1024 : unit == 'M' ? 1024 * 1024 : 1;
		best = std::max(best, n);
	}
	return best;
}

// Replays every case `reps` times, the cases interleaved (A B C A B C ...): each repetition
// builds a fresh model with its table (untimed), then times the case's stream.
void run_throughput(std::vector<Throughput> &cases, const std::vector<Build> &tables, const std::vector<Stream> &timed,
		    int reps)
{
	for (int r = 0; r < reps; ++r)
		for (std::size_t c = 0; c < cases.size(); ++c) {
			gw::Model m = fresh_model();
			const Stream *s = &timed[c];
			std::size_t heap0 = heap_in_use();
			if (cases[c].name == "build") {
				replay(m, tables[c].open);
				auto t0 = Clock::now();
				std::size_t bad = replay(m, tables[c].create) + replay(m, tables[c].grant) +
						  replay(m, tables[c].mmap);
				double dt = seconds_since(t0);
				if (bad)
					std::fprintf(stderr, "gw_bench_model: build: %zu records not applied as ok\n",
						     bad),
						std::exit(1);
				cases[c].eps.push_back((tables[c].create.events * 3) / dt);
				cases[c].model_bytes = heap_in_use() - heap0;
				continue;
			}
			apply_build(m, tables[c]);
			cases[c].model_bytes = heap_in_use() - heap0;
			if (cases[c].name == "exported churn") { // untimed: every buffer of the table exported
				ApplySink sink{m};
				for (uint32_t f = 0; f < files_for(cases[c].live); ++f)
					for (uint32_t h = 1; h <= handles_in(cases[c].live, f); ++h)
						FileGen{f}.export_buf(sink, h);
				if (sink.bad || m.dmabufs().size() != cases[c].live)
					std::fprintf(stderr,
						     "gw_bench_model: the exports did not make a dma-buf each\n"),
						std::exit(1);
			}
			if (cases[c].name == "orphan munmap") { // untimed: every process closes its DRM fd
				ApplySink sink{m};
				for (uint32_t f = 0; f < files_for(cases[c].live); ++f)
					sink.add(close_rec(FileGen{f}.pid(), 3, FileGen{f}.kfile()));
				if (sink.bad || m.files().size() != files_for(cases[c].live))
					std::fprintf(stderr, "gw_bench_model: the closes did not leave the files to "
							     "their mappings\n"),
						std::exit(1);
			}
			auto t0 = Clock::now();
			std::size_t bad = replay(m, *s);
			double dt = seconds_since(t0);
			if (bad)
				std::fprintf(stderr, "gw_bench_model: %s: %zu records not applied as ok\n",
					     cases[c].name.c_str(), bad),
					std::exit(1);
			cases[c].eps.push_back(s->events / dt);
		}
}

struct Memory {
	uint64_t n = 0;
	double per_handle = 0, per_grant = 0, per_mapping = 0; // heap bytes
	double rss_per_handle = 0, rss_per_mapping = 0;        // RSS bytes (page-granular, noisy)
};

Memory measure_memory(uint64_t n)
{
	malloc_trim(0);
	Memory mem;
	mem.n = n;
	auto *m = new gw::Model(fresh_model());
	ApplySink sink{*m};
	generate(n, Phase::open, sink);
	std::size_t h0 = heap_in_use(), r0 = rss_bytes();
	generate(n, Phase::create, sink);
	std::size_t h1 = heap_in_use(), r1 = rss_bytes();
	generate(n, Phase::grant, sink);
	std::size_t h2 = heap_in_use(), r2 = rss_bytes();
	generate(n, Phase::mmap, sink);
	std::size_t h3 = heap_in_use(), r3 = rss_bytes();
	if (sink.bad) {
		std::fprintf(stderr, "gw_bench_model: %zu records were not applied as ok\n", sink.bad);
		std::exit(1);
	}
	mem.per_handle = double(h1 - h0) / n;
	mem.per_grant = double(h2 - h1) / n;
	mem.per_mapping = double(h3 - h2) / n;
	mem.rss_per_handle = (double(r1) - double(r0)) / n;
	mem.rss_per_mapping = (double(r3) - double(r2)) / n;
	if (m->files().size() != files_for(n)) {
		std::fprintf(stderr, "gw_bench_model: expected %u files, the model has %zu\n", files_for(n),
			     m->files().size());
		std::exit(1);
	}
	delete m;
	return mem;
}

struct ManifestWrite {
	uint64_t n = 0;
	std::size_t bytes = 0;
	std::vector<double> build_ms, serialize_ms, write_ms, total_ms;
	std::vector<double> pause_ms, background_ms; // the daemon's way: fork, the write in the child
};

// The daemon's write_manifest(), timed in its three steps, `reps` times.
ManifestWrite measure_manifest(uint64_t n, const std::string &dir, int reps)
{
	ManifestWrite w;
	w.n = n;
	gw::Model m = fresh_model();
	apply_phases(m, n);
	std::string path = dir + "/gw-bench-manifest.json";
	for (int r = 0; r < reps; ++r) {
		auto t0 = Clock::now();
		gw::manifest::Manifest j = m.manifest();
		j.hooks = std::map<std::string, std::string>{
			{"ioctl", "tracepoint"}, {"mmap", "tracepoint"}, {"cloexec", "tracepoint"}};
		double t_build = seconds_since(t0);
		auto t1 = Clock::now();
		std::string text = gw::manifest::serialize(j);
		double t_ser = seconds_since(t1);
		auto t2 = Clock::now();
		gw::write_file_atomic(path, text);
		double t_write = seconds_since(t2);
		w.bytes = text.size();
		w.build_ms.push_back(t_build * 1e3);
		w.serialize_ms.push_back(t_ser * 1e3);
		w.write_ms.push_back(t_write * 1e3);
		w.total_ms.push_back((t_build + t_ser + t_write) * 1e3);
	}
	/* what the daemon does (daemon.cpp, write_manifest_background): the same work in a forked
	 * child; the loop pauses only for the fork */
	for (int r = 0; r < reps; ++r) {
		gw::BackgroundJob job;
		auto t0 = Clock::now();
		bool forked = job.start([&] {
			gw::manifest::Manifest j = m.manifest();
			j.hooks = std::map<std::string, std::string>{
				{"ioctl", "tracepoint"}, {"mmap", "tracepoint"}, {"cloexec", "tracepoint"}};
			gw::write_file_atomic(path, gw::manifest::serialize(j));
		});
		double t_pause = seconds_since(t0);
		if (!forked) {
			std::fprintf(stderr, "gw_bench_model: fork failed\n");
			std::exit(1);
		}
		std::string err = job.reap(true);
		if (!err.empty()) {
			std::fprintf(stderr, "gw_bench_model: %s\n", err.c_str());
			std::exit(1);
		}
		w.pause_ms.push_back(t_pause * 1e3);
		w.background_ms.push_back(seconds_since(t0) * 1e3);
	}
	::unlink(path.c_str());
	return w;
}

std::string json_spread(const Spread &s)
{
	char buf[160];
	std::snprintf(buf, sizeof buf, "{\"median\": %.6g, \"min\": %.6g, \"max\": %.6g}", s.median, s.min, s.max);
	return buf;
}

int usage()
{
	std::fprintf(stderr, "usage: gw_bench_model [--reps N] [--quick] [--json FILE] [--dir DIR]\n"
			     "  --reps N    repetitions of each throughput case (default 7, at least 5)\n"
			     "  --churn N   rounds of the churn streams (default 2000; 5 events each)\n"
			     "  --only CASE run only this throughput case (\"churn 100000\"): for profiling\n"
			     "  --quick     memory at 10^3 and 10^5 handles only (no 10^6)\n"
			     "  --json FILE write the figures as JSON\n"
			     "  --dir DIR   where the manifest write is timed (default: the current directory)\n");
	return 2;
}

} // namespace

int main(int argc, char **argv)
{
	int reps = 7;
	uint32_t churn_rounds = 2000;
	bool quick = false;
	std::string only; // profiling: one throughput case ("churn 100000"), nothing else
	std::string json_path, dir = ".";
	for (int i = 1; i < argc; ++i) {
		std::string a = argv[i];
		if (a == "--reps" && i + 1 < argc)
			reps = std::max(5, std::atoi(argv[++i]));
		else if (a == "--churn" && i + 1 < argc)
			churn_rounds = static_cast<uint32_t>(std::max(1, std::atoi(argv[++i])));
		else if (a == "--only" && i + 1 < argc)
			only = argv[++i];
		else if (a == "--quick")
			quick = true;
		else if (a == "--json" && i + 1 < argc)
			json_path = argv[++i];
		else if (a == "--dir" && i + 1 < argc)
			dir = argv[++i];
		else
			return usage();
	}

	// throughput: building tables of 10^3 and 10^5 handles; churn at 10^3 to 3*10^5 live handles
	// (where the model outgrows the cache: the floor at 10^5), and at 10^4 with every buffer
	// exported (a close must not walk the dma-bufs); munmaps of mappings whose fd closed
	std::vector<Throughput> cases = {{"build", 1000},           {"build", 100000},       {"churn", 1000},
					 {"churn", 10000},          {"churn", 100000},       {"churn", 300000},
					 {"exported churn", 10000}, {"orphan munmap", 10000}};
	if (!only.empty())
		std::erase_if(cases,
			      [&](const Throughput &c) { return c.name + " " + std::to_string(c.live) != only; });
	std::vector<Build> tables;
	std::vector<Stream> timed;
	for (auto &c : cases) {
		tables.push_back(build_stream(c.live));
		timed.push_back(c.name == "churn" || c.name == "exported churn" ? churn_stream(c.live, churn_rounds)
				: c.name == "orphan munmap"                     ? orphan_munmap_stream(c.live)
										: Stream{});
		c.events = c.name == "build" ? tables.back().create.events * 3 : timed.back().events;
	}
	run_throughput(cases, tables, timed, reps);
	tables.clear();
	timed.clear();

	std::printf("gw_bench_model: decoder + model (gw::Model::apply on raw records), one thread\n\n");
	std::printf("%-26s %10s %14s %14s %14s %10s\n", "replay", "events", "events/s med", "min", "max", "model MB");
	std::vector<Spread> eps;
	for (auto &c : cases) {
		eps.push_back(spread(c.eps));
		char name[64];
		std::snprintf(name, sizeof name, "%s %s %llu", c.name.c_str(), c.name == "build" ? "to" : "at",
			      (unsigned long long)c.live);
		std::printf("%-26s %10zu %14.0f %14.0f %14.0f %10.1f\n", name, c.events, eps.back().median,
			    eps.back().min, eps.back().max, c.model_bytes / 1e6);
	}
	std::printf("(%d repetitions each, interleaved; build = create + grant + mmap per handle, "
		    "churn = create, grant, mmap, munmap, close of one more handle; exported churn = the same with "
		    "every buffer of the table exported as a dma-buf; orphan munmap = every mapping "
		    "unmapped after each process closed its DRM fd)\n",
		    reps);
	std::printf("(model MB: heap the built model holds, which the churn rotates through, 1000 handles per "
		    "process; this CPU's last-level cache: %.1f MB, shared)\n\n",
		    llc_bytes() / 1e6);

	if (!only.empty())
		return 0;
	std::vector<uint64_t> sizes = {1000, 100000};
	if (!quick)
		sizes.push_back(1000000);
	std::vector<Memory> mems;
	std::printf("%-10s %12s %12s %12s %14s %14s\n", "handles", "B/handle", "B/grant", "B/mapping", "RSS B/handle",
		    "RSS B/mapping");
	for (uint64_t n : sizes) {
		mems.push_back(measure_memory(n));
		const Memory &m = mems.back();
		std::printf("%-10llu %12.1f %12.1f %12.1f %14.1f %14.1f\n", (unsigned long long)n, m.per_handle,
			    m.per_grant, m.per_mapping, m.rss_per_handle, m.rss_per_mapping);
	}
	std::printf("(heap bytes in use, mallinfo2, of the model with N more of each, divided by N; "
		    "half the buffers dumb on vgem, half i915 GEM_CREATE)\n\n");

	ManifestWrite mw = measure_manifest(100000, dir, reps);
	Spread b = spread(mw.build_ms), s = spread(mw.serialize_ms), w = spread(mw.write_ms), t = spread(mw.total_ms);
	std::printf("manifest of %llu handles with their mappings (%zu bytes), ms:\n", (unsigned long long)mw.n,
		    mw.bytes);
	std::printf("  %-34s %9.1f (min %.1f, max %.1f)\n", "Model::manifest", b.median, b.min, b.max);
	std::printf("  %-34s %9.1f (min %.1f, max %.1f)\n", "manifest::serialize", s.median, s.min, s.max);
	std::printf("  %-34s %9.1f (min %.1f, max %.1f)\n", "write_file_atomic (fsync, rename)", w.median, w.min,
		    w.max);
	std::printf("  %-34s %9.1f (min %.1f, max %.1f)\n", "total", t.median, t.min, t.max);
	Spread pz = spread(mw.pause_ms), bg = spread(mw.background_ms);
	std::printf("  the daemon's background write (fork; the same work in the child):\n");
	std::printf("  %-34s %9.2f (min %.2f, max %.2f)\n", "loop pause (fork)", pz.median, pz.min, pz.max);
	std::printf("  %-34s %9.1f (min %.1f, max %.1f)\n", "until on disk", bg.median, bg.min, bg.max);
	std::printf("  loop pause vs the daemon's 50 ms debounce: %.3fx (inline, the loop would read no records "
		    "for %.0f ms)\n",
		    pz.median / 50.0, t.median);

	if (!json_path.empty()) {
		std::ofstream out(json_path);
		out << "{\"bench\": \"gw_bench_model\", \"reps\": " << reps << ", \"llc_bytes\": " << llc_bytes()
		    << ",\n \"throughput\": [";
		for (std::size_t i = 0; i < cases.size(); ++i)
			out << (i ? ",\n   " : "\n   ") << "{\"case\": \"" << cases[i].name
			    << "\", \"live_handles\": " << cases[i].live << ", \"events\": " << cases[i].events
			    << ", \"events_per_s\": " << json_spread(eps[i])
			    << ", \"model_bytes\": " << cases[i].model_bytes << "}";
		out << "],\n \"memory\": [";
		for (std::size_t i = 0; i < mems.size(); ++i) {
			char buf[256];
			std::snprintf(buf, sizeof buf,
				      "{\"handles\": %llu, \"bytes_per_handle\": %.1f, \"bytes_per_grant\": %.1f, "
				      "\"bytes_per_mapping\": %.1f, \"rss_bytes_per_handle\": %.1f, "
				      "\"rss_bytes_per_mapping\": %.1f}",
				      (unsigned long long)mems[i].n, mems[i].per_handle, mems[i].per_grant,
				      mems[i].per_mapping, mems[i].rss_per_handle, mems[i].rss_per_mapping);
			out << (i ? ",\n   " : "\n   ") << buf;
		}
		out << "],\n \"manifest\": {\"handles\": " << mw.n << ", \"bytes\": " << mw.bytes
		    << ", \"build_ms\": " << json_spread(b) << ", \"serialize_ms\": " << json_spread(s)
		    << ", \"write_ms\": " << json_spread(w) << ", \"total_ms\": " << json_spread(t)
		    << ", \"background_pause_ms\": " << json_spread(pz)
		    << ", \"background_total_ms\": " << json_spread(bg) << ", \"debounce_ms\": 50}}\n";
		if (!out)
			return std::fprintf(stderr, "gw_bench_model: cannot write %s\n", json_path.c_str()), 1;
	}
	return 0;
}
