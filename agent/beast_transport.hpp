#pragma once
// HttpTransport over Boost.Beast: plain HTTP/1.1, one connection per exchange (exchanges are few
// and long-polls hold a connection anyway), every step bounded by the request's timeout.
#include <string>

#include "agent/http_transport.hpp"

namespace takosumi::agent {

class BeastTransport final : public HttpTransport {
 public:
  // base_url: "http://host:port" (https is not implemented yet: refused by make()).
  static Result<BeastTransport> make(const std::string& base_url);
  boost::asio::awaitable<Result<HttpResponse>> async_request(HttpRequest request) override;

 private:
  BeastTransport(std::string host, std::string port) : host_(std::move(host)), port_(std::move(port)) {}
  std::string host_;
  std::string port_;
};

}  // namespace takosumi::agent
