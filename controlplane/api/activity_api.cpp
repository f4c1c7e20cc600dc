#include "controlplane/api/activity_api.hpp"

#include <limits>

#include "controlplane/api/api_json.hpp"

namespace takosumi::controlplane {

void ActivityApi::register_routes(Router& r, const PublicRouteAccess& a) {
  r.add("GET", "/api/v1/workspaces/{}/activity", a.none({Role::viewer, Scope::workspace}),
        [this](auto& req, auto& p) { return activity(req, p[0]); });
}

HttpResponse ActivityApi::activity(const HttpRequest& req, const std::string& workspace_id) {
  if (auto ws = d_.catalog.get_workspace(workspace_id); !ws) return error_response(ws.error());
  auto limit = query_int(req, "limit", 50, 1, 200);
  if (!limit) return error_response(limit.error());
  auto before = query_int(req, "before", 0, 1, std::numeric_limits<std::int64_t>::max());
  if (!before) return error_response(before.error());
  std::optional<std::int64_t> bound;
  if (*before > 0) bound = *before;
  // One event past the page tells whether another page exists.
  auto events = d_.audit.list(workspace_id, static_cast<int>(*limit) + 1, bound);
  if (!events) return error_response(events.error());
  boost::json::value next = nullptr;
  if (static_cast<std::int64_t>(events->size()) > *limit) {
    events->pop_back();
    next = events->back().id;
  }
  boost::json::array out;
  for (const auto& e : *events) out.push_back(to_json(e));
  return json_response(200, boost::json::object{{"events", std::move(out)}, {"nextCursor", next}});
}

}  // namespace takosumi::controlplane
