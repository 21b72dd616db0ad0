#include "daemon.hpp"

#include <array>
#include <cerrno>
#include <cstdarg>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <set>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "background.hpp"
#include "control_server.hpp"
#include "drm_decode.hpp"
#include "event_abi.hpp"
#include "model.hpp"
#include "snapshot.hpp"
#include "sysutil.hpp"
#include "tracer.hpp"

namespace gw
{

namespace
{

using Clock = std::chrono::steady_clock;

std::string node_namer(uint32_t major, uint32_t minor)
{
	return drm_node_path(major, minor);
}

/* the BPF side records exactly the core ioctls the decoder knows */
std::vector<uint8_t> state_changing_core_ioctl_nrs()
{
	std::vector<uint8_t> nrs;
	for (const auto &d : drm::core_ioctls())
		nrs.push_back(static_cast<uint8_t>(d.nr));
	return nrs;
}

int64_t now_ms()
{
	return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch()).count();
}

} // namespace

void set_decoded_ioctls(Tracer::Options &topts)
{
	topts.ioctl_nrs = state_changing_core_ioctl_nrs();
	for (uint8_t d = 1; d < GW_DRV_MAX; ++d) {
		topts.drv_names[d] = std::string(drm::driver_name(d));
		for (const auto &desc : drm::driver_ioctls(topts.drv_names[d]))
			topts.drv_nrs[d].push_back(static_cast<uint8_t>(desc.nr));
	}
	// the rest, unless known to change nothing: its success alone makes the file's state unknown
	for (unsigned nr = 0; nr < 256; ++nr) {
		if (!drm::is_driver_nr(nr)) {
			if (!drm::is_decoded("", nr) && !drm::is_quiet("", nr))
				topts.note_nrs.push_back(static_cast<uint8_t>(nr));
			continue;
		}
		for (uint8_t d = 0; d < GW_DRV_MAX; ++d)
			if (!drm::is_decoded(topts.drv_names[d], nr) && !drm::is_quiet(topts.drv_names[d], nr))
				topts.drv_note_nrs[d].push_back(static_cast<uint8_t>(nr));
	}
}

namespace
{

class Daemon
{
public:
	Daemon(const AttachOptions &opts, CgroupDir cg) : opts_(opts), cg_(std::move(cg)), model_(cg_.path)
	{
		model_.set_node_namer(&node_namer);
	}

	int run()
	{
		Tracer::Options topts;
		topts.cgroup_fd = cg_.fd.get();
		topts.ring_bytes = opts_.ring_bytes;
		set_decoded_ioctls(topts);
		topts.verbose = opts_.verbose;
		topts.hooks = opts_.hooks;
		tracer_ = std::make_unique<Tracer>(topts, [this](std::span<const std::byte> r) { on_record(r); });

		reg_ = std::make_unique<control::Registration>(opts_.run_dir, cg_.path, opts_.manifest);
		size_t n = sync(); /* the attach-time snapshot */
		log("attached to %s (%zu processes, hooks: %s); manifest %s", cg_.path.c_str(), n,
		    tracer_->hook_path().c_str(), opts_.manifest.c_str());
		for (HookGroup g : kHookGroups)
			log("  %s: %s (%s)", group_name(g), tracer_->hooks().fexit(g) ? "fexit" : "tracepoint",
			    tracer_->hooks()[g].reason.c_str());
		return loop();
	}

private:
	// --log-records: one line per record; ioctls with their command, extension records with
	// what they captured (debugging the tracer against a driver)
	void log_record(const gw_hdr &h, std::span<const std::byte> rec)
	{
		std::string extra;
		char buf[64];
		if (auto io = abi::read_ioctl(rec)) {
			std::snprintf(buf, sizeof buf, " ioctl 0x%08x drv %u ret %d", io->cmd, io->drv, io->ret);
			extra = buf;
		} else if (auto x = abi::read_record<gw_ev_ioctl_ext>(rec)) {
			std::snprintf(buf, sizeof buf, " ext of 0x%08x: %u nodes, %u blobs%s", x->cmd, x->n_nodes,
				      x->n_blobs, x->truncated ? ", truncated" : "");
			extra = buf;
			for (unsigned i = 0; i < x->n_nodes && i < GW_EXT_NODES_MAX; ++i) {
				extra += "\n    node " + std::to_string(i) + ":";
				for (unsigned b = 0; b < GW_EXT_NODE_SIZE; ++b) {
					std::snprintf(buf, sizeof buf, "%s%02x", b % 8 ? "" : " ", x->nodes[i].data[b]);
					extra += buf;
				}
			}
		}
		log("record kind %u hook %u size %zu tgid %u tid %u%s", h.kind, h.hook, rec.size(), h.tgid, h.tid,
		    extra.c_str());
	}

	void log(const char *fmt, ...) __attribute__((format(printf, 2, 3)))
	{
		va_list ap;
		va_start(ap, fmt);
		fputs("gpuwatch: ", stderr);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
		va_end(ap);
	}

	bool in_subtree(uint64_t cgid)
	{
		if (subtree_ids_.count(cgid))
			return true;
		std::set<uint32_t> pids; /* a cgroup created since the last scan? */
		subtree_ids_.clear();
		scan_cgroup_tree(cg_.path, pids, subtree_ids_);
		return subtree_ids_.count(cgid) != 0;
	}

	void on_record(std::span<const std::byte> rec)
	{
		gw_hdr h{};
		if (rec.size() >= sizeof(h))
			std::memcpy(&h, rec.data(), sizeof(h));
		if (opts_.log_records)
			log_record(h, rec);
		if (h.hook < by_hook_.size())
			by_hook_[h.hook]++;
		if (h.kind == GW_EV_CGROUP_MOVE && rec.size() == sizeof(gw_ev_cgroup_move)) {
			gw_ev_cgroup_move mv;
			std::memcpy(&mv, rec.data(), sizeof(mv));
			on_cgroup_move(mv.hdr.tgid, mv.dst_cgid);
			return;
		}
		if (model_.apply(rec) == ApplyStatus::unknown_process && h.kind != GW_EV_EXIT) {
			/* first sign of a process we did not know: take what it already holds, then
			 * replay the record on top (records are idempotent over a snapshot) */
			snapshot_pid(h.tgid);
			if (!model_.has_process(h.tgid))
				model_.add_process(h.tgid, proc_comm(h.tgid));
			model_.apply(rec);
		}
	}

	void snapshot_pid(uint32_t tgid)
	{
		try {
			snapshot_into(*tracer_, model_, {tgid});
		} catch (const Error &e) {
			if (::kill(tgid, 0) == 0) /* a vanished process holds nothing: not an error */
				model_.mark_incomplete(std::string("snapshot of ") + std::to_string(tgid) + ": " +
						       e.what());
		}
	}

	void on_cgroup_move(uint32_t tgid, uint64_t dst)
	{
		bool inside = in_subtree(dst);
		if (inside && !model_.has_process(tgid))
			snapshot_pid(tgid);
		else if (!inside && model_.has_process(tgid)) {
			model_.remove_process(tgid);
		}
	}

	void refresh_counters()
	{
		gw_counters c = tracer_->counters();
		model_.set_kernel_counters(c.lost_events + c.pending_full, c.failed_reads);
	}

	/* "sync": everything the kernel has queued is applied, what the followed processes hold
	 * now is reconciled with a fresh snapshot (fds received over sockets, io_uring opens),
	 * and the manifest on disk is current when the client reads it. Returns the number of
	 * processes in the followed cgroups. */
	size_t sync()
	{
		tracer_->drain();
		std::set<uint32_t> pids;
		scan_cgroup_tree(cg_.path, pids, subtree_ids_);
		snapshot_into(*tracer_, model_, pids);
		tracer_->drain();
		refresh_counters();
		write_manifest();
		return pids.size();
	}

	void serve_control()
	{
		UniqueFd c(::accept4(reg_->listen_fd(), nullptr, nullptr, SOCK_CLOEXEC));
		if (!c)
			return;
		std::string req;
		char buf[64];
		while (req.find('\n') == std::string::npos && req.size() < 64) {
			pollfd p{c.get(), POLLIN, 0};
			if (::poll(&p, 1, 1000) <= 0)
				return; /* a client that says nothing for a second is dropped */
			ssize_t n = ::recv(c.get(), buf, sizeof(buf), 0);
			if (n <= 0)
				return;
			req.append(buf, n);
		}
		req.resize(req.find('\n') == std::string::npos ? req.size() : req.find('\n'));
		std::string reply;
		if (req == "sync") {
			try {
				sync();
				reply = "ok " + std::to_string(model_.generation()) + "\n";
			} catch (const std::exception &e) {
				reply = std::string("error ") + e.what() + "\n";
			}
		} else {
			reply = "error unknown request\n";
		}
		::send(c.get(), reply.data(), reply.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
	}

	void render_and_write() const
	{
		manifest::Manifest m = model_.manifest();
		m.hooks = tracer_->hooks().manifest_paths();
		// each task as a reader in another pid namespace names it (CRIU in one: control::sync)
		for (manifest::Process &p : m.processes) {
			PidNsKey k = pid_ns_key(static_cast<uint32_t>(p.pid));
			p.pid_ns = k.ns;
			p.ns_pid = k.pid;
		}
		write_file_atomic(opts_.manifest, manifest::serialize(m));
	}

	/* a background write that has finished: its generation is on disk (a failed one is fatal,
	 * as an inline write's failure is) */
	void reap_writer(bool block)
	{
		bool was = writer_.running();
		std::string err = writer_.reap(block);
		if (!err.empty())
			throw Error("writing the manifest " + opts_.manifest + ": " + err);
		if (was && !writer_.running())
			written_gen_ = writing_gen_;
	}

	/* now, in this process (sync, stop): after any background write, which would otherwise
	 * rename an older manifest over this one */
	void write_manifest()
	{
		reap_writer(true);
		render_and_write();
		written_gen_ = model_.generation();
	}

	/* the debounced write: in a child working on a snapshot of the model, so the loop goes on
	 * reading records while a large manifest is built and written (inline if fork fails) */
	void write_manifest_background()
	{
		writing_gen_ = model_.generation();
		if (!writer_.start([this] { render_and_write(); }))
			write_manifest();
	}

	int loop()
	{
		sigset_t mask;
		sigemptyset(&mask);
		sigaddset(&mask, SIGINT);
		sigaddset(&mask, SIGTERM);
		UniqueFd sfd(::signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK));
		UniqueFd ep(::epoll_create1(EPOLL_CLOEXEC));
		if (!sfd || !ep)
			throw Error("signalfd/epoll: " + errno_text(errno));
		epoll_event ev{};
		ev.events = EPOLLIN;
		ev.data.u32 = 1;
		epoll_ctl(ep.get(), EPOLL_CTL_ADD, sfd.get(), &ev);
		ev.data.u32 = 2;
		epoll_ctl(ep.get(), EPOLL_CTL_ADD, tracer_->epoll_fd(), &ev);
		ev.data.u32 = 3;
		epoll_ctl(ep.get(), EPOLL_CTL_ADD, reg_->listen_fd(), &ev);

		bool busy = false;
		WriteDebounce debounce(opts_.debounce_ms);
		Clock::time_point cgroup_checked = Clock::now();
		for (;;) {
			int timeout = debounce.timeout_ms(busy, writer_.running(), now_ms());
			/* records arrive in batches: while they keep coming, sleep WriteDebounce::kBatchMs
			 * between drains and let no record wake us (each wakeup costs the traced task); once a
			 * drain finds the ring empty, ask the next record to wake us, and look once more for
			 * one that came before the ask */
			if (!busy && !writer_.running()) {
				tracer_->arm_wakeup();
				int got = tracer_->drain();
				if (got < 0 && got != -EINTR)
					throw Error("reading the ring buffer: " + errno_text(-got));
				if (got > 0)
					timeout = 0;
			}
			epoll_event evs[3];
			int n = ::epoll_wait(ep.get(), evs, 3, timeout);
			if (n < 0 && errno != EINTR)
				throw Error("epoll_wait: " + errno_text(errno));
			bool stop = false, control = false;
			for (int i = 0; i < n; i++) {
				stop |= evs[i].data.u32 == 1;
				control |= evs[i].data.u32 == 3;
			}
			int got = tracer_->drain();
			if (got < 0 && got != -EINTR)
				throw Error("reading the ring buffer: " + errno_text(-got));
			busy = got > 0;
			refresh_counters();
			if (control)
				serve_control();
			/* the followed cgroup was removed (its container ended, a runtime deleted it after a
			 * checkpoint): nothing is left to follow, and nobody may be left to stop us */
			bool gone = false;
			if (Clock::now() - cgroup_checked >= std::chrono::seconds(1)) {
				cgroup_checked = Clock::now();
				gone = ::faccessat(cg_.fd.get(), "cgroup.procs", F_OK, 0) != 0 && errno == ENOENT;
			}
			if (stop || gone) {
				write_manifest();
				log("%s; records by hook: tracepoint %llu, fexit %llu; final manifest written to %s",
				    gone ? ("cgroup " + cg_.path + " was removed: stopped").c_str() : "stopped",
				    (unsigned long long)by_hook_[GW_HOOK_TRACEPOINT],
				    (unsigned long long)by_hook_[GW_HOOK_FEXIT], opts_.manifest.c_str());
				return 0;
			}
			reap_writer(false);
			if (debounce.update(model_.generation(), writer_.running() ? writing_gen_ : written_gen_,
					    writer_.running(), now_ms()))
				write_manifest_background();
		}
	}

	AttachOptions opts_;
	CgroupDir cg_;
	Model model_;
	std::unique_ptr<Tracer> tracer_;
	std::unique_ptr<control::Registration> reg_;
	std::set<uint64_t> subtree_ids_;
	uint64_t written_gen_ = ~0ull; /* the model generation on disk */
	uint64_t writing_gen_ = 0;     /* the generation the running background write writes */
	BackgroundJob writer_;
	std::array<uint64_t, 4> by_hook_{}; /* ring-buffer records per gw_hdr.hook */
};

} // namespace

int run_attach(const AttachOptions &opts)
{
	require_root("gpuwatch attach");
	require_kernel_btf();
	std::string dir = opts.cgroup;
	if (opts.pid)
		dir = cgroup_v2_dir_of_pid(*opts.pid);
	CgroupDir cg = open_cgroup_v2(dir);
	check_writable_dir_for(opts.manifest);
	ensure_tracefs();

	/* block the signals before any thread (libbpf has none) so signalfd gets them */
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, nullptr);

	Daemon d(opts, std::move(cg));
	return d.run();
}

} // namespace gw
