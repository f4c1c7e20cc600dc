#pragma once
// HttpTransport over Boost.Beast: HTTP/1.1 over TCP, or over TLS for https:// (OpenSSL; the
// server's certificate and host name are always verified), one connection per exchange
// (exchanges are few and long-polls hold a connection anyway), every step bounded by the
// request's timeout. TLS failures carry the codes of net/tls_failure.hpp; other transport
// failures are unavailable.
#include <string>

#include "net/control_url.hpp"
#include "net/http_transport.hpp"
#include "net/tls_context.hpp"

namespace takosumi::net {

class BeastTransport final : public HttpTransport {
 public:
  struct Options {
    TlsClientFiles tls;               // used for https
    bool allow_insecure_http = false;  // plain http to a host that is not loopback
    std::string url_key = "controlPlane.url";
    std::string allow_key = "controlPlane.allowInsecureHttp";
    std::string user_agent;  // "takosumi-agent/<version>" when empty
  };
  // base_url: "https://host[:port]" or "http://…" (see net/control_url.hpp). config_invalid for
  // a bad URL, unreadable TLS files, or plain http where it is not allowed.
  static Result<BeastTransport> make(const std::string& base_url, const Options& options);
  boost::asio::awaitable<Result<HttpResponse>> async_request(HttpRequest request) override;
  // Plain http to a host that is not loopback (allowed by the options): warn the operator.
  bool in_clear_beyond_loopback() const { return !url_.tls && !is_loopback_host(url_.host); }

 private:
  BeastTransport(ControlUrl url, TlsContext tls, std::string user_agent, bool allow_insecure_http)
      : url_(std::move(url)), tls_(std::move(tls)), user_agent_(std::move(user_agent)),
        allow_insecure_http_(allow_insecure_http) {}
  ControlUrl url_;
  TlsContext tls_;  // null for http
  std::string user_agent_;
  bool allow_insecure_http_;
};

}  // namespace takosumi::net
