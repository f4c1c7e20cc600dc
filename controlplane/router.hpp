#pragma once
// Maps (method, path pattern) to handlers. Patterns are literal segments and "{}" placeholders,
// e.g. "/api/v1/runs/{}/apply"; placeholders arrive in order as RouteParams. No match is a 404
// JSON error. A handler that throws is a bug: it is logged and answered with 500 internal.
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "controlplane/http_types.hpp"

namespace takosumi::controlplane {

using RouteParams = std::vector<std::string>;
using SyncRouteHandler = std::function<HttpResponse(const HttpRequest&, const RouteParams&)>;
using AsyncRouteHandler =
    std::function<boost::asio::awaitable<HttpResponse>(const HttpRequest&, const RouteParams&)>;

class Router {
 public:
  void add(std::string method, std::string_view pattern, SyncRouteHandler handler);
  void add_async(std::string method, std::string_view pattern, AsyncRouteHandler handler);
  boost::asio::awaitable<HttpResponse> async_dispatch(const HttpRequest& req) const;

 private:
  struct Route {
    std::string method;
    std::vector<std::string> segments;
    std::variant<SyncRouteHandler, AsyncRouteHandler> handler;
  };
  const Route* match(const HttpRequest& req, RouteParams& params, bool& path_known) const;

  std::vector<Route> routes_;
};

std::vector<std::string> split_path(std::string_view path);

}  // namespace takosumi::controlplane
