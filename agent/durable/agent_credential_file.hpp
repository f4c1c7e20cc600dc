#pragma once
// The agent credential its registration (or a rotation) gave, kept in <stateDir>/agent-credential
// (owner-only, written atomically), never in the configuration: a restarted agent registers with
// it first, so a pool token rotated away since does not strand the agent.
#include <filesystem>
#include <optional>

#include "common/error.hpp"
#include "common/secret_bytes.hpp"

namespace takosumi::agent {

class AgentCredentialFile {
 public:
  explicit AgentCredentialFile(std::filesystem::path path) : path_(std::move(path)) {}

  // None when there is no file; key_file_insecure when group or others may read it.
  Result<std::optional<SecretBytes>> load() const;
  Status store(const SecretBytes& token) const;
  Status forget() const;

 private:
  std::filesystem::path path_;
};

}  // namespace takosumi::agent
