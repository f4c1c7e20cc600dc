#pragma once
// Typed calls of the agent protocol (docs/protocol.md) over an HttpTransport. Each call makes one
// exchange; the caller decides about retries (see is_retryable). Errors carry the control plane's
// stable code when it sent one ({"error":{"code","message"}}), else "unavailable" for transport
// failures and 5xx, or "protocol_error" for answers that do not parse.
#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>

#include <cstdint>
#include <functional>
#include <filesystem>
#include <string>
#include <vector>

#include "common/secret_bytes.hpp"
#include "agent/session/run_channel.hpp"
#include "net/http_transport.hpp"
#include "protocol/registration_request.hpp"
#include "protocol/run_report.hpp"
#include "protocol/signed_manifest.hpp"

namespace takosumi::agent {

using net::HttpRequest;
using net::HttpResponse;
using net::HttpTransport;

// The answer to the agent's own heartbeat: a new credential when the control plane rotated it
// (it is already in use by the client), and until when the one in use is valid.
struct AgentBeat {
  bool rotated = false;
  std::int64_t expires_at = 0;
};

// True for errors worth retrying with backoff (transport failures, 5xx, 429, TLS failures, an
// agent credential refused as unknown or expired).
bool is_retryable(const Error& e);
// tls_handshake_failed, tls_certificate_invalid or tls_hostname_mismatch.
bool is_tls_failure(const Error& e);

// Coroutine parameters are taken by value: a reference to a temporary would dangle once the
// caller's full-expression ends while the returned awaitable is still pending. The two reference
// parameters (reg, pool_token) must outlive the awaited call.
class ControlClient final : public RunChannel {
 public:
  explicit ControlClient(HttpTransport& transport) : transport_(transport) {}

  // A single-use registration challenge (valid for about a minute). pool_token: a pool token, or
  // the agent's stored credential (a restarted agent), whichever registration uses.
  boost::asio::awaitable<Result<std::string>> async_register_challenge(const SecretBytes& pool_token);
  // Returns the agent id; keeps the agent token for later calls.
  boost::asio::awaitable<Result<std::string>> async_register(
      const protocol::RegistrationRequest& reg, const SecretBytes& pool_token);
  // POST /agent/v1/heartbeat: the agent is alive with busy_slots in use; a rotated credential
  // replaces the one in use at once.
  boost::asio::awaitable<Result<AgentBeat>> async_agent_heartbeat(std::int64_t busy_slots);
  // Sees every exchange with the control plane: the request and its answer's status (0: none).
  using Observer = std::function<void(const HttpRequest&, unsigned status)>;
  void set_observer(Observer observer) { observer_ = std::move(observer); }
  // POST /agent/v1/deregister: an ephemeral agent leaves; its credential ends.
  boost::asio::awaitable<Status> async_deregister();
  // The credential in use (empty before registration), for the agent to keep in its stateDir.
  const SecretBytes& agent_token() const { return agent_token_; }
  boost::asio::awaitable<Result<std::vector<ClaimedJob>>> async_claim(std::int64_t free_slots,
                                                                      std::int64_t wait_seconds);
  boost::asio::awaitable<Result<HeartbeatAnswer>> async_heartbeat(std::string run_id,
                                                                  std::string lease) override;
  boost::asio::awaitable<Result<bool>> async_start_apply(std::string run_id, std::string lease,
                                                         std::int64_t attempt) override;
  boost::asio::awaitable<Status> async_download(std::string run_id, std::string kind,
                                                std::string lease,
                                                std::filesystem::path to) override;
  boost::asio::awaitable<Status> async_upload(std::string run_id, std::string kind,
                                              std::string lease, std::filesystem::path from,
                                              std::string sha256) override;
  boost::asio::awaitable<Status> async_append_log(std::string run_id, std::string lease,
                                                  std::int64_t seq, std::string text) override;
  // The report in the JSON body of POST .../complete.
  boost::asio::awaitable<Status> async_complete(std::string run_id, std::string report) override;
  // Streamed as the body of PUT .../report with the lease in a header.
  boost::asio::awaitable<Status> async_put_report(std::string run_id, std::string lease,
                                                  std::string report) override;

 private:
  boost::asio::awaitable<Result<HttpResponse>> async_call(HttpRequest req);
  // async_call for requests whose answer body says nothing the agent needs.
  boost::asio::awaitable<Status> async_send(HttpRequest req);
  // async_call whose answer is a JSON object (bounded, parsed).
  boost::asio::awaitable<Result<boost::json::object>> async_call_json(HttpRequest req);
  // async_call_json authenticated with the pool token instead of the agent's own (registration).
  boost::asio::awaitable<Result<boost::json::object>> async_call_with_pool_token(
      HttpRequest req, const SecretBytes& pool_token);
  static HttpRequest artifact_request(std::string method, const std::string& run_id,
                                      const std::string& kind, std::string lease);

  HttpTransport& transport_;
  SecretBytes agent_token_;
  Observer observer_;
};

}  // namespace takosumi::agent
