#include "git/helper_main.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <vector>

#include "git/remote_ops.hpp"

namespace takosumi::git {

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
  const std::string out = serialize_remote_result(run_remote_request(*request));
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
  return 0;
}

}  // namespace takosumi::git
