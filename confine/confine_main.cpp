// takosumi-confine [options] -- <program> [args...]: restricts itself with Landlock, seccomp and a
// process limit, then becomes the program; see confine/confine.hpp.
#include <cstdio>
#include <string>
#include <vector>

#include "confine/confine.hpp"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  auto parsed = takosumi::confine::parse_confine_arguments(args);
  if (!parsed) {
    std::fprintf(stderr, "takosumi-confine: %s\n", parsed.error().c_str());
    return takosumi::confine::kConfineFailed;
  }
  return takosumi::confine::confine(*parsed);
}
