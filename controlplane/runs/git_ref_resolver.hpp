#pragma once
// Resolves a Capsule's `ref` to one commit id without cloning: a detached libgit2 remote lists the
// repository's refs (like `git ls-remote`). A 40-hex ref is taken as the commit itself. Branch
// names win over tag names; annotated tags resolve to the commit they point at.
// Errors: source_fetch_failed when the remote cannot be listed; invalid_argument when it has no
// such ref. Blocking (network); call it from the blocking-work pool. Thread-safe.
#include <string>
#include <string_view>

#include "common/error.hpp"

namespace takosumi::controlplane {

class GitRefResolver {
 public:
  GitRefResolver();
  ~GitRefResolver();
  GitRefResolver(const GitRefResolver&) = delete;
  GitRefResolver& operator=(const GitRefResolver&) = delete;

  Result<std::string> resolve(const std::string& url, const std::string& ref) const;
};

bool is_commit_id(std::string_view ref);

}  // namespace takosumi::controlplane
