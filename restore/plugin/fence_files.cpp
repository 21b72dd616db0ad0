#include "fence_files.hpp"
#include "drm_ops.hpp"

#include <cerrno>
#include <drm.h>
#include <fcntl.h>
#include <i915_drm.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "device.hpp"
#include "dump.hpp"
#include "dump_probe.hpp"
#include "log.hpp"
#include "restore.hpp"

namespace gwcriu
{
namespace
{

using json = nlohmann::json;

// "sync_file", "i915_perf" or "" from the fd's link (anon_inode:sync_file, anon_inode:[i915_perf]).
std::string kind_of(int fd)
{
	auto l = read_link("/proc/self/fd/" + std::to_string(fd));
	if (l && *l == "anon_inode:sync_file")
		return "sync_file";
	if (l && *l == "anon_inode:[i915_perf]")
		return "i915_perf";
	return "";
}

// A signalled sync_file made on fd's device: a signalled syncobj exported as a sync_file.
UniqueFd signalled_sync_file(int fd)
{
	drm_syncobj_create c = {};
	c.flags = DRM_SYNCOBJ_CREATE_SIGNALED;
	if (int e = xioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &c); e != 0)
		throw Error("cannot create a signalled syncobj: " + gw::errno_text(-e));
	drm_syncobj_handle h = {};
	h.handle = c.handle;
	h.flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE;
	int e = xioctl(fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &h);
	drm_syncobj_destroy d = {};
	d.handle = c.handle;
	xioctl(fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
	if (e != 0)
		throw Error("cannot export a sync_file: " + gw::errno_text(-e));
	return UniqueFd(h.fd);
}

UniqueFd perf_open(int fd, const FenceImage &f)
{
	check_perf_allowed();
	std::vector<uint64_t> props;
	for (const auto &[k, v] : f.properties) {
		props.push_back(k);
		props.push_back(v);
	}
	drm_i915_perf_open_param p = {};
	p.flags = f.perf_flags;
	p.num_properties = static_cast<uint32_t>(f.properties.size());
	p.properties_ptr = reinterpret_cast<uintptr_t>(props.data());
	int r;
	do
		r = ioctl(fd, DRM_IOCTL_I915_PERF_OPEN, &p);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		throw Error("cannot open the i915 perf stream again (" + std::to_string(f.properties.size()) +
			    " properties): " + gw::errno_text(errno));
	return UniqueFd(r);
}

} // namespace

// A perf stream is reopened by the plugin as root, before CRIU gives the task its credentials,
// with properties from the image: where the driver gates streams (i915's perf_stream_paranoid,
// 1 by default: CAP_PERFMON needed for system-wide ones) that would open for an image what its
// task may not have been allowed to. There only the administrator's GPUWATCH_RESTORE_PERF_STREAMS=1
// lets it; a driver without the knob (the gwi915 test fixture) does not gate them.
void check_perf_allowed(const std::string &paranoid_sysctl)
{
	auto paranoid = gw::read_text(paranoid_sysctl, 64);
	if (!paranoid || paranoid->empty() || paranoid->front() == '0' ||
	    env_u64("GPUWATCH_RESTORE_PERF_STREAMS", 0) == 1)
		return;
	throw Error("not reopened: i915 perf_stream_paranoid is on, and the restore (root, before the task's "
		    "credentials are back) cannot tell whether the task may open such a stream itself; set "
		    "GPUWATCH_RESTORE_PERF_STREAMS=1 for CRIU to trust the image's");
}

int dump_fence_file(int lfd, uint32_t id)
{
	FenceImage img;
	img.kind = kind_of(lfd);
	if (img.kind.empty())
		return -ENOTSUP;
	DumpSession &s = dump_session();
	img.criu_id = id;
	int fl = fcntl(lfd, F_GETFL);
	img.f_flags = fl < 0 ? O_RDONLY : static_cast<uint32_t>(fl) & (O_ACCMODE | O_NONBLOCK);
	std::string who;
	const gw::manifest::FenceOrigin *origin = nullptr;
	std::size_t index = 0;
	for (const Task &t : s.tasks) {
		Holder h{t.pid, t.vpid, {}};
		for (const TaskFd &tf : t.other_fds)
			if (same_file(getpid(), lfd, static_cast<int>(t.pid), tf.fd)) {
				h.fds.push_back(tf.fd);
				const gw::manifest::Fd *e = s.manifest_fd(t.pid, tf.fd, &index);
				auto kind = img.kind == "sync_file" ? gw::manifest::Fd::Kind::sync_file
								    : gw::manifest::Fd::Kind::i915_perf;
				if (e && !origin && e->kind == kind && e->origin.raw.is_object())
					origin = &e->origin;
				who += (who.empty() ? "" : ", ") + std::string("pid ") + std::to_string(t.pid) +
				       " fd " + std::to_string(tf.fd);
			}
		if (!h.fds.empty())
			img.holders.push_back(std::move(h));
	}
	who = img.kind + " " + std::to_string(id) + " (" + (who.empty() ? "no task fd" : who) + ")";
	const gw::manifest::File *mfile = origin && origin->file ? s.manifest_file(index, *origin->file) : nullptr;
	if (mfile && mfile->major == gw::kDrmMajor) {
		img.device = describe_device(mfile->major, mfile->minor, mfile->path, -1, mfile->driver,
					     img.holders.empty() ? 0 : img.holders[0].pid);
	} else if (const TaskFd *card = any_drm_fd(s)) {
		img.device = s.device_of_minor(card->minor, s.tasks.front().pid);
	} else {
		log_error("%s: no DRM device in the dumped tasks to make it on again", who.c_str());
		return -1;
	}
	if (img.kind == "i915_perf") {
		if (!origin || !origin->complete || !origin->properties) {
			log_error("%s: its properties are unknown (opened before gpuwatch attached, or not all "
				  "captured): it "
				  "cannot be opened again",
				  who.c_str());
			return -1;
		}
		if (origin->flags)
			img.perf_flags = *origin->flags;
		for (const auto &[key, value] : *origin->properties)
			img.properties.push_back({key, value});
	}
	write_image(fence_image_name(id), to_json(img, s.device_indexer()).dump(1));
	log_info("dumped %s on %s: %s", who.c_str(), img.device.path.c_str(),
		 img.kind == "sync_file" ? "it comes back signalled (GPU work in flight is not restored)"
					 : "it is opened again with the same properties (no samples carried over)");
	return 0;
}

int restore_fence_file(uint32_t id)
{
	std::string name = fence_image_name(id);
	if (!image_exists(name))
		return -ENOTSUP;
	note_restored_task();
	try {
		FenceImage f = parse_fence_image(read_image(name, kMaxJsonImage), name, restore_images().devices);
		ChosenDevice dev = choose_device(f.device);
		UniqueFd node = open_node(dev.path, O_RDWR, dev.minor);
		UniqueFd out = f.kind == "sync_file" ? signalled_sync_file(node.get()) : perf_open(node.get(), f);
		if (f.f_flags & O_NONBLOCK)
			fcntl(out.get(), F_SETFL, fcntl(out.get(), F_GETFL) | O_NONBLOCK);
		log_info("restored %s %u on %s%s", f.kind.c_str(), id, dev.path.c_str(),
			 f.kind == "sync_file" ? " (signalled: the GPU work it stood for is lost)" : "");
		int fd = dup(out.get());
		if (fd < 0)
			throw Error("cannot duplicate it: " + gw::errno_text(errno));
		return fd;
	} catch (const std::exception &e) {
		log_error("cannot restore %s: %s", name.c_str(), e.what());
		return -1;
	}
}

} // namespace gwcriu
