#include "protocol/credential_names.hpp"

#include <algorithm>
#include <array>

#include "common/error_codes.hpp"

namespace takosumi::protocol {
namespace {

constexpr std::size_t kMaxName = 128;

// Variables the runner sets or that change how tofu, its providers, the dynamic loader, Go's
// runtime, the shell, an interpreter a provisioner may start, name resolution or TLS behave. A
// Connection that could set one of them could redirect provider downloads, disable TLS
// verification, or make the next program to start run code of its choosing (PS4 is expanded by a
// traced shell, PERL5OPT and PYTHONSTARTUP load code, HOSTALIASES and RES_OPTIONS steer the
// resolver, NOTIFY_SOCKET speaks to the service manager).
constexpr std::array<std::string_view, 63> kReservedNames{
    "PATH",          "HOME",          "TMPDIR",       "TMP",          "TEMP",
    "USER",          "LOGNAME",       "SHELL",        "PWD",          "OLDPWD",
    "IFS",           "ENV",           "CDPATH",       "GLOBIGNORE",   "SHELLOPTS",
    "PS1",           "PS2",           "PS3",          "PS4",          "PROMPT_COMMAND",
    "ZDOTDIR",       "INPUTRC",       "LANG",         "LANGUAGE",     "TERM",
    "TERMINFO",      "TERMCAP",       "TZ",           "TZDIR",        "HTTP_PROXY",
    "HTTPS_PROXY",   "NO_PROXY",      "ALL_PROXY",    "FTP_PROXY",    "CHECKPOINT_DISABLE",
    "CURL_CA_BUNDLE", "CURL_HOME",    "SSLKEYLOGFILE", "GODEBUG",     "GOTRACEBACK",
    "GOMAXPROCS",    "GOGC",          "GOMEMLIMIT",   "GOFLAGS",      "NOTIFY_SOCKET",
    "HOSTALIASES",   "RES_OPTIONS",   "LOCALDOMAIN",  "RESOLV_HOST_CONF", "NLSPATH",
    "LOCPATH",       "GETCONF_DIR",   "CLASSPATH",    "TCLLIBPATH",   "EDITOR",
    "VISUAL",        "PAGER",         "MANPAGER",     "BROWSER",      "LESSOPEN",
    "LESSCLOSE",     "SYSTEMD_EXEC_PID", "INVOCATION_ID"};

// Whole families: the loader and C library (LD_, GLIBC_, MALLOC_, GCONV_), interpreters that read
// start-up code or options from the environment, the shell's exported functions (BASH_FUNC_…),
// configuration and session directories (XDG_, DBUS_, SSH_ agents), socket activation (LISTEN_).
constexpr std::array<std::string_view, 27> kReservedPrefixes{
    "TF_",      "TAKOSUMI_", "OPENTOFU_", "LD_",     "SSL_CERT_", "LC_",       "GIT_",
    "BWRAP_",   "DYLD_",     "GLIBC_",    "MALLOC_", "GCONV_",    "BASH_",     "PYTHON",
    "PERL",     "RUBY",      "NODE_",     "NPM_CONFIG_", "JAVA_", "_JAVA_",    "JDK_",
    "LUA_",     "OPENSSL_",  "XDG_",      "DBUS_",   "SSH_",      "LISTEN_"};

}  // namespace

bool is_reserved_credential_name(std::string_view name) {
  if (std::find(kReservedNames.begin(), kReservedNames.end(), name) != kReservedNames.end())
    return true;
  return std::any_of(kReservedPrefixes.begin(), kReservedPrefixes.end(),
                     [&](std::string_view p) { return name.starts_with(p); });
}

Status validate_credential_name(std::string_view name) {
  const bool shaped =
      !name.empty() && name.size() <= kMaxName && !(name[0] >= '0' && name[0] <= '9') &&
      std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
      });
  if (!shaped)
    return fail(errc::kInvalidArgument,
                "credential name \"" + std::string(name.substr(0, kMaxName)) +
                    "\" must match ^[A-Z_][A-Z0-9_]*$ (upper case, digits, underscore; at most 128)");
  if (is_reserved_credential_name(name))
    return fail(errc::kInvalidArgument,
                "credential name \"" + std::string(name) +
                    "\" is reserved: the runner sets it, or it changes how tofu, the loader, the "
                    "shell, an interpreter, name resolution or TLS behave (PATH, HOME, proxies, "
                    "PS4, NOTIFY_SOCKET, HOSTALIASES, SSL_CERT_*, TF_*, LD_*, GIT_*, PYTHON*, "
                    "PERL*, BASH_*, … ; docs/protocol.md \"Secret bundle\"); pick another name");
  return {};
}

bool is_valid_variable_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxName) return false;
  auto alpha = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
  if (!alpha(name[0])) return false;
  return std::all_of(name.begin(), name.end(), [&](char c) {
    return alpha(c) || (c >= '0' && c <= '9') || c == '-';
  });
}

}  // namespace takosumi::protocol
