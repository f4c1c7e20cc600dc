#include "runner/tofu/boost_process_launcher.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/readable_pipe.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <array>

#include "common/unique_fd.hpp"
#include "runner/tofu/child_spawn.hpp"

namespace takosumi::runner {
namespace {

namespace asio = boost::asio;
namespace bp = boost::process::v2;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kChunk = 16 * 1024;
// After the child exits, how long its output may keep draining (a grandchild that escaped the
// process group could hold the pipes open forever).
constexpr auto kDrainLimit = std::chrono::seconds(5);

// Everything the three cooperating coroutines (two pumps + reaper, watchdog) share. Lives on the
// frame of async_run; all access is on the io thread.
struct Supervision {
  Supervision(asio::any_io_executor ex, bp::process proc_in, const ProcessSpec& spec_in,
              CancelSignal& cancel_in)
      : proc(std::move(proc_in)), pgid(proc.id()), out(ex), err(ex), wake(ex), spec(spec_in),
        cancel(cancel_in) {}

  bp::process proc;
  pid_t pgid;
  asio::readable_pipe out;
  asio::readable_pipe err;
  asio::steady_timer wake;  // the watchdog sleeps on it; cancel and exit wake it early
  const ProcessSpec& spec;
  CancelSignal& cancel;
  bool exited = false;
  bool interrupted = false;
  bool killed = false;
  ProcessExit result;
};

asio::awaitable<void> pump(asio::readable_pipe& pipe, OutputStream stream, const OutputSink& sink) {
  if (!pipe.is_open()) co_return;
  std::array<char, kChunk> buf;
  for (;;) {
    auto [ec, n] = co_await pipe.async_read_some(asio::buffer(buf), asio::as_tuple(asio::use_awaitable));
    if (n > 0 && sink) sink(stream, std::string_view(buf.data(), n));
    if (ec) break;
  }
}

asio::awaitable<void> reap(Supervision& s) {
  auto [ec, code] = co_await s.proc.async_wait(asio::as_tuple(asio::use_awaitable));
  const int status = s.proc.native_exit_code();
  s.proc.detach();  // reaped: its pid may be reused, so nothing may signal it any more
  s.exited = true;
  if (!ec && WIFEXITED(status)) {
    s.result.exit_code = WEXITSTATUS(status);
  } else if (!ec && WIFSIGNALED(status)) {
    s.result.term_signal = WTERMSIG(status);
  }
  ::kill(-s.pgid, SIGKILL);  // leftovers of the child's group; ESRCH when there are none
  s.wake.cancel();
}

// Sleeps until the deadline, a cancel request or the child's exit, then applies the stop
// ladder: SIGINT to the child itself, SIGKILL after the grace period. Once the child has exited
// it bounds how long output may still drain.
asio::awaitable<void> watchdog(Supervision& s) {
  const auto deadline = Clock::now() + s.spec.timeout;
  Clock::time_point kill_at = Clock::time_point::max();
  Clock::time_point drain_until = Clock::time_point::max();
  for (;;) {
    if ((co_await asio::this_coro::cancellation_state).cancelled() != asio::cancellation_type::none)
      co_return;
    const auto now = Clock::now();
    if (s.exited) {
      if (drain_until == Clock::time_point::max()) drain_until = now + kDrainLimit;
      if (now >= drain_until) {
        s.out.close();
        s.err.close();
        co_return;
      }
    } else if (!s.interrupted && (s.cancel.requested() || now >= deadline)) {
      (s.cancel.requested() ? s.result.cancelled : s.result.timed_out) = true;
      s.interrupted = true;
      // The child only: its plugins must not die first. A wrapper started with SIGINT ignored
      // takes it for the whole group, where tofu (which handles it) and its plugins (which
      // ignore it) are.
      ::kill(s.spec.interrupt_group ? -s.pgid : s.proc.id(), SIGINT);
      kill_at = now + s.spec.kill_grace;
    } else if (s.interrupted && !s.killed && now >= kill_at) {
      s.killed = true;
      ::kill(s.proc.id(), SIGKILL);
    }
    auto next = s.exited ? drain_until : (s.interrupted ? kill_at : deadline);
    if (s.killed && !s.exited) next = Clock::time_point::max();
    s.wake.expires_at(next);
    co_await s.wake.async_wait(asio::as_tuple(asio::use_awaitable));
  }
}

}  // namespace

asio::awaitable<Result<ProcessExit>> BoostProcessLauncher::async_run(ProcessSpec spec,
                                                                     OutputSink sink,
                                                                     CancelSignal& cancel) {
  auto ex = co_await asio::this_coro::executor;
  UniqueFd file_fd;  // the child has its own copy once started
  if (spec.stdout_file) {
    auto fd = open_stdout_file(*spec.stdout_file);
    if (!fd) co_return std::unexpected(fd.error());
    file_fd = std::move(*fd);
  }
  asio::readable_pipe out(ex), err(ex);
  auto proc = file_fd.valid() ? spawn_child(ex, spec, bp::process_stdio{nullptr, file_fd.get(), err})
                              : spawn_child(ex, spec, bp::process_stdio{nullptr, out, err});
  if (!proc) co_return std::unexpected(proc.error());

  Supervision s(ex, std::move(*proc), spec, cancel);
  s.out = std::move(out);
  s.err = std::move(err);
  cancel.set_waker([&s] { s.wake.cancel(); });
  using namespace asio::experimental::awaitable_operators;
  try {
    co_await ((pump(s.out, OutputStream::out, sink) && pump(s.err, OutputStream::err, sink) &&
               reap(s)) ||
              watchdog(s));
  } catch (...) {
    cancel.clear_waker();
    throw;
  }
  cancel.clear_waker();
  co_return s.result;
}

}  // namespace takosumi::runner
