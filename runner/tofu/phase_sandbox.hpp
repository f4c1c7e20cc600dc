#pragma once
// One sandbox for all the tofu commands of a Run phase: bubblewrap, takosumi-supervise and
// takosumi-confine start once, at the first command or ahead of it (async_prestart), with confine
// serving commands as the sandbox's pid 1 (confine/command_server.hpp); every later command is a request to it. Each
// command keeps what it had in a sandbox of its own: the same Landlock and seccomp policy, mounts,
// namespaces, cgroup and resource limits (all inherited from the server), its own environment,
// working directory and captured stdout, its exit code or signal, and the cancellation ladder
// (a cancel or the deadline interrupts the session's process group, where the command is, and
// SIGKILL after kill_grace ends the whole session). Between commands nothing of the Run runs: the
// server kills and reaps whatever a command left before it reports its end.
//
// A ProcessLauncher: TofuCli runs a phase's commands through it instead of wrapping each one.
#include <boost/asio/awaitable.hpp>

#include <memory>

#include "runner/tofu/process_launcher.hpp"

namespace takosumi::runner {

class PhaseSandbox final : public ProcessLauncher {
 public:
  // session: the command server, wrapped by wrap_in_sandbox (confine's `serve`), with the
  // supervisor, resource limits, cgroup and kill_grace every command shares.
  explicit PhaseSandbox(ProcessSpec session);
  ~PhaseSandbox() override;  // SIGKILL to what is left of the session, if async_close did not end it
  PhaseSandbox(const PhaseSandbox&) = delete;
  PhaseSandbox& operator=(const PhaseSandbox&) = delete;

  // spec's program, args, env, cwd, stdout_file, timeout and kill_grace are the command's; its
  // limits, cgroup, supervisor and wrapper fields are ignored (the session's hold). Starts the
  // session first if it is not running. After a session has ended (killed, or its server gone)
  // every command fails sandbox_failed.
  boost::asio::awaitable<Result<ProcessExit>> async_run(ProcessSpec spec, OutputSink sink,
                                                        CancelSignal& cancel) override;

  // Starts the session without waiting for its server, so that bubblewrap's mounts, the
  // supervisor and confine's Landlock and seccomp set-up overlap what the caller does before its
  // first command (a Run's checkout). Nothing but the server runs in it until a command comes;
  // the first command waits until it is ready, and gets what the start said and its failure as
  // its own, as when the command starts the session. A no-op when a session runs or has ended.
  // The spawn itself (a fork of the agent, about 5 ms) runs on the calling, io_context's thread:
  // Boost.Process's launcher tells the io_context about the fork (its signal service unregisters
  // and registers a descriptor), which is safe only from the thread that runs it, and a pool
  // thread would hand the child its blocked signal mask. sandbox_failed when it cannot be spawned.
  boost::asio::awaitable<Status> async_prestart();

  // Ends the session (the end of the server's stdin) and waits until it has exited, SIGKILL after
  // kill_grace; nothing of it runs when this returns. A later command starts a new session.
  boost::asio::awaitable<void> async_close();

  bool running() const;  // a session has been started (a command, or async_prestart) and has not ended

  struct Session;  // the running session's process and pipes (phase_sandbox.cpp)

 private:
  Status spawn(const boost::asio::any_io_executor& ex);
  boost::asio::awaitable<Result<ProcessExit>> async_ready(const OutputSink& sink, CancelSignal& cancel,
                                                          const ProcessSpec& command);
  ProcessSpec session_spec_;
  std::unique_ptr<Session> session_;
  bool ready_ = false;  // the session's server said it is ready
  bool ended_ = false;  // a session died under a command: no other is started
};

}  // namespace takosumi::runner
