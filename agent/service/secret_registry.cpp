#include "agent/service/secret_registry.hpp"

#include <algorithm>
#include <utility>

#include "redaction/pattern_redactor.hpp"

namespace takosumi::agent {

SecretRegistry& SecretRegistry::instance() {
  static auto* registry = new SecretRegistry;  // leaked on purpose: see the header
  return *registry;
}

void SecretRegistry::add(std::shared_ptr<const redaction::SecretSet> set) {
  if (!set) return;
  std::lock_guard lock(mutex_);
  sets_.push_back(std::move(set));
}

void SecretRegistry::remove(const redaction::SecretSet* set) {
  std::lock_guard lock(mutex_);
  const auto it = std::find_if(sets_.begin(), sets_.end(),
                               [&](const auto& registered) { return registered.get() == set; });
  if (it != sets_.end()) sets_.erase(it);
}

std::string SecretRegistry::redact(std::string_view text) const {
  std::vector<std::shared_ptr<const redaction::SecretSet>> sets;
  {
    // A snapshot, so that redaction (the slow part) does not hold up registration.
    std::lock_guard lock(mutex_);
    sets = sets_;
  }
  std::string out(text);
  for (const auto& set : sets) out = set->redact(out);
  return redaction::redact_patterns(out);
}

SecretRegistration::SecretRegistration(std::shared_ptr<const redaction::SecretSet> set,
                                       SecretRegistry& registry)
    : registry_(&registry), set_(set.get()) {
  registry_->add(std::move(set));
}

SecretRegistration::~SecretRegistration() { release(); }

SecretRegistration::SecretRegistration(SecretRegistration&& other) noexcept
    : registry_(other.registry_), set_(std::exchange(other.set_, nullptr)) {}

SecretRegistration& SecretRegistration::operator=(SecretRegistration&& other) noexcept {
  if (this != &other) {
    release();
    registry_ = other.registry_;
    set_ = std::exchange(other.set_, nullptr);
  }
  return *this;
}

void SecretRegistration::release() noexcept {
  if (set_) registry_->remove(std::exchange(set_, nullptr));
}

}  // namespace takosumi::agent
