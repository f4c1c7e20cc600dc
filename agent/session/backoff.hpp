#pragma once
// Retry delays: exponential from 0.5 s doubling to a 30 s cap, with "equal jitter" (half fixed,
// half random) so a pool of agents restarting together does not hammer the control plane in step.
// Pure: the random draw is a parameter in [0, 1).
#include <chrono>
#include <cstdint>

namespace takosumi::agent {

inline std::chrono::milliseconds backoff_delay(std::uint32_t attempt, double jitter01) {
  constexpr std::int64_t kBaseMs = 500;
  constexpr std::int64_t kCapMs = 30'000;
  std::int64_t ceiling = kBaseMs;
  for (std::uint32_t i = 0; i < attempt && ceiling < kCapMs; ++i) ceiling *= 2;
  if (ceiling > kCapMs) ceiling = kCapMs;
  const auto half = ceiling / 2;
  return std::chrono::milliseconds(half + static_cast<std::int64_t>(jitter01 * static_cast<double>(half)));
}

}  // namespace takosumi::agent
