#pragma once
// What every resource class of the public API shares: the dependencies (one struct, references
// that outlive the API), who calls (the request's Principal), and the steps several resources take —
// a Capsule's answer, the Connection check before a new Run, creating a Run with its audit
// record, resolving a Capsule's ref on the blocking-work pool.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/json/object.hpp>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.hpp"
#include "common/secret_bytes.hpp"
#include "controlplane/api/public_access.hpp"
#include "controlplane/http/router.hpp"
#include "controlplane/runs/claim_waiters.hpp"
#include "controlplane/runs/git_ref_resolver.hpp"
#include "controlplane/runs/manifest_builder.hpp"
#include "controlplane/runs/run_queue.hpp"
#include "controlplane/runs/workspace_planner.hpp"
#include "controlplane/store/stores.hpp"

namespace takosumi::controlplane {

struct PublicApiDeps : Stores {
  GitRefResolver& git;  // also what the source rules are (file roots, the private dataDir)
  RunQueue& queue;
  ManifestBuilder& manifests;
  boost::asio::thread_pool::executor_type pool;
  ClaimWaiters& waiters;
  WorkspacePlanner& planner;
  const Clock& clock;
  const SecretBytes& api_token;
};

// What each resource class of the public API (capsule_api.hpp, run_api.hpp, …) holds: the shared
// dependencies.
class PublicResource {
 public:
  explicit PublicResource(const PublicApiDeps& deps) : d_(deps) {}

 protected:
  // The audit actor of the request: the admin token's or the scoped token's.
  static const std::string& actor(const HttpRequest& req) { return principal_of(req).actor; }

  PublicApiDeps d_;
};

// The Workspace ?workspaceId= names (Scope::workspace_query routes): invalid_argument when the
// parameter is missing, not_found for an unknown id.
Result<Workspace> workspace_in_query(const PublicApiDeps& d, const HttpRequest& req);

// Capsule JSON with needsAttention and attention, computed now.
Result<boost::json::object> capsule_json(const PublicApiDeps& d, const Capsule& capsule);
HttpResponse capsule_response(const PublicApiDeps& d, int status, const Capsule& capsule);

// conflict-like refusal (connection_revoked / connection_expired) when a Connection of the
// Capsule is not active, and conflict while a restored Capsule waits for its state: no Run is
// created for such a Capsule.
Status check_connections(const PublicApiDeps& d, const Capsule& capsule);

// conflict naming the consumers (those of other Workspaces only counted) while Dependencies
// still take the Capsule's Outputs (a revoked share's do not): it is neither destroyed nor is
// its destroy plan applied until they are deleted.
Status check_no_consumers(const PublicApiDeps& d, const Capsule& capsule);

// Runs `create` and records run.created by `actor` (with acceptDataLoss for applies) in one
// transaction, wakes the agents waiting for work, and answers 201 with the new Run (or the error).
HttpResponse create_run(const PublicApiDeps& d, std::string_view actor,
                       const std::function<Result<Run>()>& create,
                       std::optional<bool> accept_data_loss = std::nullopt);

// The commit the Capsule's ref names now, resolved in the Git helper on the resolver's own
// threads (never the blocking-work pool), with the Capsule's Connection of kind git if it has one.
boost::asio::awaitable<Result<std::string>> async_resolve_head(const PublicApiDeps& d,
                                                               const Capsule& capsule);

// A Capsule source this control plane accepts: a file:// URL only under sources.fileRoots and
// never inside dataDir (source_denied), and source.connection a Connection of kind git of the
// same Workspace (the same refusal whether it exists elsewhere or not) that is active.
Status check_capsule_source(const PublicApiDeps& d, std::string_view workspace_id,
                            const CapsuleSource& source);

// The Capsule's Connection of kind git, opened; nullopt when it has none.
Result<std::optional<protocol::GitCredential>> source_credential(const PublicApiDeps& d,
                                                                 const Capsule& capsule);

}  // namespace takosumi::controlplane
