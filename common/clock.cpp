#include "common/clock.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>

namespace takosumi {

std::string utc_timestamp(std::int64_t unix_seconds) {
  const std::time_t t = std::clamp(unix_seconds, kMinUnixTime, kMaxUnixTime);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  // Four digits always (strftime's %Y writes year 999 as "999").
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  return buf;
}

std::optional<std::int64_t> parse_utc_timestamp(std::string_view text) {
  // YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)
  const auto digits = [&](std::size_t at, std::size_t n) -> std::optional<int> {
    if (at + n > text.size()) return std::nullopt;
    int v = 0;
    for (std::size_t i = at; i < at + n; ++i) {
      if (text[i] < '0' || text[i] > '9') return std::nullopt;
      v = v * 10 + (text[i] - '0');
    }
    return v;
  };
  const auto at = [&](std::size_t i, char c) { return i < text.size() && text[i] == c; };
  auto year = digits(0, 4), month = digits(5, 2), day = digits(8, 2);
  auto hour = digits(11, 2), minute = digits(14, 2), second = digits(17, 2);
  if (!year || !month || !day || !hour || !minute || !second || !at(4, '-') || !at(7, '-') ||
      !(at(10, 'T') || at(10, 't')) || !at(13, ':') || !at(16, ':'))
    return std::nullopt;
  if (*month < 1 || *month > 12 || *day < 1 || *day > 31 || *hour > 23 || *minute > 59 || *second > 60 ||
      (*second == 60 && *minute != 59))  // a leap second ends a minute
    return std::nullopt;
  std::size_t i = 19;
  if (at(i, '.')) {
    ++i;
    const std::size_t start = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    if (i == start) return std::nullopt;
  }
  std::int64_t offset = 0;
  if (at(i, 'Z') || at(i, 'z')) {
    ++i;
  } else if (at(i, '+') || at(i, '-')) {
    auto oh = digits(i + 1, 2), om = digits(i + 4, 2);
    if (!oh || !om || !at(i + 3, ':') || *oh > 23 || *om > 59) return std::nullopt;
    offset = (text[i] == '-' ? -1 : 1) * (*oh * 3600 + *om * 60);
    i += 6;
  } else {
    return std::nullopt;
  }
  if (i != text.size()) return std::nullopt;
  std::tm tm{};
  tm.tm_year = *year - 1900;
  tm.tm_mon = *month - 1;
  tm.tm_mday = *day;
  tm.tm_hour = *hour;
  tm.tm_min = *minute;
  tm.tm_sec = *second == 60 ? 59 : *second;  // a leap second reads as the second before it
  const std::time_t t = ::timegm(&tm);
  // timegm normalises 31 February to 3 March: such a date is not a date.
  std::tm back{};
  ::gmtime_r(&t, &back);
  if (back.tm_mday != *day || back.tm_mon != *month - 1) return std::nullopt;
  return static_cast<std::int64_t>(t) - offset;
}

}  // namespace takosumi
