#include "runner/run_executor.hpp"

#include <boost/asio/cancellation_state.hpp>
#include <boost/asio/this_coro.hpp>
#include <spdlog/spdlog.h>

#include <exception>

#include "common/error_codes.hpp"
#include "runner/tofu/boost_process_launcher.hpp"
#include "redaction/redaction.hpp"
#include "redaction/report_redaction.hpp"
#include "runner/run_flow.hpp"

namespace takosumi::runner {

RunExecutor::RunExecutor(boost::asio::any_io_executor io, boost::asio::thread_pool& blocking,
                         RunnerSettings settings)
    : RunExecutor(std::move(io), blocking, std::move(settings),
                  std::make_unique<BoostProcessLauncher>()) {}

RunExecutor::RunExecutor(boost::asio::any_io_executor io, boost::asio::thread_pool& blocking,
                         RunnerSettings settings, std::unique_ptr<ProcessLauncher> launcher)
    : io_(std::move(io)), blocking_(blocking), settings_(std::move(settings)),
      launcher_(std::move(launcher)) {}

RunExecutor::~RunExecutor() = default;

void RunExecutor::cancel() { cancel_.request(); }

boost::asio::awaitable<RunOutcome> RunExecutor::async_run(RunInputs run_inputs, redaction::LogSink log,
                                                         Release release) {
  inputs_ = std::make_unique<RunInputs>(std::move(run_inputs));
  outcome_ = std::make_unique<RunOutcome>();
  RunInputs& inputs = *inputs_;
  RunOutcome& outcome = *outcome_;
  if (!inputs.secret_set) inputs.secret_set = std::make_shared<redaction::SecretSet>();
  // A chatty module must not fill the control plane: past the budget the log is cut (the Run
  // itself goes on — stopping an apply for its verbosity would do more harm).
  redaction::LogSink budgeted = [left = settings_.max_log_bytes, cut = false,
                      log = std::move(log)](std::string_view line) mutable {
    if (cut || !log) return;
    if (line.size() + 1 > left) {
      cut = true;
      log("takosumi: the log is cut here: limits.maxLogBytes reached; the Run goes on");
      return;
    }
    left -= line.size() + 1;
    log(line);
  };
  // Every line, the runner's own notices included, passes the redactor before `log` sees it
  // (tofu's output was redacted on its bytes already; this second pass catches values spanning
  // lines, the runner's notices and credential shapes).
  auto redactor = std::make_shared<redaction::LogRedactor>(inputs.secret_set, std::move(budgeted));
  redaction::LogSink redacted = [redactor](std::string_view line) { (*redactor)(line); };
  flow_ = std::make_unique<RunFlow>(blocking_, settings_, *launcher_, cancel_, inputs, std::move(redacted),
                                    outcome);
  Status result;
  try {
    result = co_await flow_->async_execute();
  } catch (const std::exception& e) {
    spdlog::error("run {}: bug: exception escaped a step: {}", inputs.manifest.run_id, e.what());
    result = fail(errc::kInternal, std::string("unexpected exception: ") + e.what());
  }
  try {
    flow_->finish_report(result);
  } catch (const std::exception& e) {
    spdlog::error("run {}: bug: exception while finishing: {}", inputs.manifest.run_id, e.what());
  }
  // Nothing after this needs the Run's secrets (the report is redacted with the secret set):
  // they do not wait in memory through a delivery that may retry for long.
  inputs.secrets = protocol::SecretBundle{};
  inputs.prior_state_dek.wipe();
  inputs.plan_dek.wipe();
  if (release == Release::now) co_await async_release();
  redactor->flush();
  redaction::redact_report(outcome.report, *inputs.secret_set);
  // The flow keeps its reference to the outcome, but only the report's writers used it.
  co_return std::move(outcome);
}

boost::asio::awaitable<void> RunExecutor::async_release() {
  if (!flow_) co_return;
  // Runs to its end even when the caller's other work fails beside it (RunSession's `&&`): a
  // release cut short would leave the sandbox to the destructor, unreaped. Bounded by kill_grace.
  co_await boost::asio::this_coro::reset_cancellation_state(boost::asio::disable_cancellation());
  try {
    co_await flow_->async_release();
  } catch (const std::exception& e) {
    spdlog::error("run {}: bug: exception while releasing the Run: {}", inputs_->manifest.run_id, e.what());
  }
  flow_.reset();
}

}  // namespace takosumi::runner
