#include "agent/session/control_client.hpp"

#include "common/error_codes.hpp"
#include "common/json_fields.hpp"

namespace takosumi::agent {
namespace asio = boost::asio;
namespace json = boost::json;

namespace {

constexpr std::size_t kMaxJson = 1 << 20;
constexpr std::size_t kMaxArtifact = 256u << 20;

// Turns a non-2xx answer into an Error carrying the control plane's code when present.
Error http_error(const HttpRequest& req, const HttpResponse& res) {
  std::string code = res.status >= 500 || res.status == 429 ? std::string(errc::kUnavailable)
                                                            : std::string(errc::kProtocolError);
  std::string message = "HTTP " + std::to_string(res.status);
  if (auto body = parse_object(res.body, kMaxJson); body) {
    if (auto err = get_object(*body, "error"); err) {
      if (auto c = get_string(**err, "code", 64); c && res.status < 500) code = *c;
      if (auto m = get_string(**err, "message", 4096); m) message += ": " + *m;
    }
  }
  // 413 means the body was too large, whoever answered (the control plane, or a proxy in front of
  // it that answers without our JSON): the caller's result_too_large fallback depends on it.
  if (res.status == 413) code = std::string(errc::kPayloadTooLarge);
  return Error{code, req.method + " " + req.target + ": " + message};
}

Result<json::object> json_body(const HttpRequest& req, const HttpResponse& res) {
  auto o = parse_object(res.body, kMaxJson);
  if (!o) return fail(errc::kProtocolError, req.target + ": " + o.error().message);
  return o;
}

}  // namespace

bool is_tls_failure(const Error& e) {
  return e.code == errc::kTlsHandshakeFailed || e.code == errc::kTlsCertificateInvalid ||
         e.code == errc::kTlsHostnameMismatch;
}

// A TLS failure once the agent is at work may be a certificate being rotated on the other side,
// and a credential refused as unknown or expired is renewed by registering again (the agent's
// heartbeat loop does): both are retried like an outage. Registration itself treats them as the
// configuration errors they then are.
bool is_retryable(const Error& e) {
  return e.code == errc::kUnavailable || is_tls_failure(e) || e.code == errc::kUnauthorized ||
         e.code == errc::kAgentCredentialExpired;
}

asio::awaitable<Result<HttpResponse>> ControlClient::async_call(HttpRequest req) {
  if (!agent_token_.empty() && !req.headers.contains("Authorization"))
    req.headers["Authorization"] = "Bearer " + std::string(agent_token_.reveal_as_string());
  auto res = co_await transport_.async_request(req);
  if (observer_) observer_(req, res ? res->status : 0);
  if (!res) co_return res;
  if (res->status / 100 != 2) co_return std::unexpected(http_error(req, *res));
  co_return res;
}

// Callers pass a named request: g++ 12 mishandles a non-trivial temporary inside a co_await
// expression (the agent crashed in free() when a request was built in the co_await itself).
asio::awaitable<Status> ControlClient::async_send(HttpRequest req) {
  auto res = co_await async_call(req);
  if (!res) co_return std::unexpected(res.error());
  co_return Status{};
}

asio::awaitable<Result<json::object>> ControlClient::async_call_json(HttpRequest req) {
  auto res = co_await async_call(req);
  if (!res) co_return std::unexpected(res.error());
  co_return json_body(req, *res);
}

asio::awaitable<Result<json::object>> ControlClient::async_call_with_pool_token(
    HttpRequest req, const SecretBytes& pool_token) {
  // In the header, so the control plane checks it before it reads the body; our copy is wiped
  // once it is sent.
  std::string& auth = req.headers["Authorization"];
  auth = "Bearer " + std::string(pool_token.reveal_as_string());
  auto res = co_await async_call(req);
  std::fill(auth.begin(), auth.end(), '\0');
  if (!res) co_return std::unexpected(res.error());
  co_return json_body(req, *res);
}

HttpRequest ControlClient::artifact_request(std::string method, const std::string& run_id,
                                            const std::string& kind, std::string lease) {
  HttpRequest req{std::move(method), "/agent/v1/runs/" + run_id + "/artifacts/" + kind};
  req.headers["X-Takosumi-Lease"] = std::move(lease);
  req.timeout = std::chrono::seconds(600);
  return req;
}

asio::awaitable<Result<std::string>> ControlClient::async_register_challenge(
    const SecretBytes& pool_token) {
  HttpRequest req{"POST", "/agent/v1/register/challenge", {}, "{}"};
  auto o = co_await async_call_with_pool_token(req, pool_token);
  if (!o) co_return std::unexpected(o.error());
  auto challenge = get_string(*o, "challenge", 128);
  if (!challenge || challenge->empty())
    co_return fail(errc::kProtocolError, "register challenge: answer lacks \"challenge\"");
  co_return *challenge;
}

asio::awaitable<Result<std::string>> ControlClient::async_register(
    const protocol::RegistrationRequest& reg, const SecretBytes& pool_token) {
  const json::object body = protocol::to_json(reg);
  HttpRequest req{"POST", "/agent/v1/register", {}, json::serialize(body)};
  auto o = co_await async_call_with_pool_token(req, pool_token);
  if (!o) co_return std::unexpected(o.error());
  auto id = get_string(*o, "agentId", 128);
  auto token = get_string(*o, "agentToken", 512);
  if (!id || !token) co_return fail(errc::kProtocolError, "register: answer lacks agentId/agentToken");
  agent_token_ = SecretBytes::from_string(*token);
  std::fill(token->begin(), token->end(), '\0');
  co_return *id;
}

asio::awaitable<Result<AgentBeat>> ControlClient::async_agent_heartbeat(std::int64_t busy_slots) {
  HttpRequest req{"POST", "/agent/v1/heartbeat", {},
                  json::serialize(json::object{{"busySlots", busy_slots}})};
  auto o = co_await async_call_json(req);
  if (!o) co_return std::unexpected(o.error());
  auto expires = get_int(*o, "agentTokenExpiresAt");
  if (!expires) co_return fail(errc::kProtocolError, "heartbeat: answer lacks agentTokenExpiresAt");
  AgentBeat beat{false, *expires};
  if (o->contains("agentToken")) {
    auto token = get_string(*o, "agentToken", 512);
    if (!token || token->empty())
      co_return fail(errc::kProtocolError, "heartbeat: malformed agentToken");
    agent_token_ = SecretBytes::from_string(*token);
    std::fill(token->begin(), token->end(), '\0');
    beat.rotated = true;
  }
  co_return beat;
}

asio::awaitable<Status> ControlClient::async_deregister() {
  HttpRequest req{"POST", "/agent/v1/deregister", {}, "{}"};
  co_return co_await async_send(std::move(req));
}

asio::awaitable<Result<std::vector<ClaimedJob>>> ControlClient::async_claim(std::int64_t free_slots,
                                                                            std::int64_t wait_seconds) {
  json::object body{{"freeSlots", free_slots}, {"waitSeconds", wait_seconds}};
  HttpRequest req{"POST", "/agent/v1/claim", {}, json::serialize(body)};
  req.timeout = std::chrono::seconds(wait_seconds + 15);
  auto o = co_await async_call_json(req);
  if (!o) co_return std::unexpected(o.error());
  auto jobs = get_optional_array(*o, "jobs");
  if (!jobs || !*jobs) co_return fail(errc::kProtocolError, "claim: answer lacks \"jobs\"");
  std::vector<ClaimedJob> out;
  for (const auto& v : **jobs) {
    if (!v.is_object() || out.size() >= static_cast<std::size_t>(free_slots))
      co_return fail(errc::kProtocolError, "claim: malformed or too many jobs");
    const auto& j = v.get_object();
    auto run = get_string(j, "runId", 128);
    auto lease = get_string(j, "leaseToken", 256);
    auto exp = get_int(j, "leaseExpiresAt");
    auto m = get_object(j, "manifest");
    if (!run || !lease || !exp || !m) co_return fail(errc::kProtocolError, "claim: malformed job");
    auto payload = get_string(**m, "payload", kMaxJson);
    auto sig = get_string(**m, "signature", 256);
    // A job without a signature is still returned: the verifier refuses it with a clear code.
    out.push_back(ClaimedJob{*run, *lease, *exp,
                             {payload ? *payload : std::string(), sig ? *sig : std::string()}});
  }
  co_return out;
}

asio::awaitable<Result<HeartbeatAnswer>> ControlClient::async_heartbeat(std::string run_id,
                                                                        std::string lease) {
  HttpRequest req{"POST", "/agent/v1/runs/" + run_id + "/heartbeat", {},
                  json::serialize(json::object{{"leaseToken", lease}})};
  auto o = co_await async_call_json(req);
  if (!o) co_return std::unexpected(o.error());
  auto exp = get_int(*o, "leaseExpiresAt");
  auto cancel = get_bool_or(*o, "cancelRequested", false);
  if (!exp || !cancel) co_return fail(errc::kProtocolError, "heartbeat: malformed answer");
  co_return HeartbeatAnswer{*exp, *cancel};
}

asio::awaitable<Result<bool>> ControlClient::async_start_apply(std::string run_id,
                                                               std::string lease,
                                                               std::int64_t attempt) {
  HttpRequest req{"POST", "/agent/v1/runs/" + run_id + "/phase", {},
                  json::serialize(json::object{
                      {"leaseToken", lease}, {"attempt", attempt}, {"phase", "apply"}})};
  auto o = co_await async_call_json(req);
  if (!o) co_return std::unexpected(o.error());
  auto cancel = get_bool_or(*o, "cancelRequested", false);
  if (!cancel) co_return fail(errc::kProtocolError, "phase: malformed answer");
  co_return *cancel;
}

asio::awaitable<Status> ControlClient::async_download(std::string run_id,
                                                      std::string kind,
                                                      std::string lease,
                                                      std::filesystem::path to) {
  HttpRequest req = artifact_request("GET", run_id, kind, std::move(lease));
  req.response_file = std::move(to);
  req.response_limit = kMaxArtifact;
  auto sent = co_await async_send(req);
  co_return sent;
}

asio::awaitable<Status> ControlClient::async_upload(std::string run_id,
                                                    std::string kind,
                                                    std::string lease,
                                                    std::filesystem::path from,
                                                    std::string sha256) {
  HttpRequest req = artifact_request("PUT", run_id, kind, std::move(lease));
  req.headers["X-Takosumi-Sha256"] = std::move(sha256);
  req.body_file = std::move(from);
  auto sent = co_await async_send(req);
  co_return sent;
}

asio::awaitable<Status> ControlClient::async_append_log(std::string run_id,
                                                        std::string lease,
                                                        std::int64_t seq,
                                                        std::string text) {
  json::object body{{"leaseToken", lease}, {"seq", seq}, {"text", text}};
  HttpRequest req{"POST", "/agent/v1/runs/" + run_id + "/logs", {}, json::serialize(body)};
  auto sent = co_await async_send(req);
  co_return sent;
}

asio::awaitable<Status> ControlClient::async_complete(std::string run_id, std::string report) {
  HttpRequest req{"POST", "/agent/v1/runs/" + run_id + "/complete", {}, std::move(report)};
  auto sent = co_await async_send(req);
  co_return sent;
}

asio::awaitable<Status> ControlClient::async_put_report(std::string run_id, std::string lease,
                                                        std::string report) {
  HttpRequest req{"PUT", "/agent/v1/runs/" + run_id + "/report", {}, std::move(report)};
  req.headers["X-Takosumi-Lease"] = std::move(lease);
  req.timeout = std::chrono::seconds(600);
  auto sent = co_await async_send(req);
  co_return sent;
}

}  // namespace takosumi::agent
