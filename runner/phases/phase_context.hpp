#pragma once
// What a tofu phase of a Run (a plan, a drift check, an apply: runner/phases/*_phase.hpp) works
// with, borrowed from the Run for the phase's length, and the parts those phases share: tofu's
// plan timed, a plan file frozen out of the sandbox's reach, `tofu show -json` read. A phase owns
// nothing: the Run (runner/run_flow) made the workspace, the tofu command line and the secrets
// and keeps them; a phase returns what it produced as values.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/json/object.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "protocol/job_manifest.hpp"
#include "redaction/log_sink.hpp"
#include "redaction/secret_set.hpp"
#include "runner/state/run_workspace.hpp"
#include "runner/tofu/tofu_cli.hpp"

namespace takosumi::runner {

struct PhaseContext {
  boost::asio::thread_pool& blocking;  // file work and parsing, off the event loop
  const protocol::JobManifest& manifest;
  TofuCli& tofu;
  const RunWorkspace& workspace;
  const std::filesystem::path& module_dir;
  const std::filesystem::path& outbox;  // where sealed artifacts go for the caller to upload
  std::uint64_t max_state_bytes;        // a state or plan file larger is refused
  redaction::SecretSet& secrets;        // what the phase meets joins it
  const redaction::LogSink& log;        // the Run's log; may be empty
  std::map<std::string, std::int64_t>& phase_millis;  // the report's timings (phase_timer.hpp)
};

// "takosumi: <line>" in the Run's log: the agent's own voice.
void phase_notice(const PhaseContext& run, std::string_view line);

// `tofu plan` into plan_file, timed as "plan": true when it has changes (-detailed-exitcode 2).
boost::asio::awaitable<Result<bool>> async_tofu_plan(const PhaseContext& run,
                                                     const std::filesystem::path& plan_file, PlanMode mode);

// The plan file lies in the writable workspace: it is copied out the moment tofu has exited
// (nothing of the Run runs between commands) into the agent's directory, which the sandbox sees
// read-only. Timed as "freeze".
boost::asio::awaitable<Status> async_freeze(const PhaseContext& run, const std::filesystem::path& written,
                                            const std::filesystem::path& frozen);

// `tofu show -json` of a plan file, parsed: its sensitive values join the Run's secrets.
boost::asio::awaitable<Result<boost::json::object>> async_show(const PhaseContext& run,
                                                               const std::filesystem::path& plan_file);

}  // namespace takosumi::runner
