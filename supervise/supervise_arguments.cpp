#include "supervise/supervise_arguments.hpp"

#include <charconv>
#include <cstdint>

namespace takosumi::supervise {
namespace {

// A day: far beyond any grace period, far below an overflow of the supervisor's clock arithmetic.
constexpr std::int64_t kMaxGraceMs = 24LL * 60 * 60 * 1000;

std::expected<std::chrono::milliseconds, std::string> parse_grace(const std::string& text) {
  std::int64_t ms = 0;
  const auto* end = text.data() + text.size();
  const auto [rest, ec] = std::from_chars(text.data(), end, ms);
  if (text.empty() || ec != std::errc() || rest != end || ms < 0 || ms > kMaxGraceMs)
    return std::unexpected("--grace-ms wants milliseconds from 0 to " +
                           std::to_string(kMaxGraceMs) + ", not \"" + text + "\"");
  return std::chrono::milliseconds(ms);
}

}  // namespace

std::vector<std::string> format_supervise_arguments(const SuperviseArguments& arguments) {
  std::vector<std::string> argv{"--grace-ms", std::to_string(arguments.grace.count())};
  if (arguments.interrupt_group) argv.emplace_back("--interrupt-group");
  if (arguments.lock_file) argv.insert(argv.end(), {"--lock", arguments.lock_file->string()});
  argv.emplace_back("--");
  argv.insert(argv.end(), arguments.command.begin(), arguments.command.end());
  return argv;
}

std::expected<SuperviseArguments, std::string> parse_supervise_arguments(
    const std::vector<std::string>& argv) {
  SuperviseArguments out;
  bool have_grace = false;
  std::size_t i = 0;
  for (; i < argv.size() && argv[i] != "--"; ++i) {
    const std::string& option = argv[i];
    const bool takes_value = option == "--grace-ms" || option == "--lock";
    if (takes_value && i + 1 == argv.size()) return std::unexpected(option + " wants a value");
    if (option == "--grace-ms" && !have_grace) {
      auto grace = parse_grace(argv[++i]);
      if (!grace) return std::unexpected(grace.error());
      out.grace = *grace;
      have_grace = true;
    } else if (option == "--interrupt-group" && !out.interrupt_group) {
      out.interrupt_group = true;
    } else if (option == "--lock" && !out.lock_file && !argv[i + 1].empty()) {
      out.lock_file = argv[++i];
    } else {
      return std::unexpected("unexpected, repeated or empty option \"" + option + "\"");
    }
  }
  if (!have_grace) return std::unexpected("--grace-ms is required");
  if (i == argv.size()) return std::unexpected("\"--\" and the command are missing");
  out.command.assign(argv.begin() + static_cast<std::ptrdiff_t>(i) + 1, argv.end());
  if (out.command.empty()) return std::unexpected("the command after \"--\" is missing");
  if (!out.command.front().starts_with('/'))
    return std::unexpected("the program must be an absolute path, not \"" + out.command.front() +
                           "\"");
  return out;
}

}  // namespace takosumi::supervise
