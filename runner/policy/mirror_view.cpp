#include "runner/policy/mirror_view.hpp"

#include <algorithm>
#include <system_error>

#include "common/error_codes.hpp"
#include "common/failure_codes.hpp"
#include "runner/policy/module_policy.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) {
    return static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  });
  return s;
}

// The real subdirectories of dir (links are not followed: the mirror is the operator's).
Result<std::vector<fs::path>> subdirectories(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec))
    if (it->symlink_status(ec).type() == fs::file_type::directory) out.push_back(it->path());
  if (ec) return fail(errc::kSandboxFailed, "tofu.providerMirror: list " + dir.string() + ": " + ec.message());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

Result<std::vector<fs::path>> visible_provider_dirs(const fs::path& mirror,
                                                    const protocol::RunPolicy& policy) {
  if (!policy.allowed_providers && policy.denied_providers.empty()) return std::vector{mirror};
  std::vector<fs::path> visible;
  auto hosts = subdirectories(mirror);
  if (!hosts) return std::unexpected(hosts.error());
  for (const auto& host : *hosts) {
    auto namespaces = subdirectories(host);
    if (!namespaces) return std::unexpected(namespaces.error());
    for (const auto& ns : *namespaces) {
      auto types = subdirectories(ns);
      if (!types) return std::unexpected(types.error());
      for (const auto& type : *types) {
        const std::string address = lower(host.filename().string() + "/" +
                                          ns.filename().string() + "/" + type.filename().string());
        if (provider_allowed(address, policy)) visible.push_back(type);
      }
    }
  }
  return visible;
}

}  // namespace takosumi::runner
