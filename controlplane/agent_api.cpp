#include "controlplane/agent_api.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "common/error_codes.hpp"
#include "controlplane/ids.hpp"
#include "crypto/keys.hpp"
#include "protocol/run_report.hpp"

namespace takosumi::controlplane {
namespace {

namespace json = boost::json;

Result<AgentRegistration> parse_registration(const json::object& o) {
  TAKOSUMI_TRY(protocol::check_known_fields(
      o, {"name", "version", "labels", "capacity", "boxPublicKey", "signPublicKey"}));
  AgentRegistration reg;
  auto name = protocol::get_string(o, "name", 128);
  if (!name) return std::unexpected(name.error());
  if (name->empty()) return fail(errc::kInvalidArgument, "field \"name\" must not be empty");
  reg.name = *name;
  auto version = protocol::get_optional_string(o, "version", 64);
  if (!version) return std::unexpected(version.error());
  reg.version = version->value_or("");
  auto labels = protocol::get_optional_array(o, "labels");
  if (!labels) return std::unexpected(labels.error());
  if (*labels) {
    if ((*labels)->size() > 64) return fail(errc::kInvalidArgument, "too many labels");
    for (const auto& l : **labels) {
      if (!l.is_string() || l.get_string().size() > 128)
        return fail(errc::kInvalidArgument, "field \"labels\" must hold strings");
      reg.labels.emplace_back(l.get_string());
    }
  }
  auto capacity = protocol::get_optional_int(o, "capacity");
  if (!capacity) return std::unexpected(capacity.error());
  reg.capacity = capacity->value_or(1);
  if (reg.capacity < 1 || reg.capacity > 1024)
    return fail(errc::kInvalidArgument, "field \"capacity\" must be between 1 and 1024");
  auto box = protocol::get_string(o, "boxPublicKey", 64);
  auto sign = protocol::get_string(o, "signPublicKey", 64);
  if (!box) return std::unexpected(box.error());
  if (!sign) return std::unexpected(sign.error());
  if (!crypto::BoxPublicKey::from_base64(*box))
    return fail(errc::kInvalidArgument, "boxPublicKey must be base64 of 32 bytes");
  if (!crypto::SignPublicKey::from_base64(*sign))
    return fail(errc::kInvalidArgument, "signPublicKey must be base64 of 32 bytes");
  reg.box_public_key = *box;
  reg.sign_public_key = *sign;
  return reg;
}

struct ClaimRequest {
  std::int64_t free_slots = 1;
  std::int64_t wait_seconds = 0;
};

// {"freeSlots"?, "waitSeconds"?}; an empty body claims one job without waiting.
Result<ClaimRequest> parse_claim(const std::string& text) {
  auto body = protocol::parse_object(text.empty() ? "{}" : text, kMaxJsonBody);
  if (!body) return std::unexpected(body.error());
  TAKOSUMI_TRY(protocol::check_known_fields(*body, {"freeSlots", "waitSeconds"}));
  auto slots = protocol::get_optional_int(*body, "freeSlots");
  auto wait = protocol::get_optional_int(*body, "waitSeconds");
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
  const RouteAccess pool{[this](const HttpRequest& head) { return check_pool_token(head); },
                         RouteBody::json};
  const Authenticator agent = [this](const HttpRequest& head) -> Status {
    TAKOSUMI_TRY(authenticate(head));
    return {};
  };
  const RouteAccess json_body{agent, RouteBody::json};
  r.add("POST", "/agent/v1/register", pool, [this](auto& req, auto&) { return register_agent(req); });
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
  r.add("GET", "/agent/v1/runs/{}/artifacts/{}", RouteAccess{agent, RouteBody::none},
        [this](auto& req, auto& p) { return download(req, p[0], p[1]); });
  r.add_async("PUT", "/agent/v1/runs/{}/artifacts/{}", RouteAccess{agent, RouteBody::file},
              [this](const HttpRequest& req, const RouteParams& p) -> awaitable<HttpResponse> {
                co_return co_await async_upload(req, p[0], p[1]);
              });
}

Result<Agent> AgentApi::authenticate(const HttpRequest& req) {
  auto token = req.bearer_token();
  if (!token) return fail(errc::kUnauthorized, "missing agent token (Authorization: Bearer …)");
  return d_.agents.authenticate(*token);
}

// Registration carries the pool token in the Authorization header, so it is checked before the
// server reads the body.
Status AgentApi::check_pool_token(const HttpRequest& head) const {
  auto token = head.bearer_token();
  if (!token) return fail(errc::kUnauthorized, "missing pool token (Authorization: Bearer …)");
  const bool known = std::ranges::any_of(d_.pool_tokens, [&](const SecretBytes& t) {
    return secrets_equal(*token, t.reveal_as_string());
  });
  if (!known) return fail(errc::kUnauthorized, "unknown pool token");
  return {};
}

HttpResponse AgentApi::register_agent(const HttpRequest& req) {
  auto body = protocol::parse_object(req.body, kMaxJsonBody);
  if (!body) return error_response(body.error());
  auto reg = parse_registration(*body);
  if (!reg) return error_response(reg.error());
  auto cred = in_transaction(d_.db, [&]() -> Result<AgentCredential> {
    auto registered = d_.agents.register_agent(*reg);
    if (!registered) return registered;
    AuditEvent e{.actor = agent_actor(registered->agent_id), .action = "agent.registered"};
    e.detail = {{"name", reg->name}, {"version", reg->version}};
    TAKOSUMI_TRY(d_.audit.record(std::move(e)));
    return registered;
  });
  if (!cred) return error_response(cred.error());
  return json_response(200, json::object{{"agentId", cred->agent_id},
                                         {"agentToken", cred->agent_token}});
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
    // that is known to have gone.
    if (client && client->gone()) break;
    auto claimed = d_.queue.claim(*agent, static_cast<int>(request->free_slots), build);
    if (!claimed) co_return error_response(claimed.error());
    jobs = std::move(*claimed);
    if (!jobs.empty() || d_.waiters.stopped() || Clock::now() >= deadline) break;
    // Re-check at least every second: expired leases make Runs claimable without a notification.
    co_await d_.waiters.async_wait_until(std::min(deadline, Clock::now() + std::chrono::seconds(1)),
                                         client);
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
      if (auto released = d_.queue.release(run_id, agent, lease); !released)
        spdlog::warn("run {}: claim not released: {}", run_id, released.error().to_string());
    d_.waiters.notify_all();
  };
  return res;
}

HttpResponse AgentApi::heartbeat(const HttpRequest& req, const std::string& run_id) {
  auto agent = authenticate(req);
  if (!agent) return error_response(agent.error());
  auto body = protocol::parse_object(req.body, kMaxJsonBody);
  if (!body) return error_response(body.error());
  if (auto known = protocol::check_known_fields(*body, {"leaseToken"}); !known)
    return error_response(known.error());
  auto lease = protocol::get_string(*body, "leaseToken", 256);
  if (!lease) return error_response(lease.error());
  auto renewed = d_.queue.heartbeat(run_id, *agent, *lease);
  if (!renewed) return error_response(renewed.error());
  return json_response(200, json::object{{"leaseExpiresAt", renewed->lease_expires_at},
                                         {"cancelRequested", renewed->cancel_requested}});
}

HttpResponse AgentApi::phase(const HttpRequest& req, const std::string& run_id) {
  auto agent = authenticate(req);
  if (!agent) return error_response(agent.error());
  auto body = protocol::parse_object(req.body, kMaxJsonBody);
  if (!body) return error_response(body.error());
  if (auto known = protocol::check_known_fields(*body, {"leaseToken", "attempt", "phase"}); !known)
    return error_response(known.error());
  auto lease = protocol::get_string(*body, "leaseToken", 256);
  auto attempt = protocol::get_int(*body, "attempt");
  auto phase = protocol::get_string(*body, "phase", 64);
  if (!lease) return error_response(lease.error());
  if (!attempt) return error_response(attempt.error());
  if (!phase) return error_response(phase.error());
  // Only the apply changes real resources, so only its start needs fencing.
  if (*phase != "apply")
    return error_response(Error{std::string(errc::kInvalidArgument),
                                "field \"phase\" must be \"apply\""});
  auto started = d_.queue.start_apply(run_id, *agent, *lease, *attempt);
  if (!started) return error_response(started.error());
  return json_response(200, json::object{{"phase", "apply"},
                                         {"leaseExpiresAt", started->lease_expires_at},
                                         {"cancelRequested", started->cancel_requested}});
}

HttpResponse AgentApi::append_log(const HttpRequest& req, const std::string& run_id) {
  auto agent = authenticate(req);
  if (!agent) return error_response(agent.error());
  auto body = protocol::parse_object(req.body, kMaxJsonBody);
  if (!body) return error_response(body.error());
  if (auto known = protocol::check_known_fields(*body, {"leaseToken", "seq", "text"}); !known)
    return error_response(known.error());
  auto lease = protocol::get_string(*body, "leaseToken", 256);
  auto seq = protocol::get_int(*body, "seq");
  auto text = protocol::get_string(*body, "text", kMaxJsonBody);
  if (!lease) return error_response(lease.error());
  if (!seq) return error_response(seq.error());
  if (!text) return error_response(text.error());
  auto run = d_.queue.check_lease(run_id, *agent, *lease);
  if (!run) return error_response(run.error());
  auto next = d_.logs.append(run_id, run->attempt, *seq, *text);
  if (!next) return error_response(next.error());
  return json_response(200, json::object{{"nextSeq", *next}});
}

HttpResponse AgentApi::complete(const HttpRequest& req, const std::string& run_id) {
  auto agent = authenticate(req);
  if (!agent) return error_response(agent.error());
  auto body = protocol::parse_object(req.body, kMaxJsonBody);
  if (!body) return error_response(body.error());
  auto report = protocol::run_report_from_json(*body);
  if (!report) return error_response(report.error());
  if (auto done = d_.queue.complete(run_id, *agent, *report); !done)
    return error_response(done.error());
  d_.waiters.notify_all();  // the Capsule may have queued Runs waiting for this one
  return json_response(200, json::object{{"acknowledged", true}});
}

}  // namespace takosumi::controlplane
