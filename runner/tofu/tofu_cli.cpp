#include "runner/tofu/tofu_cli.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

#include "common/error_codes.hpp"
#include "common/file_io.hpp"
#include "common/offload.hpp"
#include "common/failure_codes.hpp"
#include "common/json_fields.hpp"
#include "runner/policy/module_files.hpp"
#include "runner/tofu/output_log_filter.hpp"
#include "runner/tofu/plan_log_filter.hpp"
#include "runner/tofu/exec_denial.hpp"
#include "runner/tofu/process_voice.hpp"
#include "redaction/redacted_lines.hpp"
#include "redaction/redaction.hpp"

namespace takosumi::runner {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;

// Longer lines reach the log in pieces, so memory stays bounded whatever tofu prints.
constexpr std::size_t kMaxLine = 64 * 1024;
constexpr std::size_t kMaxDiagnosticLines = 12;
constexpr std::size_t kMaxDiagnosticLine = 300;
constexpr std::size_t kMaxVersionJson = 64 * 1024;

// An HCL quoted string: escapes quotes, backslashes and template sequences.
std::string hcl_quote(std::string_view s) {
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '"' || c == '\\') out += '\\';
    if ((c == '$' || c == '%') && i + 1 < s.size() && s[i + 1] == '{') out += c;
    out += c;
  }
  return out + "\"";
}

// A diagnostic line without the box drawing tofu puts around diagnostics.
std::string_view strip_decoration(std::string_view line) {
  for (std::string_view prefix : {"\u2577", "\u2575", "\u2502"})
    if (line.starts_with(prefix)) line.remove_prefix(prefix.size());
  while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
  return line;
}

}  // namespace

TofuCli::TofuCli(ProcessLauncher& launcher, CancelSignal& cancel, TofuOptions options,
                 const RunWorkspace& workspace, std::filesystem::path module_dir, redaction::LogSink log)
    : launcher_(launcher), cancel_(cancel), options_(std::move(options)), workspace_(workspace),
      module_dir_(std::move(module_dir)), log_(std::move(log)) {}

std::string cli_config_text(const std::filesystem::path& provider_mirror) {
  return "provider_installation {\n  filesystem_mirror {\n    path = " +
         hcl_quote(provider_mirror.string()) + "\n  }\n}\n";
}

Status TofuCli::write_cli_config() const {
  return write_file_atomic(workspace_.cli_config(), cli_config_text(options_.provider_mirror), 0600);
}

// The module directory is writable in the sandbox: these are written as the agent's own files
// before every command (whatever an earlier command left there), never through a module's link.
Status TofuCli::write_agent_files() const {
  TAKOSUMI_TRY(workspace_.write_in_source(module_dir_ / std::string(kAgentOverrideFile),
                                          "terraform {\n  backend \"local\" {\n    path = "
                                          "\"terraform.tfstate\"\n  }\n}\n"));
  if (!variables_) return {};
  return workspace_.write_in_source(module_dir_ / "takosumi.auto.tfvars.json",
                                    takosumi::serialize(protocol::to_json(*variables_)));
}

std::vector<std::string> TofuCli::environment() const {
  return {"PATH=/usr/local/bin:/usr/bin:/bin",
          "HOME=" + workspace_.home().string(),
          "TMPDIR=" + workspace_.tmp().string(),
          "TF_IN_AUTOMATION=1",
          "TF_INPUT=0",
          "TF_CLI_CONFIG_FILE=" + workspace_.cli_config().string(),
          "CHECKPOINT_DISABLE=1"};
}

std::vector<std::string> TofuCli::environment_names() {
  return {"PATH", "HOME", "TMPDIR", "TF_IN_AUTOMATION", "TF_INPUT", "TF_CLI_CONFIG_FILE",
          "CHECKPOINT_DISABLE"};
}

void TofuCli::remember_diagnostic(std::string_view line) {
  line = strip_decoration(line);
  if (line.empty()) return;
  std::string redacted =
      options_.secrets ? redaction::redact_text(*options_.secrets, line) : redaction::redact_patterns(line);
  redacted.resize(std::min(redacted.size(), kMaxDiagnosticLine));
  diagnostics_.push_back(std::move(redacted));
  if (diagnostics_.size() > kMaxDiagnosticLines) diagnostics_.pop_front();
}

void TofuCli::note_stderr_line(std::string_view line) {
  remember_diagnostic(line);
  if (options_.sandbox && sandbox_error_.empty() && is_sandbox_error_line(line))
    sandbox_error_ = diagnostics_.empty() ? std::string("bwrap: (no detail)") : diagnostics_.back();
}

Error TofuCli::failure(std::string_view code, std::string_view command, int exit_code) const {
  std::string message =
      "tofu " + std::string(command) + " failed (exit " + std::to_string(exit_code) + ")";
  // A program the exec allowlist stopped: the shell's bare "permission denied" says nothing of
  // why; the Run's failure does, with its own code.
  // tofu wraps its diagnostics, so a line is read with the one before it as well. Only where
  // Landlock is required: a best-effort sandbox may have none, and a missing execute bit is then
  // no allowlist's doing.
  if (options_.sandbox && options_.sandbox->confine && options_.sandbox->confine->arguments.landlock_required)
    for (std::size_t i = 0; i < diagnostics_.size(); ++i) {
      auto program = denied_program(diagnostics_[i]);
      if (!program && i > 0) program = denied_program(diagnostics_[i - 1] + " " + diagnostics_[i]);
      if (program)
        return with_diagnostics(errc::kExecDenied,
                                message + ": " + exec_denial_message(*program) + ". tofu said");
    }
  return with_diagnostics(code, std::move(message));
}

Error TofuCli::with_diagnostics(std::string_view code, std::string message) const {
  if (!diagnostics_.empty()) message += ":";
  for (const auto& d : diagnostics_) message += (&d == &diagnostics_.front() ? " " : " | ") + d;
  return Error{std::string(code), std::move(message)};
}

asio::awaitable<Result<TofuCli::Finished>> TofuCli::async_invoke(
    std::string_view command, std::vector<std::string> args,
    std::optional<std::filesystem::path> capture, std::uint64_t max_capture) {
  diagnostics_.clear();
  const std::string name = "tofu " + std::string(command);
  if (cancel_.requested()) co_return fail(errc::kCancelled, name + " not started: the Run was cancelled");
  if (auto written = write_agent_files(); !written)
    co_return fail(errc::kWorkspaceFailed, name + ": " + written.error().message);
  ProcessSpec spec;
  spec.program = options_.binary;
  spec.args = std::move(args);
  spec.env = environment();
  if (credentials_ && (command == "plan" || command == "apply")) {
    auto extra = command == "plan" ? credentials_->plan_environment()
                                   : credentials_->apply_environment();
    spec.env.insert(spec.env.end(), std::make_move_iterator(extra.begin()),
                    std::make_move_iterator(extra.end()));
  }
  spec.cwd = module_dir_;
  spec.timeout = std::max(std::chrono::milliseconds(0),
                          std::chrono::duration_cast<std::chrono::milliseconds>(
                              options_.deadline - std::chrono::steady_clock::now()));
  spec.stdout_file = std::move(capture);
  const auto confine = options_.sandbox ? options_.sandbox->confine : std::nullopt;
  const bool in_phase = confine.has_value();
  // In the phase's sandbox the agent writes a capture itself: no more than the reader takes.
  if (in_phase && spec.stdout_file && max_capture > 0)
    spec.limits.file_size_bytes =
        std::min(options_.limits.file_size_bytes.value_or(max_capture + 1), max_capture + 1);
  auto exit = co_await async_launch(name, std::move(spec), in_phase, confine, std::nullopt, command == "plan");
  if (!exit) co_return std::unexpected(exit.error());
  if (exit->cancelled) co_return std::unexpected(with_diagnostics(errc::kCancelled, name + " was cancelled"));
  if (exit->timed_out)
    co_return std::unexpected(with_diagnostics(errc::kTimedOut, name + " ran past the Run's time limit"));
  co_return Finished{exit->exit_code};
}

Result<PhaseSandbox*> TofuCli::phase_sandbox() {
  if (phase_) return phase_.get();
  ProcessSpec session;
  session.program = options_.sandbox->confine->program;
  session.env = environment();
  // The workspace's root, which exists from the start: the module directory may not be checked
  // out yet (async_start_sandbox). Every command names its own working directory.
  session.cwd = workspace_.root();
  session.kill_grace = options_.kill_grace;
  session.limits = options_.limits;
  // A limit per process: each command's, set by the server, never the server's for the whole Run.
  session.limits.cpu_seconds.reset();
  session.cgroup_procs = options_.cgroup_procs;
  SandboxOptions sandbox = *options_.sandbox;
  sandbox.confine->arguments.serve = true;
  sandbox.confine->arguments.cpu_seconds = options_.limits.cpu_seconds.value_or(0);
  TAKOSUMI_TRY(wrap_in_sandbox(sandbox, workspace_.root(), session));
  // The supervisor holds the lock for the whole phase: a restarted agent waits for its end.
  if (options_.supervisor) session.supervisor = SupervisorSpec{*options_.supervisor, options_.lock_file};
  phase_ = std::make_unique<PhaseSandbox>(std::move(session));
  return phase_.get();
}

asio::awaitable<Status> TofuCli::async_start_sandbox() {
  if (!options_.sandbox || !options_.sandbox->confine) co_return Status{};
  auto phase = phase_sandbox();
  if (!phase) co_return std::unexpected(phase.error());
  co_return co_await (*phase)->async_prestart();
}

asio::awaitable<void> TofuCli::async_close() {
  if (phase_) co_await phase_->async_close();
}

asio::awaitable<Result<ProcessExit>> TofuCli::async_launch(
    const std::string& name, ProcessSpec spec, bool in_phase,
    const std::optional<SandboxOptions::Confine>& confine,
    std::optional<std::filesystem::path> also_read_only, bool describes_plan) {
  spec.kill_grace = options_.kill_grace;
  const auto capture_limit = spec.limits.file_size_bytes;  // async_invoke's, for a phase's capture
  spec.limits = options_.limits;
  if (in_phase && capture_limit) spec.limits.file_size_bytes = capture_limit;
  spec.cgroup_procs = options_.cgroup_procs;
  sandbox_error_.clear();
  ProcessLauncher* launcher = &launcher_;
  if (in_phase) {
    auto phase = phase_sandbox();
    if (!phase) co_return std::unexpected(phase.error().with_context(name));
    launcher = *phase;
  } else {
    if (options_.sandbox) {
      SandboxOptions sandbox = *options_.sandbox;
      sandbox.confine = confine;
      if (also_read_only) sandbox.read_only.push_back(*also_read_only);
      if (auto wrapped = wrap_in_sandbox(sandbox, workspace_.root(), spec); !wrapped)
        co_return std::unexpected(wrapped.error().with_context(name));
    }
    if (options_.supervisor) spec.supervisor = SupervisorSpec{*options_.supervisor, options_.lock_file};
  }
  // Per stream: redacted on the bytes, then cut into lines for the diagnostics, the sandbox's
  // complaint and the log, where no line of theirs can pass for the agent's.
  OutputLogFilter filtered(log_);
  // A plan's own description of itself stays out of the log (runner/tofu/plan_log_filter.hpp).
  PlanLogFilter plan_text([&](std::string_view line) { filtered(line); });
  redaction::RedactedLines out(options_.secrets, kMaxLine, [&](std::string_view line) {
    const std::string quoted = in_process_voice(line);
    if (describes_plan)
      plan_text(quoted);
    else
      filtered(quoted);
  });
  // stderr too: any process of the Run can write to tofu's, a description of a plan among it.
  redaction::RedactedLines err(options_.secrets, kMaxLine, [&](std::string_view line) {
    note_stderr_line(line);
    const std::string quoted = in_process_voice(line);
    if (describes_plan)
      plan_text(quoted);
    else
      filtered(quoted);
  });
  OutputSink sink = [&](OutputStream stream, std::string_view bytes) {
    (stream == OutputStream::err ? err : out).feed(bytes);
  };
  std::optional<std::string> over;  // the workspace passed its budget: why
  auto done = std::make_shared<bool>(false);
  auto run = [&]() -> asio::awaitable<Result<ProcessExit>> {
    auto ended = co_await launcher->async_run(std::move(spec), std::move(sink), cancel_);
    *done = true;
    if (watch_timer_) watch_timer_->cancel();
    co_return ended;
  };
  using namespace asio::experimental::awaitable_operators;
  auto exit = co_await (run() && async_watch_workspace(done, over));
  out.finish();
  err.finish();
  if (!exit) co_return std::unexpected(exit.error().with_context(name));
  if (over) co_return fail(errc::kLimitExceeded, name + " was stopped: " + *over);
  if (!sandbox_error_.empty() && exit->exit_code != 0)
    co_return fail(errc::kSandboxFailed, name + " could not start in the sandbox: " + sandbox_error_);
  co_return exit;
}

asio::awaitable<void> TofuCli::async_watch_workspace(std::shared_ptr<bool> done,
                                                      std::optional<std::string>& over) {
  if (!options_.workspace_budget || !options_.blocking) co_return;
  const DiskBudget budget = *options_.workspace_budget;
  watch_timer_.emplace(co_await asio::this_coro::executor);
  while (!*done) {
    watch_timer_->expires_after(kWorkspaceCheck);
    co_await watch_timer_->async_wait(asio::as_tuple(asio::use_awaitable));
    if (*done) break;
    const auto usage = co_await async_offload(options_.blocking->get_executor(), [&] {
      return measure_disk_usage(budget.dir, kMaxWorkspaceEntries);
    });
    if (*done) break;
    if (!over_budget(usage, budget.max_bytes, kMaxWorkspaceEntries)) continue;
    const std::string limit = " (limits.workspaceMiB: " + std::to_string(budget.max_bytes >> 20) + " MiB)";
    if (usage.unreadable)
      over = "the workspace holds a directory the agent cannot read, so its size cannot be held to its limit" + limit;
    else if (usage.too_deep)
      over = "the workspace nests directories deeper than " + std::to_string(kMaxWorkspaceDepth) + limit;
    else if (usage.entries > kMaxWorkspaceEntries)
      over = "the workspace holds more than " + std::to_string(kMaxWorkspaceEntries) + " files" + limit;
    else
      over = "the workspace holds " + std::to_string(usage.bytes >> 20) + " MiB, past its limit" + limit;
    cancel_.request();
    break;
  }
  watch_timer_.reset();
}

asio::awaitable<Result<HookExit>> TofuCli::async_hook(const std::filesystem::path& program,
                                                      std::chrono::seconds timeout, bool apply,
                                                      std::vector<std::string> extra,
                                                      bool within_deadline) {
  diagnostics_.clear();
  const std::string name = "hook " + program.string();
  if (cancel_.requested()) co_return fail(errc::kCancelled, name + " not started: the Run was cancelled");
  ProcessSpec spec;
  spec.program = program;
  spec.env = environment();
  if (credentials_) {
    auto more = apply ? credentials_->apply_environment() : credentials_->plan_environment();
    spec.env.insert(spec.env.end(), std::make_move_iterator(more.begin()),
                    std::make_move_iterator(more.end()));
  }
  spec.env.insert(spec.env.end(), std::make_move_iterator(extra.begin()),
                  std::make_move_iterator(extra.end()));
  spec.cwd = module_dir_;
  const auto left = std::max(std::chrono::milliseconds(0),
                             std::chrono::duration_cast<std::chrono::milliseconds>(
                                 options_.deadline - std::chrono::steady_clock::now()));
  const bool own_limit = !within_deadline || std::chrono::milliseconds(timeout) < left;
  spec.timeout = own_limit ? std::chrono::milliseconds(timeout) : left;
  // The hook's supervisor takes the workspace lock, which a restarted agent waits on: the phase's
  // sandbox (whose supervisor holds it) ends first, and the next tofu command starts a new one.
  co_await async_close();
  auto exit = co_await async_launch(name, std::move(spec), false, options_.hook_confine, program);
  if (!exit) co_return std::unexpected(exit.error());
  if (exit->cancelled) co_return fail(errc::kCancelled, name + " was cancelled");
  if (exit->timed_out && !own_limit)
    co_return fail(errc::kTimedOut, name + " ran past the Run's time limit");
  co_return HookExit{exit->exit_code, exit->timed_out};
}

asio::awaitable<Result<std::string>> TofuCli::async_capture(std::string_view command,
                                                            std::vector<std::string> args,
                                                            std::size_t max_bytes) {
  const auto file = workspace_.capture(std::string(command) + ".json");
  auto done = co_await async_invoke(command, std::move(args), file, max_bytes);
  if (!done) co_return std::unexpected(done.error());
  if (done->exit_code != 0) co_return std::unexpected(failure(errc::kOpentofuFailed, command, done->exit_code));
  std::error_code ec;
  if (const auto size = std::filesystem::file_size(file, ec); !ec && size > max_bytes)
    co_return fail(errc::kLimitExceeded, "tofu " + std::string(command) + " wrote " +
                                             std::to_string(size) + " bytes, more than the limit of " +
                                             std::to_string(max_bytes) +
                                             " (limits.maxPlanJsonBytes for plans)");
  auto text = read_file(file, max_bytes);
  if (!text) co_return std::unexpected(text.error().with_context("tofu " + std::string(command)));
  co_return std::move(*text);
}

asio::awaitable<Result<std::string>> TofuCli::async_version() {
  std::vector<std::string> args{"version", "-json"};
  auto text = co_await async_capture("version", std::move(args), kMaxVersionJson);
  if (!text) co_return std::unexpected(text.error());
  auto doc = parse_object(*text, kMaxVersionJson);
  if (!doc) co_return fail(errc::kOpentofuFailed, "tofu version: " + doc.error().message);
  auto version = get_string(*doc, "terraform_version", 64);
  if (!version) co_return fail(errc::kOpentofuFailed, "tofu version: " + version.error().message);
  co_return std::move(*version);
}

asio::awaitable<Status> TofuCli::async_init() {
  std::vector<std::string> args{"init", "-input=false", "-no-color"};
  auto done = co_await async_invoke("init", std::move(args), std::nullopt);
  if (!done) co_return std::unexpected(done.error());
  if (done->exit_code != 0) co_return std::unexpected(failure(errc::kOpentofuInitFailed, "init", done->exit_code));
  co_return Status{};
}

asio::awaitable<Result<bool>> TofuCli::async_plan(const std::filesystem::path& plan_file,
                                                  PlanMode mode) {
  std::vector<std::string> args{"plan", "-input=false", "-no-color",
                                "-out=" + plan_file.string(), "-detailed-exitcode"};
  if (mode == PlanMode::destroy) args.emplace_back("-destroy");
  // A drift check must not block, or be blocked by, a Run that holds the state.
  if (mode == PlanMode::refresh_only) args.insert(args.end(), {"-refresh-only", "-lock=false"});
  auto done = co_await async_invoke("plan", std::move(args), std::nullopt);
  if (!done) co_return std::unexpected(done.error());
  if (done->exit_code == 0 || done->exit_code == 2) co_return done->exit_code == 2;
  co_return std::unexpected(failure(errc::kOpentofuPlanFailed, "plan", done->exit_code));
}

asio::awaitable<Result<std::string>> TofuCli::async_show_json(const std::filesystem::path& plan_file) {
  std::vector<std::string> args{"show", "-json", "-no-color", plan_file.string()};
  co_return co_await async_capture("show", std::move(args), options_.max_show_json);
}

asio::awaitable<Status> TofuCli::async_apply(const std::filesystem::path& plan_file) {
  std::vector<std::string> args{"apply", "-input=false", "-no-color", plan_file.string()};
  auto done = co_await async_invoke("apply", std::move(args), std::nullopt);
  if (!done) co_return std::unexpected(done.error());
  if (done->exit_code != 0) co_return std::unexpected(failure(errc::kApplyFailed, "apply", done->exit_code));
  co_return Status{};
}

}  // namespace takosumi::runner
