#pragma once
// What a Run exchanges with whoever gave it out, once it is taken: its lease renewals, the apply
// announcement, its artifacts both ways, its log and its report (docs/protocol.md). The seam
// between the agent's Run paths (run_session.hpp, run_delivery.hpp, run_recovery.hpp) and where
// the Run came from: the control plane over the network (ControlClient), or an offline Run bundle
// carried across an air gap (bundle_channel.hpp), so both kinds of Run go through one code path
// and one set of checks.
#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <filesystem>
#include <string>

#include "common/error.hpp"
#include "protocol/signed_manifest.hpp"

namespace takosumi::agent {

// A Run as it is handed to this agent: claimed from the control plane, or read from a bundle.
struct ClaimedJob {
  std::string run_id;
  std::string lease_token;
  std::int64_t lease_expires_at = 0;
  protocol::SignedManifest manifest;
};

struct HeartbeatAnswer {
  std::int64_t lease_expires_at = 0;
  bool cancel_requested = false;
};

// Coroutine parameters are taken by value: a reference to a temporary would dangle once the
// caller's full-expression ends while the returned awaitable is still pending.
class RunChannel {
 public:
  virtual ~RunChannel() = default;
  virtual boost::asio::awaitable<Result<HeartbeatAnswer>> async_heartbeat(std::string run_id,
                                                                          std::string lease) = 0;
  // Tells the giver `tofu apply` is about to start: from then on the Run is never given to
  // another agent. Returns whether a cancel was requested meanwhile; lease_lost when this agent's
  // lease is no longer current.
  virtual boost::asio::awaitable<Result<bool>> async_start_apply(std::string run_id,
                                                                 std::string lease,
                                                                 std::int64_t attempt) = 0;
  // kind: prior_state or plan.
  virtual boost::asio::awaitable<Status> async_download(std::string run_id, std::string kind,
                                                        std::string lease,
                                                        std::filesystem::path to) = 0;
  // kind: state or plan.
  virtual boost::asio::awaitable<Status> async_upload(std::string run_id, std::string kind,
                                                      std::string lease,
                                                      std::filesystem::path from,
                                                      std::string sha256) = 0;
  virtual boost::asio::awaitable<Status> async_append_log(std::string run_id, std::string lease,
                                                          std::int64_t seq, std::string text) = 0;
  // The run report, serialised (protocol::to_json), up to kMaxInlineReportBytes.
  virtual boost::asio::awaitable<Status> async_complete(std::string run_id, std::string report) = 0;
  // A larger report (up to protocol::kMaxRunReportBytes); treated as async_complete does.
  virtual boost::asio::awaitable<Status> async_put_report(std::string run_id, std::string lease,
                                                          std::string report) = 0;
};

}  // namespace takosumi::agent
