#pragma once
// The seam between the agent and the network: one HTTP exchange in, one result out. Bodies can be
// strings or files (artifacts stream from and to disk, so memory does not grow with state size).
// A transport error (connect, timeout, framing) is an Error with code "unavailable"; any HTTP
// status, including 4xx/5xx, is a successful exchange.
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "common/error.hpp"

namespace takosumi::net {

struct HttpRequest {
  std::string method;  // "GET", "POST", "PUT"
  std::string target;  // path and query, e.g. "/agent/v1/claim"
  std::map<std::string, std::string> headers;
  std::string body;
  std::optional<std::filesystem::path> body_file;      // sent instead of body when set
  std::optional<std::filesystem::path> response_file;  // 2xx bodies are written here when set
  std::size_t response_limit = 1 << 20;  // the body's bytes (in memory unless response_file)
  std::chrono::seconds timeout{30};
};

struct HttpResponse {
  unsigned status = 0;
  std::string body;  // empty when written to response_file
};

class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  virtual boost::asio::awaitable<Result<HttpResponse>> async_request(HttpRequest request) = 0;
};

}  // namespace takosumi::net
