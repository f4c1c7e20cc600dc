#pragma once
// Times one phase of a Run (checkout, init, plan, show, apply, ...) by the scope that runs it:
// the time from construction to destruction is added to millis[phase], however the scope is left
// (a co_return on failure included), so a phase that ran is always reported.
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

namespace takosumi::runner {

class PhaseTimer {
 public:
  // millis must outlive the timer (the report's phase_millis).
  PhaseTimer(std::map<std::string, std::int64_t>& millis, std::string phase)
      : millis_(millis), phase_(std::move(phase)), started_(std::chrono::steady_clock::now()) {}
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;
  ~PhaseTimer() {
    millis_[phase_] += std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::steady_clock::now() - started_)
                           .count();
  }

 private:
  std::map<std::string, std::int64_t>& millis_;
  std::string phase_;
  std::chrono::steady_clock::time_point started_;
};

}  // namespace takosumi::runner
