// gpuwatch: the command line. Only this file exits; everything else throws gw::Error.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "check.hpp"
#include "container_config.hpp"
#include "containers.hpp"
#include "control_client.hpp"
#include "criu_args.hpp"
#include "daemon.hpp"
#include "manifest/manifest.hpp"
#include "sysutil.hpp"

int main(int argc, char **argv)
{
	CLI::App app{"gpuwatch: follow the DRM (GPU) state of a cgroup's processes for CRIU checkpoint/restore"};
	app.set_version_flag("--version", "gpuwatch 0.1.0");
	app.require_subcommand(1);

	gw::AttachOptions aopts;
	uint32_t pid = 0;
	auto *attach = app.add_subcommand(
		"attach", "follow a cgroup and keep its manifest up to date (foreground; stops on SIGINT/SIGTERM)");
	auto *cg_opt =
		attach->add_option("--cgroup", aopts.cgroup, "cgroup v2 directory to follow (with its descendants)");
	auto *pid_opt = attach->add_option("--pid", pid, "follow the cgroup this process is in");
	cg_opt->excludes(pid_opt);
	attach->add_option("--manifest", aopts.manifest, "manifest file, rewritten atomically on every change")
		->required();
	attach->add_option("--ring-size", aopts.ring_bytes, "BPF ring buffer size in bytes (power of two)")
		->check(CLI::Range(4096u, 1u << 30));
	aopts.run_dir = gw::control::default_run_dir();
	attach->add_option(
		"--run-dir", aopts.run_dir,
		"where the daemon registers its control socket (default $GPUWATCH_RUN_DIR or /run/gpuwatch)");
	attach->add_flag("-v,--verbose", aopts.verbose, "print libbpf's messages");
	attach->add_flag("--log-records", aopts.log_records, "print one line per tracer record (debugging)");
	const char *hooks_help =
		"kernel hooks: auto (fentry/fexit where they load and attach, else the syscall "
		"tracepoints), tracepoint, or fexit (fail if unavailable); default $GPUWATCH_HOOKS or auto";
	std::string attach_hooks;
	attach->add_option("--hooks", attach_hooks, hooks_help)->check(CLI::IsMember({"auto", "tracepoint", "fexit"}));

	gw::CheckOptions copts;
	std::string check_hooks;
	auto *check = app.add_subcommand(
		"check", "probe this kernel: can gpuwatch run, and which hooks would it use (needs root)");
	check->add_option("--hooks", check_hooks, hooks_help)->check(CLI::IsMember({"auto", "tracepoint", "fexit"}));
	check->add_flag("--json", copts.json, "print one JSON object");
	check->add_flag("-v,--verbose", copts.verbose, "print libbpf's messages");

	std::string show_file;
	auto *show = app.add_subcommand("show", "print a readable summary of a manifest");
	show->add_option("manifest", show_file, "manifest file")->required();

	auto *cargs = app.add_subcommand(
		"criu-args",
		"print the CRIU options that load gpuwatch's plugin and action script "
		"(those /etc/criu/default.conf does not set already): criu dump ... $(gpuwatch criu-args)");

	gw::ContainerConfigOptions ccopts;
	auto *ccfg = app.add_subcommand("container-config",
					"configure CRIU (plugin) and the OCI hooks so that containers with a DRM "
					"device are followed, checkpointed and restored (needs root)");
	ccfg->add_option(
		    "--criu-conf", ccopts.criu_conf,
		    "CRIU configuration to add gpuwatch's plugin to (merged, not replaced); the default is read by "
		    "every CRIU, another file only by a runc container naming it (org.criu.config)")
		->capture_default_str();
	ccfg->add_option("--checkpoint-mode", ccopts.checkpoint_mode,
			 "what a checkpoint saves of DRM devices, written to /etc/criu/gpuwatch.conf for every CRIU "
			 "on the host: full (buffers, handles, driver state, mappings) or stateless (the fds only; "
			 "the application rebuilds its GPU state). Neither this nor --restore-signal given: that "
			 "file is left as it is")
		->check(CLI::IsMember({"full", "stateless"}));
	ccfg->add_option("--restore-signal", ccopts.restore_signal,
			 "the signal restored processes holding a DRM fd get once they resume (SIGUSR2, ...; none: "
			 "no signal), written to /etc/criu/gpuwatch.conf; sent by the action script (CRIU 3.19 and "
			 "later under a runtime)");
	ccfg->add_option("--hooks-dir", ccopts.hooks_dirs,
			 "OCI hooks directory, repeatable (default: /usr/share/containers/oci/hooks.d, podman's, and "
			 "/etc/containers/oci/hooks.d, CRI-O's override directory)");

	std::string hook_stage;
	auto *ohook = app.add_subcommand("oci-hook", "the OCI hook container-config installs (the OCI state on stdin)");
	ohook->add_option("stage", hook_stage, "prestart or poststop")
		->required()
		->check(CLI::IsMember({"prestart", "poststop"}));

	try {
		app.parse(argc, argv);
	} catch (const CLI::ParseError &e) {
		return app.exit(e);
	}

	try {
		if (attach->parsed()) {
			if (aopts.cgroup.empty() && !*pid_opt)
				throw gw::Error("attach needs --cgroup DIR or --pid PID");
			if (*pid_opt)
				aopts.pid = pid;
			if ((aopts.ring_bytes & (aopts.ring_bytes - 1)) != 0)
				throw gw::Error("--ring-size must be a power of two");
			aopts.hooks = gw::resolve_hook_request(attach_hooks, getenv("GPUWATCH_HOOKS"));
			return gw::run_attach(aopts);
		}
		if (check->parsed()) {
			copts.hooks = gw::resolve_hook_request(check_hooks, getenv("GPUWATCH_HOOKS"));
			return gw::run_check(copts);
		}
		if (cargs->parsed()) {
			std::string args = gw::criu_args(gw::find_criu_paths(), gw::global_criu_conf());
			std::cout << args << "\n";
			// --libdir replaces CRIU's own plugin directory: say what that drops (stderr,
			// which $(gpuwatch criu-args) leaves alone)
			if (args.find("--libdir") != std::string::npos)
				if (auto gone = gw::plugins_replaced(); !gone.empty()) {
					std::string names;
					for (const auto &n : gone)
						names += (names.empty() ? "" : ", ") + n;
					std::cerr << "gpuwatch criu-args: --libdir replaces CRIU's plugin directory "
						  << gw::kCriuPluginDir << ": " << names
						  << " there are not loaded with these options (link a plugin you need "
						     "into "
						     "gpuwatch's directory)\n";
				}
			return 0;
		}
		if (ccfg->parsed())
			return gw::run_container_config(ccopts);
		if (ohook->parsed())
			return gw::run_oci_hook(hook_stage, gw::control::default_run_dir());
		if (show->parsed()) {
			std::cout << gw::manifest::format_summary(gw::manifest::read_file(show_file));
			return 0;
		}
	} catch (const std::exception &e) {
		if (ohook->parsed()) // the runtime shows this line when it refuses to start the container
			fprintf(stderr, "gpuwatch oci-hook %s: error: %s\n", hook_stage.c_str(), e.what());
		else
			fprintf(stderr, "gpuwatch: error: %s\n", e.what());
		return 1;
	}
	return 0;
}
