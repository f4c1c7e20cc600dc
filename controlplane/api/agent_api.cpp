#include "controlplane/api/agent_api.hpp"
#include "controlplane/runs/run_intake.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "common/error_codes.hpp"
#include "common/file_io.hpp"
#include "common/offload.hpp"
#include "common/strict_json.hpp"
#include "crypto/random_ids.hpp"
#include "protocol/plan_view.hpp"
#include "crypto/keys.hpp"
#include "crypto/registration_proof.hpp"
#include "crypto/sha256.hpp"
#include "protocol/registration_request.hpp"
#include "protocol/run_report.hpp"

namespace takosumi::controlplane {
namespace {

namespace json = boost::json;

struct ClaimRequest {
  std::int64_t free_slots = 1;
  std::int64_t wait_seconds = 0;
};

// {"freeSlots"?, "waitSeconds"?}; an empty body claims one job without waiting.
Result<ClaimRequest> parse_claim(const std::string& text) {
  auto body = parse_object(text.empty() ? "{}" : text, kMaxJsonBody);
  if (!body) return std::unexpected(body.error());
  TAKOSUMI_TRY(check_known_fields(*body, {"freeSlots", "waitSeconds"}));
  auto slots = get_optional_int(*body, "freeSlots");
  auto wait = get_optional_int(*body, "waitSeconds");
  if (!slots) return std::unexpected(slots.error());
  if (!wait) return std::unexpected(wait.error());
  ClaimRequest r{slots->value_or(1), std::min<std::int64_t>(wait->value_or(0), kMaxClaimWaitSeconds)};
  if (r.free_slots < 0 || r.free_slots > 64 || r.wait_seconds < 0)
    return fail(errc::kInvalidArgument, "freeSlots must be 0..64 and waitSeconds not negative");
  return r;
}

json::object job_to_json(const Job& job) {
  return {{"runId", job.claimed.run.id},
          {"leaseToken", job.claimed.lease_token},
          {"leaseExpiresAt", job.claimed.lease_expires_at},
          {"manifest", json::object{{"payload", job.manifest.payload},
                                    {"signature", job.manifest.signature}}}};
}

}  // namespace

void AgentApi::register_routes(Router& r) {
  using boost::asio::awaitable;
  // The handlers identify the agent themselves: the caller these hand on is empty.
  const Authenticator pool_token = [this](const HttpRequest& head,
                                          const RouteParams&) -> Result<std::any> {
    auto auth = registration_auth(head);
    if (!auth) return std::unexpected(auth.error());
    return std::any{std::move(*auth)};
  };
  const RouteAccess pool{pool_token, RouteBody::json};
  const Authenticator agent = [this](const HttpRequest& head,
                                     const RouteParams&) -> Result<std::any> {
    TAKOSUMI_TRY(authenticate(head));
    return std::any{};
  };
  const RouteAccess json_body{agent, RouteBody::json};
  r.add("POST", "/agent/v1/register/challenge", pool,
        [this](auto& req, auto&) { return register_challenge(req); });
  r.add("POST", "/agent/v1/register", pool, [this](auto& req, auto&) { return register_agent(req); });
  r.add("POST", "/agent/v1/heartbeat", json_body,
        [this](auto& req, auto&) { return agent_heartbeat(req); });
  r.add("POST", "/agent/v1/deregister", json_body,
        [this](auto& req, auto&) { return deregister(req); });
  r.add_async("POST", "/agent/v1/claim", json_body,
              [this](const HttpRequest& req, const RouteParams&) { return async_claim(req); });
  r.add("POST", "/agent/v1/runs/{}/heartbeat", json_body,
        [this](auto& req, auto& p) { return heartbeat(req, p[0]); });
  r.add("POST", "/agent/v1/runs/{}/phase", json_body,
        [this](auto& req, auto& p) { return phase(req, p[0]); });
  r.add("POST", "/agent/v1/runs/{}/logs", json_body,
        [this](auto& req, auto& p) { return append_log(req, p[0]); });
  r.add("POST", "/agent/v1/runs/{}/complete", json_body,
        [this](auto& req, auto& p) { return complete(req, p[0]); });
  r.add_async("PUT", "/agent/v1/runs/{}/report", RouteAccess{agent, RouteBody::file},
              [this](const HttpRequest& req, const RouteParams& p) -> awaitable<HttpResponse> {
                co_return co_await async_put_report(req, p[0]);
              });
  r.add("GET", "/agent/v1/runs/{}/artifacts/{}", RouteAccess{agent, RouteBody::none},
        [this](auto& req, auto& p) { return download(req, p[0], p[1]); });
  // A body is taken only for the leased Run's own kind of artifact, and no larger than that kind
  // can be.
  const Authenticator uploader = [this](const HttpRequest& head,
                                        const RouteParams& p) -> Result<std::any> {
    auto run = check_upload(head, p.at(0), p.at(1));
    if (!run) return std::unexpected(run.error());
    return std::any{};
  };
  const auto upload_bound = [](const RouteParams& p) {
    return p.at(1) == "plan_view" ? protocol::kMaxPlanViewBytes : kMaxArtifactBytes;
  };
  r.add_async("PUT", "/agent/v1/runs/{}/artifacts/{}",
              RouteAccess{uploader, RouteBody::file, upload_bound},
              [this](const HttpRequest& req, const RouteParams& p) -> awaitable<HttpResponse> {
                co_return co_await async_upload(req, p[0], p[1]);
              });
}

Result<Agent> AgentApi::authenticate(const HttpRequest& req) {
  auto token = req.bearer_token();
  if (!token) return fail(errc::kUnauthorized, "missing agent token (Authorization: Bearer …)");
  return d_.agents.authenticate(*token, req.peer_certificate);
}

// Registration and its challenge carry the pool token in the Authorization header, so it is
// checked before the server reads the body.
Result<AgentApi::RegistrationAuth> AgentApi::registration_auth(const HttpRequest& head) {
  auto token = head.bearer_token();
  if (!token) return fail(errc::kUnauthorized, "missing pool token (Authorization: Bearer …)");
  const bool configured = std::ranges::any_of(d_.configured_pool_tokens, [&](const SecretBytes& t) {
    return crypto::secrets_equal(*token, t.reveal_as_string());
  });
  if (configured) return RegistrationAuth{"config", std::string(kDefaultPool), std::nullopt};
  auto made = d_.pool_tokens.find_active(*token);
  if (!made) return std::unexpected(made.error());
  if (*made) return RegistrationAuth{(*made)->id, (*made)->pool, std::nullopt};
  // Not a pool token: an agent's own credential (a revoked agent learns so here).
  auto agent = d_.agents.authenticate(*token, head.peer_certificate);
  if (agent) return RegistrationAuth{"", "", std::move(*agent)};
  if (agent.error().code == errc::kUnauthorized)
    return fail(errc::kUnauthorized, "unknown pool token");
  return std::unexpected(agent.error());
}

// Only after registration_auth accepted the head.
std::string AgentApi::pool_token_sha256(const HttpRequest& head) {
  return crypto::sha256_hex(head.bearer_token().value_or(""));
}

HttpResponse AgentApi::register_challenge(const HttpRequest& req) {
  auto body = parse_object(req.body.empty() ? "{}" : req.body, kMaxJsonBody);
  if (!body) return error_response(body.error());
  if (auto known = check_known_fields(*body, {}); !known)
    return error_response(known.error());
  auto issued = d_.challenges.issue(pool_token_sha256(req));
  if (!issued) return error_response(issued.error());
  return json_response(200, json::object{{"challenge", issued->challenge},
                                         {"expiresAt", issued->expires_at}});
}

// The challenge is used up before the signature is checked, so each one allows a single attempt.
Result<AgentRegistration> AgentApi::proven_registration(const HttpRequest& req,
                                                        const json::object& body) {
  auto r = protocol::registration_request_from_json(body);
  if (!r) return std::unexpected(r.error());
  const std::string pool = pool_token_sha256(req);
  TAKOSUMI_TRY(d_.challenges.redeem(r->challenge, pool));
  // Both keys were read as base64 of 32 bytes by registration_request_from_json.
  auto sign_key = crypto::SignPublicKey::from_base64(r->agent.sign_public_key);
  auto box_key = crypto::BoxPublicKey::from_base64(r->agent.box_public_key);
  if (const Error* e = first_error(sign_key, box_key)) return std::unexpected(*e);
  const crypto::RegistrationClaim claim{r->challenge, r->agent.name, *sign_key, *box_key,
                                        pool,         d_.keys.signing_key().public_key};
  TAKOSUMI_TRY(crypto::verify_registration(claim, r->signature));
  return std::move(r->agent);
}

HttpResponse AgentApi::register_agent(const HttpRequest& req) {
  const auto* auth = std::any_cast<RegistrationAuth>(&req.caller);
  if (!auth) return error_response(Error{std::string(errc::kInternal), "registration without auth"});
  auto body = parse_object(req.body, kMaxJsonBody);
  if (!body) return error_response(body.error());
  auto reg = proven_registration(req, *body);
  if (!reg) return error_response(reg.error());
  // An agent's credential registers that agent only, with the key on record.
  if (auth->agent && (auth->agent->name != reg->name ||
                      auth->agent->sign_public_key != reg->sign_public_key))
    return error_response(Error{std::string(errc::kForbidden),
                                "an agent credential registers only its own agent with its own "
                                "signing key; use a pool token"});
  const RegistrationContext context{auth->pool_token_id, req.peer_certificate, auth->pool};
  auto cred = in_transaction(d_.db, [&]() -> Result<AgentCredential> {
    auto registered = d_.agents.register_agent(*reg, context);
    if (!registered) return registered;
    AuditEvent e{.actor = agent_actor(registered->agent_id), .action = "agent.registered"};
    e.detail = {{"name", reg->name}, {"version", reg->version},
                {"keysReplaced", registered->keys_replaced},
                {"poolTokenId", auth->pool_token_id},
                {"pool", auth->pool},
                {"certificateIdentity", req.peer_certificate}};
    TAKOSUMI_TRY(d_.audit.record(std::move(e)));
    return registered;
  });
  // A refused key is either a lost key file or someone trying to take the name: the operator
  // should see it without reading agent logs.
  if (!cred && (cred.error().code == errc::kAgentKeyMismatch ||
                cred.error().code == errc::kAgentCertificateMismatch))
    spdlog::warn("register refused: {}", cred.error().message);
  if (!cred) return error_response(cred.error());
  return json_response(200, json::object{{"agentId", cred->agent_id},
                                         {"agentToken", cred->agent_token},
                                         {"agentTokenExpiresAt", cred->expires_at}});
}

HttpResponse AgentApi::agent_heartbeat(const HttpRequest& req) {
  auto agent = authenticate(req);
  if (!agent) return error_response(agent.error());
  auto body = parse_object(req.body.empty() ? "{}" : req.body, kMaxJsonBody);
  if (!body) return error_response(body.error());
  if (auto known = check_known_fields(*body, {"busySlots"}); !known)
    return error_response(known.error());
  auto busy = get_optional_int(*body, "busySlots");
  if (!busy) return error_response(busy.error());
  if (busy->value_or(0) < 0 || busy->value_or(0) > 64)
    return error_response(Error{std::string(errc::kInvalidArgument), "busySlots must be 0..64"});
  auto answer = d_.agents.heartbeat(*agent, req.bearer_token().value_or(""), busy->value_or(0));
  if (!answer) return error_response(answer.error());
  json::object out{{"agentTokenExpiresAt", answer->expires_at}};
  if (answer->rotated) {
    out["agentToken"] = answer->rotated->agent_token;
    out["agentTokenExpiresAt"] = answer->rotated->expires_at;
  }
  return json_response(200, out);
}

// An ephemeral agent after its one Run. Its leases are left as they are: it deregisters only
// after delivering, and a lease it still held would expire and requeue as for any lost agent.
HttpResponse AgentApi::deregister(const HttpRequest& req) {
  auto agent = authenticate(req);
  if (!agent) return error_response(agent.error());
  auto body = parse_object(req.body.empty() ? "{}" : req.body, kMaxJsonBody);
  if (!body) return error_response(body.error());
  if (auto known = check_known_fields(*body, {}); !known) return error_response(known.error());
  if (auto done = d_.agents.deregister(*agent); !done) return error_response(done.error());
  spdlog::info("agent {} ({}) deregistered", agent->name, agent->id);
  return json_response(200, json::object{{"deregistered", true}});
}

boost::asio::awaitable<HttpResponse> AgentApi::async_claim(const HttpRequest& req) {
  auto agent = authenticate(req);
  if (!agent) co_return error_response(agent.error());
  auto request = parse_claim(req.body);
  if (!request) co_return error_response(request.error());
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::seconds(request->wait_seconds);
  const ManifestFactory build = [this, &agent](const ClaimedRun& c) {
    return d_.manifests.build_signed(c, *agent);
  };
  ClientLink* client = req.client.get();
  std::vector<Job> jobs;
  while (request->free_slots > 0) {
    // Checked right before claiming (nothing runs in between): a job never goes to a client
    // that is known to have gone, nor to a token revoked while the poll waited (the agent
    // registered again, or an operator reset its keys); manifests go to the current box key.
    if (client && client->gone()) break;
    agent = authenticate(req);
    if (!agent) co_return error_response(agent.error());
    auto claimed = d_.queue.claims().claim(*agent, static_cast<int>(request->free_slots), build);
    if (!claimed) co_return error_response(claimed.error());
    jobs = std::move(*claimed);
    // Slots filled: there may be more where these came from; the next waiter of the pool looks.
    if (static_cast<std::int64_t>(jobs.size()) == request->free_slots)
      d_.waiters.wake_local(agent->pool);
    if (!jobs.empty() || d_.waiters.stopped() || Clock::now() >= deadline) break;
    // Re-check at least every second: expired leases make Runs claimable without a notification,
    // and a notification wakes only a few waiters (claim_waiters.hpp).
    co_await d_.waiters.async_wait_until(std::min(deadline, Clock::now() + std::chrono::seconds(1)),
                                         agent->pool, client);
  }
  co_return claim_response(*agent, jobs);
}

// The jobs; when the answer does not reach the agent, each claim is released at once (the Run goes
// back to the queue with its attempt unchanged) instead of waiting out its lease.
HttpResponse AgentApi::claim_response(const Agent& agent, const std::vector<Job>& jobs) {
  json::array out;
  for (const auto& job : jobs) out.push_back(job_to_json(job));
  HttpResponse res = json_response(200, json::object{{"jobs", std::move(out)}});
  if (jobs.empty()) return res;
  std::vector<std::pair<std::string, std::string>> leases;
  for (const auto& job : jobs) leases.emplace_back(job.claimed.run.id, job.claimed.lease_token);
  res.on_undelivered = [this, agent, leases = std::move(leases)] {
    for (const auto& [run_id, lease] : leases)
      if (auto released = d_.queue.leases().release(run_id, agent, lease); !released)
        spdlog::warn("run {}: claim not released: {}", run_id, released.error().to_string());
    d_.waiters.notify();
  };
  return res;
}

Result<AgentApi::LeasedRequest> AgentApi::leased_request(
    const HttpRequest& req, std::initializer_list<std::string_view> fields) {
  auto agent = authenticate(req);
  if (!agent) return std::unexpected(agent.error());
  auto body = parse_object(req.body, kMaxJsonBody);
  if (!body) return std::unexpected(body.error());
  TAKOSUMI_TRY(check_known_fields(*body, fields));
  auto lease = get_string(*body, "leaseToken", 256);
  if (!lease) return std::unexpected(lease.error());
  return LeasedRequest{std::move(*agent), std::move(*body), std::move(*lease)};
}

HttpResponse AgentApi::heartbeat(const HttpRequest& req, const std::string& run_id) {
  auto leased = leased_request(req, {"leaseToken"});
  if (!leased) return error_response(leased.error());
  auto renewed = d_.queue.leases().heartbeat(run_id, leased->agent, leased->lease);
  if (!renewed) return error_response(renewed.error());
  return json_response(200, json::object{{"leaseExpiresAt", renewed->lease_expires_at},
                                         {"cancelRequested", renewed->cancel_requested}});
}

HttpResponse AgentApi::phase(const HttpRequest& req, const std::string& run_id) {
  auto leased = leased_request(req, {"leaseToken", "attempt", "phase"});
  if (!leased) return error_response(leased.error());
  auto attempt = get_int(leased->body, "attempt");
  auto phase = get_string(leased->body, "phase", 64);
  if (!attempt) return error_response(attempt.error());
  if (!phase) return error_response(phase.error());
  // Only the apply changes real resources, so only its start needs fencing.
  if (*phase != "apply")
    return error_response(Error{std::string(errc::kInvalidArgument),
                                "field \"phase\" must be \"apply\""});
  auto started = d_.queue.leases().start_apply(run_id, leased->agent, leased->lease, *attempt);
  if (!started) return error_response(started.error());
  return json_response(200, json::object{{"phase", "apply"},
                                         {"leaseExpiresAt", started->lease_expires_at},
                                         {"cancelRequested", started->cancel_requested}});
}

HttpResponse AgentApi::append_log(const HttpRequest& req, const std::string& run_id) {
  auto leased = leased_request(req, {"leaseToken", "seq", "text"});
  if (!leased) return error_response(leased.error());
  auto seq = get_int(leased->body, "seq");
  auto text = get_string(leased->body, "text", kMaxJsonBody);
  if (!seq) return error_response(seq.error());
  if (!text) return error_response(text.error());
  auto run = d_.queue.leases().check_lease(run_id, leased->agent, leased->lease);
  if (!run) return error_response(run.error());
  auto next = d_.logs.append(run_id, run->attempt, *seq, *text);
  if (!next) return error_response(next.error());
  return json_response(200, json::object{{"nextSeq", *next}});
}

HttpResponse AgentApi::complete(const HttpRequest& req, const std::string& run_id) {
  auto agent = authenticate(req);
  if (!agent) return error_response(agent.error());
  auto body = parse_object(req.body, kMaxJsonBody);
  if (!body) return error_response(body.error());
  auto report = protocol::run_report_from_json(*body);
  if (!report) return error_response(report.error());
  return apply_report(run_id, *agent, *report);
}

// A report too large for the JSON body of /complete (docs/protocol.md "Complete"), streamed to a
// temp file. The lease in the header is checked before it is parsed; at most two are parsed at a
// time (each may take a hundred MiB or more while it is), later ones are asked to retry.
boost::asio::awaitable<HttpResponse> AgentApi::async_put_report(const HttpRequest& req,
                                                                const std::string& run_id) {
  auto agent = authenticate(req);
  if (!agent) co_return error_response(agent.error());
  const std::string lease = req.header("x-takosumi-lease").value_or("");
  auto run = d_.queue.leases().check_report_lease(run_id, *agent, lease);
  if (!run && run.error().code == errc::kLeaseLost)
    d_.queue.leases().record_fenced(run_id, *agent, std::nullopt, "report");
  if (!run) co_return error_response(run.error());
  // A lease is per attempt: once its attempt is completed, a repeat (after a lost answer) is
  // acknowledged without reading the report again, and an old lease costs no parse.
  if (run->completed_attempt > 0 && run->completed_attempt == run->attempt)
    co_return json_response(200, json::object{{"acknowledged", true}});
  std::error_code ec;
  const auto size = std::filesystem::file_size(req.body_file, ec);
  if (req.body_file.empty() || ec)
    co_return error_response(Error{std::string(errc::kInvalidArgument), "report body missing"});
  if (size > protocol::kMaxRunReportBytes)
    co_return error_response(Error{std::string(errc::kPayloadTooLarge),
                                   "the run report is " + std::to_string(size) +
                                       " bytes, more than " +
                                       std::to_string(protocol::kMaxRunReportBytes)});
  constexpr int kMaxLargeReports = 2;
  if (large_reports_in_progress_ >= kMaxLargeReports)
    co_return error_response(Error{std::string(errc::kUnavailable),
                                   "other large run reports are being read; retry later"});
  ++large_reports_in_progress_;
  struct Slot {
    int& in_progress;
    ~Slot() { --in_progress; }
  } slot{large_reports_in_progress_};
  // A named lambda: g++ 12 mishandles non-trivial temporaries inside a co_await expression.
  auto read = [file = req.body_file]() -> Result<protocol::RunReport> {
    auto text = read_file(file, protocol::kMaxRunReportBytes);
    if (!text) return std::unexpected(Error{text.error().code, "cannot read the report"});
    return protocol::run_report_from_text(*text);
  };
  auto report = co_await async_offload(d_.pool, std::move(read));
  if (!report) co_return error_response(report.error());
  // The parse took time: an agent revoked meanwhile completes nothing.
  if (auto still = authenticate(req); !still) co_return error_response(still.error());
  if (report->lease_token != lease)
    co_return error_response(Error{std::string(errc::kInvalidArgument),
                                   "the report's leaseToken is not the X-Takosumi-Lease header's"});
  co_return apply_report(run_id, *agent, *report);
}

HttpResponse AgentApi::apply_report(const std::string& run_id, const Agent& agent,
                                    const protocol::RunReport& report) {
  if (auto done = apply_run_report(d_.queue, d_.planner, d_.waiters, run_id, agent, report); !done)
    return error_response(done.error());
  return json_response(200, json::object{{"acknowledged", true}});
}

}  // namespace takosumi::controlplane
