#include "tracer.hpp"

#include <bpf/bpf.h>
#include <algorithm>
#include <bpf/libbpf.h>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>
#include <unistd.h>

#include "gpuwatch.skel.h"
#include "hook_path_probe.hpp"
#include "sysutil.hpp"

namespace gw
{

namespace
{
bool g_verbose = false;
std::string g_last_libbpf_msg;

int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char buf[1024];
	vsnprintf(buf, sizeof(buf), fmt, ap);
	if (level != LIBBPF_DEBUG) {
		std::string s(buf);
		while (!s.empty() && s.back() == '\n')
			s.pop_back();
		if (!s.empty())
			g_last_libbpf_msg = s;
	}
	if (g_verbose)
		fputs(buf, stderr);
	return 0;
}
} // namespace

static std::string libbpf_error(const std::string &what, int err)
{
	std::string msg = what + ": " + errno_text(err < 0 ? -err : err);
	if (!g_last_libbpf_msg.empty())
		msg += " (libbpf: " + g_last_libbpf_msg + ")";
	return msg;
}

/* a hook group's fentry/fexit programs (bpf/fexit.bpf.h) */
static std::vector<bpf_program *> fexit_programs(gpuwatch_bpf *s, HookGroup g)
{
	switch (g) {
	case HookGroup::ioctl: return {s->progs.gw_fexit_drm_ioctl};
	case HookGroup::mmap: return {s->progs.gw_fexit_mmap_region};
	case HookGroup::cloexec: return {s->progs.gw_fexit_set_close_on_exec};
	case HookGroup::syscalls:
		return {s->progs.fexit_sys_open,    s->progs.fexit_sys_openat,       s->progs.fexit_sys_openat2,
			s->progs.fentry_sys_close,  s->progs.fentry_sys_close_range, s->progs.fexit_sys_close_range,
			s->progs.fexit_sys_dup,     s->progs.fentry_sys_dup2,        s->progs.fexit_sys_dup2,
			s->progs.fentry_sys_dup3,   s->progs.fexit_sys_dup3,         s->progs.fentry_sys_fcntl,
			s->progs.fexit_sys_fcntl,   s->progs.fentry_sys_munmap,      s->progs.fexit_sys_munmap,
			s->progs.fentry_sys_mremap, s->progs.fexit_sys_mremap};
	}
	return {};
}

/* each group's fentry/fexit programs or their tracepoint twins, and the twins' knobs */
static void select_programs(gpuwatch_bpf *s, const HookPlan &plan)
{
	for (HookGroup g : kHookGroups)
		for (bpf_program *p : fexit_programs(s, g))
			bpf_program__set_autoload(p, plan.fexit(g));
	/* their tracepoint twins (gpuwatch.bpf.c) */
	bool sys_tp = !plan.fexit(HookGroup::syscalls);
	for (bpf_program *p :
	     {s->progs.tp_exit_open, s->progs.tp_exit_openat, s->progs.tp_exit_openat2, s->progs.tp_enter_close,
	      s->progs.tp_enter_close_range, s->progs.tp_exit_close_range, s->progs.tp_exit_dup, s->progs.tp_enter_dup2,
	      s->progs.tp_exit_dup2, s->progs.tp_enter_dup3, s->progs.tp_exit_dup3, s->progs.tp_enter_fcntl,
	      s->progs.tp_exit_fcntl, s->progs.tp_enter_munmap, s->progs.tp_exit_munmap, s->progs.tp_enter_mremap,
	      s->progs.tp_exit_mremap})
		bpf_program__set_autoload(p, sys_tp);
	bool mmap_tp = !plan.fexit(HookGroup::mmap);
	bpf_program__set_autoload(s->progs.tp_enter_mmap, mmap_tp);
	bpf_program__set_autoload(s->progs.tp_exit_mmap, mmap_tp);
	/* sys_*_ioctl also carries FIOCLEX/FIONCLEX: needed unless both groups are on fexit */
	bool ioctl_tp = !plan.fexit(HookGroup::ioctl) || !plan.fexit(HookGroup::cloexec);
	bpf_program__set_autoload(s->progs.tp_enter_ioctl, ioctl_tp);
	bpf_program__set_autoload(s->progs.tp_exit_ioctl, ioctl_tp);
	s->rodata->gw_ioctl_fexit = plan.fexit(HookGroup::ioctl);
	s->rodata->gw_cloexec_fexit = plan.fexit(HookGroup::cloexec);
}

struct Tracer::Impl {
	gpuwatch_bpf *skel = nullptr;
	ring_buffer *rb = nullptr;
	RecordFn on_record;
	HookPlan plan;
	/* the kernel takes a task iterator's pid (6.1+): snapshots walk only the followed processes */
	bool iter_by_pid = true;

	static int on_sample(void *ctx, void *data, size_t size)
	{
		auto *self = static_cast<Impl *>(ctx);
		self->on_record(std::span<const std::byte>(static_cast<const std::byte *>(data), size));
		return 0;
	}
	void reset()
	{
		ring_buffer__free(rb);
		rb = nullptr;
		gpuwatch_bpf__destroy(skel);
		skel = nullptr;
	}
	~Impl() { reset(); }

	/* opens, loads and attaches the object with the programs of `plan` */
	void load(const Options &opts)
	{
		skel = gpuwatch_bpf__open();
		if (!skel)
			throw Error(libbpf_error("opening the BPF object failed", errno));
		select_programs(skel, plan);
		skel->rodata->gw_self_tgid = ::getpid();
		for (uint8_t nr : opts.ioctl_nrs)
			skel->rodata->gw_ioctl_nr_mask[nr >> 6] |= 1ull << (nr & 63);
		for (uint8_t nr : opts.note_nrs)
			skel->rodata->gw_ioctl_note_mask[nr >> 6] |= 1ull << (nr & 63);
		for (std::size_t d = 0; d < GW_DRV_MAX; ++d)
			for (uint8_t nr : opts.drv_note_nrs[d]) {
				if (nr < 0x40 || nr >= 0xa0)
					throw Error("driver ioctl nr " + std::to_string(nr) + " is outside 0x40-0x9f");
				unsigned bit = nr - 0x40;
				skel->rodata->gw_drv_note_mask[d][bit >> 6] |= 1ull << (bit & 63);
			}
		for (std::size_t d = 1; d < GW_DRV_MAX; ++d) {
			const std::string &name = opts.drv_names[d];
			if (name.size() >= 2 * sizeof(uint64_t))
				throw Error("driver name '" + name + "' is longer than the tracer compares");
			std::memcpy((void *)skel->rodata->gw_drv_names[d], name.data(), name.size());
			for (uint8_t nr : opts.drv_nrs[d]) {
				if (nr < 0x40 || nr >= 0xa0)
					throw Error("driver ioctl nr " + std::to_string(nr) + " is outside 0x40-0x9f");
				unsigned bit = nr - 0x40;
				skel->rodata->gw_drv_nr_mask[d][bit >> 6] |= 1ull << (bit & 63);
			}
		}
		if (int err = bpf_map__set_max_entries(skel->maps.gw_events, opts.ring_bytes))
			throw Error(libbpf_error("ring buffer size " + std::to_string(opts.ring_bytes), err));
		skel->rodata->gw_wake_bytes = opts.ring_bytes / 4;
		skel->rodata->gw_ring_step = std::min<uint64_t>(4096, opts.ring_bytes / 4);
		if (int err = gpuwatch_bpf__load(skel))
			throw Error(libbpf_error("loading the BPF programs failed", err));
		uint32_t zero = 0;
		int cgfd = opts.cgroup_fd;
		if (cgfd >= 0 && bpf_map_update_elem(bpf_map__fd(skel->maps.gw_cgroup), &zero, &cgfd, BPF_ANY) != 0)
			throw Error("setting the followed cgroup in the BPF map failed: " + errno_text(errno));
		rb = ring_buffer__new(bpf_map__fd(skel->maps.gw_events), &Impl::on_sample, this, nullptr);
		if (!rb)
			throw Error(libbpf_error("creating the ring buffer reader failed", errno));
		if (int err = gpuwatch_bpf__attach(skel))
			throw Error(libbpf_error("attaching the BPF programs failed", err));
	}
};

Tracer::Tracer(const Options &opts, RecordFn on_record) : impl_(std::make_unique<Impl>())
{
	g_verbose = opts.verbose;
	libbpf_set_print(libbpf_print);
	impl_->on_record = std::move(on_record);

	FexitProbes unprobed;
	if (opts.hooks.mode == HookMode::tracepoint) {
		impl_->plan = plan_hooks(opts.hooks, unprobed);
		impl_->load(opts);
		return;
	}
	/* Optimistic first: every group whose target the kernel's BTF has goes on fexit, in the one
	 * load and attach. Where that is refused (a kernel without BPF trampolines, lockdown), the
	 * groups are probed one by one (a load and an attach each: seconds under emulation) and the
	 * plan made from what each probe says. The plan's reasons read the same either way: a group
	 * on fexit did load and attach. */
	bool optimistic = true;
	try {
		impl_->plan = plan_hooks(opts.hooks, fexit_targets_present());
	} catch (const Error &) {
		optimistic = false; /* an explicit request the BTF already refuses: say it as a probe does */
		impl_->plan = plan_hooks(opts.hooks, probe_fexit());
	}
	try {
		impl_->load(opts);
		return;
	} catch (const Error &e) {
		if (!optimistic || !impl_->plan.any_fexit())
			throw;
		impl_->reset();
	}
	impl_->plan = plan_hooks(opts.hooks, probe_fexit());
	try {
		impl_->load(opts);
	} catch (const Error &e) {
		if (opts.hooks.mode != HookMode::automatic || !impl_->plan.any_fexit())
			throw;
		impl_->reset();
		impl_->plan = fallback_to_tracepoints(impl_->plan, e.what());
		impl_->load(opts);
	}
}

Tracer::~Tracer() = default;

const HookPlan &Tracer::hooks() const
{
	return impl_->plan;
}

std::string Tracer::try_fexit(HookGroup g)
{
	libbpf_set_print(libbpf_print);
	const FexitTarget &t = fexit_target(g);
	std::string what = std::string(t.programs) + " " + t.function;
	std::unique_ptr<gpuwatch_bpf, void (*)(gpuwatch_bpf *)> s(gpuwatch_bpf__open(), gpuwatch_bpf__destroy);
	if (!s)
		return what + ": opening the BPF object failed: " + errno_text(errno);
	bpf_program *p;
	bpf_object__for_each_program(p, s->obj) bpf_program__set_autoload(p, false);
	std::vector<bpf_program *> progs = fexit_programs(s.get(), g);
	for (bpf_program *q : progs)
		bpf_program__set_autoload(q, true);
	/* tiny maps: only whether the programs load and attach matters here */
	bpf_map__set_max_entries(s->maps.gw_events, ::getpagesize());
	for (bpf_map *m : {s->maps.gw_has_maps, s->maps.gw_snap_pids})
		bpf_map__set_max_entries(m, 1);
	if (int err = gpuwatch_bpf__load(s.get()))
		return what + ": loading refused: " + errno_text(-err);
	std::string why;
	std::vector<bpf_link *> links;
	for (bpf_program *q : progs) {
		bpf_link *l = bpf_program__attach(q);
		if (!l) {
			why = what + ": attaching refused: " + errno_text(errno);
			break;
		}
		links.push_back(l);
	}
	for (bpf_link *l : links)
		bpf_link__destroy(l);
	return why;
}

int Tracer::epoll_fd() const
{
	return ring_buffer__epoll_fd(impl_->rb);
}
int Tracer::drain()
{
	return ring_buffer__consume(impl_->rb);
}
void Tracer::arm_wakeup()
{
	__atomic_store_n(&impl_->skel->bss->gw_wake_armed, 1u, __ATOMIC_SEQ_CST);
}

gw_counters Tracer::counters() const
{
	gw_counters c{};
	std::memcpy(&c, (const void *)&impl_->skel->bss->gw_counters, sizeof(c));
	return c;
}

void Tracer::mark_has_maps(uint32_t tgid)
{
	uint8_t one = 1;
	bpf_map_update_elem(bpf_map__fd(impl_->skel->maps.gw_has_maps), &tgid, &one, BPF_ANY);
}

static void run_iter(bpf_link *link, const char *what, std::vector<std::vector<std::byte>> &out)
{
	UniqueFd fd(bpf_iter_create(bpf_link__fd(link)));
	if (!fd)
		throw Error(std::string("snapshot: creating the ") + what + " iterator failed: " + errno_text(errno));
	std::vector<std::byte> buf;
	std::byte chunk[8192];
	for (;;) {
		ssize_t n = ::read(fd.get(), chunk, sizeof(chunk));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) /* the iterator restarts after a task vanished mid-read */
				continue;
			throw Error(std::string("snapshot: reading the ") + what +
				    " iterator failed: " + errno_text(errno));
		}
		if (n == 0)
			break;
		buf.insert(buf.end(), chunk, chunk + n);
	}
	size_t off = 0;
	while (off + sizeof(gw_hdr) <= buf.size()) {
		gw_hdr h;
		std::memcpy(&h, buf.data() + off, sizeof(h));
		if (h.size < sizeof(gw_hdr) || off + h.size > buf.size())
			break; /* malformed: stop; the model would count it anyway */
		out.emplace_back(buf.begin() + off, buf.begin() + off + h.size);
		off += h.size;
	}
}

/* The iterator of prog over one process's threads (its files, its mappings), pid as this
 * process's pid namespace names it. False when the kernel refuses the parameter (before 6.0:
 * E2BIG or EINVAL) or ignores it (6.0 walks every task: a record of another followed process
 * comes back, ENOTSUP), and out is then left as it was. */
static bool run_pid_iter(bpf_program *prog, uint32_t pid, const char *what, std::vector<std::vector<std::byte>> &out)
{
	union bpf_iter_link_info linfo;
	std::memset(&linfo, 0, sizeof(linfo));
	linfo.task.pid = pid;
	LIBBPF_OPTS(bpf_iter_attach_opts, opts, .link_info = &linfo, .link_info_len = sizeof(linfo));
	bpf_link *link = bpf_program__attach_iter(prog, &opts);
	if (!link)
		return false;
	std::vector<std::vector<std::byte>> got;
	try {
		run_iter(link, what, got);
	} catch (...) {
		bpf_link__destroy(link);
		throw;
	}
	bpf_link__destroy(link);
	for (const auto &rec : got) {
		gw_hdr h;
		std::memcpy(&h, rec.data(), sizeof(h));
		if (h.tgid != pid) {
			errno = ENOTSUP;
			return false;
		}
	}
	out.insert(out.end(), std::make_move_iterator(got.begin()), std::make_move_iterator(got.end()));
	return true;
}

std::vector<std::vector<std::byte>> Tracer::snapshot(const std::set<uint32_t> &pids)
{
	/* up to this many processes, one iterator each costs less than a walk of every task's
	 * files and mappings on the host (each a program run) */
	constexpr std::size_t kPerPidMax = 64;
	std::vector<std::vector<std::byte>> out;
	int mfd = bpf_map__fd(impl_->skel->maps.gw_snap_pids);
	uint8_t one = 1;
	for (uint32_t pid : pids)
		bpf_map_update_elem(mfd, &pid, &one, BPF_ANY);
	try {
		bool done = false;
		if (impl_->iter_by_pid && pids.size() <= kPerPidMax) {
			/* every file before any mapping, as the walk gives them: a mapping joins its file
			 * whoever holds the fd */
			done = true;
			for (auto [prog, what] : {std::pair{impl_->skel->progs.gw_snap_files, "task_file"},
						  std::pair{impl_->skel->progs.gw_snap_vmas, "task_vma"}})
				for (uint32_t pid : pids)
					if (done && !run_pid_iter(prog, pid, what, out)) {
						fprintf(stderr,
							"gpuwatch: the kernel refuses a task iterator's pid (%s): "
							"snapshots walk every task and keep the followed ones\n",
							errno_text(errno).c_str());
						impl_->iter_by_pid = done = false;
						out.clear();
					}
		}
		if (!done) {
			run_iter(impl_->skel->links.gw_snap_files, "task_file", out);
			run_iter(impl_->skel->links.gw_snap_vmas, "task_vma", out);
		}
	} catch (...) {
		for (uint32_t pid : pids)
			bpf_map_delete_elem(mfd, &pid);
		throw;
	}
	for (uint32_t pid : pids)
		bpf_map_delete_elem(mfd, &pid);
	return out;
}

} // namespace gw
