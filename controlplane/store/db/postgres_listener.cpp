#include "controlplane/store/db/postgres_listener.hpp"

#include <spdlog/spdlog.h>

#include <poll.h>
#include <unistd.h>

#include <cerrno>

#include "common/error_codes.hpp"

namespace takosumi::controlplane {

PostgresListener::PostgresListener(boost::asio::any_io_executor executor, PostgresSettings settings,
                                   std::string channel, std::function<void()> on_notify)
    : settings_(std::move(settings)),
      channel_(std::move(channel)),
      on_notify_(std::move(on_notify)),
      socket_(executor),
      retry_(executor) {}

PostgresListener::~PostgresListener() { stop(); }

Result<std::unique_ptr<PostgresListener>> PostgresListener::start(
    boost::asio::any_io_executor executor, PostgresSettings settings, std::string channel,
    std::function<void()> on_notify) {
  std::unique_ptr<PostgresListener> listener(new PostgresListener(
      std::move(executor), std::move(settings), std::move(channel), std::move(on_notify)));
  TAKOSUMI_TRY(listener->connect());
  listener->wait_readable();
  return listener;
}

Status PostgresListener::connect() {
  auto conn = open_postgres_connection(settings_);
  if (!conn) return std::unexpected(conn.error());
  PQsetErrorVerbosity(conn->get(), PQERRORS_TERSE);
  const std::string listen = "LISTEN " + channel_;
  PGresult* r = PQexec(conn->get(), listen.c_str());
  const bool ok = r && PQresultStatus(r) == PGRES_COMMAND_OK;
  PQclear(r);
  if (!ok)
    return fail(errc::kUnavailable, "postgresql: " + listen + ": " + PQerrorMessage(conn->get()));
  // The descriptor gets a duplicate: libpq keeps (and closes) its own socket.
  const int fd = ::dup(PQsocket(conn->get()));
  if (fd < 0) return fail(errc::kIoError, "dup the PostgreSQL socket: errno " + std::to_string(errno));
  boost::system::error_code ec;
  socket_.close(ec);
  socket_.assign(fd, ec);
  if (ec) {
    ::close(fd);
    return fail(errc::kIoError, "watch the PostgreSQL socket: " + ec.message());
  }
  conn_ = std::move(*conn);
  return {};
}

void PostgresListener::wait_readable() {
  socket_.async_wait(boost::asio::posix::stream_descriptor::wait_read,
                     [this](const boost::system::error_code& ec) {
                       if (ec || stopped_) return;
                       on_readable();
                     });
}

void PostgresListener::on_readable() {
  // PQconsumeInput reads once (one TLS record, or what fits its buffer), and the reactor reports
  // a socket that stays readable only once: read until the socket has nothing left.
  for (;;) {
    if (PQconsumeInput(conn_.get()) == 0 || PQstatus(conn_.get()) != CONNECTION_OK) {
      spdlog::warn("postgresql: the notification connection was lost; opening it again");
      reconnect_later();
      return;
    }
    pollfd more{PQsocket(conn_.get()), POLLIN, 0};
    if (::poll(&more, 1, 0) <= 0 || !(more.revents & (POLLIN | POLLHUP | POLLERR))) break;
  }
  bool notified = false;
  while (PGnotify* n = PQnotifies(conn_.get())) {
    notified = true;
    PQfreemem(n);
  }
  if (notified) on_notify_();
  wait_readable();
}

void PostgresListener::reconnect_later() {
  boost::system::error_code ignored;
  socket_.close(ignored);
  conn_.reset();
  retry_.expires_after(backoff_);
  retry_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || stopped_) return;
    if (auto connected = connect(); !connected) {
      spdlog::warn("postgresql: notifications: {}", connected.error().to_string());
      backoff_ = std::min(backoff_ * 2, std::chrono::seconds(30));
      reconnect_later();
      return;
    }
    backoff_ = std::chrono::seconds(1);
    ++reconnects_;
    on_notify_();  // one may have been missed while the connection was away
    wait_readable();
  });
}

void PostgresListener::stop() {
  stopped_ = true;
  boost::system::error_code ignored;
  socket_.close(ignored);
  retry_.cancel();
}

}  // namespace takosumi::controlplane
