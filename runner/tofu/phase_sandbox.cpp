#include "runner/tofu/phase_sandbox.hpp"

#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/readable_pipe.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/write.hpp>

#include <array>
#include <cstring>
#include <optional>
#include <vector>

#include "common/error_codes.hpp"
#include "common/failure_codes.hpp"
#include "common/fd_io.hpp"
#include "confine/command_frames.hpp"
#include "runner/tofu/child_spawn.hpp"

namespace takosumi::runner {
namespace {

namespace asio = boost::asio;
namespace bp = boost::process::v2;
using Clock = std::chrono::steady_clock;
using confine::FrameType;
using namespace asio::experimental::awaitable_operators;

// After the session died, how long bubblewrap's or the server's last words may still drain.
constexpr auto kDrainLimit = std::chrono::seconds(5);
constexpr std::size_t kChunk = 16 * 1024;

enum class Ended { running, ready, exit, gone };

// One command (or the session's start) as it goes: where its output goes, and how it ended.
struct Command {
  const OutputSink& sink;
  CancelSignal& cancel;
  Clock::time_point deadline;
  std::chrono::milliseconds kill_grace;
  UniqueFd capture;                        // the stdout_file, when the command has one
  std::optional<std::uint64_t> capture_limit;  // limits.fileSize: no more is written
  std::uint64_t captured = 0;
  Ended ended = Ended::running;
  bool interrupted = false;
  bool killed = false;
  ProcessExit result;

  void output(OutputStream stream, std::string_view bytes) const {
    if (sink) sink(stream, bytes);
  }
  void keep(std::string_view bytes) {
    if (!capture.valid()) return output(OutputStream::out, bytes);
    if (capture_limit && captured + bytes.size() > *capture_limit)
      bytes = bytes.substr(0, static_cast<std::size_t>(*capture_limit - std::min(captured, *capture_limit)));
    captured += bytes.size();
    // A failed write shows as a short capture, which the reader of the file finds malformed.
    (void)write_all(capture.get(), std::as_bytes(std::span(bytes.data(), bytes.size())), "capture");
  }
};

}  // namespace

struct PhaseSandbox::Session {
  explicit Session(asio::any_io_executor ex) : in(ex), out(ex), err(ex), wake(ex), idle(ex) {}
  std::optional<bp::process> proc;
  pid_t pgid = -1;
  asio::local::stream_protocol::socket in;
  asio::readable_pipe out;
  asio::readable_pipe err;
  asio::steady_timer wake;  // the watchdog's
  asio::steady_timer idle;  // where the stderr pump waits after the end of its pipe
};

namespace {

using Session = PhaseSandbox::Session;

// The server's frames until `until` (kReady, kExit) or the end of the session.
asio::awaitable<void> read_frames(Session& s, Command& c, FrameType until) {
  std::array<unsigned char, confine::kFrameHeaderBytes> header;
  std::vector<char> payload;
  for (;;) {
    auto [ec, n] = co_await asio::async_read(s.out, asio::buffer(header), asio::as_tuple(asio::use_awaitable));
    const std::uint32_t length = ec ? 0 : confine::read_u32(header.data() + 1);
    if (ec || length > confine::kMaxFrameBytes) break;
    payload.resize(length);
    if (length > 0) {
      auto [ec2, m] = co_await asio::async_read(s.out, asio::buffer(payload), asio::as_tuple(asio::use_awaitable));
      if (ec2) break;
    }
    const std::string_view bytes(payload.data(), payload.size());
    switch (static_cast<FrameType>(header[0])) {
      case FrameType::kReady:
        if (until == FrameType::kReady) {
          c.ended = Ended::ready;
          co_return;
        }
        break;
      case FrameType::kStdout: c.output(OutputStream::out, bytes); break;
      case FrameType::kStderr: c.output(OutputStream::err, bytes); break;
      case FrameType::kCapture: c.keep(bytes); break;
      case FrameType::kExit: {
        auto end = confine::parse_exit_payload(bytes);
        if (!end) {
          c.ended = Ended::gone;
          co_return;
        }
        (end->signalled ? c.result.term_signal : c.result.exit_code) = end->value;
        c.ended = Ended::exit;
        co_return;
      }
      default: c.ended = Ended::gone; co_return;  // not the server's: the session cannot be trusted
    }
  }
  c.ended = Ended::gone;
}

// The session's own stderr (bubblewrap's complaints, the server's) as the command's, until its end.
asio::awaitable<void> drain_stderr(Session& s, const Command& c) {
  std::array<char, kChunk> buf;
  for (;;) {
    auto [ec, n] = co_await s.err.async_read_some(asio::buffer(buf), asio::as_tuple(asio::use_awaitable));
    if (n > 0) c.output(OutputStream::err, std::string_view(buf.data(), n));
    if (ec) co_return;
  }
}

// The same while a command runs, never ending by itself: the frames decide when it is over.
asio::awaitable<void> pump_stderr(Session& s, const Command& c) {
  co_await drain_stderr(s, c);
  s.idle.expires_at(Clock::time_point::max());
  co_await s.idle.async_wait(asio::as_tuple(asio::use_awaitable));
}

asio::awaitable<void> sleep_for(Clock::duration d) {
  asio::steady_timer timer(co_await asio::this_coro::executor, d);
  co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
}

void kill_session(Session& s) {
  if (s.proc && s.proc->running()) ::kill(s.proc->id(), SIGKILL);
  if (s.pgid > 0) ::kill(-s.pgid, SIGKILL);
}

// The launcher's stop ladder on the session: SIGINT to its process group at a cancel or the
// deadline (the command handles it; bubblewrap, the supervisor and the server ignore it or pass it
// on), SIGKILL to the whole session after kill_grace. Never ends by itself.
asio::awaitable<void> watchdog(Session& s, Command& c) {
  Clock::time_point kill_at = Clock::time_point::max();
  for (;;) {
    if ((co_await asio::this_coro::cancellation_state).cancelled() != asio::cancellation_type::none) co_return;
    const auto now = Clock::now();
    if (!c.interrupted && (c.cancel.requested() || now >= c.deadline)) {
      (c.cancel.requested() ? c.result.cancelled : c.result.timed_out) = true;
      c.interrupted = true;
      ::kill(-s.pgid, SIGINT);
      kill_at = now + c.kill_grace;
    } else if (c.interrupted && !c.killed && now >= kill_at) {
      c.killed = true;
      kill_session(s);
    }
    s.wake.expires_at(c.killed ? Clock::time_point::max() : (c.interrupted ? kill_at : c.deadline));
    co_await s.wake.async_wait(asio::as_tuple(asio::use_awaitable));
  }
}

// Frames until `until`, the session's stderr and the stop ladder, together.
asio::awaitable<void> follow(Session& s, Command& c, FrameType until) {
  c.cancel.set_waker([&s] { s.wake.cancel(); });
  try {
    co_await ((read_frames(s, c, until) || pump_stderr(s, c)) || watchdog(s, c));
  } catch (...) {
    c.cancel.clear_waker();
    throw;
  }
  c.cancel.clear_waker();
}

// The session ended under a command (killed by the ladder, or its server is gone): what
// bubblewrap or the server said last reaches the command's stderr, and the session's own exit
// status is the command's.
asio::awaitable<void> bury(Session& s, Command& c) {
  kill_session(s);
  co_await (drain_stderr(s, c) || sleep_for(kDrainLimit));
  co_await s.proc->async_wait(asio::as_tuple(asio::use_awaitable));
  const int status = s.proc->native_exit_code();
  s.proc->detach();
  c.result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  c.result.term_signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

}  // namespace

PhaseSandbox::PhaseSandbox(ProcessSpec session) : session_spec_(std::move(session)) {}

PhaseSandbox::~PhaseSandbox() {
  if (session_) kill_session(*session_);
}

bool PhaseSandbox::running() const { return session_ != nullptr; }

// Starts the session; its server's readiness is async_ready's.
Status PhaseSandbox::spawn(const asio::any_io_executor& ex) {
  auto s = std::make_unique<Session>(ex);
  // The requests go over a socket, not a pipe: a send to a server that died in between fails
  // with EPIPE instead of raising SIGPIPE in the agent.
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
    return fail(errc::kSandboxFailed, std::string("socketpair: ") + std::strerror(errno));
  UniqueFd ours(pair[0]), theirs(pair[1]);
  auto proc = spawn_child(ex, session_spec_, bp::process_stdio{theirs.get(), s->out, s->err});
  if (!proc) return std::unexpected(proc.error());
  theirs.reset();
  s->in.assign(asio::local::stream_protocol(), ours.get());  // throws only before it owns the fd
  (void)ours.release();
  s->pgid = proc->id();  // spawn_child makes it its session's (and group's) leader
  s->proc.emplace(std::move(*proc));
  session_ = std::move(s);
  ready_ = false;
  return {};
}

asio::awaitable<Status> PhaseSandbox::async_prestart() {
  if (session_ || ended_) co_return Status{};
  co_return spawn(co_await asio::this_coro::executor);
}

// Waits, under the first command's deadline and cancel, for the server to be ready. Not ready
// (bubblewrap or confine failed, and said so on stderr): nothing ran, and the session's exit is
// the command's.
asio::awaitable<Result<ProcessExit>> PhaseSandbox::async_ready(const OutputSink& sink, CancelSignal& cancel,
                                                               const ProcessSpec& command) {
  Command c{sink, cancel, Clock::now() + command.timeout, command.kill_grace, {}, {}, 0, Ended::running, false,
            false, {}};
  co_await follow(*session_, c, FrameType::kReady);
  if (c.ended == Ended::ready) {
    ready_ = true;
    co_return c.result;
  }
  co_await bury(*session_, c);
  if (c.result.exit_code == 0) c.result.exit_code = 1;  // it never served: not a success
  session_.reset();
  ended_ = true;
  co_return c.result;
}

asio::awaitable<Result<ProcessExit>> PhaseSandbox::async_run(ProcessSpec spec, OutputSink sink,
                                                            CancelSignal& cancel) {
  if (ended_ && !session_)
    co_return fail(errc::kSandboxFailed, "the Run phase's sandbox has ended; " + spec.program.string() +
                                             " was not started");
  if (!session_) {
    if (auto spawned = spawn(co_await asio::this_coro::executor); !spawned)
      co_return std::unexpected(spawned.error());
  }
  if (!ready_) {
    auto started = co_await async_ready(sink, cancel, spec);
    if (!started) co_return std::unexpected(started.error());
    if (!session_) co_return started;  // it never became ready: its exit is the command's
  }
  Session& s = *session_;
  confine::CommandRequest request{spec.cwd.string(), spec.stdout_file.has_value(), {spec.program.string()},
                                  std::move(spec.env)};
  request.argv.insert(request.argv.end(), spec.args.begin(), spec.args.end());
  auto encoded = confine::encode_request(request);
  if (!encoded) co_return fail(errc::kSandboxFailed, spec.program.string() + ": " + encoded.error());
  Command c{sink, cancel, Clock::now() + spec.timeout, spec.kill_grace, {}, spec.limits.file_size_bytes, 0,
            Ended::running, false, false, {}};
  if (spec.stdout_file) {
    auto fd = open_stdout_file(*spec.stdout_file);
    if (!fd) co_return std::unexpected(fd.error());
    c.capture = std::move(*fd);
  }
  auto [wec, written] = co_await asio::async_write(s.in, asio::buffer(*encoded), asio::as_tuple(asio::use_awaitable));
  try {
    if (!wec) co_await follow(s, c, FrameType::kExit);
  } catch (...) {
    // Cut off in the middle of a command: the session cannot serve another one.
    kill_session(s);
    ended_ = true;
    throw;
  }
  if (c.ended == Ended::exit) co_return c.result;
  co_await bury(s, c);  // gone under this command: killed by the ladder, or its server died
  session_.reset();
  ended_ = true;
  co_return c.result;
}

asio::awaitable<void> PhaseSandbox::async_close() {
  if (!session_) co_return;
  Session& s = *session_;
  boost::system::error_code ignored;
  s.in.close(ignored);  // the server ends at the end of its stdin, and the sandbox with it
  const auto grace = session_spec_.kill_grace;
  auto exited = co_await (s.proc->async_wait(asio::as_tuple(asio::use_awaitable)) || sleep_for(grace));
  if (exited.index() == 1) {
    kill_session(s);
    co_await s.proc->async_wait(asio::as_tuple(asio::use_awaitable));
  }
  s.proc->detach();
  if (s.pgid > 0) ::kill(-s.pgid, SIGKILL);  // leftovers of the group; ESRCH when there are none
  session_.reset();  // a later command starts a new session
}

}  // namespace takosumi::runner
