#include "controlplane/http/router.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <exception>

#include "common/error_codes.hpp"
#include "common/json_fields.hpp"
#include "common/strict_json.hpp"

namespace takosumi::controlplane {
namespace {

constexpr std::size_t kMaxEmptyBody = 1024;

// A route without fields: nothing, or an empty JSON object.
Status check_no_fields(const std::string& body) {
  if (body.find_first_not_of(" \t\r\n") == std::string::npos) return {};
  auto o = parse_object(body, kMaxEmptyBody);
  if (!o) return std::unexpected(o.error());
  return check_known_fields(*o, {});
}

}  // namespace

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

void Router::add(std::string method, std::string_view pattern, RouteAccess access,
                 SyncRouteHandler handler) {
  std::string label = method + " " + std::string(pattern);
  routes_.push_back(Route{std::move(label), std::move(method), split_path(pattern),
                          std::move(access), std::move(handler)});
}

void Router::add_async(std::string method, std::string_view pattern, RouteAccess access,
                       AsyncRouteHandler handler) {
  std::string label = method + " " + std::string(pattern);
  routes_.push_back(Route{std::move(label), std::move(method), split_path(pattern),
                          std::move(access), std::move(handler)});
}

std::string Router::route_label(const HttpRequest& req) const {
  RouteParams ignored;
  auto route = match(req, ignored);
  return route ? (*route)->label : "unmatched";
}

std::vector<std::string> Router::route_labels() const {
  std::vector<std::string> labels;
  for (const auto& route : routes_) labels.push_back(route.label);
  labels.emplace_back("unmatched");
  return labels;
}

Result<const Router::Route*> Router::match(const HttpRequest& req, RouteParams& params) const {
  const auto segments = split_path(req.path);
  bool path_known = false;
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
  if (!path_known) return fail(errc::kNotFound, "no such endpoint: " + req.method + " " + req.path);
  return fail(errc::kMethodNotAllowed, "method " + req.method + " is not supported for " +
                                           req.path + "; it takes " + allowed_methods(req.path));
}

std::string Router::allowed_methods(const std::string& path) const {
  const auto segments = split_path(path);
  std::vector<std::string> methods;
  for (const auto& route : routes_) {
    if (route.segments.size() != segments.size()) continue;
    bool ok = true;
    for (std::size_t i = 0; ok && i < segments.size(); ++i)
      ok = route.segments[i] == "{}" || route.segments[i] == segments[i];
    if (ok && std::ranges::find(methods, route.method) == methods.end())
      methods.push_back(route.method);
  }
  std::ranges::sort(methods);
  std::string out;
  for (const auto& m : methods) out += (out.empty() ? "" : ", ") + m;
  return out;
}

HttpResponse Router::refusal(const HttpRequest& req, const Error& error) const {
  HttpResponse res = error_response(error);
  if (error.code == errc::kMethodNotAllowed) res.headers.emplace_back("Allow", allowed_methods(req.path));
  return res;
}

Admission Router::admit(const HttpRequest& head) const {
  RouteParams params;
  auto route = match(head, params);
  if (!route) return Admission{refusal(head, route.error()), {}};
  auto caller = (*route)->access.authenticate(head, params);
  if (!caller) return Admission{error_response(caller.error()), {}};
  switch ((*route)->access.body) {
    case RouteBody::none:
      return Admission{std::nullopt, BodyPolicy{kMaxEmptyBody, false}, true, std::move(*caller)};
    case RouteBody::json:
      return Admission{std::nullopt, BodyPolicy{kMaxJsonBody, false}, true, std::move(*caller)};
    case RouteBody::file: {
      const auto& bound = (*route)->access.max_file_bytes;
      const std::size_t max = bound ? std::min(bound(params), max_file_bytes_) : max_file_bytes_;
      return Admission{std::nullopt, BodyPolicy{max, true}, true, std::move(*caller)};
    }
  }
  return Admission{error_response(Error{std::string(errc::kInternal), "internal error"}), {}};
}

boost::asio::awaitable<HttpResponse> Router::async_dispatch(const HttpRequest& req) const {
  RouteParams params;
  auto route = match(req, params);
  if (!route) co_return refusal(req, route.error());
  if ((*route)->access.body == RouteBody::none)
    if (auto empty = check_no_fields(req.body); !empty) co_return error_response(empty.error());
  try {
    if (const auto* sync = std::get_if<SyncRouteHandler>(&(*route)->handler))
      co_return (*sync)(req, params);
    co_return co_await std::get<AsyncRouteHandler>((*route)->handler)(req, params);
  } catch (const std::exception& e) {
    spdlog::error("bug: handler for {} {} threw: {}", req.method, req.path, e.what());
  }
  co_return error_response(Error{std::string(errc::kInternal), "internal error"});
}

}  // namespace takosumi::controlplane
