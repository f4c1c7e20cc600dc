#include "controlplane/api/public_resource.hpp"

#include "common/error_codes.hpp"
#include "common/offload.hpp"
#include "controlplane/api/api_json.hpp"
#include "controlplane/runs/capsule_attention.hpp"
#include "protocol/source_url.hpp"

namespace takosumi::controlplane {

namespace json = boost::json;

Result<Workspace> workspace_in_query(const PublicApiDeps& d, const HttpRequest& req) {
  auto it = req.query.find("workspaceId");
  if (it == req.query.end() || it->second.empty())
    return fail(errc::kInvalidArgument, "query parameter workspaceId is required");
  return d.catalog.get_workspace(it->second);
}

Result<json::object> capsule_json(const PublicApiDeps& d, const Capsule& capsule) {
  auto attention = load_capsule_attention(d, capsule, d.clock.now_unix());
  if (!attention) return std::unexpected(attention.error());
  json::object o = to_json(capsule);
  o["needsAttention"] = !attention->empty();
  o["attention"] = to_json(*attention);
  return o;
}

HttpResponse capsule_response(const PublicApiDeps& d, int status, const Capsule& capsule) {
  auto o = capsule_json(d, capsule);
  if (!o) return error_response(o.error());
  return json_response(status, *o);
}

Status check_no_consumers(const PublicApiDeps& d, const Capsule& capsule) {
  auto consumers = d.dependencies.as_producer(capsule.id);
  if (!consumers) return std::unexpected(consumers.error());
  std::string names;
  int elsewhere = 0;
  for (const auto& dependency : *consumers) {
    if (dependency.output_share_id) {
      // A revoked share passes nothing any more: its Dependencies do not hold the producer.
      auto share = d.shares.get(*dependency.output_share_id);
      if (!share) return std::unexpected(share.error());
      if (share->status == share_status::kRevoked) continue;
    }
    if (dependency.workspace_id != capsule.workspace_id) {
      ++elsewhere;  // not named: the caller may hold no role in that Workspace
      continue;
    }
    names += (names.empty() ? "" : ", ") + dependency.consumer_capsule_id + " (dependency " +
             dependency.id + ")";
  }
  if (names.empty() && elsewhere == 0) return {};
  if (elsewhere > 0)
    names += (names.empty() ? "" : ", ") + std::to_string(elsewhere) +
             " in other Workspaces through OutputShares (revoke the shares first)";
  return fail(errc::kConflict, "capsule " + capsule.id + " still has consumers: " + names +
                                   "; delete those Dependencies before destroying it");
}

Status check_connections(const PublicApiDeps& d, const Capsule& capsule) {
  if (capsule.state_pending)
    return fail(errc::kConflict,
                "capsule " + capsule.id + " was restored from a backup and its state has not "
                "arrived: a Run now would start from empty state and recreate what exists. "
                "Import its state transfer (docs/backup-and-restore.md), or, if the state is "
                "lost, POST /api/v1/capsules/" + capsule.id + "/start-without-state");
  auto refusal = d.connections.first_unusable(capsule);
  if (!refusal) return std::unexpected(refusal.error());
  if (*refusal) return std::unexpected((*refusal)->error);
  return {};
}

HttpResponse create_run(const PublicApiDeps& d, std::string_view actor,
                        const std::function<Result<Run>()>& create,
                        std::optional<bool> accept_data_loss) {
  auto created = in_transaction(d.db, [&]() -> Result<Run> {
    auto run = create();
    if (!run) return run;
    json::object detail{{"type", protocol::to_string(run->type)}};
    if (accept_data_loss) detail["acceptDataLoss"] = *accept_data_loss;
    if (run->restores_state_version_id) detail["restoresStateVersionId"] = *run->restores_state_version_id;
    TAKOSUMI_TRY(d.audit.record(run_event(actor, "run.created", *run, std::move(detail))));
    return run;
  });
  if (!created) return error_response(created.error());
  d.waiters.notify();
  return json_response(201, to_json(*created));
}

Status check_capsule_source(const PublicApiDeps& d, std::string_view workspace_id,
                            const CapsuleSource& source) {
  if (auto url = protocol::check_source_url(source.git_url, d.git.settings().rules); !url)
    return std::unexpected(url.error());
  if (!source.connection_id) return {};
  const std::string& id = *source.connection_id;
  auto connection = d.connections.get(id);
  if ((!connection && connection.error().code == errc::kNotFound) ||
      (connection && connection->workspace_id != workspace_id))
    return fail(errc::kInvalidArgument, "source.connection: " + foreign_connection_message(id, workspace_id));
  if (!connection) return std::unexpected(connection.error());
  if (connection->kind != connection_kind::kGit)
    return fail(errc::kInvalidArgument,
                "source.connection: connection " + id + " is of kind " + connection->kind +
                    "; a source is fetched with a Connection of kind git (an https TOKEN or an "
                    "SSH_PRIVATE_KEY with SSH_KNOWN_HOSTS)");
  if (auto why = connection_unusable(*connection, d.clock.now_unix())) return std::unexpected(*why);
  return {};
}

Result<std::optional<protocol::GitCredential>> source_credential(const PublicApiDeps& d,
                                                                 const Capsule& capsule) {
  if (!capsule.source.connection_id) return std::optional<protocol::GitCredential>{};
  auto connection = d.connections.get(*capsule.source.connection_id);
  if (!connection) return std::unexpected(connection.error());
  if (auto why = connection_unusable(*connection, d.clock.now_unix())) return std::unexpected(*why);
  auto credential = d.connections.open_git(*connection);
  if (!credential) return std::unexpected(credential.error());
  return std::optional<protocol::GitCredential>(std::move(*credential));
}

boost::asio::awaitable<Result<std::string>> async_resolve_head(const PublicApiDeps& d,
                                                               const Capsule& capsule) {
  auto credential = source_credential(d, capsule);
  if (!credential) co_return std::unexpected(credential.error());
  co_return co_await d.git.async_resolve(capsule.workspace_id, capsule.source.git_url,
                                         capsule.source.ref, std::move(*credential));
}

}  // namespace takosumi::controlplane
