#pragma once
// Test-only: a ProcessLauncher that starts nothing and plays back a scripted result for each tofu
// command, so the Run's steps and their failure mapping can be tested without OpenTofu. What a
// real tofu does (plans, states, diagnostics) stays in the integration tests, which use OpenTofu.
//
// A command is named by its first argument ("version", "init", "plan", "show", "apply"); that
// holds for tofu run directly, without a sandbox or supervisor in between. Use on the io thread.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "runner/tofu/process_launcher.hpp"

namespace takosumi::testing {

struct FakeCommand {
  int exit_code = 0;
  std::vector<std::string> stdout_lines;
  std::vector<std::string> stderr_lines;
  // Written to the spec's stdout_file, when it has one (version -json, show -json).
  std::string captured_stdout;
  // Runs when the command starts, before any output: e.g. writes the plan file or a state as
  // tofu would, or asks for a cancel.
  std::function<void(const runner::ProcessSpec&)> on_start;
  // Runs until the Run is cancelled, then ends as the real launcher reports an interrupted
  // child (killed by SIGINT, cancelled), after printing the output above.
  bool wait_for_cancel = false;
};

class FakeProcessLauncher : public runner::ProcessLauncher {
 public:
  // Unscripted commands exit 0 without output; "version" prints a version document.
  FakeProcessLauncher();

  void script(const std::string& command, FakeCommand result) { script_[command] = std::move(result); }
  // The commands started so far, in order.
  const std::vector<std::string>& started() const { return started_; }

  boost::asio::awaitable<Result<runner::ProcessExit>> async_run(runner::ProcessSpec spec,
                                                                runner::OutputSink sink,
                                                                runner::CancelSignal& cancel) override;

 private:
  std::map<std::string, FakeCommand> script_;
  std::vector<std::string> started_;
};

// The -out= file of a `tofu plan` spec, or an empty path.
std::filesystem::path plan_out_file(const runner::ProcessSpec& spec);

}  // namespace takosumi::testing
