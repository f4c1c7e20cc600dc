#pragma once
// The manifest nonces this agent accepted, on disk (<stateDir>/nonces, 0600), so a manifest
// cannot be replayed after the agent restarts while it has not yet expired. One line per nonce,
// "<expires_at> <nonce>", appended and flushed to disk before the Run starts; expired lines are
// dropped when the journal is opened, and while the agent runs once they outnumber the live ones
// (a long-running agent's journal stays as small as its live nonces, not one line per Run ever).
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "common/error.hpp"

namespace takosumi::agent {

class NonceJournal {
 public:
  // Reads the live entries and rewrites the file with only them (atomically). Malformed lines
  // are dropped: they can only come from a torn last write, whose Run never started.
  static Result<NonceJournal> open(std::filesystem::path file, std::int64_t now);

  const std::vector<std::pair<std::string, std::int64_t>>& entries() const { return entries_; }
  // Appends and fdatasyncs (or, once expired lines outnumber live ones, rewrites the file with the
  // live ones atomically); io_error when the disk refuses, invalid_argument for a nonce that is
  // not one printable token.
  Status record(const std::string& nonce, std::int64_t expires_at, std::int64_t now);
  std::size_t lines_on_disk() const { return lines_on_disk_; }

 private:
  explicit NonceJournal(std::filesystem::path file) : file_(std::move(file)) {}
  Status rewrite();
  std::filesystem::path file_;
  std::vector<std::pair<std::string, std::int64_t>> entries_;  // live ones
  std::size_t lines_on_disk_ = 0;
};

}  // namespace takosumi::agent
