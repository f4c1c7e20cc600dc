#pragma once
// Maps (method, path pattern) to handlers. Patterns are literal segments and "{}" placeholders,
// e.g. "/api/v1/runs/{}/apply"; placeholders arrive in order as RouteParams.
// Every route declares its RouteAccess: who may call it, checked by admit() on the request head
// before any body byte is read, and what body it takes. An unknown path is a 404 JSON error, a
// method the path does not take a 405 with Allow, both refused at admission too. A route without a body accepts only an empty body or {} (a field in it is
// invalid_argument). A handler that throws is a bug: it is logged and answered with 500 internal.
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "controlplane/http/http_types.hpp"

namespace takosumi::controlplane {

using RouteParams = std::vector<std::string>;
using SyncRouteHandler = std::function<HttpResponse(const HttpRequest&, const RouteParams&)>;
using AsyncRouteHandler =
    std::function<boost::asio::awaitable<HttpResponse>(const HttpRequest&, const RouteParams&)>;
// Checks the credentials in the request head (the body is not read yet) against what the route
// with these params needs: unauthorized or forbidden otherwise. What it returns (the caller it
// found, or nothing) reaches the handler as HttpRequest::caller.
using Authenticator =
    std::function<Result<std::any>(const HttpRequest& head, const RouteParams& params)>;

inline constexpr std::size_t kMaxJsonBody = 1 << 20;

enum class RouteBody {
  none,  // no fields: an empty body or {} (at most 1 KiB)
  json,  // a JSON object of at most kMaxJsonBody bytes, in memory
  file,  // raw bytes streamed to a temp file, at most the router's max_file_bytes
};

struct RouteAccess {
  Authenticator authenticate;
  RouteBody body = RouteBody::none;
  // For a file body: the largest this request may send, when the route knows a smaller bound
  // than the router's from its params (an artifact's kind); the router's otherwise.
  std::function<std::size_t(const RouteParams&)> max_file_bytes;
};

class Router {
 public:
  explicit Router(std::size_t max_file_bytes) : max_file_bytes_(max_file_bytes) {}

  void add(std::string method, std::string_view pattern, RouteAccess access,
           SyncRouteHandler handler);
  void add_async(std::string method, std::string_view pattern, RouteAccess access,
                 AsyncRouteHandler handler);
  // The route's decision on a request head: 404 for no route, the authenticator's refusal (401),
  // or the body policy of the route (authenticated: every route has an authenticator).
  Admission admit(const HttpRequest& head) const;
  // req must have been admitted (HttpHandler's contract): authentication is not repeated here.
  boost::asio::awaitable<HttpResponse> async_dispatch(const HttpRequest& req) const;
  // "METHOD /pattern/{}" of the route req matches, or "unmatched": a label of bounded
  // cardinality for metrics (ids in the path are not part of it).
  std::string route_label(const HttpRequest& req) const;
  // Every route's label, as route_label gives them.
  std::vector<std::string> route_labels() const;

 private:
  struct Route {
    std::string label;
    std::string method;
    std::vector<std::string> segments;
    RouteAccess access;
    std::variant<SyncRouteHandler, AsyncRouteHandler> handler;
  };
  // The route for req, or what to answer: not_found (404) for an unknown path,
  // method_not_allowed (405) for a method the path does not take.
  Result<const Route*> match(const HttpRequest& req, RouteParams& params) const;
  // The methods routes take at path, sorted, comma-separated (the Allow header).
  std::string allowed_methods(const std::string& path) const;
  // The answer for a match failure: a 405 carries Allow.
  HttpResponse refusal(const HttpRequest& req, const Error& error) const;

  std::size_t max_file_bytes_;
  std::vector<Route> routes_;
};

std::vector<std::string> split_path(std::string_view path);

}  // namespace takosumi::controlplane
