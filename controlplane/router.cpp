#include "controlplane/router.hpp"

#include <spdlog/spdlog.h>

#include <exception>

#include "common/error_codes.hpp"

namespace takosumi::controlplane {

std::vector<std::string> split_path(std::string_view path) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < path.size()) {
    auto end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    if (end > start) out.emplace_back(path.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

void Router::add(std::string method, std::string_view pattern, SyncRouteHandler handler) {
  routes_.push_back(Route{std::move(method), split_path(pattern), std::move(handler)});
}

void Router::add_async(std::string method, std::string_view pattern, AsyncRouteHandler handler) {
  routes_.push_back(Route{std::move(method), split_path(pattern), std::move(handler)});
}

const Router::Route* Router::match(const HttpRequest& req, RouteParams& params,
                                   bool& path_known) const {
  const auto segments = split_path(req.path);
  for (const auto& route : routes_) {
    if (route.segments.size() != segments.size()) continue;
    RouteParams found;
    bool ok = true;
    for (std::size_t i = 0; ok && i < segments.size(); ++i) {
      if (route.segments[i] == "{}")
        found.push_back(segments[i]);
      else
        ok = route.segments[i] == segments[i];
    }
    if (!ok) continue;
    path_known = true;
    if (route.method != req.method) continue;
    params = std::move(found);
    return &route;
  }
  return nullptr;
}

boost::asio::awaitable<HttpResponse> Router::async_dispatch(const HttpRequest& req) const {
  RouteParams params;
  bool path_known = false;
  const Route* route = match(req, params, path_known);
  if (!route) {
    const std::string what = path_known ? "method " + req.method + " is not supported for "
                                        : "no such endpoint: " + req.method + " ";
    co_return error_response(Error{std::string(errc::kNotFound), what + req.path});
  }
  try {
    if (const auto* sync = std::get_if<SyncRouteHandler>(&route->handler))
      co_return (*sync)(req, params);
    co_return co_await std::get<AsyncRouteHandler>(route->handler)(req, params);
  } catch (const std::exception& e) {
    spdlog::error("bug: handler for {} {} threw: {}", req.method, req.path, e.what());
  }
  co_return error_response(Error{std::string(errc::kInternal), "internal error"});
}

}  // namespace takosumi::controlplane
