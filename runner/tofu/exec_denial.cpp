#include "runner/tofu/exec_denial.hpp"

#include <algorithm>
#include <cctype>

namespace takosumi::runner {
namespace {

bool ends_with_shell_prefix(std::string_view before) {
  // "<shell>: 1: " (dash), "<shell>: line 1: " (bash), or "<shell>: " (bash, no line).
  auto strip = [](std::string_view s, std::string_view suffix) {
    return s.ends_with(suffix) ? s.substr(0, s.size() - suffix.size()) : s;
  };
  std::string_view s = strip(before, ": ");
  std::size_t digits = 0;
  while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[s.size() - 1 - digits])))
    ++digits;
  if (digits > 0) {
    s.remove_suffix(digits);
    s = strip(s, "line ");
    if (!s.ends_with(": ")) return false;
    s.remove_suffix(2);
  }
  // The shell's own name, as its last word or path component: "/bin/sh", "bash", "dash".
  const auto start = s.find_last_of(" /");
  const std::string_view shell = start == std::string_view::npos ? s : s.substr(start + 1);
  for (std::string_view known : {"sh", "bash", "dash", "ash", "ksh", "zsh"})
    if (shell == known) return true;
  return false;
}

// A program's name as the shell or Go print it: a path of ordinary characters, nothing a line
// could use to say more than a name.
bool path_like(std::string_view program) {
  if (program.empty() || program.size() > 256) return false;
  for (const char c : program)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '.' || c == '_' ||
          c == '-' || c == '+'))
      return false;
  return true;
}

}  // namespace

std::optional<std::string> denied_program(std::string_view line) {
  for (std::string_view denied : {": Permission denied", ": permission denied"}) {
    const auto at = line.rfind(denied);
    if (at == std::string_view::npos) continue;
    const std::string_view before = line.substr(0, at);
    constexpr std::string_view kGo = "fork/exec ";
    if (const auto go = before.rfind(kGo); go != std::string_view::npos) {
      const std::string_view program = before.substr(go + kGo.size());
      if (path_like(program)) return std::string(program);
    }
    const auto colon = before.rfind(": ");
    if (colon == std::string_view::npos) continue;
    const std::string_view program = before.substr(colon + 2);
    if (path_like(program) && ends_with_shell_prefix(before.substr(0, colon + 2)))
      return std::string(program);
  }
  return std::nullopt;
}

std::string exec_denial_message(std::string_view program) {
  return "the exec allowlist refused to start \"" + std::string(program) + "\"" +
         ": in a Run, only OpenTofu, the mirror's providers and the programs sandbox.execAllow "
         "names may execute; files of the checkout and anything the Run writes never do (they "
         "could be any code). A module author runs such a script through an allowed interpreter "
         "instead (local-exec: interpreter = [\"/bin/sh\"] with command = \"./script.sh\"). An "
         "operator can add a system program to sandbox.execAllow, and every Run whose policy "
         "allows provisioners or external data may then run it; a file of the checkout cannot be "
         "allowed (docs/security.md \"Exec allowlist\")";
}

}  // namespace takosumi::runner
