// The daemon's side of the control channel (control_client.hpp describes the protocol).
#pragma once

#include <string>

#include "control_client.hpp"

namespace gw::control
{

// Daemon side: creates run_dir (0700) if needed, writes <pid>.json atomically, listens on
// <pid>.sock (0600). Removes both on destruction.
class Registration
{
public:
	Registration(const std::string &run_dir, const std::string &cgroup, const std::string &manifest);
	~Registration();
	Registration(const Registration &) = delete;
	Registration &operator=(const Registration &) = delete;
	int listen_fd() const { return listen_.get(); }
	const DaemonInfo &info() const { return info_; }

private:
	DaemonInfo info_;
	std::string json_path_;
	UniqueFd listen_;
};

} // namespace gw::control
