#pragma once
// Takosumi's side of each figure: Runs started through the public API of a real takosumi-control
// with a real takosumi-agent (tests/support/stack.hpp) and timed from the POST to the moment the
// API first shows the Run finished. Polls every few milliseconds, so a figure is at most one poll
// interval late; the harness's own 50 ms wait would blur the figures.
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "tests/support/stack.hpp"
#include "tests/support/test_git_repo.hpp"

namespace takosumi::bench {

using Millis = double;

class TakosumiSide {
 public:
  // stack must outlive this object; module_text is committed to a repo under stack.root()
  // (repo_name: one repository per module).
  TakosumiSide(testing::Stack& stack, const std::string& module_text,
               const std::string& repo_name = "bench-repo");

  // A new Capsule of the module (no state yet).
  Result<std::string> new_capsule();
  // POST plan → the plan Run succeeded.
  Result<Millis> plan(const std::string& capsule);
  // POST plan → plan succeeded → POST apply → the apply Run succeeded.
  Result<Millis> plan_apply(const std::string& capsule);
  // POST drift-check → the drift_check Run succeeded.
  Result<Millis> drift_check(const std::string& capsule);
  // POST plan → the API first shows the Run claimed (no longer queued); waits for its end after.
  Result<Millis> pickup(const std::string& capsule);
  // Starts a plan Run on every capsule at once; the time until the last one succeeded.
  Result<Millis> plans_at_once(const std::vector<std::string>& capsules);
  // Starts a plan Run and returns its id without waiting.
  Result<std::string> start_plan(const std::string& capsule);
  // Waits until the Run left queued and running; fails unless it succeeded.
  Status wait_succeeded(const std::string& run_id);
  // The agent's phaseMillis of every Run that succeeded since the last call, by "<type>.<phase>"
  // (e.g. "plan.init"): where takosumi's time goes, beside the figure that includes it.
  std::map<std::string, std::vector<double>> take_phase_samples();

 private:
  Result<std::string> post_run(const std::string& target);
  // The time from start_run (which creates a Run and returns its id) until that Run succeeded.
  Result<Millis> until_succeeded(const std::function<Result<std::string>()>& start_run);
  // Polls every interval until the Run is past queued (and past running when past_running);
  // returns the Run. With past_running, an end other than succeeded is an error.
  Result<boost::json::object> wait_run(const std::string& run_id, std::chrono::microseconds interval,
                                       bool past_running);

  testing::Stack& stack_;
  testing::TestGitRepo repo_;
  int next_capsule_ = 0;
  std::map<std::string, std::vector<double>> phase_samples_;
};

}  // namespace takosumi::bench
