#pragma once
// The secrets of every Run in progress, for redacting the agent's own log lines (which may quote
// a failing Run's errors) wherever in the process they are written. Thread-safe.
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "redaction/secret_set.hpp"

namespace takosumi::agent {

class SecretRegistry {
 public:
  SecretRegistry() = default;
  SecretRegistry(const SecretRegistry&) = delete;
  SecretRegistry& operator=(const SecretRegistry&) = delete;

  // The process-wide registry the agent's logger redacts with. Never destroyed, so that logging
  // during static destruction still finds it.
  static SecretRegistry& instance();

  // A set added n times stays registered until removed n times. Sets are read, never changed.
  void add(std::shared_ptr<const redaction::SecretSet> set);
  void remove(const redaction::SecretSet* set);

  // Every registered set's exact values, then the credential patterns.
  std::string redact(std::string_view text) const;

 private:
  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<const redaction::SecretSet>> sets_;
};

// Keeps a Run's redaction::SecretSet registered for as long as it lives. Move-only.
class SecretRegistration {
 public:
  explicit SecretRegistration(std::shared_ptr<const redaction::SecretSet> set,
                              SecretRegistry& registry = SecretRegistry::instance());
  ~SecretRegistration();
  SecretRegistration(SecretRegistration&& other) noexcept;
  SecretRegistration& operator=(SecretRegistration&& other) noexcept;
  SecretRegistration(const SecretRegistration&) = delete;
  SecretRegistration& operator=(const SecretRegistration&) = delete;

 private:
  void release() noexcept;

  SecretRegistry* registry_;
  const redaction::SecretSet* set_;
};

}  // namespace takosumi::agent
