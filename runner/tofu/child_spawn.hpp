#pragma once
// Starting a child for the runner's launchers (boost_process_launcher, phase_sandbox): the program
// itself or takosumi-supervise with it, in a new session and process group of its own, in the
// Run's cgroup, with the spec's resource limits (no core dumps ever: a core of tofu holds the
// state and credentials), its explicit environment and working directory. Internal to
// runner/tofu (it brings Boost.Process in).
#include <boost/asio/any_io_executor.hpp>
// Boost 1.81's Process v2 in BOOST_PROCESS_USE_STD_FS mode forgets these two includes.
#include <boost/optional.hpp>
#include <boost/type_traits.hpp>
#include <boost/process/v2.hpp>

#include <filesystem>

#include "common/error.hpp"
#include "common/unique_fd.hpp"
#include "runner/tofu/process_launcher.hpp"

namespace takosumi::runner {

// Starts spec (under its supervisor, when it names one) with stdio as given. sandbox_failed when
// it cannot be started.
Result<boost::process::v2::process> spawn_child(boost::asio::any_io_executor executor, const ProcessSpec& spec,
                                                boost::process::v2::process_stdio stdio);

// The file a command's stdout goes to (ProcessSpec::stdout_file): created 0600, never through a link.
Result<UniqueFd> open_stdout_file(const std::filesystem::path& path);

}  // namespace takosumi::runner
