#include "protocol/credential_names.hpp"

#include <algorithm>
#include <array>

#include "common/error_codes.hpp"

namespace takosumi::protocol {
namespace {

constexpr std::size_t kMaxName = 128;

// Variables the runner sets or that change how tofu, its providers, the dynamic loader, Go's
// runtime, the shell or TLS behave. A Connection that could set one of them could redirect
// provider downloads, disable TLS verification or load code into tofu.
constexpr std::array<std::string_view, 30> kReservedNames{
    "PATH",        "HOME",          "TMPDIR",      "TMP",        "TEMP",       "USER",
    "LOGNAME",     "SHELL",         "PWD",         "IFS",        "ENV",        "BASH_ENV",
    "LANG",        "TERM",          "TZ",          "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY",
    "ALL_PROXY",   "FTP_PROXY",     "CHECKPOINT_DISABLE", "CURL_CA_BUNDLE", "GODEBUG",
    "GOTRACEBACK", "GOMAXPROCS",    "GOGC",        "GOMEMLIMIT", "GOFLAGS",    "NODE_OPTIONS",
    "PYTHONPATH"};

constexpr std::array<std::string_view, 9> kReservedPrefixes{
    "TF_", "TAKOSUMI_", "OPENTOFU_", "LD_", "SSL_CERT_", "LC_", "GIT_", "BWRAP_", "DYLD_"};

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
                    "\" is reserved: the runner sets it or it changes how tofu, the loader or TLS "
                    "behave (PATH, HOME, TMPDIR, proxies, SSL_CERT_*, TF_*, TAKOSUMI_*, OPENTOFU_*, "
                    "LD_*, LC_*, GIT_*, GO runtime variables); pick another name");
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
