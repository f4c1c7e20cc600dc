// takosumi-supervise --grace-ms <N> [--interrupt-group] [--lock <file>] -- <program> [args...]
// Runs one tofu command for the agent and sees it to a graceful end if the agent dies; see
// runner/supervise.hpp.
#include <cstdio>
#include <string>
#include <vector>

#include "runner/supervise.hpp"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  auto parsed = takosumi::runner::parse_supervise_arguments(args);
  if (!parsed) {
    std::fprintf(stderr,
                 "takosumi-supervise: %s\nusage: takosumi-supervise --grace-ms <N> "
                 "[--interrupt-group] [--lock <file>] -- <program> [args...]\n",
                 parsed.error().c_str());
    return takosumi::runner::kSuperviseFailed;
  }
  return takosumi::runner::supervise(*parsed);
}
