#include "agent/service/run_log_context.hpp"

namespace takosumi::agent {

RunLogContext& RunLogContext::instance() {
  static RunLogContext context;
  return context;
}

void RunLogContext::set(const std::string& run_id, RunLogFields fields) {
  std::lock_guard lock(mutex_);
  runs_[run_id] = std::move(fields);
}

void RunLogContext::erase(const std::string& run_id) {
  std::lock_guard lock(mutex_);
  runs_.erase(run_id);
}

std::optional<RunLogFields> RunLogContext::find(std::string_view run_id) const {
  std::lock_guard lock(mutex_);
  auto it = runs_.find(run_id);
  if (it == runs_.end()) return std::nullopt;
  return it->second;
}

}  // namespace takosumi::agent
