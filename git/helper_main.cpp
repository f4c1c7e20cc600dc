#include "git/helper_main.hpp"

#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <vector>

#include "git/remote_ops.hpp"

namespace takosumi::git {

namespace {

// The helper holds a Connection's token or key and talks to a server the tenant chose: no core
// file and no ptrace from the same user (not dumpable), and memory and file sizes bounded so a
// hostile server's pack costs what the fetch limit says, not the host. Generous: libgit2 maps the
// pack it indexes and writes it once (thin packs grow by their bases). Set once, after the
// request (bounded by kMaxRemoteRequestBytes) has named the fetch limit: hard limits only fall.
void limit_self(std::uint64_t max_bytes) {
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  const auto set = [](int resource, rlim_t value) {
    struct rlimit current {};
    if (::getrlimit(resource, &current) == 0 && current.rlim_max != RLIM_INFINITY && current.rlim_max < value)
      value = current.rlim_max;
    const struct rlimit limit{value, value};
    ::setrlimit(resource, &limit);
  };
  set(RLIMIT_CORE, 0);
#if !defined(__SANITIZE_ADDRESS__)  // AddressSanitizer reserves terabytes of address space
  set(RLIMIT_AS, static_cast<rlim_t>(3 * max_bytes + (1ull << 30)));
#endif
  set(RLIMIT_FSIZE, static_cast<rlim_t>(2 * max_bytes + (64ull << 20)));
}

}  // namespace

int git_helper_main() {
  SecretBytes input(kMaxRemoteRequestBytes + 1);
  std::size_t used = 0;
  while (used < input.size()) {
    const ssize_t n = ::read(STDIN_FILENO, input.data() + used, input.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    used += static_cast<std::size_t>(n);
  }
  if (used > kMaxRemoteRequestBytes) {
    std::fputs("internal-git-remote: the request is too large\n", stderr);
    return 2;
  }
  auto request = parse_remote_request(input.reveal_as_string().substr(0, used));
  input.wipe();
  if (!request) {
    std::fprintf(stderr, "internal-git-remote: %s\n", request.error().to_string().c_str());
    return 2;
  }
  limit_self(request->max_bytes);
  const std::string out = serialize_remote_result(run_remote_request(*request));
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
  return 0;
}

}  // namespace takosumi::git
