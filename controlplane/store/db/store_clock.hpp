#pragma once
// The control plane's time. On a PostgreSQL store shared by replicas, every lease, expiry and
// timestamp must be judged by one clock, or a replica whose host runs a few seconds ahead would
// take a Run whose lease another replica just renewed. So the wall clock is corrected by the
// database's: sync() reads the server's time to the millisecond, against the midpoint of the
// round trip, and keeps the difference (the control plane syncs at start and every 15 s); then
// now_unix() is the host's time plus that difference. Between syncs a step of the host's clock
// (NTP) shows until the next one. A test's clock is never corrected (Clock::is_wall_clock), and
// on SQLite there is one process and one clock.
#include <atomic>
#include <cstdint>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "controlplane/store/db/database.hpp"

namespace takosumi::controlplane {

class StoreClock final : public Clock {
 public:
  explicit StoreClock(const Clock& base) : base_(base) {}
  std::int64_t now_unix() const override;

  // Whether sync() applies: a wall clock over PostgreSQL.
  bool follows(const Database& db) const {
    return base_.is_wall_clock() && db.driver() == StoreDriver::postgres;
  }
  // Reads the database's time (clock_timestamp: the moment, not the transaction's start) and
  // keeps its difference from the host's; warns when it exceeds two seconds.
  Status sync(Database& db);
  std::int64_t offset_millis() const { return offset_ms_.load(); }

 private:
  const Clock& base_;
  std::atomic<bool> synced_{false};
  std::atomic<std::int64_t> offset_ms_{0};
};

}  // namespace takosumi::controlplane
