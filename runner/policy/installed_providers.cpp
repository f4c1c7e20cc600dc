#include "runner/policy/installed_providers.hpp"

#include "common/error_codes.hpp"
#include "confine/elf_interpreter.hpp"
#include "common/failure_codes.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;

// host/namespace/type/version/platform
constexpr int kPlatformDepth = 5;
constexpr std::size_t kMaxEntries = 10000;

bool is_within(const fs::path& path, const fs::path& dir) {
  const auto rel = path.lexically_relative(dir);
  return !rel.empty() && *rel.begin() != "..";
}

Status check_binaries(const fs::path& platform_dir, const std::string& provider) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(platform_dir, ec)) {
    if (!entry.path().filename().string().starts_with("terraform-provider-")) continue;
    auto interpreter = confine::elf_interpreter(entry.path().string());
    if (!interpreter) return fail(errc::kSandboxFailed, "provider " + provider + ": " + interpreter.error());
    if (*interpreter)
      return fail(errc::kSandboxFailed,
                  "provider " + provider + " is dynamically linked (it needs " + **interpreter +
                      "), and the exec allowlist never lets providers run the dynamic loader; "
                      "put a statically linked build in the mirror (CGO_ENABLED=0, as the "
                      "official releases are)");
  }
  if (ec) return fail(errc::kWorkspaceFailed, "read " + platform_dir.string() + ": " + ec.message());
  return {};
}

Status check_platform(const fs::path& entry, const fs::path& root, const fs::path& mirror) {
  const std::string provider = entry.parent_path().lexically_relative(root).generic_string();
  std::error_code ec;
  if (!fs::is_symlink(fs::symlink_status(entry, ec)))
    return fail(errc::kSandboxFailed,
                "provider " + provider + " was unpacked into the Run's workspace (a packed .zip "
                "mirror?), where the exec allowlist lets nothing run; use an unpacked mirror "
                "(`tofu providers mirror` writes one) in tofu.providerMirror");
  const auto target = fs::canonical(entry, ec);
  if (ec || !is_within(target, mirror))
    return fail(errc::kSandboxFailed, "provider " + provider + " does not lead into the mirror " +
                                          mirror.string());
  return check_binaries(target, provider);
}

}  // namespace

Status check_installed_providers(const fs::path& module_dir, const fs::path& mirror_path) {
  const fs::path root = module_dir / ".terraform" / "providers";
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(root, ec))) return {};
  const fs::path mirror = fs::canonical(mirror_path, ec);
  if (ec) return fail(errc::kSandboxFailed, "tofu.providerMirror " + mirror_path.string() + ": " + ec.message());
  std::size_t seen = 0;
  // No link is followed while walking: only the platform entries are resolved, above.
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (++seen > kMaxEntries) return fail(errc::kSandboxFailed, root.string() + " holds too many entries");
    if (it.depth() + 1 < kPlatformDepth) continue;
    it.disable_recursion_pending();
    if (it->path().extension() == ".lock") continue;  // tofu's own lock files
    TAKOSUMI_TRY(check_platform(it->path(), root, mirror));
  }
  if (ec) return fail(errc::kWorkspaceFailed, "read " + root.string() + ": " + ec.message());
  return {};
}

}  // namespace takosumi::runner
