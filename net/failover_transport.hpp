#pragma once
// Several control-plane replicas behind one HttpTransport (controlPlane.urls): every exchange
// goes to the replica in use; one that cannot be reached (a transport or TLS failure) or answers
// 502, 503 or 504 makes the next one in use for the next exchange. The failed exchange's result
// is returned as it is: the caller's retry, with its own jittered backoff, reaches the next
// replica. Leases, spooled results and credentials live in the shared store, so any replica
// takes what another one handed out.
// Single-threaded, as the agent's io_context is.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "net/http_transport.hpp"

namespace takosumi::net {

class FailoverTransport final : public HttpTransport {
 public:
  struct Replica {
    std::string url;  // for the log
    std::unique_ptr<HttpTransport> transport;
  };
  explicit FailoverTransport(std::vector<Replica> replicas) : replicas_(std::move(replicas)) {}
  boost::asio::awaitable<Result<HttpResponse>> async_request(HttpRequest request) override;
  const std::string& current_url() const { return replicas_[current_].url; }

 private:
  std::vector<Replica> replicas_;
  std::size_t current_ = 0;
};

}  // namespace takosumi::net
