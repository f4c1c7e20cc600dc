#include "service/metrics_listener.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>
#include <spdlog/spdlog.h>

#include <chrono>

#include "common/error_codes.hpp"

namespace takosumi::service {

void add_build_info(prometheus::Registry& registry, const std::string& name, const std::string& help,
                    const std::string& version) {
  prometheus::BuildGauge().Name(name).Help(help).Register(registry).Add({{"version", version}}).Set(1);
}

std::string status_class(unsigned status) {
  if (status == 0) return "none";
  if (status < 300) return "2xx";
  if (status < 500) return "4xx";
  return "5xx";
}
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr int kMaxConnections = 16;
constexpr std::size_t kMaxHeadBytes = 8 * 1024;
constexpr auto kRequestTimeout = std::chrono::seconds(5);

// Nothing here should throw; if something does, the daemon logs it and goes on without that
// connection (an exception out of a detached coroutine would end the event loop).
void log_stray(std::exception_ptr e) {
  if (!e) return;
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    spdlog::critical("bug: stray exception in the metrics listener: {}", ex.what());
  } catch (...) {
    spdlog::critical("bug: stray exception in the metrics listener");
  }
}

}  // namespace

MetricsListener::MetricsListener(asio::any_io_executor ex, MetricsEndpoints endpoints)
    : ex_(ex), endpoints_(std::move(endpoints)), acceptor_(ex) {}

MetricsListener::~MetricsListener() {
  *alive_ = false;
  stop();
}

Result<std::uint16_t> MetricsListener::listen(const std::string& host_port) {
  const auto colon = host_port.rfind(':');
  if (colon == std::string::npos)
    return fail(errc::kConfigInvalid, "metrics.listen must be host:port (got \"" + host_port + "\")");
  std::string host = host_port.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host == "localhost") host = "127.0.0.1";
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(host, ec);
  if (ec)
    return fail(errc::kConfigInvalid,
                "metrics.listen: \"" + host + "\" is not an IP address (use e.g. 127.0.0.1:9464)");
  unsigned long port = 0;
  try {
    port = std::stoul(host_port.substr(colon + 1));
  } catch (const std::exception&) {
    port = 65536;
  }
  if (port > 65535) return fail(errc::kConfigInvalid, "metrics.listen: the port must be 0..65535");
  const tcp::endpoint endpoint(address, static_cast<std::uint16_t>(port));
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    return fail(errc::kUnavailable, "metrics.listen " + host_port + ": " + ec.message() +
                                         " (choose another address or port, or metrics.listen: off)");
  if (!address.is_loopback())
    spdlog::warn("metrics.listen {}: metrics and health are served beyond loopback, without "
                 "authentication (they hold no secret)", host_port);
  asio::co_spawn(ex_, async_accept_loop(), log_stray);
  return acceptor_.local_endpoint().port();
}

void MetricsListener::stop() {
  boost::system::error_code ignored;
  acceptor_.close(ignored);
}

asio::awaitable<void> MetricsListener::async_accept_loop() {
  const auto alive = alive_;
  for (;;) {
    auto [ec, socket] = co_await acceptor_.async_accept(asio::as_tuple(asio::use_awaitable));
    if (!*alive || !acceptor_.is_open()) co_return;
    if (ec) {
      // Out of descriptors (EMFILE) fails again at once while the connection waits in the
      // backlog: pause instead of spinning the event loop.
      asio::steady_timer pause(ex_, std::chrono::milliseconds(100));
      co_await pause.async_wait(asio::as_tuple(asio::use_awaitable));
      if (!*alive) co_return;
      continue;
    }
    if (connections_ >= kMaxConnections) continue;  // the socket closes as it goes
    // Head and body are two writes: without this the body waits for the scraper's delayed ACK.
    boost::system::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    asio::co_spawn(ex_, async_serve(std::move(socket)), log_stray);
  }
}

asio::awaitable<void> MetricsListener::async_serve(tcp::socket socket) {
  // Counted until this coroutine ends, however it ends (the listener may be gone by then).
  struct Held {
    int& count;
    std::shared_ptr<bool> alive;
    ~Held() {
      if (*alive) --count;
    }
  } held{++connections_, alive_};
  const auto& alive = held.alive;
  beast::tcp_stream stream(std::move(socket));
  stream.expires_after(kRequestTimeout);
  beast::flat_buffer buffer(kMaxHeadBytes);
  http::request_parser<http::empty_body> parser;
  parser.header_limit(kMaxHeadBytes);
  parser.body_limit(0);
  auto [read_ec, _] =
      co_await http::async_read(stream, buffer, parser, asio::as_tuple(asio::use_awaitable));
  if (!*alive) co_return;
  if (!read_ec) {
    const auto& req = parser.get();
    unsigned status = 200;
    std::string type = "text/plain; charset=utf-8";
    http::response<http::string_body> res;
    res.body() = answer(std::string(req.method_string()), std::string(req.target()), status, type);
    res.result(status);
    res.set(http::field::content_type, type);
    res.set(http::field::cache_control, "no-store");
    res.keep_alive(false);
    res.prepare_payload();
    (void)co_await http::async_write(stream, res, asio::as_tuple(asio::use_awaitable));
  }
  if (!*alive) co_return;
  boost::system::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
}

std::string MetricsListener::answer(const std::string& method, const std::string& target,
                                    unsigned& status, std::string& content_type) {
  if (method != "GET" && method != "HEAD") {
    status = 405;
    return "only GET\n";
  }
  if (target == "/metrics") {
    if (endpoints_.before_scrape) endpoints_.before_scrape();
    content_type = "text/plain; version=0.0.4; charset=utf-8";
    return prometheus::TextSerializer().Serialize(endpoints_.registry->Collect());
  }
  if (target == "/health/live") return "live\n";
  if (target == "/health/ready") {
    const auto reason = endpoints_.not_ready ? endpoints_.not_ready() : std::nullopt;
    if (!reason) return "ready\n";
    status = 503;
    return *reason + "\n";
  }
  status = 404;
  return "not found: GET /metrics, /health/live or /health/ready\n";
}

}  // namespace takosumi::service
