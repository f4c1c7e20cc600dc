#pragma once
// The process seam: run one program with an explicit argv, environment and working directory,
// stream its output as it is read, honour a cancellation request and a wall-clock limit.
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "runner/tofu/cancel_signal.hpp"

namespace takosumi::runner {

enum class OutputStream { out, err };

// Called on the io thread for every chunk read from the child's stdout or stderr, in order within
// a stream, as the bytes came: no line structure (a line may span chunks, a chunk may hold many).
// Redaction needs the raw stream: cutting it into lines first could split a secret (see
// redaction/redacted_lines.hpp).
using OutputSink = std::function<void(OutputStream stream, std::string_view bytes)>;

// Per-process limits (setrlimit in the child; each of tofu's plugins gets the same).
struct ProcessLimits {
  std::optional<std::uint64_t> address_space_bytes;  // RLIMIT_AS
  std::optional<std::uint64_t> cpu_seconds;          // RLIMIT_CPU
  std::optional<std::uint64_t> file_size_bytes;      // RLIMIT_FSIZE: no one file grows past it
};

// takosumi-supervise between the launcher and the program (see supervise/supervise.hpp): if the
// agent dies, the program is interrupted and given kill_grace instead of dying with it.
struct SupervisorSpec {
  std::filesystem::path program;  // absolute path of takosumi-supervise
  // Held by the supervisor while the program runs: free again means the program has finished.
  std::optional<std::filesystem::path> lock_file;
};

struct ProcessSpec {
  std::filesystem::path program;  // absolute; no PATH search
  std::vector<std::string> args;  // argv[1..]
  std::vector<std::string> env;   // "NAME=value"; the complete environment, nothing inherited
  std::filesystem::path cwd;
  std::chrono::milliseconds timeout{std::chrono::hours(1)};
  // After the interrupt (SIGINT) of a cancel or timeout, how long until SIGKILL.
  std::chrono::milliseconds kill_grace{std::chrono::seconds(30)};
  // When set, stdout goes to this file (created 0600) instead of the sink: for data that may
  // hold secrets (show -json, output -json) and must never reach a log.
  std::optional<std::filesystem::path> stdout_file;
  ProcessLimits limits;
  // For a wrapper that does not forward signals (bubblewrap): the child starts with SIGINT
  // ignored — the wrapper keeps ignoring it, Go programs inside re-enable it when they handle it
  // — and the interrupt goes to the child's whole process group instead of the child alone.
  bool interrupt_group = false;
  // Runs the program under the supervisor. Everything above keeps its meaning: the supervisor
  // passes the interrupt on (or, with interrupt_group, the group has it anyway), dies of the
  // program's signal and exits with its code; SIGKILL after kill_grace goes to the supervisor,
  // and the group kill that follows takes the program.
  std::optional<SupervisorSpec> supervisor;
  // The cgroup.procs files of the Run's cgroup (runner/tofu/run_cgroups.hpp; at most 4): the child
  // moves itself there before it executes, so everything it starts counts against its limits.
  std::vector<std::filesystem::path> cgroup_procs;
};

struct ProcessExit {
  int exit_code = -1;  // -1 when ended by a signal
  int term_signal = 0;
  bool cancelled = false;  // a cancel request interrupted it
  bool timed_out = false;  // the wall-clock limit interrupted it
};

class ProcessLauncher {
 public:
  virtual ~ProcessLauncher() = default;
  // Runs the program to its end. A cancel request (or the timeout) sends SIGINT to the child
  // itself, then SIGKILL after kill_grace; whatever is left of the child's process group is
  // killed once it has exited. Fails (sandbox_failed) only when the program (or its supervisor)
  // cannot be started.
  // Every byte of output has reached sink when it returns.
  virtual boost::asio::awaitable<Result<ProcessExit>> async_run(ProcessSpec spec, OutputSink sink,
                                                                CancelSignal& cancel) = 0;
};

}  // namespace takosumi::runner
