#pragma once
// A Clock that stands still until the test advances it: manifest and lease expiries without wall time.
// Atomic, because a control plane under test reads it on its own thread while the test moves it.
#include <atomic>
#include <cstdint>

#include "common/clock.hpp"

namespace takosumi::testing {

class FakeClock final : public Clock {
 public:
  // Starts at the real time, so manifests and leases look ordinary.
  FakeClock() : now_(SystemClock().now_unix()) {}
  explicit FakeClock(std::int64_t now) : now_(now) {}
  std::int64_t now_unix() const override { return now_.load(); }
  void advance(std::int64_t seconds) { now_ += seconds; }

 private:
  std::atomic<std::int64_t> now_;
};

}  // namespace takosumi::testing
