#pragma once
// Runs one remote operation (list a repository's refs, fetch it into a cache) in the Git helper:
// this program again, as `<program> internal-git-remote`, which reads the request on stdin and
// answers on stdout (git/helper_main.hpp). libgit2 1.5 has no timeout of its own (a server that
// accepts and never answers holds a thread forever); a process can be killed. So the caller's
// thread waits at most until the deadline, or until `cancelled` says so, and the helper is then
// killed with its process group. Blocking: call it from a pool made for waiting.
#include <chrono>
#include <filesystem>
#include <functional>

#include "common/error.hpp"
#include "git/remote_request.hpp"

namespace takosumi::git {

inline constexpr std::string_view kHelperCommand = "internal-git-remote";

struct HelperOutcome {
  RemoteResult result;
  bool timed_out = false;
  bool cancelled = false;
};

// unavailable when the helper cannot start, or dies or answers garbage (the error says which);
// otherwise the helper's result, or timed_out / cancelled.
Result<HelperOutcome> run_git_helper(const std::filesystem::path& program, const RemoteRequest& request,
                                     std::chrono::steady_clock::time_point deadline,
                                     const std::function<bool()>& cancelled = {});

}  // namespace takosumi::git
