// Restore: loading and checking the images, finding restored buffers, making new ones.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <set>
#include <tuple>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <thread>
#include <unistd.h>

#include "device.hpp"
#include "log.hpp"
#include "object_image.hpp"
#include "restore.hpp"

namespace gwcriu
{
namespace
{

RestoreImages g_images;

// The tasks of this restore, as they announce themselves from their hooks: a page shared by
// every task (mapped by CRIU's main process at init, before it forks them; the restorer
// unmaps it from the restored tasks). Buffers are only taken from another task's fds when
// that task is listed here: pids from an image never reach beyond this restore.
struct TaskRegistry {
	std::atomic<uint32_t> count;
	std::atomic<uint32_t> pids[1023];
};
TaskRegistry *g_tasks = nullptr;

void map_registry()
{
	void *p = mmap(nullptr, sizeof(TaskRegistry), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	g_tasks = p == MAP_FAILED ? nullptr : new (p) TaskRegistry{};
}

bool in_this_restore(uint32_t pid)
{
	if (!g_tasks)
		return false;
	uint32_t n = std::min<uint32_t>(g_tasks->count.load(), 1023);
	for (uint32_t i = 0; i < n; ++i)
		if (g_tasks->pids[i].load() == pid)
			return true;
	return false;
}

// Every object must have one size wherever it is named, and its saved contents that size.
void note_size(RestoreImages &im, uint64_t n, uint64_t size, const std::string &where)
{
	auto [it, fresh] = im.object_sizes.try_emplace(n, size);
	if (!fresh && it->second != size)
		throw ImageError(where + ": buffer " + std::to_string(n) + " is " + std::to_string(size) +
				 " bytes here and " + std::to_string(it->second) + " bytes elsewhere");
}

// The checksum file an earlier version wrote beside object n's raw contents: its .xxh64, else
// its .crc32; "" for this version's image, whose checksum is in its trailer.
std::string checksum_beside(uint64_t n)
{
	for (const std::string &name : {object_checksum_name(n), object_crc32_name(n)})
		if (image_exists(name))
			return name;
	return "";
}

// The saved contents of object n are there, of its size, with their checksum in the image's
// trailer (im.object_trailed), in a checksum file of an earlier version (kept in
// im.object_sums) or in a chunk map (im.object_maps). The contents and the trailer are checked
// as they are read into the buffer (fill_object): reading every image twice, once here and
// once to fill, was a third of a large restore. Once per buffer, however many handles and
// mappings name it (note_size has checked that they agree on its size).
void check_saved(RestoreImages &im, uint64_t n, uint64_t size, const std::string &where)
{
	if (im.object_trailed.count(n) || im.object_sums.count(n) || im.object_maps.count(n))
		return;
	const std::string name = object_image_name(n);
	if (!image_exists(name))
		throw ImageError(where + ": " + name + " is missing");
	if (std::optional<ChunkMap> m = read_chunk_map("", object_base_name(n))) {
		if (m->size != size)
			throw ImageError(chunk_map_name(object_base_name(n)) + " is of " + std::to_string(m->size) +
					 " bytes, expected " + std::to_string(size));
		im.object_maps[n] = std::move(*m);
		return;
	}
	const uint64_t have = image_size(name);
	const std::string sum_name = checksum_beside(n);
	if (sum_name.empty()) {
		if (have != size + kObjectTrailer)
			throw ImageError(name + " is " + std::to_string(have) + " bytes, expected " +
					 std::to_string(size) + " and a " + std::to_string(kObjectTrailer) +
					 "-byte trailer (truncated or corrupt)");
		im.object_trailed.insert(n);
		return;
	}
	// an earlier version's image: the raw contents, their checksum beside them
	if (have != size)
		throw ImageError(name + " is " + std::to_string(have) + " bytes, expected " + std::to_string(size) +
				 " (truncated or corrupt)");
	const bool legacy = sum_name == object_crc32_name(n);
	unsigned long long sum = 0, sum_size = 0;
	char tail = 0;
	std::string text = read_image(sum_name, 64);
	std::size_t digits = text.find(' ');
	if (digits != (legacy ? 8u : 16u) || sscanf(text.c_str(), "%llx %llu%c", &sum, &sum_size, &tail) != 3 ||
	    tail != '\n' || sum_size != size)
		throw ImageError(sum_name + ": not \"<" + (legacy ? "crc32" : "xxh64") + "> " + std::to_string(size) +
				 "\"");
	im.object_sums[n] = ContentSum{legacy ? SumKind::crc32 : SumKind::xxh64, sum};
}

// Which file made each buffer (RestoreImages::makers): the restore makes it there again, so
// the restored files import from the same file as before and the manifest after the restore
// names the same maker and exporter.
void note_makers(RestoreImages &im)
{
	std::set<uint64_t> several;
	for (const auto &[id, f] : im.files)
		for (const HandleRec &h : f.handles) {
			if (h.origin == "prime" || h.origin == "flink" || h.origin == "unknown")
				continue;
			auto [it, fresh] = im.makers.try_emplace(h.object, RestoreImages::Maker{id, &h});
			if (!fresh && it->second.file != id)
				several.insert(h.object);
		}
	for (uint64_t n : several)
		im.makers.erase(n);
}

void load(RestoreImages &im)
{
	const std::vector<std::string> file_images = list_images("gpuwatch-file-", ".json");
	const std::vector<std::string> dmabuf_images = list_images("gpuwatch-dmabuf-", ".json");
	if (image_exists(gw::kDevicesImage))
		im.devices = parse_devices_image(read_image(gw::kDevicesImage, kMaxJsonImage), gw::kDevicesImage);
	// every file and dma-buf image names its device; the vmas image is written for every dump,
	// with no device when the tree held no DRM mapping (a container without a GPU)
	else if (!file_images.empty() || !dmabuf_images.empty())
		throw ImageError(std::string(gw::kDevicesImage) + " is missing (incomplete image directory)");
	for (const std::string &name : file_images) {
		FileImage f = parse_file_image(read_image(name, kMaxJsonImage), name, im.devices);
		if (name != file_image_name(f.criu_id))
			throw ImageError(name + ": field criu_id is " + std::to_string(f.criu_id) +
					 ", not the image's own id");
		for (const HandleRec &h : f.handles) {
			note_size(im, h.object, h.size, name);
			if (h.saved)
				check_saved(im, h.object, h.size, name);
		}
		im.files.emplace(f.criu_id, std::move(f));
	}
	note_makers(im);
	{
		std::vector<const FileImage *> all;
		for (const auto &[id, f] : im.files)
			all.push_back(&f);
		check_filler_budget(all);
	}
	for (const std::string &name : dmabuf_images) {
		DmabufImage d = parse_dmabuf_image(read_image(name, kMaxJsonImage), name, im.devices);
		if (name != dmabuf_image_name(d.criu_id))
			throw ImageError(name + ": field criu_id is " + std::to_string(d.criu_id) +
					 ", not the image's own id");
		note_size(im, d.object, d.size, name);
		if (d.saved)
			check_saved(im, d.object, d.size, name);
		im.dmabufs.emplace(d.criu_id, std::move(d));
	}
	if (!image_exists(kVmasImage)) {
		if (!im.files.empty())
			throw ImageError(std::string(kVmasImage) + " is missing (incomplete image directory)");
		return;
	}
	im.vmas = parse_vmas_image(read_image(kVmasImage, kMaxJsonImage), kVmasImage, im.devices);
	// what the mappings are checked against, indexed once: the work stays linear in the images'
	// size (a scan of every handle and fd per mapping made 10^5 mappings cost minutes as root)
	std::set<std::tuple<uint32_t, uint32_t, uint64_t>> handles; // file, handle, buffer
	std::set<std::tuple<uint32_t, uint32_t, int>> held_fds;     // file, vpid, fd
	for (const auto &[id, f] : im.files) {
		for (const HandleRec &h : f.handles)
			handles.emplace(id, h.handle, h.object);
		for (const Holder &h : f.holders)
			for (int fd : h.fds)
				held_fds.emplace(id, h.vpid, fd);
	}
	for (const VmaRec &v : im.vmas) {
		std::string where = std::string(kVmasImage) + " (mapping " + std::to_string(v.start) + ")";
		if (v.file) {
			auto f = im.files.find(*v.file);
			if (f == im.files.end())
				throw ImageError(where + ": names file " + std::to_string(*v.file) +
						 ", which has no image");
			if (v.handle) {
				if (!handles.count({*v.file, *v.handle, v.object}))
					throw ImageError(where + ": handle " + std::to_string(*v.handle) +
							 " is not in file " + std::to_string(*v.file) +
							 " with buffer " + std::to_string(v.object));
			}
		} else if (v.handle) {
			throw ImageError(where + ": has a handle but no file");
		}
		if (v.late) {
			if (!v.file || !held_fds.count({*v.file, v.vpid, v.late->fd}))
				throw ImageError(where + ": its fd " + std::to_string(v.late->fd) +
						 " is not one of file " + std::to_string(v.file.value_or(0)) +
						 "'s fds in task " + std::to_string(v.vpid));
		}
		if (v.object) {
			note_size(im, v.object, v.object_size, where);
			if (v.saved)
				check_saved(im, v.object, v.object_size, where);
		}
	}
}

// A dma-buf of object n through fd (of this task, or a copy from another task), if fd is
// really what the image says: a DRM file holding `handle`, or a dma-buf of that size.
UniqueFd dmabuf_through(int fd, bool drm, uint32_t handle, uint64_t size)
{
	if (drm) {
		UniqueFd d;
		if (!drm_fd(fd) || prime_export(fd, handle, true, &d) != 0)
			return {};
		return dmabuf_size(d.get()) == static_cast<int64_t>(size) ? std::move(d) : UniqueFd();
	}
	if (!is_dmabuf(fd) || dmabuf_size(fd) != static_cast<int64_t>(size))
		return {};
	return UniqueFd(fcntl(fd, F_DUPFD_CLOEXEC, kHighFd));
}

struct Source {
	uint32_t vpid;
	int fd;
	bool drm;
	uint32_t handle;
	bool wait_for; // restored first by a task of lower pid: worth waiting for
};

std::vector<Source> sources_of(uint64_t n, std::optional<uint32_t> exclude, uint32_t me)
{
	std::vector<Source> out;
	auto add = [&](const std::vector<Holder> &hs, bool drm, uint32_t handle) {
		uint32_t master = file_master(hs);
		for (const Holder &ho : hs)
			for (int fd : ho.fds)
				out.push_back({ho.vpid, fd, drm, handle, master < me});
	};
	for (const auto &[id, f] : g_images.files)
		if (id != exclude)
			for (const HandleRec &h : f.handles)
				if (h.object == n)
					add(f.holders, true, h.handle);
	for (const auto &[id, d] : g_images.dmabufs)
		if (id != exclude && d.object == n)
			add(d.holders, false, 0);
	return out;
}

UniqueFd try_sources(const std::vector<Source> &srcs, uint32_t me, uint64_t size)
{
	note_restored_task();
	for (const Source &s : srcs)
		if (s.vpid == me)
			if (UniqueFd d = dmabuf_through(s.fd, s.drm, s.handle, size))
				return d;
	for (const Source &s : srcs) {
		if (s.vpid == me || !in_this_restore(s.vpid))
			continue;
		UniqueFd copy(pidfd_getfd_of(static_cast<int>(s.vpid), s.fd));
		if (copy)
			if (UniqueFd d = dmabuf_through(copy.get(), s.drm, s.handle, size)) {
				log_debug("buffer of %llu bytes: found through fd %d of pid %u",
					  (unsigned long long)size, s.fd, s.vpid);
				return d;
			}
	}
	return {};
}

} // namespace

uint32_t file_master(const std::vector<Holder> &holders)
{
	uint32_t master = UINT32_MAX;
	for (const Holder &ho : holders)
		master = std::min(master, ho.vpid);
	return master;
}

const RestoreImages &restore_images()
{
	return g_images;
}

void note_restored_task()
{
	static uint32_t noted = 0; // per task: each restored task is a fork of CRIU's main process
	uint32_t me = static_cast<uint32_t>(getpid());
	if (!g_tasks || noted == me)
		return;
	uint32_t i = g_tasks->count.fetch_add(1);
	if (i < 1023)
		g_tasks->pids[i].store(me);
	noted = me;
}

int load_restore_images()
{
	try {
		snapshot_image_names();
		load(g_images);
		if (!g_images.files.empty() || !g_images.dmabufs.empty() || !g_images.vmas.empty())
			map_registry();
		plan_late_fills(g_images);
		plan_host_devices(g_images.devices);
	} catch (const std::exception &e) {
		log_error("restore refused: %s", e.what());
		g_images = RestoreImages();
		return -1;
	}
	if (!g_images.files.empty() || !g_images.dmabufs.empty() || !g_images.vmas.empty())
		log_info("restore: %zu DRM files, %zu dma-bufs, %zu mappings, %zu buffers in the images",
			 g_images.files.size(), g_images.dmabufs.size(), g_images.vmas.size(),
			 g_images.object_sizes.size());
	return 0;
}

UniqueFd find_object(uint64_t n, std::optional<uint32_t> exclude, bool wait)
{
	uint32_t me = static_cast<uint32_t>(getpid());
	uint64_t size = g_images.object_sizes.count(n) ? g_images.object_sizes.at(n) : 0;
	std::vector<Source> srcs = sources_of(n, exclude, me);
	if (UniqueFd d = try_sources(srcs, me, size))
		return d;
	// A task of lower pid may be restoring a file that holds the buffer right now: give it a
	// moment. Only lower pids: two tasks importing from each other must not wait for each
	// other, so the buffer is made by the lowest-pid task holding it and shared from there.
	// (Files this task restores itself come later in its own order: waiting would not help.)
	bool worth = false;
	for (const Source &s : srcs)
		worth |= s.wait_for;
	if (!wait || !worth)
		return {};
	uint64_t ms = env_u64("GPUWATCH_SHARE_WAIT_MS", 2000);
	auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
	while (std::chrono::steady_clock::now() < deadline) {
		std::this_thread::sleep_for(std::chrono::milliseconds(10));
		if (UniqueFd d = try_sources(srcs, me, size))
			return d;
	}
	log_warn("buffer %llu: no other restored task showed it within %llu ms (GPUWATCH_SHARE_WAIT_MS): "
		 "restored as a copy, no longer shared across processes",
		 (unsigned long long)n, (unsigned long long)ms);
	return {};
}

namespace
{

// An object saved after a pre-dump: its chunks from this image and the pre-dumps' (chunks.hpp),
// each checked against its hash as it is read; the window [skip, skip + dst.size()) of them.
bool fill_chunked(uint64_t n, uint64_t skip, const ChunkMap &map, BufferMap &dst)
{
	std::string name = object_base_name(n);
	ChunkReader rd(name, map);
	if (skip > rd.size() || dst.size() > rd.size() - skip)
		throw Error(name + " is " + std::to_string(rd.size()) + " bytes: too short for " +
			    std::to_string(dst.size()) + " bytes at " + std::to_string(skip));
	for (uint64_t done = 0; done < dst.size();) {
		uint64_t at = skip + done, i = at / map.chunk, in = at % map.chunk;
		std::size_t len = 0;
		const char *bytes = rd.chunk(i, &len);
		std::size_t k = static_cast<std::size_t>(std::min<uint64_t>(len - in, dst.size() - done));
		copy_bytes(dst.data() + done, bytes + in, k, Into::device);
		done += k;
	}
	return true;
}

} // namespace

bool fill_object(uint64_t n, uint64_t skip, bool saved, BufferMap &dst)
{
	if (!n)
		return false;
	std::string name = object_image_name(n);
	if (!image_exists(name)) {
		if (saved)
			throw Error(name + " is missing");
		return false;
	}
	if (auto chunked = g_images.object_maps.find(n); chunked != g_images.object_maps.end())
		return fill_chunked(n, skip, chunked->second, dst);
	ObjectSum sum;
	if (auto it = g_images.object_sums.find(n); it != g_images.object_sums.end()) {
		sum.trailer = false;
		sum.beside = it->second;
	} else if (!checksum_beside(n).empty()) {
		sum.trailer = false; // an earlier version's image none of whose references saved it
	}
	load_object_image(name, sum, skip, dst);
	return true;
}

namespace
{

// A dumb buffer of exactly `size` bytes in fd: with p, else with generic params. -errno of the
// first refusal when neither works.
int exact_dumb(int fd, const DumbParams &p, uint64_t size, uint32_t *handle)
{
	uint64_t got = 0;
	int r = p.bpp ? create_dumb(fd, p, handle, &got) : -EINVAL;
	if (r == 0 && got == size)
		return 0;
	if (r == 0)
		gem_close(fd, *handle);
	int r2 = create_dumb(fd, generic_dumb_params(size), handle, &got);
	if (r2 == 0 && got != size) {
		gem_close(fd, *handle);
		return -ERANGE;
	}
	return r2 == 0 ? 0 : (p.bpp ? r : r2);
}

} // namespace

bool fill_handle(int fd, uint32_t handle, uint64_t size, uint64_t n, bool saved)
{
	if (!n)
		return false;
	BufferMap m = BufferMap::of_handle(fd, handle, size, true);
	return fill_object(n, 0, saved, m);
}

uint32_t create_buffer(int fd, const std::string &card_path, const DumbParams &p, uint64_t size, uint64_t n, bool saved,
		       bool *filled)
{
	uint32_t h = 0;
	bool dummy = false;
	bool &wrote = filled ? *filled : dummy;
	int r = exact_dumb(fd, p, size, &h);
	if (r == 0) {
		if (n)
			wrote = fill_handle(fd, h, size, n, saved);
		return h;
	}
	if (card_path.empty())
		throw Error("cannot create a " + std::to_string(size) + "-byte buffer: " + gw::errno_text(-r));
	UniqueFd card = open_node(card_path, O_RDWR, -1);
	uint32_t ch = 0;
	if (int e = exact_dumb(card.get(), p, size, &ch); e != 0)
		throw Error("cannot create a " + std::to_string(size) + "-byte buffer (here: " + gw::errno_text(-r) +
			    "; on " + card_path + ": " + gw::errno_text(-e) + ")");
	if (n)
		wrote = fill_handle(card.get(), ch, size, n, saved);
	UniqueFd d;
	if (int e = prime_export(card.get(), ch, true, &d); e != 0)
		throw Error("cannot export a new buffer from " + card_path + ": " + gw::errno_text(-e));
	if (int e = prime_import(fd, d.get(), &h); e != 0)
		throw Error("cannot import a new buffer made on " + card_path + ": " + gw::errno_text(-e));
	return h;
}

} // namespace gwcriu
