#include "controlplane/store/store_clock.hpp"

#include <cstdlib>

#include <spdlog/spdlog.h>

namespace takosumi::controlplane {

Status StoreClock::sync(Database& db) {
  // Rounded to the nearest second on both sides, so a host in step reads an offset of 0.
  const std::int64_t before = base_.now_unix();
  auto server = db.single_integer(
      "SELECT CAST(round(extract(epoch FROM clock_timestamp())) AS BIGINT)");
  if (!server) return std::unexpected(server.error().with_context("read the database's clock"));
  const std::int64_t offset = *server - before;
  const std::int64_t was = offset_.exchange(offset);
  if (std::llabs(offset) > 2 && offset != was)
    spdlog::warn("this host's clock is {} s {} the database's: leases and expiries follow the "
                 "database's (keep the hosts NTP-synchronised)",
                 std::llabs(offset), offset > 0 ? "behind" : "ahead of");
  return {};
}

}  // namespace takosumi::controlplane
