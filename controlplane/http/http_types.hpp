#pragma once
// The HTTP request/response shapes the API code sees. Beast stays inside http_server.cpp, so API
// translation units do not pay for it. Error responses always have the body
// {"error":{"code","message"}} and a status chosen from the code.
#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>

#include <any>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.hpp"

namespace takosumi::controlplane {

// The connection a request arrived on, as its handler sees it: long polls use it so that they never
// hand something out to a client that has already gone. Use on the io_context's thread only.
class ClientLink {
 public:
  virtual ~ClientLink() = default;
  // True once the peer has closed or reset the connection (FIN or RST); asks the socket each time.
  virtual bool gone() = 0;
  // While set, fn runs (once, on the io_context's thread) as soon as the server sees the peer close
  // the connection; nullptr clears it. It never runs after the handler has returned.
  virtual void on_gone(std::function<void()> fn) = 0;
};

struct HttpRequest {
  std::string method;  // "GET", "POST", …
  std::string target;  // as received
  std::string path;    // percent-decoded path of target
  std::map<std::string, std::string> query;
  std::map<std::string, std::string> headers;  // names lowercased
  std::string body;
  std::filesystem::path body_file;  // set instead of body when the body was streamed to a file
  std::string body_sha256;  // of body_file, hashed while it was received (lowercase hex)
  std::shared_ptr<ClientLink> client;  // set by the server; null for requests built elsewhere
  // Mutual TLS: the identity of the client certificate the handshake verified
  // (net::peer_certificate_identity); empty over plain HTTP or without a client certificate.
  std::string peer_certificate;
  // Who sent it, as the route's authenticator found at admission (Admission::caller); what it
  // holds is the API's business (the public API's Principal).
  std::any caller;

  std::optional<std::string> header(std::string_view lowercase_name) const;
  // The token of "Authorization: Bearer <token>", if present.
  std::optional<std::string> bearer_token() const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::filesystem::path body_file;  // when set, the body is streamed from this file
  // Runs when the server could not deliver this response (the connection failed before all of it
  // was written, or the client had gone before the write): what the answer handed out (a claimed
  // job) can be taken back. A response that was written may still be lost with its connection.
  std::function<void()> on_undelivered;
  // Further header fields (Allow on a 405).
  std::vector<std::pair<std::string, std::string>> headers;
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
  bool to_file = false;  // streamed to a temp file (counted against the server's temp budget)
};

// What a handler decides from a request's head (method, target, headers) before the server reads a
// single byte of its body: who may send it, and how much. A request admitted without credentials
// (a health check) leaves authenticated false: the server closes its connection after the answer,
// as after every refusal, so that holding a connection open takes a credential.
struct Admission {
  std::optional<HttpResponse> refusal;  // set: sent as the answer; the body is never read
  BodyPolicy body;                      // otherwise: how the body is read
  bool authenticated = false;           // the request carried a credential the route accepts
  std::any caller;                      // handed to the handler as HttpRequest::caller
};

class HttpHandler {
 public:
  virtual ~HttpHandler() = default;
  // head has no body yet. Called for every request before its body is read; async_handle only
  // ever sees requests admitted here. Must not throw.
  virtual Admission admit(const HttpRequest& head) = 0;
  // Must not throw; failures are error responses.
  virtual boost::asio::awaitable<HttpResponse> async_handle(HttpRequest request) = 0;
};

}  // namespace takosumi::controlplane
