#include "runner/tofu/sandbox.hpp"

#include <unistd.h>

#include <array>

#include "common/error_codes.hpp"
#include "common/failure_codes.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;

// On merged-/usr systems these are symlinks into /usr and are recreated as such; otherwise they
// are bound read-only.
constexpr std::array<const char*, 6> kSystemDirs{"/bin", "/sbin", "/lib", "/lib32", "/lib64",
                                                  "/libx32"};

// What name resolution, TLS, the dynamic loader and user lookups read. Nothing else of /etc —
// in particular not the agent's own configuration and token.
constexpr std::array<const char*, 20> kEtcFiles{
    "/etc/resolv.conf", "/etc/hosts",         "/etc/nsswitch.conf", "/etc/host.conf",
    "/etc/gai.conf",    "/etc/services",      "/etc/protocols",     "/etc/passwd",
    "/etc/group",       "/etc/localtime",     "/etc/ssl",           "/etc/ca-certificates",
    "/etc/ca-certificates.conf", "/etc/pki",  "/etc/crypto-policies", "/etc/alternatives",
    "/etc/ld.so.cache", "/etc/ld.so.conf",    "/etc/ld.so.conf.d",  "/etc/mime.types"};

void add(std::vector<std::string>& args, std::initializer_list<std::string> more) {
  args.insert(args.end(), more);
}

}  // namespace

std::vector<std::string> sandbox_arguments(const SandboxOptions& options, const fs::path& workspace,
                                           const fs::path& cwd) {
  std::vector<std::string> args{"--unshare-user", "--unshare-pid", "--unshare-ipc",
                                "--unshare-uts",  "--unshare-cgroup-try", "--die-with-parent",
                                "--cap-drop",     "ALL"};
  // No --new-session: tofu must stay in the launcher's process group for the interrupt (see
  // ProcessSpec::interrupt_group); the launcher already starts it in a new session, without a
  // controlling terminal a module could push keystrokes into.
  if (!options.network) args.emplace_back("--unshare-net");
  // A phase's command server (confine/command_server.hpp) is the namespace's pid 1 itself: it
  // reaps, and kills what a command leaves, between commands.
  if (options.confine && options.confine->arguments.serve) args.emplace_back("--as-pid-1");
  add(args, {"--ro-bind", "/usr", "/usr"});
  for (const char* dir : kSystemDirs) {
    std::error_code ec;
    const auto status = fs::symlink_status(dir, ec);
    if (ec) continue;
    if (fs::is_symlink(status)) {
      auto target = fs::read_symlink(dir, ec);
      if (!ec) add(args, {"--symlink", target.string(), dir});
    } else if (fs::is_directory(status)) {
      add(args, {"--ro-bind", dir, dir});
    }
  }
  for (const char* file : kEtcFiles) add(args, {"--ro-bind-try", file, file});
  // Sized tmpfs mounts: without --size each would get half the host's memory. /var/tmp shares
  // /tmp's cap; /dev itself is made read-only below (its device nodes are separate mounts).
  add(args, {"--proc", "/proc", "--dev", "/dev", "--size", std::to_string(options.tmp_bytes),
             "--tmpfs", "/tmp", "--symlink", "/tmp", "/var/tmp", "--size",
             std::to_string(kDevShmBytes), "--tmpfs", "/dev/shm", "--remount-ro", "/dev"});
  // Writable first, read-only after: an operator's writable path that contains the mirror must
  // not let a Run replace providers for later Runs.
  for (const auto& p : options.writable) add(args, {"--bind", p.string(), p.string()});
  add(args, {"--bind", workspace.string(), workspace.string()});
  for (const auto& p : options.read_only) add(args, {"--ro-bind", p.string(), p.string()});
  for (const auto& p : options.protected_paths) add(args, {"--ro-bind-try", p.string(), p.string()});
  if (options.confine) {
    const auto& program = options.confine->program.string();
    add(args, {"--ro-bind", program, program});
    // Only for takosumi-confine, to make the writable mounts noexec in a mount namespace of its
    // own; it drops both before anything else runs (confine/capabilities.hpp).
    add(args, {"--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_SETPCAP"});
  }
  // The sandbox's own root (where bubblewrap made the mount points) becomes read-only too, so a
  // write anywhere but the workspace, /tmp and the operator's paths fails.
  add(args, {"--remount-ro", "/", "--chdir", cwd.string(), "--"});
  return args;
}

Status wrap_in_sandbox(const SandboxOptions& options, const fs::path& workspace, ProcessSpec& spec) {
  const auto& bwrap = options.bubblewrap;
  if (!bwrap.is_absolute() || ::access(bwrap.c_str(), X_OK) != 0)
    return fail(errc::kSandboxFailed,
                "bubblewrap " + bwrap.string() +
                    " is missing or not executable; install bubblewrap or set sandbox.bubblewrap "
                    "(the agent does not run tofu unsandboxed unless sandbox.mode is none)");
  for (const auto& p : options.writable) {
    std::error_code ec;
    if (!fs::exists(p, ec))
      return fail(errc::kSandboxFailed, "sandbox.writablePaths: " + p.string() + " does not exist");
  }
  if (options.confine && ::access(options.confine->program.c_str(), X_OK) != 0)
    return fail(errc::kSandboxFailed,
                "takosumi-confine " + options.confine->program.string() +
                    " is missing or not executable; install it next to takosumi-agent or set "
                    "sandbox.confine");
  auto args = sandbox_arguments(options, workspace, spec.cwd);
  const bool serve = options.confine && options.confine->arguments.serve;
  std::vector<std::string> command;
  if (!serve) {  // a server takes its commands on stdin
    command.push_back(spec.program.string());
    command.insert(command.end(), std::make_move_iterator(spec.args.begin()),
                   std::make_move_iterator(spec.args.end()));
  }
  if (options.confine) {
    confine::ConfineArguments confine = options.confine->arguments;
    // Nothing writable executes, and nothing of the workspace (its read-only agent files
    // included) either: see confine/noexec_mounts.hpp.
    confine.noexec_writable = true;
    confine.noexec_under = {workspace.string(), "/dev"};
    confine.command = std::move(command);
    command = confine::format_confine_arguments(confine);
    command.insert(command.begin(), options.confine->program.string());
  }
  args.insert(args.end(), std::make_move_iterator(command.begin()),
              std::make_move_iterator(command.end()));
  spec.program = bwrap;
  spec.args = std::move(args);
  spec.interrupt_group = true;
  return {};
}

bool is_sandbox_error_line(std::string_view line) {
  return line.starts_with("bwrap: ") || line.starts_with("takosumi-confine: ");
}

}  // namespace takosumi::runner
