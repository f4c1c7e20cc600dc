#include "runner/phases/phase_context.hpp"

#include "common/error_codes.hpp"
#include "common/offload.hpp"
#include "protocol/failure_codes.hpp"
#include "redaction/sensitive_values.hpp"
#include "runner/phases/phase_timer.hpp"
#include "runner/state/state_document.hpp"

namespace takosumi::runner {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;

// tofu show -json, parsed once: its sensitive values join the Run's secrets and the object goes on
// to the analysis.
Result<boost::json::object> parse_plan_json(std::string_view text, redaction::SecretSet& secrets) {
  auto doc = parse_json_document(text, "tofu show -json");
  if (!doc) return std::unexpected(doc.error());
  if (!doc->is_object()) return fail(errc::kOpentofuFailed, "tofu show -json is not an object");
  redaction::collect_plan_secrets(*doc, secrets);
  return std::move(doc->as_object());
}

}  // namespace

void phase_notice(const PhaseContext& run, std::string_view line) {
  if (run.log) run.log("takosumi: " + std::string(line));
}

asio::awaitable<Result<bool>> async_tofu_plan(const PhaseContext& run, const fs::path& plan_file,
                                              PlanMode mode) {
  PhaseTimer timer(run.phase_millis, "plan");
  co_return co_await run.tofu.async_plan(plan_file, mode);
}

asio::awaitable<Status> async_freeze(const PhaseContext& run, const fs::path& written, const fs::path& frozen) {
  PhaseTimer timer(run.phase_millis, "freeze");
  auto copied = co_await async_offload(run.blocking.get_executor(), [&] {
    return run.workspace.freeze(written, frozen, run.max_state_bytes);
  });
  if (!copied)
    co_return std::unexpected(
        protocol::as_run_failure(copied.error(), errc::kWorkspaceFailed).with_context("saved plan"));
  co_return Status{};
}

asio::awaitable<Result<boost::json::object>> async_show(const PhaseContext& run, const fs::path& plan_file) {
  auto shown = co_await run.tofu.async_show_json(plan_file);
  if (!shown) co_return std::unexpected(shown.error());
  co_return co_await async_offload(run.blocking.get_executor(),
                                   [&] { return parse_plan_json(*shown, run.secrets); });
}

}  // namespace takosumi::runner
