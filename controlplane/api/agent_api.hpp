#pragma once
// The agent API under /agent/v1, exactly as docs/protocol.md specifies: register (pool token and
// a signed challenge, registration_challenges.hpp and crypto/registration_proof.hpp), claim (long
// poll), heartbeat, phase, artifacts, logs, complete (agent bearer token), each token checked on
// the request head before the body is read. A claim never hands a job to a client whose
// connection has gone, and takes back the jobs of an answer that could not be delivered. Artifact
// uploads are streamed to a temp file by the server and checked on the blocking-work pool.
// Registering, claims, apply phases, new artifacts and completions are audited as "agent:<id>",
// and so are completions, uploads and phase calls refused with lease_lost (run.fenced).
#include <boost/asio/thread_pool.hpp>
#include <boost/json/object.hpp>

#include <optional>

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "common/secret_bytes.hpp"
#include "controlplane/store/registration_challenges.hpp"
#include "controlplane/http/router.hpp"
#include "controlplane/runs/claim_waiters.hpp"
#include "controlplane/runs/manifest_builder.hpp"
#include "controlplane/runs/run_queue.hpp"
#include "controlplane/runs/workspace_planner.hpp"
#include "controlplane/store/stores.hpp"

namespace takosumi::controlplane {

inline constexpr std::size_t kMaxArtifactBytes = 256ull * 1024 * 1024;
inline constexpr int kMaxClaimWaitSeconds = 30;

struct AgentApiDeps : Stores {
  RunQueue& queue;
  ManifestBuilder& manifests;
  ClaimWaiters& waiters;
  WorkspacePlanner& planner;
  boost::asio::thread_pool::executor_type pool;
  const std::vector<SecretBytes>& configured_pool_tokens;
  RegistrationChallenges& challenges;
};

class AgentApi {
 public:
  explicit AgentApi(AgentApiDeps deps) : d_(deps) {}
  // Routes capture `this`: the AgentApi must outlive the router.
  void register_routes(Router& router);

 private:
  Result<Agent> authenticate(const HttpRequest& req);
  // A request about one leased Run: the authenticated agent, its JSON body holding only `fields`,
  // and the body's leaseToken.
  struct LeasedRequest {
    Agent agent;
    boost::json::object body;
    std::string lease;
  };
  Result<LeasedRequest> leased_request(const HttpRequest& req,
                                       std::initializer_list<std::string_view> fields);
  // Who may register: a pool token (configured, or made through the API and not revoked), or an
  // agent's own current credential, which lets a restarted agent in after its pool token was
  // rotated away. Checked on the head; handed to the handler as the request's caller.
  struct RegistrationAuth {
    std::string pool_token_id;  // "config" or a PoolToken id; empty for an agent credential
    std::string pool;           // the token's pool; empty for an agent credential (it stays)
    std::optional<Agent> agent;  // the credential's agent
  };
  Result<RegistrationAuth> registration_auth(const HttpRequest& head);
  static std::string pool_token_sha256(const HttpRequest& head);
  // POST /agent/v1/heartbeat {"busySlots"}: the agent is alive; its credential is rotated when due.
  HttpResponse agent_heartbeat(const HttpRequest& req);
  HttpResponse deregister(const HttpRequest& req);
  HttpResponse register_challenge(const HttpRequest& req);
  // The registration a body asks for, once its challenge and signature check out (the pool token
  // was checked on the head).
  Result<AgentRegistration> proven_registration(const HttpRequest& req,
                                                const boost::json::object& body);
  HttpResponse register_agent(const HttpRequest& req);
  boost::asio::awaitable<HttpResponse> async_claim(const HttpRequest& req);
  HttpResponse claim_response(const Agent& agent, const std::vector<Job>& jobs);
  HttpResponse heartbeat(const HttpRequest& req, const std::string& run_id);
  HttpResponse phase(const HttpRequest& req, const std::string& run_id);
  HttpResponse append_log(const HttpRequest& req, const std::string& run_id);
  HttpResponse complete(const HttpRequest& req, const std::string& run_id);
  boost::asio::awaitable<HttpResponse> async_put_report(const HttpRequest& req,
                                                        const std::string& run_id);
  HttpResponse apply_report(const std::string& run_id, const Agent& agent,
                            const protocol::RunReport& report);

  int large_reports_in_progress_ = 0;  // on the io thread only
  // artifact_api.cpp
  // An upload's checks that need no body (agent, kind, lease, Run type): at admission, before a
  // byte of it is read, and again once it arrived.
  Result<Run> check_upload(const HttpRequest& head, const std::string& run_id, const std::string& kind);
  HttpResponse download(const HttpRequest& req, const std::string& run_id, const std::string& kind);
  boost::asio::awaitable<HttpResponse> async_upload(const HttpRequest& req,
                                                    const std::string& run_id,
                                                    const std::string& kind);

  AgentApiDeps d_;
};

}  // namespace takosumi::controlplane
