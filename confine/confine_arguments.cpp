#include "confine/confine_arguments.hpp"

#include <charconv>
#include <limits>

namespace takosumi::confine {
namespace {

template <typename T>
std::expected<T, std::string> parse_number(const std::string& option, const std::string& text,
                                           T min, T max) {
  T value{};
  const auto* end = text.data() + text.size();
  const auto [rest, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || rest != end || value < min || value > max)
    return std::unexpected(option + " wants a number from " + std::to_string(min) + " to " +
                           std::to_string(max) + ", not \"" + text + "\"");
  return value;
}

// Applies one option (and its value at argv[i + 1]); advances i past the value.
std::expected<void, std::string> apply_option(const std::vector<std::string>& argv, std::size_t& i,
                                              ConfineArguments& out, bool& have_landlock) {
  const std::string& option = argv[i];
  const bool takes_value = option == "--exec" || option == "--tcp-connect" ||
                           option == "--max-processes" || option == "--landlock" ||
                           option == "--noexec" || option == "--cpu-seconds";
  if (takes_value && i + 1 == argv.size()) return std::unexpected(option + " wants a value");
  if (option == "--exec") {
    const std::string& path = argv[++i];
    if (!path.starts_with('/')) return std::unexpected("--exec wants an absolute path, not \"" + path + "\"");
    out.exec.push_back(path);
  } else if (option == "--noexec" && out.noexec_writable) {
    const std::string& path = argv[++i];
    if (!path.starts_with('/')) return std::unexpected("--noexec wants an absolute path, not \"" + path + "\"");
    out.noexec_under.push_back(path);
  } else if (option == "--noexec-writable" && !out.noexec_writable) {
    out.noexec_writable = true;
  } else if (option == "--allow-jit" && !out.allow_jit) {
    out.allow_jit = true;
  } else if (option == "--serve" && !out.serve) {
    out.serve = true;
  } else if (option == "--cpu-seconds" && out.cpu_seconds == 0) {
    auto n = parse_number<std::uint64_t>(option, argv[++i], 1, std::numeric_limits<std::uint32_t>::max());
    if (!n) return std::unexpected(n.error());
    out.cpu_seconds = *n;
  } else if (option == "--loader" && !out.loader) {
    out.loader = true;
  } else if (option == "--tcp-connect-only" && !out.tcp_connect_ports) {
    out.tcp_connect_ports.emplace();
  } else if (option == "--tcp-connect" && out.tcp_connect_ports) {
    auto port = parse_number<std::uint16_t>(option, argv[++i], 1, 65535);
    if (!port) return std::unexpected(port.error());
    out.tcp_connect_ports->push_back(*port);
  } else if (option == "--max-processes" && out.max_processes == 0) {
    auto n = parse_number<std::uint64_t>(option, argv[++i], 1, std::numeric_limits<std::uint32_t>::max());
    if (!n) return std::unexpected(n.error());
    out.max_processes = *n;
  } else if (option == "--landlock" && !have_landlock &&
             (argv[i + 1] == "required" || argv[i + 1] == "best-effort")) {
    out.landlock_required = argv[++i] == "required";
    have_landlock = true;
  } else {
    return std::unexpected("unexpected, repeated or malformed option \"" + option + "\"");
  }
  return {};
}

}  // namespace

std::vector<std::string> format_confine_arguments(const ConfineArguments& arguments) {
  std::vector<std::string> argv;
  for (const auto& path : arguments.exec) argv.insert(argv.end(), {"--exec", path});
  if (arguments.loader) argv.emplace_back("--loader");
  if (arguments.tcp_connect_ports) {
    argv.emplace_back("--tcp-connect-only");
    for (const auto port : *arguments.tcp_connect_ports)
      argv.insert(argv.end(), {"--tcp-connect", std::to_string(port)});
  }
  if (arguments.max_processes > 0)
    argv.insert(argv.end(), {"--max-processes", std::to_string(arguments.max_processes)});
  if (arguments.noexec_writable) {
    argv.emplace_back("--noexec-writable");
    for (const auto& dir : arguments.noexec_under) argv.insert(argv.end(), {"--noexec", dir});
  }
  if (arguments.allow_jit) argv.emplace_back("--allow-jit");
  argv.insert(argv.end(), {"--landlock", arguments.landlock_required ? "required" : "best-effort"});
  if (arguments.serve) {
    argv.emplace_back("--serve");
    if (arguments.cpu_seconds > 0) argv.insert(argv.end(), {"--cpu-seconds", std::to_string(arguments.cpu_seconds)});
    return argv;
  }
  argv.emplace_back("--");
  argv.insert(argv.end(), arguments.command.begin(), arguments.command.end());
  return argv;
}

std::expected<ConfineArguments, std::string> parse_confine_arguments(
    const std::vector<std::string>& argv) {
  ConfineArguments out;
  bool have_landlock = false;
  std::size_t i = 0;
  for (; i < argv.size() && argv[i] != "--"; ++i)
    if (auto applied = apply_option(argv, i, out, have_landlock); !applied)
      return std::unexpected(applied.error());
  if (!have_landlock) return std::unexpected("--landlock is required");
  if (out.cpu_seconds > 0 && !out.serve) return std::unexpected("--cpu-seconds goes with --serve");
  if (out.serve) {
    if (i != argv.size()) return std::unexpected("--serve takes its commands on stdin, not after \"--\"");
    return out;
  }
  if (i == argv.size()) return std::unexpected("\"--\" and the command (or --serve) are missing");
  out.command.assign(argv.begin() + static_cast<std::ptrdiff_t>(i) + 1, argv.end());
  if (out.command.empty()) return std::unexpected("the command after \"--\" is missing");
  if (!out.command.front().starts_with('/'))
    return std::unexpected("the program must be an absolute path, not \"" + out.command.front() + "\"");
  return out;
}

}  // namespace takosumi::confine
