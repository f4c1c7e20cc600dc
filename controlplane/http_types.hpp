#pragma once
// The HTTP request/response shapes the API code sees. Beast stays inside http_server.cpp, so API
// translation units do not pay for it. Error responses always have the body
// {"error":{"code","message"}} and a status chosen from the code.
#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.hpp"

namespace takosumi::controlplane {

struct HttpRequest {
  std::string method;  // "GET", "POST", …
  std::string target;  // as received
  std::string path;    // percent-decoded path of target
  std::map<std::string, std::string> query;
  std::map<std::string, std::string> headers;  // names lowercased
  std::string body;
  std::filesystem::path body_file;  // set instead of body when the body was streamed to a file

  std::optional<std::string> header(std::string_view lowercase_name) const;
  // The token of "Authorization: Bearer <token>", if present.
  std::optional<std::string> bearer_token() const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::filesystem::path body_file;  // when set, the body is streamed from this file
};

// Splits target into path and query; invalid_argument on a malformed target.
Status parse_target(HttpRequest& req);
// The integer query parameter `key` in [min, max], or fallback when absent or empty;
// invalid_argument naming the parameter and the range otherwise.
Result<std::int64_t> query_int(const HttpRequest& req, const std::string& key,
                               std::int64_t fallback, std::int64_t min, std::int64_t max);
int http_status_for(std::string_view error_code);
HttpResponse json_response(int status, const boost::json::value& body);
HttpResponse error_response(const Error& error);

// How the server reads a request body before handing the request over.
struct BodyPolicy {
  std::size_t max_bytes = 1 << 20;
  bool to_file = false;
};

class HttpHandler {
 public:
  virtual ~HttpHandler() = default;
  virtual BodyPolicy body_policy(std::string_view method, std::string_view target) const = 0;
  // Must not throw; failures are error responses.
  virtual boost::asio::awaitable<HttpResponse> async_handle(HttpRequest request) = 0;
};

}  // namespace takosumi::controlplane
