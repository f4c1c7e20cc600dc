#include "controlplane/api/output_share_api.hpp"

#include <algorithm>
#include <set>

#include "common/error_codes.hpp"
#include "controlplane/api/api_json.hpp"
#include "controlplane/store/model/capsule_spec.hpp"
#include "common/json_fields.hpp"
#include "common/strict_json.hpp"

namespace takosumi::controlplane {
namespace {

namespace json = boost::json;

constexpr std::size_t kMaxSharedOutputs = 256;

struct ShareRequest {
  std::string producer_capsule_id;
  std::string to_workspace_id;
  std::vector<std::string> outputs;
};

// {"producerCapsuleId", "toWorkspaceId", "outputs": [public Output names]}
Result<ShareRequest> parse_share_request(const json::object& body) {
  TAKOSUMI_TRY(check_known_fields(body, {"producerCapsuleId", "toWorkspaceId", "outputs"}));
  auto producer = get_string(body, "producerCapsuleId", 128);
  auto to = get_string(body, "toWorkspaceId", 128);
  auto outputs = get_optional_array(body, "outputs");
  if (const Error* e = first_error(producer, to, outputs)) return std::unexpected(*e);
  if (!*outputs || (*outputs)->empty() || (*outputs)->size() > kMaxSharedOutputs)
    return fail(errc::kInvalidArgument,
                "outputs must list 1 to 256 public Output names of the producer");
  std::set<std::string> names;
  for (const auto& v : **outputs) {
    if (!v.is_string() || v.get_string().empty())
      return fail(errc::kInvalidArgument, "outputs must list public Output names (strings)");
    if (!names.emplace(v.get_string()).second)
      return fail(errc::kInvalidArgument,
                  "outputs names \"" + std::string(v.get_string()) + "\" twice");
  }
  return ShareRequest{std::move(*producer), std::move(*to), {names.begin(), names.end()}};
}

}  // namespace

void OutputShareApi::register_routes(Router& r, const PublicRouteAccess& a) {
  // The giving Workspace is the producer's (in the body); a share has two sides: the handlers
  // check the roles.
  r.add("POST", "/api/v1/output-shares", a.json_body({Role::owner, Scope::handler}),
        [this](auto& req, auto&) { return create_share(req); });
  r.add("GET", "/api/v1/output-shares", a.none({Role::viewer, Scope::workspace_query}),
        [this](auto& req, auto&) { return list_shares(req); });
  r.add("GET", "/api/v1/output-shares/{}", a.none({Role::viewer, Scope::handler}),
        [this](auto& req, auto& p) { return get_share(req, p[0]); });
  r.add("POST", "/api/v1/output-shares/{}/approve", a.none({Role::owner, Scope::handler}),
        [this](auto& req, auto& p) { return approve_share(req, p[0]); });
  r.add("POST", "/api/v1/output-shares/{}/revoke", a.none({Role::owner, Scope::handler}),
        [this](auto& req, auto& p) { return revoke_share(req, p[0]); });
}

Result<OutputShare> OutputShareApi::share_for(const HttpRequest& req, const std::string& id,
                                              Role need, Sides sides) {
  const Principal& caller = principal_of(req);
  auto share = d_.shares.get(id);
  if (!share && (caller.admin || share.error().code != errc::kNotFound)) return share;
  const bool giving = share && sides != Sides::receiving && caller.has(need, share->from_workspace_id);
  const bool receiving =
      share && sides != Sides::giving && caller.has(need, share->to_workspace_id);
  if (giving || receiving) return share;
  const std::string_view side = sides == Sides::receiving ? "receiving"
                                : sides == Sides::giving  ? "giving"
                                                          : "giving or the receiving";
  return fail(errc::kForbidden, "this API token lacks the " + std::string(to_string(need)) +
                                    " role in the " + std::string(side) +
                                    " Workspace of output share " + id);
}

Status OutputShareApi::audit_both(const HttpRequest& req, std::string_view action,
                                  const OutputShare& s, bool receiver_exists) {
  std::vector<std::string> sides{s.from_workspace_id};
  if (receiver_exists) sides.push_back(s.to_workspace_id);  // an unknown id has no activity
  for (const std::string& workspace_id : sides) {
    AuditEvent e{.actor = actor(req), .action = std::string(action),
                 .workspace_id = workspace_id, .capsule_id = s.producer_capsule_id};
    e.detail = {{"outputShareId", s.id},
                {"fromWorkspaceId", s.from_workspace_id},
                {"toWorkspaceId", s.to_workspace_id},
                {"outputs", json::array(s.outputs.begin(), s.outputs.end())},
                {"status", s.status}};
    TAKOSUMI_TRY(d_.audit.record(std::move(e)));
  }
  return {};
}

HttpResponse OutputShareApi::create_share(const HttpRequest& req) {
  auto body = parse_object(req.body, kMaxJsonBody);
  if (!body) return error_response(body.error());
  auto parsed = parse_share_request(*body);
  if (!parsed) return error_response(parsed.error());
  const Principal& caller = principal_of(req);
  auto producer = d_.catalog.get_capsule(parsed->producer_capsule_id);
  const std::string what = "capsule " + parsed->producer_capsule_id;
  if (!producer && (caller.admin || producer.error().code != errc::kNotFound))
    return error_response(producer.error());
  if (auto allowed = require_role(caller, Role::owner, producer ? producer->workspace_id : "", what);
      !allowed)
    return error_response(allowed.error());
  // Whether the receiving Workspace exists is not the giving side's to learn: an offer to an
  // unknown id is recorded like any other and is never approved.
  if (!is_plausible_id(parsed->to_workspace_id))
    return error_response(Error{std::string(errc::kInvalidArgument),
                                "toWorkspaceId must be a Workspace id (ws_…)"});
  auto to = d_.catalog.get_workspace(parsed->to_workspace_id);
  if (!to && to.error().code != errc::kNotFound) return error_response(to.error());
  const bool target_exists = to.has_value();
  if (parsed->to_workspace_id == producer->workspace_id)
    return error_response(Error{std::string(errc::kInvalidArgument),
                                "toWorkspaceId is the producer's own Workspace: inside a "
                                "Workspace, Capsules use a Dependency"});
  // Only public Outputs: the mapped ones a Run may publish (a sensitive Output never is).
  for (const auto& name : parsed->outputs)
    if (!producer->output_allowlist.contains(name))
      return error_response(Error{std::string(errc::kInvalidArgument),
                                  "outputs: \"" + name + "\" is not a public Output of " + what +
                                      " (only Outputs of its outputAllowlist can be shared)"});
  auto sensitive = d_.runs.sensitive_outputs(producer->id);
  if (!sensitive) return error_response(sensitive.error());
  for (const auto& name : parsed->outputs)
    if (std::ranges::find(*sensitive, name) != sensitive->end())
      return error_response(Error{std::string(errc::kInvalidArgument),
                                  "outputs: \"" + name + "\": " + what +
                                      "'s module marks this Output sensitive, and sensitive "
                                      "Outputs never pass to other Capsules; give the secret to "
                                      "both Workspaces through a Connection of each"});
  auto share = in_transaction(d_.db, [&]() -> Result<OutputShare> {
    // Bounded: an owner cannot fill other Workspaces with offers.
    auto pending = d_.shares.count_pending_from(producer->workspace_id);
    if (!pending) return std::unexpected(pending.error());
    if (*pending >= kMaxPendingOffers)
      return fail(errc::kConflict, "this Workspace has " + std::to_string(kMaxPendingOffers) +
                                       " offers waiting for approval; revoke some first");
    auto created = d_.shares.create(*producer, parsed->to_workspace_id, std::move(parsed->outputs),
                                    actor(req));
    if (!created) return created;
    TAKOSUMI_TRY(audit_both(req, "output_share.created", *created, target_exists));
    return created;
  });
  if (!share) return error_response(share.error());
  return json_response(201, to_json(*share));
}

HttpResponse OutputShareApi::list_shares(const HttpRequest& req) {
  auto ws = workspace_in_query(d_, req);
  if (!ws) return error_response(ws.error());
  auto all = d_.shares.list(ws->id);
  if (!all) return error_response(all.error());
  json::array given, received;
  for (const auto& s : *all)
    (s.from_workspace_id == ws->id ? given : received).push_back(to_json(s));
  return json_response(200, json::object{{"given", std::move(given)},
                                         {"received", std::move(received)}});
}

HttpResponse OutputShareApi::get_share(const HttpRequest& req, const std::string& id) {
  auto share = share_for(req, id, Role::viewer, Sides::either);
  if (!share) return error_response(share.error());
  return json_response(200, to_json(*share));
}

HttpResponse OutputShareApi::approve_share(const HttpRequest& req, const std::string& id) {
  // Only the receiving side approves: the giving side cannot push values into another Workspace.
  return move_share(req, id, Sides::receiving, share_status::kActive, "output_share.approved",
                    &OutputShareStore::approve);
}

HttpResponse OutputShareApi::revoke_share(const HttpRequest& req, const std::string& id) {
  return move_share(req, id, Sides::either, share_status::kRevoked, "output_share.revoked",
                    &OutputShareStore::revoke);
}

HttpResponse OutputShareApi::move_share(const HttpRequest& req, const std::string& id, Sides sides,
                                        std::string_view to, std::string_view action,
                                        StoreMove move) {
  auto share = share_for(req, id, Role::owner, sides);
  if (!share) return error_response(share.error());
  // An offer to an unknown id is revoked by its giver alone: no activity is kept for that id.
  auto receiver = d_.catalog.get_workspace(share->to_workspace_id);
  if (!receiver && receiver.error().code != errc::kNotFound) return error_response(receiver.error());
  auto moved = in_transaction(d_.db, [&]() -> Result<OutputShare> {
    if (share->status == to) return *share;  // moving twice changes nothing
    auto done = (d_.shares.*move)(id, actor(req));
    if (!done) return done;
    TAKOSUMI_TRY(audit_both(req, action, *done, receiver.has_value()));
    return done;
  });
  if (!moved) return error_response(moved.error());
  return json_response(200, to_json(*moved));
}

}  // namespace takosumi::controlplane
