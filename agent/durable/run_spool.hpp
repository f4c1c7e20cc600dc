#pragma once
// The spool of one Run attempt: <stateDir>/spool/<run id>-<attempt>/ (0700), on the agent's
// persistent disk. It is the runner's outbox for that attempt — the sealed plan, the sealed state
// and the newest state checkpoint land here while the Run goes on — and, once the Run has ended,
// it holds the delivery: the completion report and the log text the control plane has not
// received yet. Only ciphertext and redacted text are ever written here. A delivery is sent again,
// unchanged, until the control plane acknowledges it (the control plane ignores a repeat), so a
// restart or an outage never loses or doubles a result.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "protocol/run_report.hpp"

namespace takosumi::agent {

struct Delivery {
  protocol::RunReport report;  // lease token and attempt set
  std::optional<std::filesystem::path> plan;   // sealed artifacts, uploaded before the report
  std::optional<std::filesystem::path> state;
  std::optional<std::filesystem::path> plan_view;  // redacted JSON, uploaded before the report
  std::int64_t log_seq = 0;  // the sequence number the undelivered log text continues at
  std::string log_tail;      // redacted
};

class RunSpool {
 public:
  explicit RunSpool(std::filesystem::path root) : root_(std::move(root)) {}

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path dir(std::string_view run_id, std::int64_t attempt) const;
  // delivery.json in the attempt's directory, durable when it returns. Artifacts must be files in
  // that directory.
  Status save(std::string_view run_id, std::int64_t attempt, const Delivery& delivery) const;
  // nullopt when the Run never got as far as saving one.
  Result<std::optional<Delivery>> load(std::string_view run_id, std::int64_t attempt) const;
  Status remove(std::string_view run_id, std::int64_t attempt) const;

 private:
  std::filesystem::path root_;
};

}  // namespace takosumi::agent
