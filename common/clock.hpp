#pragma once
// Wall-clock seam: the agent compares manifest and lease expiries with it, so tests can move time (tests/support/fake_clock.hpp).
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace takosumi {

class Clock {
 public:
  virtual ~Clock() = default;
  // Seconds since the Unix epoch.
  virtual std::int64_t now_unix() const = 0;
  // Milliseconds since the Unix epoch (a clock that keeps only seconds: those, × 1000).
  virtual std::int64_t now_millis() const { return now_unix() * 1000; }
  // The host's real time (not a test's): only such a clock may be corrected by another source's.
  virtual bool is_wall_clock() const { return false; }
};

class SystemClock final : public Clock {
 public:
  std::int64_t now_unix() const override {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  std::int64_t now_millis() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  bool is_wall_clock() const override { return true; }
};

// The times RFC 3339 can write: years 0000 to 9999.
inline constexpr std::int64_t kMinUnixTime = -62167219200;  // 0000-01-01T00:00:00Z
inline constexpr std::int64_t kMaxUnixTime = 253402300799;  // 9999-12-31T23:59:59Z

// RFC 3339 in UTC to the second ("2026-12-03T17:04:05Z"): every time in a public API answer, a
// message and a log line (docs/protocol.md "Conventions"). Outside years 0000–9999 it writes the
// nearest end of that range.
std::string utc_timestamp(std::int64_t unix_seconds);
// Reads RFC 3339 ("2026-12-03T17:04:05Z", a fraction of a second is dropped, an offset such as
// "+09:00" applied); nullopt for anything else.
std::optional<std::int64_t> parse_utc_timestamp(std::string_view text);

}  // namespace takosumi
