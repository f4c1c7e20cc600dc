#pragma once
// What the agent's structured (JSON) log lines add to a line about a Run: its attempt and its
// journaled phase. RunSession keeps its entry current; the log formatter looks the Run up by the
// id a line starts with ("run <id>: …", the agent's convention for every line about a Run).
// Thread-safe: lines are formatted on whichever thread logs them.
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace takosumi::agent {

struct RunLogFields {
  std::int64_t attempt = 0;
  std::string phase;
};

class RunLogContext {
 public:
  static RunLogContext& instance();
  void set(const std::string& run_id, RunLogFields fields);
  void erase(const std::string& run_id);
  std::optional<RunLogFields> find(std::string_view run_id) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, RunLogFields, std::less<>> runs_;
};

}  // namespace takosumi::agent
