#include "tests/support/fake_process_launcher.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <csignal>
#include <fstream>

namespace takosumi::testing {

namespace asio = boost::asio;

namespace {

// Ends when the Run's cancel is requested: the launcher's waker is how a real launcher hears it.
asio::awaitable<void> async_wait_for_cancel(runner::CancelSignal& cancel) {
  if (cancel.requested()) co_return;
  asio::steady_timer woken(co_await asio::this_coro::executor, asio::steady_timer::time_point::max());
  cancel.set_waker([&woken] { woken.cancel(); });
  co_await woken.async_wait(asio::as_tuple(asio::use_awaitable));
  cancel.clear_waker();
}

}  // namespace

FakeProcessLauncher::FakeProcessLauncher() {
  FakeCommand version;
  version.captured_stdout = R"({"terraform_version":"1.9.0","platform":"linux_amd64"})";
  script_["version"] = std::move(version);
}

std::filesystem::path plan_out_file(const runner::ProcessSpec& spec) {
  for (const auto& arg : spec.args)
    if (arg.starts_with("-out=")) return arg.substr(5);
  return {};
}

asio::awaitable<Result<runner::ProcessExit>> FakeProcessLauncher::async_run(
    runner::ProcessSpec spec, runner::OutputSink sink, runner::CancelSignal& cancel) {
  const std::string command = spec.args.empty() ? std::string() : spec.args.front();
  started_.push_back(command);
  const FakeCommand scripted = script_[command];
  if (scripted.on_start) scripted.on_start(spec);
  for (const auto& line : scripted.stdout_lines) sink(runner::OutputStream::out, line + "\n");
  for (const auto& line : scripted.stderr_lines) sink(runner::OutputStream::err, line + "\n");
  if (spec.stdout_file) std::ofstream(*spec.stdout_file) << scripted.captured_stdout;
  if (!scripted.wait_for_cancel) co_return runner::ProcessExit{scripted.exit_code};
  co_await async_wait_for_cancel(cancel);
  co_return runner::ProcessExit{-1, SIGINT, true, false};
}

}  // namespace takosumi::testing
