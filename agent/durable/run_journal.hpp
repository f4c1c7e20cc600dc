#pragma once
// The agent's durable record of the Runs it holds (docs/operations.md, "Crash safety"). Before each
// phase of a Run, <stateDir>/runs/<run id>.json is replaced atomically (temporary file, fsync,
// rename, fsync of the directory), so an agent restarted after SIGKILL, OOM or a power loss knows
// every Run it held, under which lease, how far it got and which manifest it ran. It reads the
// journal before it claims new work (agent/durable/run_recovery.hpp).
//
// No secret of the Run is in it: the manifest's secrets are sealed to the agent's key, and the
// lease token lets only this agent finish this one Run (the state directory is 0700 and also holds
// the agent's keys).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"

namespace takosumi::agent {

enum class RunPhase {
  claimed,        // manifest verified; preparing (downloads, checkout, init, plan)
  apply,          // `tofu apply` is about to start or running: reality may change from here
  deliver,        // ended; report and artifacts are in the spool, waiting for the control plane
  lease_lost,     // another agent holds the Run now; the spool is kept for the operator
  undeliverable,  // the control plane refused the results for good; kept for the operator
};

std::string_view to_string(RunPhase phase);
std::optional<RunPhase> run_phase_from_string(std::string_view text);
// True for phases a restarted agent leaves alone until the operator acts (`recover --push`).
bool is_held_for_operator(RunPhase phase);

struct JournalEntry {
  std::string run_id;
  std::int64_t attempt = 0;
  std::string lease_token;
  RunPhase phase = RunPhase::claimed;
  std::string manifest_payload;  // the manifest as verified at claim time (JSON)
  std::string note;              // why it is held, for `takosumi-agent recover`
  std::int64_t updated_at = 0;   // unix seconds
};

struct JournalContents {
  std::vector<JournalEntry> entries;  // oldest update first
  std::vector<std::string> unreadable;  // files that do not parse, with the reason
};

class RunJournal {
 public:
  // Creates <dir> (0700) when missing.
  static Result<RunJournal> open(std::filesystem::path dir);

  // Durable when it returns. io_error when the disk refuses; invalid_argument for a run id that
  // is not a safe file name.
  Status write(const JournalEntry& entry) const;
  // Moves the entry to a phase (with why, for held ones) as of now and writes it.
  Status advance(JournalEntry& entry, RunPhase phase, std::string note, std::int64_t now) const;
  Status remove(std::string_view run_id) const;
  Result<JournalContents> read() const;
  // Temporaries of a write a crash interrupted (the entry before it is still in place). Only for
  // the process that holds the state directory's lock: a running agent's write would break.
  void remove_temporaries() const;
  const std::filesystem::path& dir() const { return dir_; }

 private:
  explicit RunJournal(std::filesystem::path dir) : dir_(std::move(dir)) {}
  std::filesystem::path dir_;
};

}  // namespace takosumi::agent
