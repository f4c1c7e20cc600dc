#include "common/clock.hpp"

#include <ctime>

namespace takosumi {

std::string utc_timestamp(std::int64_t unix_seconds) {
  const std::time_t t = unix_seconds;
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace takosumi
