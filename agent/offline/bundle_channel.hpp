#pragma once
// The RunChannel of an offline Run (docs/air-gapped.md): what an online Run downloads comes from
// the Run bundle's members (already checked against their index), and what it would send is kept
// on disk for the result bundle: the sealed state or plan, each log chunk by its sequence number,
// the report. Every write is durable (temporary file, fsync, rename), so a Run that a power loss
// interrupts resumes its delivery where it stopped, and a repeat replaces rather than doubles.
// Nothing is announced to anyone before an apply: the agent's journal is the record, and the
// control plane treats the Run as applying from the moment it exported it.
#include <filesystem>
#include <string>

#include "agent/session/run_channel.hpp"

namespace takosumi::agent {

class BundleChannel final : public RunChannel {
 public:
  // in: the Run bundle's members; out: the result's files (created 0700 when missing); started:
  // a file made (durably) before the first member is served, so a later execute knows the Run
  // began here even if its journal entry is gone.
  BundleChannel(std::filesystem::path in, std::filesystem::path out, std::filesystem::path started,
                std::string run_id, std::string lease_token, std::int64_t lease_expires_at);

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
  boost::asio::awaitable<Status> async_complete(std::string run_id, std::string report) override;
  boost::asio::awaitable<Status> async_put_report(std::string run_id, std::string lease,
                                                  std::string report) override;

  // The result's files once the Run has ended: report.json, state.env / plan.env when sent, and
  // log.txt made from the chunks in sequence order. not_found before a report was sent.
  Result<std::vector<std::pair<std::string, std::filesystem::path>>> result_files() const;

 private:
  // lease_lost unless this is the bundle's Run and lease.
  Status check(const std::string& run_id, const std::string& lease) const;

  std::filesystem::path in_;
  std::filesystem::path out_;
  std::filesystem::path started_;
  std::string run_id_;
  std::string lease_;
  std::int64_t lease_expires_at_ = 0;
};

}  // namespace takosumi::agent
