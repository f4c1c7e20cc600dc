#include "runner/phases/provider_checks.hpp"

#include "common/error_codes.hpp"
#include "crypto/sha256.hpp"
#include "protocol/failure_codes.hpp"
#include "runner/policy/installed_providers.hpp"
#include "runner/policy/module_policy.hpp"
#include "runner/policy/provider_lock.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;

std::unexpected<Error> lock_error(const Error& e) {
  return std::unexpected(protocol::as_run_failure(e, errc::kWorkspaceFailed).with_context("provider lock"));
}

fs::path lock_file(const fs::path& module_dir) { return module_dir / ".terraform.lock.hcl"; }

bool entry_exists(const fs::path& path) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(path, ec));
}

}  // namespace

Status check_committed_lock(const RunWorkspace& workspace, const fs::path& module_dir,
                            const std::vector<ProviderPin>& pins) {
  if (pins.empty()) return {};
  const fs::path lock = lock_file(module_dir);
  if (!entry_exists(lock)) return {};
  if (auto ok = workspace.check_regular_file(lock); !ok) return lock_error(ok.error());
  return check_lock_against_pins(lock, pins);
}

Result<InstalledLock> check_installed_lock(const RunWorkspace& workspace, const fs::path& module_dir,
                                           const RunProviders& providers, bool exec_control,
                                           const protocol::RunPolicy& policy) {
  if (exec_control) TAKOSUMI_TRY(check_installed_providers(module_dir, providers.mirror));
  const fs::path lock = lock_file(module_dir);
  const bool have_lock = entry_exists(lock);
  if (have_lock)
    if (auto ok = workspace.check_regular_file(lock); !ok) return lock_error(ok.error());
  auto locked = read_locked_providers(lock);
  if (!locked) return lock_error(locked.error());
  TAKOSUMI_TRY(check_locked_providers(*locked, policy));
  InstalledLock installed{std::move(*locked), {}};
  if (!have_lock) return installed;
  TAKOSUMI_TRY(check_lock_against_pins(lock, providers.pins));
  auto digest = crypto::sha256_file_hex(lock);
  if (!digest) return lock_error(digest.error());
  installed.sha256 = std::move(*digest);
  return installed;
}

}  // namespace takosumi::runner
