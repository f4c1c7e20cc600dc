#pragma once
// Notifications between control-plane processes on one PostgreSQL store (LISTEN/NOTIFY): a
// replica that queued a Run wakes the agents long-polling on every other replica, not only its
// own. A connection of its own listens; the io_context waits on its socket, so nothing blocks.
// A lost connection is opened again (1 s, doubling to 30 s), and on_notify runs once after each
// reconnect too, since a notification may have been missed meanwhile (a spurious wake only
// makes the waiting agents look at the queue again).
// Single-threaded: construct, run and stop it on the io_context's thread.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "common/error.hpp"
#include "controlplane/store/db/database.hpp"
#include "controlplane/store/db/postgres_connect.hpp"

namespace takosumi::controlplane {

// The channel the control plane's long polls listen on.
inline constexpr std::string_view kClaimsChannel = "takosumi_claims";

class PostgresListener {
 public:
  // Connects and listens at once (unavailable when the store is); channel: a plain identifier.
  static Result<std::unique_ptr<PostgresListener>> start(boost::asio::any_io_executor executor,
                                                         PostgresSettings settings,
                                                         std::string channel,
                                                         std::function<void()> on_notify);
  ~PostgresListener();
  PostgresListener(const PostgresListener&) = delete;
  PostgresListener& operator=(const PostgresListener&) = delete;

  void stop();
  // How many times the connection was opened again after it was lost.
  int reconnects() const { return reconnects_; }

 private:
  PostgresListener(boost::asio::any_io_executor executor, PostgresSettings settings,
                   std::string channel, std::function<void()> on_notify);
  Status connect();
  void wait_readable();
  void on_readable();
  void reconnect_later();

  PostgresSettings settings_;
  std::string channel_;
  std::function<void()> on_notify_;
  PgConnPtr conn_;
  boost::asio::posix::stream_descriptor socket_;
  boost::asio::steady_timer retry_;
  std::chrono::seconds backoff_{1};
  int reconnects_ = 0;
  bool stopped_ = false;
};

}  // namespace takosumi::controlplane
