#pragma once
// ProcessLauncher on Boost.Process v2 (fork/execve, pidfd wait, asio pipes). The child becomes
// the leader of a new process group so its leftovers can be killed together. With
// ProcessSpec::supervisor the child is takosumi-supervise, which runs the program in that group.
#include "runner/tofu/process_launcher.hpp"

namespace takosumi::runner {

class BoostProcessLauncher final : public ProcessLauncher {
 public:
  boost::asio::awaitable<Result<ProcessExit>> async_run(ProcessSpec spec, OutputSink sink,
                                                        CancelSignal& cancel) override;
};

}  // namespace takosumi::runner
