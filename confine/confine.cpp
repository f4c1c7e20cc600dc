#include "confine/confine.hpp"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "confine/capabilities.hpp"
#include "confine/command_server.hpp"
#include "confine/elf_interpreter.hpp"
#include "confine/landlock.hpp"
#include "confine/noexec_mounts.hpp"
#include "confine/seccomp_filter.hpp"

namespace takosumi::confine {
namespace {

int say_failed(const std::string& message) {
  std::fprintf(stderr, "%s%s\n", kConfineErrorPrefix.data(), message.c_str());
  return kConfineFailed;
}

// The loader this system's dynamic programs use (this program is one of them), and the one of
// every listed regular file that names another. Directories hold no single loader; their programs
// are expected to use the system's.
std::vector<std::string> loaders(const std::vector<std::string>& exec) {
  std::vector<std::string> out;
  std::vector<std::string> programs{"/proc/self/exe"};
  programs.insert(programs.end(), exec.begin(), exec.end());
  for (const auto& program : programs) {
    struct stat st {};
    if (::stat(program.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    auto interpreter = elf_interpreter(program);
    if (interpreter && *interpreter &&
        std::find(out.begin(), out.end(), **interpreter) == out.end())
      out.push_back(**interpreter);
  }
  return out;
}

std::expected<void, std::string> limit_processes(std::uint64_t max) {
  if (max == 0) return {};
  struct rlimit current {};
  rlim_t value = static_cast<rlim_t>(max);
  if (::getrlimit(RLIMIT_NPROC, &current) == 0 && current.rlim_max != RLIM_INFINITY &&
      current.rlim_max < value)
    value = current.rlim_max;
  const struct rlimit limit{value, value};
  if (::setrlimit(RLIMIT_NPROC, &limit) != 0)
    return std::unexpected(std::string("setrlimit(RLIMIT_NPROC): ") + std::strerror(errno));
  return {};
}

std::expected<void, std::string> apply_landlock(const ConfineArguments& args) {
  const auto support = probe_landlock();
  if (support.abi == 0) {
    if (args.landlock_required)
      return std::unexpected("the exec allowlist needs Landlock and " + support.unavailable +
                             " (or set sandbox.execControl: best-effort)");
    return {};
  }
  LandlockRules rules{args.exec, args.tcp_connect_ports};
  if (args.loader) {
    const auto found = loaders(args.exec);
    rules.executable.insert(rules.executable.end(), found.begin(), found.end());
  }
  return restrict_with_landlock(rules, support.abi);
}

}  // namespace

int confine(const ConfineArguments& args) {
  // First, while the capabilities bubblewrap granted for it are there; then never again.
  if (args.noexec_writable) {
    if (auto sealed = make_mounts_noexec(args.noexec_under); !sealed)
      return say_failed("noexec mounts: " + sealed.error());
    if (auto dropped = drop_all_capabilities(); !dropped)
      return say_failed("capabilities: " + dropped.error());
  }
  if (auto limited = limit_processes(args.max_processes); !limited) return say_failed(limited.error());
  if (auto landlocked = apply_landlock(args); !landlocked)
    return say_failed("Landlock: " + landlocked.error());
  if (auto filtered = load_seccomp_filter(args.allow_jit); !filtered) return say_failed(filtered.error());
  if (args.serve) return serve_commands(args.cpu_seconds);
  std::vector<char*> argv;
  for (const auto& a : args.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execv(argv[0], argv.data());
  std::fprintf(stderr, "%sexec %s: %s\n", kConfineErrorPrefix.data(), argv[0], std::strerror(errno));
  return kConfineExecFailed;
}

}  // namespace takosumi::confine
