#pragma once
// A Clock that stands still until the test advances it: manifest and lease expiries without wall time.
#include <cstdint>

#include "common/clock.hpp"

namespace takosumi::testing {

class FakeClock final : public Clock {
 public:
  explicit FakeClock(std::int64_t now) : now_(now) {}
  std::int64_t now_unix() const override { return now_; }
  void advance(std::int64_t seconds) { now_ += seconds; }

 private:
  std::int64_t now_;
};

}  // namespace takosumi::testing
