// The agent's command line: the modes of takosumi-agent as commands on CLI11.
#pragma once

#include <optional>
#include <string>

namespace takosumi::agent {

// What the command line asked for; at most one mode is set (parse_args refuses the rest).
struct Args {
  std::string config;
  bool check_only = false;
  bool once = false;
  bool print_public_key = false;
  bool recover = false;
  bool push = false;
  std::string discard;
  bool keys_export = false;
  std::string bundle;  // run-bundle execute
  std::string result;  // its --out
  // mirror verify / mirror add
  enum class Mirror { none, verify, add } mirror = Mirror::none;
  std::string mirror_dir, packages_dir, pins;
};

// Parses argv into args. Every command has --help (stdout, exit 0); a wrong one is exit 2 with the
// reason on stderr. Returns the exit code when there is nothing more to do.
std::optional<int> parse_args(int argc, char** argv, Args& args);

}  // namespace takosumi::agent
