#include "controlplane/store/db/store_clock.hpp"

#include <cstdlib>

#include <spdlog/spdlog.h>

namespace takosumi::controlplane {
std::int64_t StoreClock::now_unix() const {
  if (!synced_.load()) return base_.now_unix();
  const std::int64_t millis = base_.now_millis() + offset_ms_.load();
  return millis >= 0 ? millis / 1000 : -((-millis + 999) / 1000);
}

Status StoreClock::sync(Database& db) {
  const std::int64_t before = base_.now_millis();
  auto server = db.single_integer(
      "SELECT CAST(floor(extract(epoch FROM clock_timestamp()) * 1000) AS BIGINT)");
  const std::int64_t after = base_.now_millis();
  if (!server) return std::unexpected(server.error().with_context("read the database's clock"));
  // A slow answer (a reconnect, a busy server) says little about when the server read its clock:
  // the sample is dropped and the last offset kept.
  if (after - before > 250 && synced_.load()) return {};
  const std::int64_t offset = *server - (before + after) / 2;
  const std::int64_t was = offset_ms_.exchange(offset);
  const bool first = !synced_.exchange(true);
  if (std::llabs(offset) > 2000 && (first || std::llabs(offset - was) > 1000))
    spdlog::warn("this host's clock is {:.1f} s {} the database's: leases and expiries follow the "
                 "database's (keep the hosts and the database server NTP-synchronised)",
                 static_cast<double>(std::llabs(offset)) / 1000.0,
                 offset > 0 ? "behind" : "ahead of");
  return {};
}

}  // namespace takosumi::controlplane
