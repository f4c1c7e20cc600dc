// takosumi-supervise --grace-ms <N> [--interrupt-group] [--lock <file>] -- <program> [args...]
// Runs one tofu command for the agent and sees it to a graceful end if the agent dies; see
// supervise/supervise.hpp.
#include <cstdio>
#include <string>
#include <vector>

#include "supervise/supervise.hpp"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  auto parsed = takosumi::supervise::parse_supervise_arguments(args);
  if (!parsed) {
    std::fprintf(stderr,
                 "takosumi-supervise: %s\nusage: takosumi-supervise --grace-ms <N> "
                 "[--interrupt-group] [--lock <file>] -- <program> [args...]\n",
                 parsed.error().c_str());
    return takosumi::supervise::kSuperviseFailed;
  }
  return takosumi::supervise::supervise(*parsed);
}
