#pragma once
// Executes one Run attempt end to end: checkout (libgit2), prior state decryption, tofu init and
// plan / destroy plan / apply of the approved plan / refresh-only drift check, plan analysis with
// data-loss marks, output filtering, and encryption of the plan or new state into the Run's
// outbox (RunInputs) for the caller to upload (a drift check never produces either). The Run's workspace
// (<work_root>/<run_id>-<attempt>, 0700) is wiped when it ends, whatever happened: before
// async_run returns, or, with Release::later, in async_release while the caller delivers the
// outcome (which needs only the outbox).
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>

#include <memory>

#include "redaction/log_sink.hpp"
#include "runner/run_types.hpp"
#include "runner/tofu/cancel_signal.hpp"
#include "runner/tofu/process_launcher.hpp"

namespace takosumi::runner {

class RunFlow;

class RunExecutor {
 public:
  // io: where the Run's logic, log lines and process supervision run; blocking: libgit2, crypto,
  // hashing and large JSON.
  RunExecutor(boost::asio::any_io_executor io, boost::asio::thread_pool& blocking,
              RunnerSettings settings);
  RunExecutor(boost::asio::any_io_executor io, boost::asio::thread_pool& blocking,
              RunnerSettings settings, std::unique_ptr<ProcessLauncher> launcher);
  RunExecutor(const RunExecutor&) = delete;
  RunExecutor& operator=(const RunExecutor&) = delete;
  ~RunExecutor();

  // Runs once per executor. Never throws: every failure is a report with status "failed" and a
  // stable failure_code; failure messages name the step and end with tofu's last diagnostics,
  // never state content. Every line given to `log` and every text in the report has passed
  // through redaction (redaction/redaction.hpp) with the Run's secret set.
  // Release::later: the outcome as soon as it is final (status, report, artifacts in the outbox,
  // the Run's credentials wiped); the sandbox, cgroup and workspace are left to async_release.
  enum class Release { now, later };
  boost::asio::awaitable<RunOutcome> async_run(RunInputs inputs, redaction::LogSink log,
                                               Release release = Release::now);
  // After async_run(…, Release::later): ends the Run's sandbox and waits until nothing of it is
  // left, then removes its cgroup and wipes its workspace. Without it the destructor does the
  // same, blocking. A no-op otherwise.
  boost::asio::awaitable<void> async_release();

  // Call on the io executor. Interrupts the running tofu (SIGINT to tofu itself, SIGKILL after
  // kill_grace) and starts nothing more; the Run ends with failure_code "cancelled" (an apply
  // that changed state still returns it).
  void cancel();

 private:
  boost::asio::any_io_executor io_;
  boost::asio::thread_pool& blocking_;
  RunnerSettings settings_;
  std::unique_ptr<ProcessLauncher> launcher_;
  CancelSignal cancel_;
  // The Run's, kept from async_run to async_release: the flow refers to its inputs and outcome.
  std::unique_ptr<RunInputs> inputs_;
  std::unique_ptr<RunOutcome> outcome_;
  std::unique_ptr<RunFlow> flow_;
};

}  // namespace takosumi::runner
