#include "i915_late_maps.hpp"

#include <csignal>
#include <fcntl.h>
#include <map>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "i915_maps.hpp"
#include "i915_ioctls.hpp"
#include "i915_predump.hpp"
#include "proc_tree.hpp"
#include "log.hpp"
#include "restore.hpp"

namespace gwcriu
{
namespace
{

using gwremote::MapKind;
using gwremote::MapMode;
using gwremote::MapRecord;

// The record the helper left in the image directory (CRIU 3.x), or the plugin's own
// conversions (CRIU 4.x, CHECKPOINT_DEVICES), read once per CRIU process.
std::optional<gwremote::MapsRecord> g_record;

gwremote::MapsRecord &record()
{
	if (g_record)
		return *g_record;
	g_record.emplace();
	try {
		if (image_exists(gwremote::kMapsRecordName))
			*g_record = gwremote::parse_maps_record(read_image(gwremote::kMapsRecordName, kMaxJsonImage));
	} catch (const std::exception &e) {
		log_error("%s", e.what());
	}
	return *g_record;
}

const std::vector<MapRecord> &converted()
{
	return record().maps;
}

int prot_bits(const std::string &p)
{
	return (p.find('r') != std::string::npos ? PROT_READ : 0) |
	       (p.find('w') != std::string::npos ? PROT_WRITE : 0) | (p.find('x') != std::string::npos ? PROT_EXEC : 0);
}

std::string range(uint64_t start, uint64_t len)
{
	char b[64];
	snprintf(b, sizeof b, "%#llx-%#llx", (unsigned long long)start, (unsigned long long)(start + len));
	return b;
}

} // namespace

void add_converted_vmas(DumpSession &s)
{
	add_converted_vmas(s, converted());
}

void add_converted_vmas(DumpSession &s, const std::vector<MapRecord> &maps)
{
	std::size_t placeholders = 0, copies = 0;
	for (const MapRecord &m : maps) {
		if (m.mode == MapMode::Copy) {
			++copies;
			log_warn(
				"mapping %s of pid %u (%s) was copied into anonymous memory before the dump (no handle "
				"names its buffer): it comes back as private memory with the same bytes, no longer "
				"shared "
				"with the GPU buffer",
				range(m.start, m.length).c_str(), m.pid,
				m.kind == MapKind::Gem ? "anon_inode:i915.gem" : "i915 GEM_MMAP");
			continue;
		}
		++placeholders;
		VmaRec r;
		r.pid = m.pid;
		r.vpid = m.vpid;
		r.start = m.start;
		r.length = m.length;
		r.offset = m.offset;
		r.prot = gwremote::prot_string(m.prot);
		r.stateless = s.stateless;
		LateMap l;
		l.kind = m.kind == MapKind::Gem ? "gem" : "shmem";
		if (m.mmap_type)
			l.mmap_type = i915::mmap_type_number(*m.mmap_type);
		l.fd = m.fd.value_or(-1);
		l.wc = m.wc;
		r.late = l;
		s.vmas.push_back(std::move(r));
		s.attributed.push_back(false);
	}
	if (placeholders || copies)
		log_info("dump: %zu i915 mappings were replaced by placeholders and %zu by copies (%s)", placeholders,
			 copies, gwremote::kMapsRecordName);
}

// The dump's end puts the converted mappings back (revert_converted_maps); a criu killed before
// it never gets there, and the task would run on with PROT_NONE placeholders. A watcher outside
// criu (the helper's, i915_watcher.cpp) waits for criu to be done with the task and puts back
// whatever is still replaced then (nothing, after a dump that ended). Its log:
// gpuwatch-watcher.log in the image directory. Called once the conversions are recorded: a
// watcher that cannot start is said, and the dump's end still puts them back.
static void watch_for_criu(uint32_t pid, const std::string &cgroup, const std::vector<MapRecord> &done)
{
	try {
		gwaction::WatchPlan wp;
		wp.cgroup = cgroup;
		wp.criu_pid = getpid();
		wp.criu_start = gwaction::start_time(static_cast<uint32_t>(getpid()));
		wp.pids = {pid};
		wp.maps = done;
		wp.timeout_s = gwaction::watch_timeout_s();
		wp.frozen = false;
		int go = -1;
		pid_t w = gwaction::spawn_watcher(
			wp, "/proc/self/fd/" + std::to_string(image_dir()) + "/gpuwatch-watcher.log", &go);
		bool started = ::write(go, "g", 1) == 1;
		int err = errno;
		close(go);
		if (!started)
			throw Error("cannot start watcher " + std::to_string(w) + ": " + gw::errno_text(err));
		log_info("pid %u: watcher %d puts its i915 mappings back should criu die before the dump's end", pid,
			 w);
	} catch (const std::exception &e) {
		log_warn("pid %u: no watcher puts its i915 mappings back should criu die before the dump's end: %s",
			 pid, e.what());
	}
}

int convert_seized_maps(DumpSession &s, uint32_t pid)
{
	const gw::manifest::Manifest *manifest = nullptr;
	for (const gw::manifest::Manifest &m : s.manifests)
		if (m.find_process(pid))
			manifest = &m;
	std::vector<std::string> notes;
	std::vector<MapRecord> plan = gwaction::plan_conversion(pid, manifest, notes);
	if (plan.empty())
		return -ENOTSUP;
	std::string why;
	if (!gwremote::available(&why))
		throw Error("pid " + std::to_string(pid) +
			    " has i915 mappings CRIU cannot dump, and they cannot be converted: " + why);
	gwremote::MapsRecord &rec = record();
	if (rec.cgroup.empty()) {
		rec.cgroup = gw::cgroup_v2_dir_of_pid(pid);
		rec.criu_pid = static_cast<uint32_t>(getpid());
	}
	std::vector<MapRecord> done;
	{
		gwremote::RemoteTask t = gwremote::RemoteTask::attach(static_cast<pid_t>(pid));
		try {
			for (const MapRecord &m : plan) {
				gwremote::convert_map(t, m);
				done.push_back(m);
			}
		} catch (const std::exception &e) {
			gwremote::RevertResult r = gwremote::revert_maps(t, done);
			t.finish();
			throw Error("pid " + std::to_string(pid) + ": converting its i915 mappings failed: " +
				    e.what() + " (" + std::to_string(r.reverted) + " put back" +
				    (r.errors.empty() ? "" : ", " + std::to_string(r.errors.size()) + " could not be") +
				    ")");
		}
		t.finish();
	}
	for (const std::string &n : notes)
		log_warn("%s", n.c_str());
	rec.maps.insert(rec.maps.end(), done.begin(), done.end());
	write_image(gwremote::kMapsRecordName, gwremote::to_json(rec).dump() + "\n");
	watch_for_criu(pid, rec.cgroup, done);
	std::size_t before = s.vmas.size();
	add_converted_vmas(s, done);
	log_info("pid %u: %zu i915 mappings converted in the seized task (%zu placeholders) before CRIU reads its "
		 "mappings",
		 pid, done.size(), s.vmas.size() - before);
	return 0;
}

void attribute_late_maps(DumpSession &s, int lfd, const FileImage &img)
{
	for (std::size_t i = 0; i < s.vmas.size(); ++i) {
		VmaRec &v = s.vmas[i];
		if (!v.late || s.attributed[i])
			continue;
		const MapRecord *m = nullptr;
		for (const MapRecord &c : converted())
			if (c.pid == v.pid && c.start == v.start)
				m = &c;
		bool held = false;
		for (const Holder &h : img.holders)
			for (int fd : h.fds)
				held |= h.pid == v.pid && fd == v.late->fd;
		if (!m || !held || !m->handle)
			continue;
		const HandleRec *h = nullptr;
		for (const HandleRec &x : img.handles)
			if (x.handle == *m->handle)
				h = &x;
		if (!h) {
			log_error("mapping %s of pid %u: handle %u is not in file %u: it cannot come back",
				  range(v.start, v.length).c_str(), v.pid, *m->handle, img.criu_id);
			continue;
		}
		uint64_t delta = v.offset; // shmem: the offset in the object
		if (v.late->kind == "gem") {
			uint64_t base = 0;
			// the (object, type) fake offset exists already (it was mapped): asking again grants nothing new
			int e = v.late->mmap_type ? i915::mmap_offset(lfd, h->handle, *v.late->mmap_type, &base)
						  : -EINVAL;
			if (e != 0 || v.offset < base) {
				log_error("mapping %s of pid %u: the fake offset of handle %u cannot be read back "
					  "(%s): it cannot come back",
					  range(v.start, v.length).c_str(), v.pid, h->handle,
					  e ? gw::errno_text(-e).c_str() : "mismatch");
				continue;
			}
			delta = v.offset - base;
		}
		v.file = img.criu_id;
		v.device = img.device;
		v.handle = h->handle;
		v.object = h->object;
		v.object_size = h->size;
		v.delta = delta;
		s.attributed[i] = true;
		log_debug("mapping %s of pid %u (placeholder): file %u, handle %u, delta %llu",
			  range(v.start, v.length).c_str(), v.pid, img.criu_id, h->handle, (unsigned long long)delta);
	}
}

void revert_converted_maps()
{
	std::map<uint32_t, std::vector<MapRecord>> by_pid;
	for (const MapRecord &m : converted())
		if (m.mode == MapMode::Placeholder)
			by_pid[m.pid].push_back(m);
	for (auto &[pid, maps] : by_pid) {
		if (!traced_by_me(pid))
			continue; // gone (dumped and killed) or never seized: the helper's watcher sees to it
		try {
			gwremote::RemoteTask t = gwremote::RemoteTask::attach(static_cast<pid_t>(pid));
			gwremote::RevertResult r = gwremote::revert_maps(t, maps);
			t.finish();
			for (const std::string &e : r.errors)
				log_error("pid %u: %s", pid, e.c_str());
			for (const std::string &n : r.notes)
				log_info("pid %u: %s", pid, n.c_str());
			log_info("pid %u: %d i915 mappings put back in the dumped task", pid, r.reverted);
		} catch (const std::exception &e) {
			log_error("pid %u: the i915 mappings replaced for the dump cannot be put back: %s (the "
				  "helper's watcher "
				  "tries again once criu exits)",
				  pid, e.what());
		}
	}
}

int map_back_late(int pid, uint32_t vpid)
{
	const RestoreImages &im = restore_images();
	std::vector<const VmaRec *> mine;
	for (const VmaRec &v : im.vmas)
		if (v.late && v.vpid == vpid)
			mine.push_back(&v);
	if (mine.empty())
		return 0;
	try {
		gwremote::RemoteTask t = gwremote::RemoteTask::attach(pid);
		for (const VmaRec *v : mine) {
			int prot = prot_bits(v->prot);
			if (v->stateless) {
				// a stateless checkpoint's: zero-filled memory where the placeholder is
				t.checked("mmap", SYS_mmap, v->start, v->length, static_cast<unsigned long>(prot),
					  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, static_cast<unsigned long>(-1), 0);
				continue;
			}
			UniqueFd fd = task_drm_fd(pid, v->late->fd);
			if (v->late->kind == "shmem") {
				gwremote::map_legacy(t, v->start, v->length, prot, v->late->fd, *v->handle, v->delta,
						     v->late->wc);
			} else {
				uint64_t off = 0;
				if (int e = i915::mmap_offset(fd.get(), *v->handle, *v->late->mmap_type, &off); e != 0)
					throw Error("no mmap offset for handle " + std::to_string(*v->handle) + ": " +
						    gw::errno_text(-e));
				gwremote::map_gem(t, v->start, v->length, prot, v->late->fd, off + v->delta);
			}
			log_debug("pid %d: mapping %s back on handle %u of fd %d", pid,
				  range(v->start, v->length).c_str(), *v->handle, v->late->fd);
		}
		t.finish();
	} catch (const std::exception &e) {
		log_error("pid %d: cannot map its i915 buffers back (%s): killing it rather than resuming it with "
			  "holes in "
			  "its memory",
			  pid, e.what());
		kill(pid, SIGKILL);
		return -1;
	}
	log_info("pid %d: %zu i915 mappings back at their addresses%s", pid, mine.size(),
		 mine.front()->stateless ? ", as zero-filled memory (stateless checkpoint)" : "");
	return 0;
}

} // namespace gwcriu
