#pragma once
// Test modules that probe the sandbox from inside a Run: a local-exec provisioner running a shell
// script, with the Capsule's policy allowing provisioners, and the helpers to run and read it.
#include <boost/json.hpp>

#include <string>

#include "tests/support/stack.hpp"
#include "tests/support/test_git_repo.hpp"

namespace takosumi::testing {

// A module whose null_resource runs `script` (a shell heredoc body; HCL interpolation applies)
// in a local-exec provisioner at apply; `extra` is appended to main.tf.
std::string provisioner_module(const std::string& script, const std::string& extra = "");

// A Capsule of repo's main branch with no Outputs mapped and allowProvisioners: true (plus the
// policy fields in `policy`).
std::string probe_capsule(Stack& stack, TestGitRepo& repo, const boost::json::object& variables = {},
                          boost::json::object policy = {});

std::string run_logs(const Stack& stack, const boost::json::object& run);

// Plans (which must succeed) and applies; returns the apply Run.
boost::json::object plan_and_apply(Stack& stack, const std::string& capsule);

// True when a process's command line contains needle (e.g. a marker argument of `sleep`).
bool process_running(const std::string& needle);

// A TCP listener on the host's loopback, on a free port.
class LoopbackListener {
 public:
  LoopbackListener();
  ~LoopbackListener();
  LoopbackListener(const LoopbackListener&) = delete;
  LoopbackListener& operator=(const LoopbackListener&) = delete;
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// A shell line printing NETWORK-CONNECTED or NETWORK-REFUSED for 127.0.0.1:port.
std::string connect_probe(int port);

}  // namespace takosumi::testing
