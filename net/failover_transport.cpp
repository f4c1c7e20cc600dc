#include "net/failover_transport.hpp"

#include <spdlog/spdlog.h>

namespace takosumi::net {

boost::asio::awaitable<Result<HttpResponse>> FailoverTransport::async_request(HttpRequest request) {
  const std::size_t used = current_;
  auto result = co_await replicas_[used].transport->async_request(std::move(request));
  // An HTTP answer other than a gateway's or an overloaded server's is the replica's word.
  const bool failed = !result || result->status == 502 || result->status == 503 ||
                      result->status == 504;
  // Only the first failure of a replica moves on: exchanges in flight together fail together.
  if (failed && replicas_.size() > 1 && used == current_) {
    current_ = (current_ + 1) % replicas_.size();
    spdlog::warn("control plane {} {}: using {} from now on", replicas_[used].url,
                 result ? "answered " + std::to_string(result->status) : result.error().to_string(),
                 replicas_[current_].url);
  }
  co_return result;
}

}  // namespace takosumi::net
