#pragma once
// A blocking HTTP/1.1 client for tests, talking JSON to takosumi-control: plain HTTP on loopback,
// or HTTPS through the product's own transport (net::BeastTransport) with a test CA and,
// for mutual TLS, a client certificate.
#include <boost/json.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "net/tls_context.hpp"

namespace takosumi::net {
class BeastTransport;
}

namespace takosumi::testing {

struct JsonResponse {
  unsigned status = 0;
  std::string body;
  boost::json::value json;  // null when the body is not JSON
  std::string error_code;   // the transport's error code when there was no answer
};

class HttpClient {
 public:
  // http://127.0.0.1:port
  HttpClient(unsigned short port, std::string bearer);
  // https://host:port with these files.
  HttpClient(std::string host, unsigned short port, std::string bearer, net::TlsClientFiles tls);
  ~HttpClient();
  HttpClient(HttpClient&&) noexcept;
  using Headers = std::vector<std::pair<std::string, std::string>>;
  JsonResponse request(const std::string& method, const std::string& target,
                       const std::string& body = "", const Headers& headers = {}) const;
  JsonResponse get(const std::string& target) const { return request("GET", target); }
  JsonResponse post(const std::string& target, const boost::json::value& body) const {
    return request("POST", target, boost::json::serialize(body));
  }
  JsonResponse put(const std::string& target, const boost::json::value& body) const {
    return request("PUT", target, boost::json::serialize(body));
  }
  JsonResponse patch(const std::string& target, const boost::json::value& body) const {
    return request("PATCH", target, boost::json::serialize(body));
  }
  // The same server and TLS files with another bearer token.
  HttpClient with_token(std::string bearer) const;

 private:
  struct Copy {};
  HttpClient(std::string url, std::string bearer, net::TlsClientFiles tls, Copy);
  std::string url_;
  std::string bearer_;
  net::TlsClientFiles tls_;
  std::unique_ptr<net::BeastTransport> transport_;
};

}  // namespace takosumi::testing
