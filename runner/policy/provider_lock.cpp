#include "runner/policy/provider_lock.hpp"

#include <algorithm>
#include <cctype>

#include "common/ascii.hpp"
#include "common/file_io.hpp"

namespace takosumi::runner {
namespace {

constexpr std::size_t kMaxLockFile = 4 * 1024 * 1024;

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

std::set<std::string> locked_providers(std::string_view text) {
  std::set<std::string> out;
  while (!text.empty()) {
    const auto eol = text.find('\n');
    std::string_view line = trim(text.substr(0, eol));
    text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);
    constexpr std::string_view kHead = "provider \"";
    if (!line.starts_with(kHead)) continue;
    line.remove_prefix(kHead.size());
    const auto close = line.find('"');
    if (close == std::string_view::npos) continue;
    out.insert(ascii_lower(line.substr(0, close)));
  }
  return out;
}

Result<std::set<std::string>> read_locked_providers(const std::filesystem::path& lock_file) {
  std::error_code ec;
  if (!std::filesystem::exists(lock_file, ec)) return std::set<std::string>{};
  auto text = read_file(lock_file, kMaxLockFile);
  if (!text) return std::unexpected(text.error());
  return locked_providers(*text);
}

}  // namespace takosumi::runner
