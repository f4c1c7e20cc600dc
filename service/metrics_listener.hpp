#pragma once
// The operator's window into a daemon, on its own listener (metrics.listen, loopback by default):
//   GET /metrics       Prometheus text exposition of the registry (version 0.0.4)
//   GET /health/live   200 while the event loop turns
//   GET /health/ready  200, or 503 with the reason (draining, recovering, control plane away)
// Nothing here is secret and nothing changes state, so there is no authentication; every request
// is bounded (8 KiB of head, no body, 5 s) and the listener holds at most 16 connections, so a
// scraper gone wrong cannot cost the daemon more than that. Runs on the daemon's event loop.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/error.hpp"

namespace prometheus {
class Registry;
}

namespace takosumi::service {

// What both daemons' metrics have alike: a build_info gauge (<prefix>_build_info{version}, always
// 1) and HTTP answers counted by class ("2xx", "4xx", "5xx"; "none" when no answer came, status 0).
void add_build_info(prometheus::Registry& registry, const std::string& name, const std::string& help,
                    const std::string& version);
std::string status_class(unsigned status);

struct MetricsEndpoints {
  std::shared_ptr<prometheus::Registry> registry;
  // Called before each scrape, to bring gauges read from elsewhere up to date.
  std::function<void()> before_scrape;
  // nullopt when ready; otherwise why not (the 503's body).
  std::function<std::optional<std::string>()> not_ready;
};

class MetricsListener {
 public:
  MetricsListener(boost::asio::any_io_executor ex, MetricsEndpoints endpoints);
  ~MetricsListener();
  // host:port (port 0 picks one); returns the bound port. config_invalid for an address that
  // does not parse, unavailable when it cannot be bound.
  Result<std::uint16_t> listen(const std::string& host_port);
  void stop();

 private:
  boost::asio::awaitable<void> async_accept_loop();
  boost::asio::awaitable<void> async_serve(boost::asio::ip::tcp::socket socket);
  std::string answer(const std::string& method, const std::string& target, unsigned& status,
                     std::string& content_type);

  boost::asio::any_io_executor ex_;
  MetricsEndpoints endpoints_;
  boost::asio::ip::tcp::acceptor acceptor_;
  int connections_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace takosumi::service
